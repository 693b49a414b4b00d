-- Each vector's 8-bit copy, as the in-memory copy of its namespace holds it (codes and error
-- bounds, base64), written beside the f32 vector: building the copy reads this instead of the
-- f32 hex, about a fifth of the bytes. The suffix is the format: a new format gets a new column.
-- NULL means "not stored" (rows written before this migration, or by SQL that wrote only the
-- vector): the build encodes those from the f32 vector and writes the text back.
ALTER TABLE local_vectors ADD COLUMN quantized_v1 TEXT;

-- Writing the stored copy alone (the build's write-back) changes nothing a copy holds: the
-- generation moves only when a column the copy or a query reads changes.
DROP TRIGGER IF EXISTS local_vectors_generation_update;
CREATE TRIGGER local_vectors_generation_update
AFTER UPDATE OF namespace, id, dims, vector, metadata, path, language, tags ON local_vectors
BEGIN
  INSERT INTO local_vector_generations (namespace, generation)
    SELECT NEW.namespace, 0 WHERE NOT EXISTS
      (SELECT 1 FROM local_vector_generations WHERE namespace = NEW.namespace);
  UPDATE local_vector_generations SET generation = generation + 1
   WHERE namespace IN (NEW.namespace, OLD.namespace);
  INSERT INTO local_vector_changes (namespace, generation, row)
    SELECT namespace, generation, NEW.rowid FROM local_vector_generations
     WHERE namespace IN (NEW.namespace, OLD.namespace);
  INSERT INTO local_vector_changes (namespace, generation, row)
    SELECT namespace, generation, OLD.rowid FROM local_vector_generations
     WHERE namespace IN (NEW.namespace, OLD.namespace) AND OLD.rowid <> NEW.rowid;
END;

-- A vector changed without its stored copy (SQL that writes only the vector): the stored copy no
-- longer matches it and is forgotten, so nothing ever reads codes of an older vector.
CREATE TRIGGER IF NOT EXISTS local_vectors_quantized_stale
AFTER UPDATE OF vector, dims ON local_vectors
WHEN NEW.quantized_v1 IS NOT NULL AND NEW.quantized_v1 IS OLD.quantized_v1
  AND (NEW.vector IS NOT OLD.vector OR NEW.dims IS NOT OLD.dims)
BEGIN
  UPDATE local_vectors SET quantized_v1 = NULL WHERE rowid = NEW.rowid;
END;
