//! `POST /v1/keys` (mint), `GET /v1/keys` (list), `DELETE /v1/keys/{id}` (revoke) and
//! `GET /v1/audit` (the write log). The router lets only admins here.
use serde::{Deserialize, Serialize};
use worker::{Env, Request, Response};

use crate::auth::{self, NamespacePattern, Scope};
use crate::error::ApiError;
use crate::http::{parse_json, read_body, reply, ApiResult};
use crate::store::keys::{self, NewKey};
use crate::store::Stores;

/// Patterns per key at most.
const MAX_PATTERNS: usize = 100;

/// `POST /v1/keys` body.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateKeyRequest {
    /// A label for people (1–100 chars).
    pub name: String,
    /// `read`, `write`, `admin`.
    pub scopes: Vec<String>,
    /// `owner/*`, `owner/name` or `*`.
    pub namespaces: Vec<String>,
}

/// A key as listed (never the secret nor its hash).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyView {
    pub id: String,
    pub name: String,
    pub scopes: Vec<String>,
    pub namespaces: Vec<String>,
    pub created_at: String,
    pub created_by: String,
    pub revoked_at: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CreatedKey {
    /// The bearer token: shown this once.
    token: String,
    key: KeyView,
}

fn view(row: keys::KeyRow) -> KeyView {
    KeyView {
        scopes: serde_json::from_str(&row.scopes).unwrap_or_default(),
        namespaces: serde_json::from_str(&row.namespaces).unwrap_or_default(),
        id: row.id,
        name: row.name,
        created_at: row.created_at,
        created_by: row.created_by,
        revoked_at: row.revoked_at,
    }
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::bad_request("INVALID_KEY_REQUEST", message)
}

/// `bytes` random bytes as hex, from the runtime's CSPRNG.
fn random_hex(bytes: u32) -> ApiResult<String> {
    crate::random::hex(bytes)
}

pub async fn create(req: &mut Request, env: &Env, creator: &str) -> ApiResult<Response> {
    let body = read_body(req, 64 * 1024).await?;
    let request: CreateKeyRequest = parse_json(req, &body, false)?;
    let name = request.name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(invalid("`name` must be 1–100 characters"));
    }
    if request.scopes.is_empty() {
        return Err(invalid("`scopes` must name at least one of read, write, admin"));
    }
    let mut scopes: Vec<Scope> = Vec::new();
    for s in &request.scopes {
        scopes.push(
            Scope::parse(s).ok_or_else(|| invalid(format!("unknown scope {s:?} (read, write, admin)")))?,
        );
    }
    scopes.sort();
    scopes.dedup();
    if request.namespaces.is_empty() || request.namespaces.len() > MAX_PATTERNS {
        return Err(invalid(format!("`namespaces` must list 1–{MAX_PATTERNS} patterns")));
    }
    let mut patterns = Vec::new();
    for p in &request.namespaces {
        patterns.push(NamespacePattern::parse(p).map_err(invalid)?.to_string());
    }
    let id = random_hex(8)?;
    let secret = random_hex(32)?;
    let token = format!("{}{id}_{secret}", auth::KEY_PREFIX);
    let scopes: Vec<String> = scopes.iter().map(|s| s.as_str().to_string()).collect();
    let hash = auth::hash_secret(&secret);
    let stores = Stores::from_env(env)?;
    let new = NewKey {
        id: &id,
        name,
        secret_hash: &hash,
        scopes: &scopes,
        namespaces: &patterns,
        created_by: creator,
    };
    keys::insert(stores.catalog(), &new, &crate::time::now_iso()).await?;
    let row = keys::get(stores.catalog(), &id)
        .await?
        .ok_or_else(|| ApiError::internal("key", "the new key was not stored"))?;
    crate::log::info("key_created", &[("key", &id)]);
    reply(201, &CreatedKey { token, key: view(row) })
}

pub async fn list(env: &Env) -> ApiResult<Response> {
    let stores = Stores::from_env(env)?;
    let rows = keys::list(stores.catalog()).await?;
    reply(200, &serde_json::json!({ "keys": rows.into_iter().map(view).collect::<Vec<_>>() }))
}

pub async fn revoke(env: &Env, id: &str) -> ApiResult<Response> {
    let stores = Stores::from_env(env)?;
    if !keys::revoke(stores.catalog(), id, &crate::time::now_iso()).await? {
        return Err(ApiError::not_found("KEY_NOT_FOUND", format!("no key {id}")));
    }
    crate::log::info("key_revoked", &[("key", id)]);
    let row =
        keys::get(stores.catalog(), id).await?.ok_or_else(|| ApiError::not_found("KEY_NOT_FOUND", id))?;
    reply(200, &view(row))
}

/// `GET /v1/audit?key=<id>&before=<id>&limit=<n>`.
pub async fn audit(req: &Request, env: &Env) -> ApiResult<Response> {
    let mut key = None;
    let mut before = None;
    let mut limit = 100u32;
    let url = req.url().map_err(|e| ApiError::internal("url", e))?;
    for (k, v) in url.query_pairs() {
        let bad = || ApiError::bad_request("INVALID_REQUEST", format!("invalid `{k}`: {v:?}"));
        match k.as_ref() {
            "key" => key = Some(v.to_string()),
            "before" => before = Some(v.parse::<i64>().map_err(|_| bad())?),
            "limit" => limit = v.parse::<u32>().ok().filter(|n| (1..=1000).contains(n)).ok_or_else(bad)?,
            other => {
                return Err(ApiError::bad_request(
                    "INVALID_REQUEST",
                    format!("unknown query parameter {other:?}"),
                ))
            }
        }
    }
    let stores = Stores::from_env(env)?;
    let records = keys::audit_page(stores.catalog(), key.as_deref(), before, limit).await?;
    reply(200, &serde_json::json!({ "records": records }))
}

/// `GET /v1/me`.
pub fn me(access: &crate::auth::Access) -> ApiResult<Response> {
    use crate::auth::Principal;
    let (kind, key_id, login) = match &access.who {
        Principal::Anonymous => ("anonymous", None, None),
        Principal::Root => ("api-token", None, None),
        Principal::Key(g) => ("key", Some(g.id.clone()), None),
        Principal::User(u) => ("user", None, Some(u.login.clone())),
    };
    reply(200, &crate::api::WhoAmI { kind: kind.into(), key_id, login, admin: access.who.is_admin() })
}
