-- Each vector's 8-bit copy, as the in-memory copy of its namespace holds it (codes and error
-- bounds, base64), written beside the f32 vector by the index: building the copy reads this
-- instead of the f32 hex, about a fifth of the bytes. A table of its own, keyed by the vector's
-- rowid, rather than a column of `local_vectors`: a 384-dim row there is ≈ 2 KB, two to a page,
-- and 550 bytes more would leave one to a page (twice the pages to write and to scan). The
-- column's suffix is the format: a new format gets a column of its own. No row means "not
-- stored" (vectors written before this migration, or by SQL that wrote only the vector): the
-- build encodes those from the f32 vector and writes their copy back.
CREATE TABLE IF NOT EXISTS local_vector_copies (
  row          INTEGER PRIMARY KEY,  -- local_vectors.rowid
  quantized_v1 TEXT NOT NULL
);

-- A copy never outlives its vector, nor a change to it: a vector rewritten (or moved to another
-- dimension) loses its copy until the index writes the new one (in the same batch) or a build
-- writes it back, so nothing ever reads the codes of an older vector.
CREATE TRIGGER IF NOT EXISTS local_vectors_copy_delete AFTER DELETE ON local_vectors
BEGIN
  DELETE FROM local_vector_copies WHERE row = OLD.rowid;
END;

CREATE TRIGGER IF NOT EXISTS local_vectors_copy_stale
AFTER UPDATE OF vector, dims ON local_vectors
WHEN NEW.vector IS NOT OLD.vector OR NEW.dims IS NOT OLD.dims OR NEW.rowid IS NOT OLD.rowid
BEGIN
  DELETE FROM local_vector_copies WHERE row IN (OLD.rowid, NEW.rowid);
END;
