-- A generation counter per namespace of the local vector index, bumped by triggers on every
-- insert, update and delete of `local_vectors` (whoever writes: the index, a test, a script).
-- The worker keeps a compact in-memory copy of a namespace's vectors and trusts it only while the
-- namespace's generation is the one it was built at. (No `INSERT OR IGNORE` in the bodies: the
-- outer statement's conflict policy — the index's upsert — would override it.)
CREATE TABLE IF NOT EXISTS local_vector_generations (
  namespace  TEXT PRIMARY KEY,
  generation INTEGER NOT NULL DEFAULT 0
);

CREATE TRIGGER IF NOT EXISTS local_vectors_generation_insert AFTER INSERT ON local_vectors
BEGIN
  INSERT INTO local_vector_generations (namespace, generation)
    SELECT NEW.namespace, 0 WHERE NOT EXISTS
      (SELECT 1 FROM local_vector_generations WHERE namespace = NEW.namespace);
  UPDATE local_vector_generations SET generation = generation + 1 WHERE namespace = NEW.namespace;
END;

CREATE TRIGGER IF NOT EXISTS local_vectors_generation_update AFTER UPDATE ON local_vectors
BEGIN
  INSERT INTO local_vector_generations (namespace, generation)
    SELECT NEW.namespace, 0 WHERE NOT EXISTS
      (SELECT 1 FROM local_vector_generations WHERE namespace = NEW.namespace);
  UPDATE local_vector_generations SET generation = generation + 1
   WHERE namespace IN (NEW.namespace, OLD.namespace);
END;

CREATE TRIGGER IF NOT EXISTS local_vectors_generation_delete AFTER DELETE ON local_vectors
BEGIN
  INSERT INTO local_vector_generations (namespace, generation)
    SELECT OLD.namespace, 0 WHERE NOT EXISTS
      (SELECT 1 FROM local_vector_generations WHERE namespace = OLD.namespace);
  UPDATE local_vector_generations SET generation = generation + 1 WHERE namespace = OLD.namespace;
END;
