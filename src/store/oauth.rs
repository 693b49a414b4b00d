//! Sign-in state in the catalog database (migration 0200): clients, authorizations in progress,
//! grants and their codes / tokens. Times are epoch seconds. Single use is an
//! `UPDATE … WHERE used_at IS NULL` that changes one row exactly once.
use serde::Deserialize;

use super::{Db, StoreResult};
use crate::store::args;

#[derive(Debug, Clone, Deserialize)]
pub struct ClientRow {
    pub client_id: String,
    pub kind: String,
    pub client_name: Option<String>,
    pub redirect_uris: String,
    pub expires_at: i64,
}

impl ClientRow {
    pub fn redirect_uris(&self) -> Vec<String> {
        serde_json::from_str(&self.redirect_uris).unwrap_or_default()
    }
}

pub async fn put_client(
    db: &Db,
    client_id: &str,
    kind: &str,
    name: Option<&str>,
    redirect_uris: &[String],
    now: i64,
    expires_at: i64,
) -> StoreResult<()> {
    let uris = super::json_array(redirect_uris)?;
    db.run(
        "INSERT INTO oauth_clients (client_id, kind, client_name, redirect_uris, created_at, expires_at) \
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (client_id) DO UPDATE SET client_name = excluded.client_name, \
         redirect_uris = excluded.redirect_uris, expires_at = excluded.expires_at",
        &args![client_id, kind, name, uris.as_str(), now, expires_at],
    )
    .await?;
    Ok(())
}

/// The client, unless its row expired.
pub async fn client(db: &Db, client_id: &str, now: i64) -> StoreResult<Option<ClientRow>> {
    db.first("SELECT * FROM oauth_clients WHERE client_id = ? AND expires_at > ?", &args![client_id, now])
        .await
}

#[derive(Debug, Clone, Deserialize)]
pub struct RequestRow {
    pub id: String,
    pub browser_hash: String,
    pub client_id: String,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub resource: String,
    pub scope: String,
    pub client_state: Option<String>,
    pub consented: i64,
    pub used_at: Option<i64>,
    pub expires_at: i64,
}

pub async fn insert_request(db: &Db, r: &RequestRow) -> StoreResult<()> {
    db.run(
        "INSERT INTO oauth_requests (id, browser_hash, client_id, redirect_uri, code_challenge, resource, scope, \
         client_state, consented, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)",
        &args![
            r.id.as_str(),
            r.browser_hash.as_str(),
            r.client_id.as_str(),
            r.redirect_uri.as_str(),
            r.code_challenge.as_str(),
            r.resource.as_str(),
            r.scope.as_str(),
            &r.client_state,
            r.expires_at
        ],
    )
    .await?;
    Ok(())
}

pub async fn request(db: &Db, id: &str) -> StoreResult<Option<RequestRow>> {
    db.first("SELECT * FROM oauth_requests WHERE id = ?", &args![id]).await
}

/// Record the user's consent: only once, only from the browser the page was shown to, only
/// before it expires.
pub async fn consent(db: &Db, id: &str, browser_hash: &str, now: i64) -> StoreResult<bool> {
    let changed = db
        .run(
            "UPDATE oauth_requests SET consented = 1 WHERE id = ? AND browser_hash = ? AND consented = 0 \
             AND used_at IS NULL AND expires_at > ?",
            &args![id, browser_hash, now],
        )
        .await?;
    Ok(changed == 1)
}

/// Take a consented request for GitHub's callback: `true` exactly once.
pub async fn take_request(db: &Db, id: &str, browser_hash: &str, now: i64) -> StoreResult<bool> {
    let changed = db
        .run(
            "UPDATE oauth_requests SET used_at = ? WHERE id = ? AND browser_hash = ? AND consented = 1 \
             AND used_at IS NULL AND expires_at > ?",
            &args![now, id, browser_hash, now],
        )
        .await?;
    Ok(changed == 1)
}

#[derive(Debug, Clone, Deserialize)]
pub struct GrantRow {
    pub id: String,
    pub client_id: String,
    pub login: String,
    pub github_id: i64,
    pub github_token: String,
    pub resource: String,
    pub scope: String,
    pub repos: String,
    pub repos_checked_at: i64,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    pub expires_at: i64,
}

impl GrantRow {
    pub fn repos(&self) -> Vec<String> {
        serde_json::from_str(&self.repos).unwrap_or_default()
    }
}

pub async fn insert_grant(db: &Db, g: &GrantRow) -> StoreResult<()> {
    db.run(
        "INSERT INTO oauth_grants (id, client_id, login, github_id, github_token, resource, scope, repos, \
         repos_checked_at, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        &args![
            g.id.as_str(),
            g.client_id.as_str(),
            g.login.as_str(),
            g.github_id,
            g.github_token.as_str(),
            g.resource.as_str(),
            g.scope.as_str(),
            g.repos.as_str(),
            g.repos_checked_at,
            g.created_at,
            g.expires_at
        ],
    )
    .await?;
    Ok(())
}

pub async fn grant(db: &Db, id: &str) -> StoreResult<Option<GrantRow>> {
    db.first("SELECT * FROM oauth_grants WHERE id = ?", &args![id]).await
}

pub async fn set_repos(db: &Db, grant_id: &str, repos: &[String], now: i64) -> StoreResult<()> {
    let repos = super::json_array(repos)?;
    db.run(
        "UPDATE oauth_grants SET repos = ?, repos_checked_at = ? WHERE id = ?",
        &args![repos.as_str(), now, grant_id],
    )
    .await?;
    Ok(())
}

/// Revoke a grant and everything issued under it.
pub async fn revoke_grant(db: &Db, grant_id: &str, now: i64) -> StoreResult<()> {
    db.batch(vec![
        db.stmt(
            "UPDATE oauth_grants SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?",
            &args![now, grant_id],
        )?,
        db.stmt(
            "UPDATE oauth_tokens SET used_at = COALESCE(used_at, ?) WHERE grant_id = ?",
            &args![now, grant_id],
        )?,
    ])
    .await?;
    Ok(())
}

#[derive(Debug, Clone, Deserialize)]
pub struct TokenRow {
    pub hash: String,
    pub kind: String,
    pub grant_id: String,
    pub redirect_uri: Option<String>,
    pub code_challenge: Option<String>,
    pub used_at: Option<i64>,
    pub expires_at: i64,
}

pub struct NewToken<'a> {
    pub hash: &'a str,
    pub kind: &'a str,
    pub grant_id: &'a str,
    pub redirect_uri: Option<&'a str>,
    pub code_challenge: Option<&'a str>,
    pub expires_at: i64,
}

pub async fn insert_tokens(db: &Db, tokens: &[NewToken<'_>]) -> StoreResult<()> {
    let mut statements = Vec::with_capacity(tokens.len());
    for t in tokens {
        statements.push(db.stmt(
            "INSERT INTO oauth_tokens (hash, kind, grant_id, redirect_uri, code_challenge, expires_at) \
             VALUES (?, ?, ?, ?, ?, ?)",
            &args![t.hash, t.kind, t.grant_id, t.redirect_uri, t.code_challenge, t.expires_at],
        )?);
    }
    db.batch(statements).await?;
    Ok(())
}

pub async fn token(db: &Db, hash: &str) -> StoreResult<Option<TokenRow>> {
    db.first("SELECT * FROM oauth_tokens WHERE hash = ?", &args![hash]).await
}

/// Mark a code or refresh token used: `true` exactly once.
pub async fn use_token(db: &Db, hash: &str, now: i64) -> StoreResult<bool> {
    let changed = db
        .run("UPDATE oauth_tokens SET used_at = ? WHERE hash = ? AND used_at IS NULL", &args![now, hash])
        .await?;
    Ok(changed == 1)
}

/// An access token with its grant, in one statement (every authenticated request reads it).
#[derive(Debug, Clone, Deserialize)]
pub struct AccessRow {
    pub kind: String,
    pub used_at: Option<i64>,
    pub expires_at: i64,
    pub grant_id: String,
    pub login: String,
    pub resource: String,
    pub scope: String,
    pub repos: String,
    pub revoked_at: Option<i64>,
}

pub async fn access(db: &Db, hash: &str) -> StoreResult<Option<AccessRow>> {
    db.first(
        "SELECT t.kind, t.used_at, t.expires_at, g.id AS grant_id, g.login, g.resource, g.scope, g.repos, \
         g.revoked_at FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.hash = ?",
        &args![hash],
    )
    .await
}

/// Delete what expired more than a day ago (kept that long so a late replay is still told
/// apart from garbage).
pub async fn sweep(db: &Db, now: i64) -> StoreResult<()> {
    let before = now - 86_400;
    db.batch(vec![
        db.stmt("DELETE FROM oauth_tokens WHERE expires_at < ?", &args![before])?,
        db.stmt("DELETE FROM oauth_requests WHERE expires_at < ?", &args![before])?,
        db.stmt("DELETE FROM oauth_grants WHERE expires_at < ?", &args![before])?,
        db.stmt("DELETE FROM oauth_clients WHERE expires_at < ?", &args![before])?,
    ])
    .await?;
    Ok(())
}
