-- One FTS5 index per namespace. A keyword query then reads only its namespace's postings, and its
-- BM25 statistics (document count, average length, document frequency) are the namespace's own:
-- another tenant's rows neither cost time nor move the ranking.
--
-- The worker creates a namespace's index (`kw_<hex of the namespace>`, external content =
-- chunks, plus three triggers on `chunks` limited to that namespace) in the batch that first
-- writes the namespace's chunks, fills it from the rows already there, and records it here; the
-- row exists exactly when the index is complete. Namespaces written before this migration stay in
-- the shared `chunks_fts` (searched as before) until their next index batch moves them.
CREATE TABLE IF NOT EXISTS keyword_indexes (
  namespace   TEXT PRIMARY KEY,
  created_at  TEXT NOT NULL
);

-- The shared index now only follows namespaces that have no index of their own.
DROP TRIGGER IF EXISTS chunks_ai;
DROP TRIGGER IF EXISTS chunks_ad;
DROP TRIGGER IF EXISTS chunks_au;
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks
WHEN NOT EXISTS (SELECT 1 FROM keyword_indexes WHERE namespace = new.namespace) BEGIN
  INSERT INTO chunks_fts (rowid, search_text, path, symbol_name)
  VALUES (new.rowid, new.search_text, new.path, new.symbol_name);
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks
WHEN NOT EXISTS (SELECT 1 FROM keyword_indexes WHERE namespace = old.namespace) BEGIN
  INSERT INTO chunks_fts (chunks_fts, rowid, search_text, path, symbol_name)
  VALUES ('delete', old.rowid, old.search_text, old.path, old.symbol_name);
END;
CREATE TRIGGER chunks_au AFTER UPDATE ON chunks
WHEN NOT EXISTS (SELECT 1 FROM keyword_indexes WHERE namespace = old.namespace) BEGIN
  INSERT INTO chunks_fts (chunks_fts, rowid, search_text, path, symbol_name)
  VALUES ('delete', old.rowid, old.search_text, old.path, old.symbol_name);
  INSERT INTO chunks_fts (rowid, search_text, path, symbol_name)
  VALUES (new.rowid, new.search_text, new.path, new.symbol_name);
END;
