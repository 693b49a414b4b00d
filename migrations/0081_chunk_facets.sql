-- A filtered keyword search tests each full-text match's language, path and tags here: one seek
-- by the chunk's rowid in a narrow table, instead of reading the chunk row (which holds the
-- text; reading one per match cost more than scoring the match, so a filter made a search slower
-- than none). `chunk_rowid` is the chunk row's rowid, the key the per-namespace keyword indexes
-- use too; the triggers keep the table in step with `chunks`.
CREATE TABLE IF NOT EXISTS chunk_facets (
  chunk_rowid INTEGER PRIMARY KEY,
  language    TEXT NOT NULL,
  path        TEXT NOT NULL,
  tags        TEXT NOT NULL
);
INSERT OR REPLACE INTO chunk_facets (chunk_rowid, language, path, tags)
  SELECT rowid, language, path, tags FROM chunks;
CREATE TRIGGER IF NOT EXISTS chunk_facets_ins AFTER INSERT ON chunks BEGIN
  INSERT OR REPLACE INTO chunk_facets (chunk_rowid, language, path, tags)
    VALUES (new.rowid, new.language, new.path, new.tags);
END;
CREATE TRIGGER IF NOT EXISTS chunk_facets_upd AFTER UPDATE OF language, path, tags ON chunks BEGIN
  UPDATE chunk_facets SET language = new.language, path = new.path, tags = new.tags
    WHERE chunk_rowid = new.rowid;
END;
CREATE TRIGGER IF NOT EXISTS chunk_facets_del AFTER DELETE ON chunks BEGIN
  DELETE FROM chunk_facets WHERE chunk_rowid = old.rowid;
END;
