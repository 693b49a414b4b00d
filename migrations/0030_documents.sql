-- Single documents written by an editor (`PUT /v1/repos/{owner}/{name}/documents/{path}`): the
-- latest text is stored at once and chunked later (debounced), so `dirty` says whether the
-- searchable chunks lag behind `version`. `chunked_hash` is the content hash the current chunks
-- were made from: an edit that restores it needs no work.
CREATE TABLE IF NOT EXISTS documents (
  namespace       TEXT NOT NULL,
  path            TEXT NOT NULL,
  version         INTEGER NOT NULL,
  content         TEXT NOT NULL,
  content_hash    TEXT NOT NULL,
  dirty           INTEGER NOT NULL DEFAULT 1,
  chunked_hash    TEXT,
  chunk_runs      INTEGER NOT NULL DEFAULT 0,   -- how many times the document was (re)chunked
  last_chunked_at TEXT,
  last_error      TEXT,                          -- JSON {code, message, at} of the last failed run
  updated_at      TEXT NOT NULL,
  PRIMARY KEY (namespace, path)
);

-- Parents of a chunked document (returned whole by two-stage retrieval); the children are rows of
-- `chunks` whose metadata names their parent.
CREATE TABLE IF NOT EXISTS document_parents (
  namespace    TEXT NOT NULL,
  path         TEXT NOT NULL,
  id           TEXT NOT NULL,
  ord          INTEGER NOT NULL,
  chapter      INTEGER NOT NULL,
  heading_path TEXT NOT NULL,          -- JSON array
  text         TEXT NOT NULL,
  start_char   INTEGER NOT NULL,
  end_char     INTEGER NOT NULL,
  start_line   INTEGER NOT NULL,
  end_line     INTEGER NOT NULL,
  child_count  INTEGER NOT NULL,
  PRIMARY KEY (namespace, path, id)
);
