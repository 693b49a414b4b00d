-- A generation counter per namespace of `chunks`, bumped by triggers on every insert, update and
-- delete (whoever writes), with the time of the last change (unix ms).
--
-- The worker keeps an in-memory BM25 copy of a namespace's keyword index and trusts it only at
-- the generation it was built at. It builds one only for a namespace at rest (no change for a
-- short while): a namespace being written is answered by its FTS5 index, instead of rebuilding the
-- copy after every batch of an ingestion. (No `INSERT OR IGNORE` / upsert in the bodies: the outer
-- statement's conflict policy would override it, and a REPLACE would reset the counter.)
CREATE TABLE IF NOT EXISTS keyword_generations (
  namespace  TEXT PRIMARY KEY,
  generation INTEGER NOT NULL DEFAULT 0,
  changed_at REAL NOT NULL DEFAULT 0
);

CREATE TRIGGER IF NOT EXISTS chunks_keyword_generation_insert AFTER INSERT ON chunks
BEGIN
  INSERT INTO keyword_generations (namespace, generation, changed_at)
    SELECT NEW.namespace, 0, 0 WHERE NOT EXISTS
      (SELECT 1 FROM keyword_generations WHERE namespace = NEW.namespace);
  UPDATE keyword_generations
     SET generation = generation + 1, changed_at = (julianday('now') - 2440587.5) * 86400000.0
   WHERE namespace = NEW.namespace;
END;

-- Only the columns a copy holds (the keyword index's three, and what filters and ties read).
CREATE TRIGGER IF NOT EXISTS chunks_keyword_generation_update
AFTER UPDATE OF namespace, id, path, language, symbol_name, search_text, tags ON chunks
BEGIN
  INSERT INTO keyword_generations (namespace, generation, changed_at)
    SELECT NEW.namespace, 0, 0 WHERE NOT EXISTS
      (SELECT 1 FROM keyword_generations WHERE namespace = NEW.namespace);
  UPDATE keyword_generations
     SET generation = generation + 1, changed_at = (julianday('now') - 2440587.5) * 86400000.0
   WHERE namespace IN (NEW.namespace, OLD.namespace);
END;

CREATE TRIGGER IF NOT EXISTS chunks_keyword_generation_delete AFTER DELETE ON chunks
BEGIN
  INSERT INTO keyword_generations (namespace, generation, changed_at)
    SELECT OLD.namespace, 0, 0 WHERE NOT EXISTS
      (SELECT 1 FROM keyword_generations WHERE namespace = OLD.namespace);
  UPDATE keyword_generations
     SET generation = generation + 1, changed_at = (julianday('now') - 2440587.5) * 86400000.0
   WHERE namespace = OLD.namespace;
END;
