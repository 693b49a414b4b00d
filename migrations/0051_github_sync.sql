-- GitHub repositories kept fresh by themselves: push webhooks, scheduled re-syncs, and fetches
-- queued behind a namespace's active job. `github_repos` and `webhook_deliveries` are read and
-- written only in the first database (the catalog); `pending_fetches` lives with the namespace's
-- jobs. Every table is created in every database so one migration set applies to all of them.

-- One row per repository indexed from GitHub (`POST /v1/repos/{owner}/{name}/index`).
CREATE TABLE IF NOT EXISTS github_repos (
  namespace             TEXT PRIMARY KEY,     -- repo:<owner>/<name>
  owner                 TEXT NOT NULL,
  name                  TEXT NOT NULL,
  ref                   TEXT,                 -- the tracked ref; NULL = the default branch
  -- The push webhook's shared secret. Kept as given because verifying an HMAC needs the key
  -- itself; it is never returned by the API nor logged.
  webhook_secret        TEXT,
  sync_interval_minutes INTEGER,              -- NULL = no scheduled re-sync
  last_sync_at          TEXT,                 -- last fetch requested (API, webhook or schedule)
  created_at            TEXT NOT NULL,
  updated_at            TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS github_repos_by_name ON github_repos (lower(owner), lower(name));

-- Webhook deliveries already handled (`X-GitHub-Delivery`): a redelivery is ignored.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id          TEXT PRIMARY KEY,
  namespace   TEXT NOT NULL,
  event       TEXT NOT NULL,
  outcome     TEXT NOT NULL,
  received_at TEXT NOT NULL
);

-- A GitHub fetch that arrived while another job (e.g. an upload) was active: started when that
-- job finishes (or by the scheduled run), so the request is never lost. One per namespace.
CREATE TABLE IF NOT EXISTS pending_fetches (
  namespace    TEXT PRIMARY KEY,
  owner        TEXT NOT NULL,
  name         TEXT NOT NULL,
  ref          TEXT,
  trigger      TEXT NOT NULL,                 -- api | webhook | schedule
  after_job    TEXT NOT NULL,                 -- the job that was active when it was requested
  requested_at TEXT NOT NULL
);
