-- edgerag D1 schema, part 1: namespaces, jobs, files, chunks (+ FTS5), runs, local vectors.
-- Later migrations are numbered 0002+; never edit a migration that has landed.

-- One namespace per repository: 'repo:<owner>/<name>'.
CREATE TABLE namespaces (
  id            TEXT PRIMARY KEY,
  owner         TEXT NOT NULL,
  name          TEXT NOT NULL,
  ref           TEXT,
  source        TEXT,                      -- 'github' | 'upload'
  status        TEXT NOT NULL DEFAULT 'EMPTY' CHECK (status IN ('EMPTY', 'INDEXING', 'READY', 'FAILED')),
  ready_at      TEXT,                      -- last time it became READY (search picks the latest)
  embed_model   TEXT,                      -- model/dims of the vectors stored for it; never mixed
  embed_dims    INTEGER,
  file_count    INTEGER NOT NULL DEFAULT 0,
  chunk_count   INTEGER NOT NULL DEFAULT 0,
  fetched_at    TEXT,
  checksum      TEXT,                      -- of the fetched archive, when fetched
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  UNIQUE (owner, name)
);

CREATE TABLE repo_rag_index_job (
  id               TEXT PRIMARY KEY,
  namespace        TEXT NOT NULL,
  owner            TEXT NOT NULL,
  name             TEXT NOT NULL,
  ref              TEXT,
  source           TEXT NOT NULL,          -- 'github' | 'upload' | 'delete'
  status           TEXT NOT NULL CHECK (status IN ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED')),
  stage            TEXT,                   -- fetch | chunk | embed | index | done
  attempt          INTEGER NOT NULL DEFAULT 0,
  max_attempts     INTEGER NOT NULL DEFAULT 5,
  queued_at        TEXT NOT NULL,
  started_at       TEXT,
  completed_at     TEXT,
  files_total      INTEGER NOT NULL DEFAULT 0,
  files_done       INTEGER NOT NULL DEFAULT 0,
  files_added      INTEGER NOT NULL DEFAULT 0,
  files_changed    INTEGER NOT NULL DEFAULT 0,
  files_unchanged  INTEGER NOT NULL DEFAULT 0,
  files_deleted    INTEGER NOT NULL DEFAULT 0,
  files_skipped    INTEGER NOT NULL DEFAULT 0,
  skipped          TEXT NOT NULL DEFAULT '[]',   -- JSON [{path, reason}]
  chunks_total     INTEGER NOT NULL DEFAULT 0,
  chunks_embedded  INTEGER NOT NULL DEFAULT 0,
  chunks_indexed   INTEGER NOT NULL DEFAULT 0,
  last_error       TEXT                          -- JSON {code, message, stage, at}
);
CREATE INDEX job_by_namespace ON repo_rag_index_job (namespace, queued_at);

-- Files of a namespace as last indexed.
CREATE TABLE files (
  namespace     TEXT NOT NULL,
  path          TEXT NOT NULL,
  content_hash  TEXT NOT NULL,
  size          INTEGER NOT NULL,
  language      TEXT NOT NULL,
  chunk_count   INTEGER NOT NULL DEFAULT 0,
  job_id        TEXT,
  updated_at    TEXT NOT NULL,
  PRIMARY KEY (namespace, path)
);

-- Chunks with every field of the chunk schema. `rowid` keys the FTS index.
CREATE TABLE chunks (
  namespace      TEXT NOT NULL,
  id             TEXT NOT NULL,
  path           TEXT NOT NULL,
  chunk_index    INTEGER NOT NULL,
  language       TEXT NOT NULL,
  type           TEXT NOT NULL,
  text           TEXT NOT NULL,
  text_hash      TEXT NOT NULL,
  start_line     INTEGER NOT NULL,
  end_line       INTEGER NOT NULL,
  start_byte     INTEGER NOT NULL,
  end_byte       INTEGER NOT NULL,
  token_count    INTEGER NOT NULL,
  keywords       TEXT NOT NULL,          -- JSON array
  metadata       TEXT NOT NULL,          -- JSON ChunkMetadata
  symbol_name    TEXT,
  parent_symbol  TEXT,
  span_hash      TEXT NOT NULL,
  search_text    TEXT NOT NULL,          -- what FTS indexes: text + split identifiers + path words
  updated_at     TEXT NOT NULL,
  version        INTEGER NOT NULL,
  embedded       INTEGER NOT NULL DEFAULT 0,
  UNIQUE (namespace, id)
);
CREATE INDEX chunk_by_path ON chunks (namespace, path, chunk_index);
CREATE INDEX chunk_by_text_hash ON chunks (text_hash);

-- BM25 over chunk text, path and symbol names; external content kept in sync by triggers.
-- Write chunks with INSERT ... ON CONFLICT DO UPDATE (not INSERT OR REPLACE) so triggers fire.
CREATE VIRTUAL TABLE chunks_fts USING fts5(
  search_text, path, symbol_name,
  content = 'chunks', content_rowid = 'rowid',
  tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
  INSERT INTO chunks_fts (rowid, search_text, path, symbol_name)
  VALUES (new.rowid, new.search_text, new.path, new.symbol_name);
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
  INSERT INTO chunks_fts (chunks_fts, rowid, search_text, path, symbol_name)
  VALUES ('delete', old.rowid, old.search_text, old.path, old.symbol_name);
END;
CREATE TRIGGER chunks_au AFTER UPDATE ON chunks BEGIN
  INSERT INTO chunks_fts (chunks_fts, rowid, search_text, path, symbol_name)
  VALUES ('delete', old.rowid, old.search_text, old.path, old.symbol_name);
  INSERT INTO chunks_fts (rowid, search_text, path, symbol_name)
  VALUES (new.rowid, new.search_text, new.path, new.symbol_name);
END;

-- Run records: one per stage execution summary.
CREATE TABLE index_runs (
  id              TEXT PRIMARY KEY,
  job_id          TEXT NOT NULL,
  namespace       TEXT NOT NULL,
  kind            TEXT NOT NULL,
  processed       INTEGER NOT NULL DEFAULT 0,
  written_chunks  INTEGER NOT NULL DEFAULT 0,
  skipped_chunks  INTEGER NOT NULL DEFAULT 0,
  pages           INTEGER NOT NULL DEFAULT 0,
  duration_ms     INTEGER NOT NULL DEFAULT 0,
  rate            REAL NOT NULL DEFAULT 0,
  started_at      TEXT NOT NULL,
  completed_at    TEXT
);

-- The local exact vector index (used when no Vectorize binding exists): little-endian f32 blobs.
CREATE TABLE local_vectors (
  namespace   TEXT NOT NULL,
  id          TEXT NOT NULL,
  dims        INTEGER NOT NULL,
  vector      BLOB NOT NULL,
  metadata    TEXT NOT NULL,            -- JSON VectorMetadata
  path        TEXT NOT NULL,
  language    TEXT NOT NULL,
  tags        TEXT NOT NULL DEFAULT '', -- ',tag1,tag2,' for LIKE filtering
  UNIQUE (namespace, id)
);

-- Embeddings cached by content hash + model: the same text is never embedded twice.
CREATE TABLE embedding_cache (
  model      TEXT NOT NULL,
  text_hash  TEXT NOT NULL,
  dims       INTEGER NOT NULL,
  vector     BLOB NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (model, text_hash)
);
