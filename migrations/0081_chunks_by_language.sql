-- A keyword search filtered by language checks each full-text match against this index (namespace,
-- language, and the rowid every index entry carries) instead of reading the match's chunk row:
-- chunk rows hold the text, so reading them one match at a time cost more than scoring the
-- matches (a language filter made a search slower than none).
CREATE INDEX IF NOT EXISTS chunk_by_language ON chunks (namespace, language);
