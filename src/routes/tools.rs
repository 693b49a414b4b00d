//! The repository's read tools over HTTP — `GET /v1/repos/{owner}/{name}/symbols`,
//! `…/symbols/{id}`, `…/symbols/{id}/references`, `…/files/{path}/lines`, `…/tree`, `…/outline`,
//! and `POST …/grep`, `…/map`, `…/impact` (reads: the body only carries the arguments): read the
//! arguments, answer through [`crate::repo_tools`]'s one table, as the MCP tools do.
use serde_json::{Map, Value};
use worker::{Env, Request, Response};

use crate::api::SymbolResponse;
use crate::http::{parse_json, read_body, reply, ApiResult};
use crate::repo_tools::{self, lines_args, parse_args, ToolCall, MAX_DIFF_BYTES};
use crate::store::Stores;

/// The query string as a JSON object: integer-looking values of `numeric` keys become numbers
/// (anything else stays a string, so the type's parser names the bad field).
fn query_args(req: &Request, numeric: &[&str]) -> Value {
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

/// A body of at most `limit` bytes as the tool's arguments (`empty_ok`: an empty body is `{}`).
async fn body_args<T: serde::de::DeserializeOwned>(
    req: &mut Request,
    limit: usize,
    empty_ok: bool,
) -> ApiResult<T> {
    let body = read_body(req, limit).await?;
    parse_json(req, &body, empty_ok)
}

async fn answer(env: &Env, owner: &str, name: &str, call: ToolCall) -> ApiResult<Response> {
    reply(200, &repo_tools::answer(&Stores::from_env(env)?, owner, name, &call).await?)
}

pub async fn find(req: &Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let query = parse_args(query_args(req, &["limit"]))?;
    answer(env, owner, name, ToolCall::FindSymbol(query)).await
}

pub async fn symbol(env: &Env, owner: &str, name: &str, id: &str) -> ApiResult<Response> {
    let symbol = repo_tools::symbol(&Stores::from_env(env)?, owner, name, id).await?;
    reply(200, &SymbolResponse { symbol })
}

pub async fn references(req: &Request, env: &Env, owner: &str, name: &str, id: &str) -> ApiResult<Response> {
    let query = parse_args(query_args(req, &["depth", "limit", "offset"]))?;
    answer(env, owner, name, ToolCall::SymbolReferences { id: id.to_string(), query }).await
}

pub async fn lines(req: &Request, env: &Env, owner: &str, name: &str, path: &str) -> ApiResult<Response> {
    let query = lines_args(query_args(req, &["start", "end"]))?;
    answer(env, owner, name, ToolCall::ReadFileRange { path: path.to_string(), query }).await
}

pub async fn tree(req: &Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let query = parse_args(query_args(req, &["limit", "offset", "maxTokens"]))?;
    answer(env, owner, name, ToolCall::ListFiles(query)).await
}

pub async fn outline(req: &Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let query = parse_args(query_args(req, &["offset", "maxTokens"]))?;
    answer(env, owner, name, ToolCall::Outline(query)).await
}

pub async fn grep(req: &mut Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let request = body_args(req, 64 * 1024, false).await?;
    answer(env, owner, name, ToolCall::Grep(request)).await
}

pub async fn map(req: &mut Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let request = body_args(req, 64 * 1024, true).await?;
    answer(env, owner, name, ToolCall::Map(request)).await
}

pub async fn impact(req: &mut Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let request = body_args(req, MAX_DIFF_BYTES + 64 * 1024, false).await?;
    answer(env, owner, name, ToolCall::Impact(request)).await
}
