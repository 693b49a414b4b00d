-- Which rows of `local_vectors` each generation changed, so that an in-memory copy of a namespace
-- built at an older generation is brought up to date by reading only those rows instead of the
-- whole namespace again. The triggers that bump the generation also log the row (by rowid) under
-- the new generation; the index's own writes forget the log past a few thousand generations and
-- move `logged_from` (a copy built before it is rebuilt). Rows written before this migration were
-- never logged: `logged_from` starts at the current generation.
CREATE TABLE IF NOT EXISTS local_vector_changes (
  namespace  TEXT NOT NULL,
  generation INTEGER NOT NULL,
  row        INTEGER NOT NULL,
  PRIMARY KEY (namespace, generation, row)
) WITHOUT ROWID;

ALTER TABLE local_vector_generations ADD COLUMN logged_from INTEGER NOT NULL DEFAULT 0;
UPDATE local_vector_generations SET logged_from = generation;

DROP TRIGGER IF EXISTS local_vectors_generation_insert;
DROP TRIGGER IF EXISTS local_vectors_generation_update;
DROP TRIGGER IF EXISTS local_vectors_generation_delete;

CREATE TRIGGER local_vectors_generation_insert AFTER INSERT ON local_vectors
BEGIN
  INSERT INTO local_vector_generations (namespace, generation)
    SELECT NEW.namespace, 0 WHERE NOT EXISTS
      (SELECT 1 FROM local_vector_generations WHERE namespace = NEW.namespace);
  UPDATE local_vector_generations SET generation = generation + 1 WHERE namespace = NEW.namespace;
  INSERT INTO local_vector_changes (namespace, generation, row)
    SELECT namespace, generation, NEW.rowid FROM local_vector_generations WHERE namespace = NEW.namespace;
END;

CREATE TRIGGER local_vectors_generation_update AFTER UPDATE ON local_vectors
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

CREATE TRIGGER local_vectors_generation_delete AFTER DELETE ON local_vectors
BEGIN
  INSERT INTO local_vector_generations (namespace, generation)
    SELECT OLD.namespace, 0 WHERE NOT EXISTS
      (SELECT 1 FROM local_vector_generations WHERE namespace = OLD.namespace);
  UPDATE local_vector_generations SET generation = generation + 1 WHERE namespace = OLD.namespace;
  INSERT INTO local_vector_changes (namespace, generation, row)
    SELECT namespace, generation, OLD.rowid FROM local_vector_generations WHERE namespace = OLD.namespace;
END;
