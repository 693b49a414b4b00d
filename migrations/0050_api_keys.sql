-- Scoped API keys, the audit log of writes, and the local rate-limit windows. Read and written
-- only in the first database (the catalog); created in every database so one migration set
-- applies to all of them.
CREATE TABLE IF NOT EXISTS api_keys (
  id          TEXT PRIMARY KEY,          -- 16 hex chars, the public part of `erk_<id>_<secret>`
  name        TEXT NOT NULL,
  secret_hash TEXT NOT NULL,             -- BLAKE3 of the secret, hex; the secret is never stored
  scopes      TEXT NOT NULL,             -- JSON array: "read" | "write" | "admin"
  namespaces  TEXT NOT NULL,             -- JSON array of patterns: "owner/*", "owner/name", "*"
  created_at  TEXT NOT NULL,
  created_by  TEXT NOT NULL,
  revoked_at  TEXT
);

CREATE TABLE IF NOT EXISTS audit_log (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  key_id     TEXT NOT NULL,
  method     TEXT NOT NULL,
  route      TEXT NOT NULL,
  namespace  TEXT,
  job_id     TEXT,
  status     INTEGER NOT NULL,
  at         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_log_key ON audit_log (key_id, id);

CREATE TABLE IF NOT EXISTS rate_windows (
  key_id       TEXT NOT NULL,
  window_start INTEGER NOT NULL,
  count        INTEGER NOT NULL,
  PRIMARY KEY (key_id, window_start)
);
