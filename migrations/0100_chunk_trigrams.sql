-- `repo.grep`'s index: the trigrams of every indexed chunk's text (FTS5's trigram tokenizer, case
-- folded), so a pattern holding a literal of 3+ characters reads only the files whose chunks
-- contain it. External content over `chunks`, kept in sync by triggers like `chunks_fts`; chunk
-- plans (`symbol-plan`, generated text, not file text) are left out. `detail = full`: substring
-- (phrase) queries need token positions.
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_trigrams USING fts5(
  text,
  content = 'chunks', content_rowid = 'rowid',
  tokenize = 'trigram', detail = full
);
CREATE TRIGGER IF NOT EXISTS chunk_trigrams_ai AFTER INSERT ON chunks WHEN new.type <> 'symbol-plan' BEGIN
  INSERT INTO chunk_trigrams (rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS chunk_trigrams_ad AFTER DELETE ON chunks WHEN old.type <> 'symbol-plan' BEGIN
  INSERT INTO chunk_trigrams (chunk_trigrams, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER IF NOT EXISTS chunk_trigrams_au AFTER UPDATE OF text, type ON chunks BEGIN
  INSERT INTO chunk_trigrams (chunk_trigrams, rowid, text)
    SELECT 'delete', old.rowid, old.text WHERE old.type <> 'symbol-plan';
  INSERT INTO chunk_trigrams (rowid, text)
    SELECT new.rowid, new.text WHERE new.type <> 'symbol-plan';
END;
-- Chunks indexed before this migration.
INSERT INTO chunk_trigrams (rowid, text) SELECT rowid, text FROM chunks WHERE type <> 'symbol-plan';
