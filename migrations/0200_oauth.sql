-- Sign-in (OAuth 2.1 for the MCP endpoint and the API, GitHub as the identity provider). Read
-- and written only in the first database (the catalog); created in every database so one
-- migration set applies to all of them. Times are epoch seconds; every row has an expiry and is
-- deleted a day after it by the scheduled run (`store::oauth::sweep`). Secrets (codes, tokens, browser bindings)
-- are stored as BLAKE3 hashes only.

-- Clients: registered (RFC 7591, `client_id` random) or known by their metadata document
-- (`client_id` is the document's https URL; the row caches it until `expires_at`).
CREATE TABLE IF NOT EXISTS oauth_clients (
  client_id     TEXT PRIMARY KEY,
  kind          TEXT NOT NULL,              -- registered | document
  client_name   TEXT,
  redirect_uris TEXT NOT NULL,              -- JSON array, compared exactly
  created_at    INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL
);

-- An authorization in progress: the client's request, checked, waiting for the user's consent
-- and then for GitHub's callback. `id` is the hash of the state sent to GitHub; `browser_hash`
-- the hash of the cookie set on the consent page (the callback must come from that browser).
CREATE TABLE IF NOT EXISTS oauth_requests (
  id             TEXT PRIMARY KEY,
  browser_hash   TEXT NOT NULL,
  client_id      TEXT NOT NULL,
  redirect_uri   TEXT NOT NULL,
  code_challenge TEXT NOT NULL,
  resource       TEXT NOT NULL,
  scope          TEXT NOT NULL,
  client_state   TEXT,
  consented      INTEGER NOT NULL DEFAULT 0,
  used_at        INTEGER,
  expires_at     INTEGER NOT NULL
);

-- A signed-in user's grant to one client for one resource: what GitHub says the user may pull,
-- as of `repos_checked_at`, and the GitHub user token (sealed, AES-256-GCM) to ask again.
CREATE TABLE IF NOT EXISTS oauth_grants (
  id               TEXT PRIMARY KEY,
  client_id        TEXT NOT NULL,
  login            TEXT NOT NULL,
  github_id        INTEGER NOT NULL,
  github_token     TEXT NOT NULL,
  resource         TEXT NOT NULL,
  scope            TEXT NOT NULL,
  repos            TEXT NOT NULL,           -- JSON array of lower-case `owner/name`
  repos_checked_at INTEGER NOT NULL,
  created_at       INTEGER NOT NULL,
  revoked_at       INTEGER,
  expires_at       INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS oauth_grants_login ON oauth_grants (login);

-- Codes, access tokens and refresh tokens of a grant. A code or refresh token is used once
-- (`used_at`); a second use revokes the grant.
CREATE TABLE IF NOT EXISTS oauth_tokens (
  hash           TEXT PRIMARY KEY,
  kind           TEXT NOT NULL,             -- code | access | refresh
  grant_id       TEXT NOT NULL,
  redirect_uri   TEXT,                      -- code: the redirect URI it was sent to
  code_challenge TEXT,                      -- code: PKCE S256 challenge
  used_at        INTEGER,
  expires_at     INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS oauth_tokens_grant ON oauth_tokens (grant_id);
