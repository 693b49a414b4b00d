-- edgerag D1 schema, part 2 (worker): staging for the ingestion pipeline, job bookkeeping for
-- exactly-once completion, and dead letters.

-- 0 while a GitHub job's fetch stage has not finished listing the archive (the job cannot
-- complete before that); uploads are staged by the request itself.
ALTER TABLE repo_rag_index_job ADD COLUMN staged INTEGER NOT NULL DEFAULT 1;
-- BLAKE3 of the fetched archive (GitHub jobs).
ALTER TABLE repo_rag_index_job ADD COLUMN checksum TEXT;
-- What an indexed file depends on besides its bytes: chunker version + embedding model.
ALTER TABLE repo_rag_index_job ADD COLUMN index_key TEXT;
-- Set by the one statement that moves the job to SUCCEEDED/FAILED; the side effects in the same
-- D1 batch only apply when this invocation's token landed, so they happen exactly once.
ALTER TABLE repo_rag_index_job ADD COLUMN finish_token TEXT;
-- Last time a stage message started work on the job (a job silent for too long is stalled).
ALTER TABLE repo_rag_index_job ADD COLUMN heartbeat_at TEXT;
-- Stage messages handled (the run record's `pages`).
ALTER TABLE repo_rag_index_job ADD COLUMN messages INTEGER NOT NULL DEFAULT 0;

-- At most one QUEUED/RUNNING job per namespace: concurrent requests join it instead of racing.
CREATE UNIQUE INDEX job_one_active ON repo_rag_index_job (namespace)
  WHERE status IN ('QUEUED', 'RUNNING');

ALTER TABLE files ADD COLUMN index_key TEXT;

-- One row per file a job accounts for. Stage messages carry (job_id, seq range) and act on the
-- rows of that range that are in the status their stage consumes, so replays are no-ops:
--   pending (added/changed) --chunk--> chunked --embed--> embedded --index--> done
--   deleted rows start at 'embedded' (only the index stage has work), unchanged/skipped at 'done'.
-- `content` holds the file body between the request (or the fetch stage) and the chunk stage;
-- it is cleared when the job finishes.
CREATE TABLE job_files (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id        TEXT NOT NULL,
  namespace     TEXT NOT NULL,
  path          TEXT NOT NULL,
  change        TEXT NOT NULL CHECK (change IN ('added', 'changed', 'unchanged', 'deleted', 'skipped')),
  reason        TEXT,
  status        TEXT NOT NULL CHECK (status IN ('pending', 'chunked', 'embedded', 'done')),
  content       TEXT,
  content_hash  TEXT,
  size          INTEGER NOT NULL DEFAULT 0,
  language      TEXT,
  chunk_count   INTEGER NOT NULL DEFAULT 0,
  updated_at    TEXT NOT NULL,
  UNIQUE (job_id, path)
);
CREATE INDEX job_files_by_status ON job_files (job_id, status, seq);

-- Chunks produced by the chunk stage, with their vectors once the embed stage ran; the index
-- stage moves them to `chunks` + the vector index in one transaction per file.
CREATE TABLE job_chunks (
  job_id       TEXT NOT NULL,
  seq          INTEGER NOT NULL,         -- job_files.seq of the file
  chunk_index  INTEGER NOT NULL,
  chunk        TEXT NOT NULL,            -- Chunk JSON (the core's serialization)
  text_hash    TEXT NOT NULL,
  vector       TEXT,                     -- JSON array of f32, set by the embed stage
  PRIMARY KEY (job_id, seq, chunk_index)
);

-- Messages that exhausted their attempts (or could not be processed at all).
CREATE TABLE dead_letters (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  queue       TEXT NOT NULL,
  job_id      TEXT,
  body        TEXT NOT NULL,
  error       TEXT,
  attempts    INTEGER NOT NULL DEFAULT 0,
  created_at  TEXT NOT NULL
);
CREATE INDEX dead_letters_by_job ON dead_letters (job_id);
