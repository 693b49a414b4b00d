//! Scoped API keys, the audit log of writes and the local rate-limit windows, all in the catalog
//! database ([`crate::store::Stores::catalog`]).
use serde::{Deserialize, Serialize};

use super::{Db, StoreResult};
use crate::store::args;

/// A key's row (the secret's hash stays in here; views never carry it).
#[derive(Debug, Clone, Deserialize)]
pub struct KeyRow {
    pub id: String,
    pub name: String,
    pub secret_hash: String,
    pub scopes: String,
    pub namespaces: String,
    pub created_at: String,
    pub created_by: String,
    pub revoked_at: Option<String>,
}

pub struct NewKey<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub secret_hash: &'a str,
    pub scopes: &'a [String],
    pub namespaces: &'a [String],
    pub created_by: &'a str,
}

pub async fn insert(db: &Db, key: &NewKey<'_>, now: &str) -> StoreResult<()> {
    let scopes = super::json_array(key.scopes)?;
    let namespaces = super::json_array(key.namespaces)?;
    db.run(
        "INSERT INTO api_keys (id, name, secret_hash, scopes, namespaces, created_at, created_by) \
         VALUES (?, ?, ?, ?, ?, ?, ?)",
        &args![key.id, key.name, key.secret_hash, scopes.as_str(), namespaces.as_str(), now, key.created_by],
    )
    .await?;
    Ok(())
}

pub async fn get(db: &Db, id: &str) -> StoreResult<Option<KeyRow>> {
    db.first("SELECT * FROM api_keys WHERE id = ?", &args![id]).await
}

pub async fn list(db: &Db) -> StoreResult<Vec<KeyRow>> {
    db.all("SELECT * FROM api_keys ORDER BY created_at, id", &[]).await
}

/// Revoke a key; `false` when there is no such key (revoking twice keeps the first time).
pub async fn revoke(db: &Db, id: &str, now: &str) -> StoreResult<bool> {
    db.run("UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?", &args![now, id]).await?;
    Ok(get(db, id).await?.is_some())
}

/// One audit record.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    #[serde(default)]
    pub id: i64,
    pub key_id: String,
    pub method: String,
    pub route: String,
    pub namespace: Option<String>,
    pub job_id: Option<String>,
    pub status: i64,
    pub at: String,
}

#[derive(Deserialize)]
struct AuditDbRow {
    id: i64,
    key_id: String,
    method: String,
    route: String,
    namespace: Option<String>,
    job_id: Option<String>,
    status: i64,
    at: String,
}

pub async fn audit(db: &Db, r: &AuditRecord) -> StoreResult<()> {
    db.run(
        "INSERT INTO audit_log (key_id, method, route, namespace, job_id, status, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        &args![
            r.key_id.as_str(),
            r.method.as_str(),
            r.route.as_str(),
            r.namespace.as_deref(),
            r.job_id.as_deref(),
            r.status,
            r.at.as_str()
        ],
    )
    .await?;
    Ok(())
}

/// Audit records newest first, before `before` (an id) when given; `key_id` filters.
pub async fn audit_page(
    db: &Db,
    key_id: Option<&str>,
    before: Option<i64>,
    limit: u32,
) -> StoreResult<Vec<AuditRecord>> {
    let rows: Vec<AuditDbRow> = db
        .all(
            "SELECT * FROM audit_log WHERE (?1 IS NULL OR key_id = ?1) AND (?2 IS NULL OR id < ?2) \
             ORDER BY id DESC LIMIT ?3",
            &args![key_id, before, i64::from(limit)],
        )
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| AuditRecord {
            id: r.id,
            key_id: r.key_id,
            method: r.method,
            route: r.route,
            namespace: r.namespace,
            job_id: r.job_id,
            status: r.status,
            at: r.at,
        })
        .collect())
}

#[derive(Deserialize)]
struct CountRow {
    count: i64,
}

/// Count one request in `key_id`'s window starting at `window_start` (seconds); returns the
/// window's count including this request. Older windows of the key are dropped.
pub async fn count_request(db: &Db, key_id: &str, window_start: i64) -> StoreResult<u64> {
    let statements = vec![
        db.stmt(
            "DELETE FROM rate_windows WHERE key_id = ? AND window_start < ?",
            &args![key_id, window_start],
        )?,
        db.stmt(
            "INSERT INTO rate_windows (key_id, window_start, count) VALUES (?, ?, 1) \
             ON CONFLICT (key_id, window_start) DO UPDATE SET count = count + 1 RETURNING count",
            &args![key_id, window_start],
        )?,
    ];
    let rows = db.batch_rows::<CountRow>(statements).await?;
    Ok(rows.get(1).and_then(|r| r.first()).map_or(1, |r| r.count.max(0) as u64))
}
