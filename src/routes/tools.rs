//! `GET /v1/repos/{owner}/{name}/tree` and `…/outline`: parse the query, answer with
//! [`crate::symbols::tools`] (the MCP `repo.list_files` and `repo.outline` call the same).
use worker::{Env, Request, Response};

use crate::api::{ListFilesQuery, OutlineQuery};
use crate::http::{reply, ApiResult};
use crate::store::Stores;
use crate::symbols::{self, parse_args, tools};

use super::symbols::query_args;

pub async fn tree(req: &Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let query: ListFilesQuery = parse_args(query_args(req, &["limit", "offset", "maxTokens"]))?;
    let repo = symbols::open(&Stores::from_env(env)?, owner, name).await?;
    reply(200, &tools::list::list_files(&repo, &query).await?)
}

pub async fn outline(req: &Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let query: OutlineQuery = parse_args(query_args(req, &["offset", "maxTokens"]))?;
    let repo = symbols::open(&Stores::from_env(env)?, owner, name).await?;
    reply(200, &tools::outline::outline(&repo, &query).await?)
}
