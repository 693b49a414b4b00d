-- A keyword search filtered by a path glob tests each full-text match's path here: one seek by the
-- chunk's rowid in a narrow table, instead of reading the chunk row (which holds the text). Kept
-- in step with `chunks` by the triggers below; `chunk_rowid` is the chunk row's rowid, the key
-- the per-namespace keyword indexes use too.
CREATE TABLE IF NOT EXISTS chunk_paths (
  chunk_rowid INTEGER PRIMARY KEY,
  path        TEXT NOT NULL
);
INSERT OR REPLACE INTO chunk_paths (chunk_rowid, path) SELECT rowid, path FROM chunks;
CREATE TRIGGER IF NOT EXISTS chunk_paths_ins AFTER INSERT ON chunks BEGIN
  INSERT OR REPLACE INTO chunk_paths (chunk_rowid, path) VALUES (new.rowid, new.path);
END;
CREATE TRIGGER IF NOT EXISTS chunk_paths_upd AFTER UPDATE OF path ON chunks BEGIN
  UPDATE chunk_paths SET path = new.path WHERE chunk_rowid = new.rowid;
END;
CREATE TRIGGER IF NOT EXISTS chunk_paths_del AFTER DELETE ON chunks BEGIN
  DELETE FROM chunk_paths WHERE chunk_rowid = old.rowid;
END;
