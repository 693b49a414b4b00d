//! `GET /v1/repos/{owner}/{name}/symbols`, `…/symbols/{id}`, `…/symbols/{id}/references` and
//! `…/files/{path}/lines`: parse the query, answer with [`crate::symbols`].
use serde_json::{Map, Value};
use worker::{Env, Request, Response};

use crate::api::{LinesQuery, ReferencesQuery, SymbolQuery, SymbolResponse};
use crate::http::{reply, ApiResult};
use crate::store::Stores;
use crate::symbols::{self, parse_args, RepoDb};

/// The query string as a JSON object: integer-looking values of `numeric` keys become numbers
/// (anything else stays a string, so the type's parser names the bad field).
pub(super) fn query_args(req: &Request, numeric: &[&str]) -> Value {
    let mut out = Map::new();
    if let Ok(url) = req.url() {
        for (k, v) in url.query_pairs() {
            let value = match v.parse::<i64>() {
                Ok(n) if numeric.contains(&k.as_ref()) => Value::from(n),
                _ => Value::String(v.into_owned()),
            };
            out.insert(k.into_owned(), value);
        }
    }
    Value::Object(out)
}

async fn open(env: &Env, owner: &str, name: &str) -> ApiResult<RepoDb> {
    symbols::open(&Stores::from_env(env)?, owner, name).await
}

pub async fn find(req: &Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let query: SymbolQuery = parse_args(query_args(req, &["limit"]))?;
    let repo = open(env, owner, name).await?;
    reply(200, &symbols::find_symbols(&repo, &query).await?)
}

pub async fn get(env: &Env, owner: &str, name: &str, id: &str) -> ApiResult<Response> {
    let repo = open(env, owner, name).await?;
    reply(200, &SymbolResponse { symbol: symbols::get_symbol(&repo, id).await? })
}

pub async fn references(req: &Request, env: &Env, owner: &str, name: &str, id: &str) -> ApiResult<Response> {
    let query: ReferencesQuery = parse_args(query_args(req, &["depth", "limit", "offset"]))?;
    let repo = open(env, owner, name).await?;
    reply(200, &symbols::references(&repo, id, &query).await?)
}

pub async fn lines(req: &Request, env: &Env, owner: &str, name: &str, path: &str) -> ApiResult<Response> {
    let query: LinesQuery = parse_args(query_args(req, &["start", "end"]))
        .map_err(|e| crate::error::ApiError::bad_request("BAD_RANGE", e.message))?;
    let repo = open(env, owner, name).await?;
    reply(200, &symbols::read_lines(&repo, path, &query).await?)
}
