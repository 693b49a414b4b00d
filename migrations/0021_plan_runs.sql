-- Per-node chunk plan runs: one row per `POST /v1/repos/{owner}/{name}/plans`, in the namespace's
-- database. A run walks the namespace's graph nodes a page at a time (highest priority first, then
-- by id); `pages` is also the compare-and-set guard that makes each page count exactly once when a
-- queue message is delivered twice. The plan chunks themselves are `chunks` rows of type
-- `symbol-plan`.
CREATE TABLE plan_runs (
  id                 TEXT PRIMARY KEY,
  namespace          TEXT NOT NULL,
  strategy           TEXT NOT NULL,
  status             TEXT NOT NULL CHECK (status IN ('QUEUED', 'RUNNING', 'READY', 'FAILED')),
  dry_run            INTEGER NOT NULL,
  page_size          INTEGER NOT NULL,
  limit_nodes        INTEGER,
  include_kinds      TEXT,                 -- JSON array of node kinds, NULL: every kind
  with_edges         INTEGER NOT NULL,
  processed_nodes    INTEGER NOT NULL DEFAULT 0,
  written_chunks     INTEGER NOT NULL DEFAULT 0,
  skipped_chunks     INTEGER NOT NULL DEFAULT 0,
  summarized_chunks  INTEGER NOT NULL DEFAULT 0,
  summarize_skipped  INTEGER NOT NULL DEFAULT 0,
  pages              INTEGER NOT NULL DEFAULT 0,
  cursor_priority    INTEGER,              -- the last processed node's priority and id
  cursor_id          TEXT,
  warnings           TEXT NOT NULL DEFAULT '[]',
  last_error         TEXT,                 -- JSON {code, message, at}
  created_at         TEXT NOT NULL,
  started_at         TEXT,
  completed_at       TEXT,
  duration_ms        INTEGER
);
CREATE INDEX plan_runs_by_namespace ON plan_runs (namespace, created_at);
