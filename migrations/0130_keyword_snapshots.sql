-- A namespace's in-memory keyword copy (`edgerag_search::bm25::Bm25Index`: its documents, terms
-- and postings, exactly as the isolate holds it) as bytes, so that a new isolate reads it in a
-- few statements instead of reading and tokenizing every chunk again. Cut into base64 parts under
-- D1's value budget like `local_vector_snapshots`. `generation` is the namespace's
-- `keyword_generations.generation` the copy was built at: only a snapshot at the current
-- generation is used (a copy is trusted at one generation). All parts of one namespace are written
-- in one transaction, guarded by the generation, replacing the previous parts; `parts` lets a
-- reader check that it has all of them.
CREATE TABLE IF NOT EXISTS keyword_snapshots (
  namespace  TEXT NOT NULL,
  part       INTEGER NOT NULL,
  parts      INTEGER NOT NULL,
  generation INTEGER NOT NULL,
  data       TEXT NOT NULL,
  PRIMARY KEY (namespace, part)
) WITHOUT ROWID;

-- The last chunk of a namespace deleted: its snapshot goes too. (A snapshot of an older
-- generation is not used, and the next build's write replaces it.)
CREATE TRIGGER IF NOT EXISTS chunks_keyword_snapshot_delete AFTER DELETE ON chunks
WHEN NOT EXISTS (SELECT 1 FROM chunks WHERE namespace = OLD.namespace)
BEGIN
  DELETE FROM keyword_snapshots WHERE namespace = OLD.namespace;
END;
