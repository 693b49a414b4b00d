-- A namespace's in-memory vector copy (`core::vector::quantized`, every vector's 8-bit codes,
-- error bounds and filter fields) as bytes, so that a new isolate reads it ready-made in one
-- statement instead of rebuilding it row by row from `local_vectors` + `local_vector_copies`.
-- Cut into parts under D1's value budget (base64 text: a BLOB crosses the binding as a JSON array
-- of byte numbers). `generation` is the namespace's `local_vector_generations.generation` the copy
-- was built at: a snapshot at the current generation is used as it is, an older one is brought up
-- to date from `local_vector_changes` like any stale copy (or ignored when those rows are no longer
-- logged). All parts of one namespace are written in one transaction, guarded by the generation,
-- replacing the previous parts; `parts` lets a reader check that it has all of them.
CREATE TABLE IF NOT EXISTS local_vector_snapshots (
  namespace  TEXT NOT NULL,
  dims       INTEGER NOT NULL,
  part       INTEGER NOT NULL,
  parts      INTEGER NOT NULL,
  generation INTEGER NOT NULL,
  data       TEXT NOT NULL,
  PRIMARY KEY (namespace, dims, part)
) WITHOUT ROWID;

-- The last vector of a namespace deleted: its snapshot goes too.
CREATE TRIGGER IF NOT EXISTS local_vectors_snapshot_delete AFTER DELETE ON local_vectors
WHEN NOT EXISTS (SELECT 1 FROM local_vectors WHERE namespace = OLD.namespace)
BEGIN
  DELETE FROM local_vector_snapshots WHERE namespace = OLD.namespace;
END;
