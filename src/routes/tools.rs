//! `GET /v1/repos/{owner}/{name}/tree`, `GET …/outline`, `POST …/grep`, `…/map` and `…/impact` (reads: the
//! body only carries the arguments): parse, answer with [`crate::symbols::tools`] (the MCP
//! `repo.list_files`, `repo.outline` and `repo.grep` call the same).
use worker::{Env, Request, Response};

use crate::api::{GrepRequest, ImpactRequest, ListFilesQuery, MapRequest, OutlineQuery};
use crate::http::{parse_json, read_body, reply, ApiResult};
use crate::store::Stores;
use crate::symbols::{self, parse_args, tools};

use super::symbols::query_args;

pub async fn tree(req: &Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let query: ListFilesQuery = parse_args(query_args(req, &["limit", "offset", "maxTokens"]))?;
    let repo = symbols::open(&Stores::from_env(env)?, owner, name).await?;
    reply(200, &tools::list_files(&repo, &query).await?)
}

pub async fn outline(req: &Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let query: OutlineQuery = parse_args(query_args(req, &["offset", "maxTokens"]))?;
    let repo = symbols::open(&Stores::from_env(env)?, owner, name).await?;
    reply(200, &tools::outline(&repo, &query).await?)
}

pub async fn grep(req: &mut Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let body = read_body(req, 64 * 1024).await?;
    let request: GrepRequest = parse_json(req, &body, false)?;
    let repo = symbols::open(&Stores::from_env(env)?, owner, name).await?;
    reply(200, &tools::grep(&repo, &request).await?)
}

pub async fn map(req: &mut Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let body = read_body(req, 64 * 1024).await?;
    let request: MapRequest = parse_json(req, &body, true)?;
    let repo = symbols::open(&Stores::from_env(env)?, owner, name).await?;
    reply(200, &tools::map(&repo, &request).await?)
}

pub async fn impact(req: &mut Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let body = read_body(req, tools::MAX_DIFF_BYTES + 64 * 1024).await?;
    let request: ImpactRequest = parse_json(req, &body, false)?;
    let repo = symbols::open(&Stores::from_env(env)?, owner, name).await?;
    reply(200, &tools::impact(&repo, &request).await?)
}
