//! `POST /mcp`: MCP over streamable HTTP (JSON responses, no server-sent events). The protocol
//! decisions are `edgerag_search::mcp` (tested natively); this runs the tool calls:
//! the four search tools through [`crate::search::run`], `repo.rag_index_status` through
//! [`crate::status`] (the same JSON as `GET /v1/repos/{owner}/{name}/status` and `GET /v1/repos`),
//! and the repository's read tools through [`crate::repo_tools`]' one table (the same answers as
//! their HTTP routes).
use edgerag_search::mcp::{self, rpc_error, step, tool_error, tool_result, Step, Tool};
use serde_json::Value;
use worker::{Env, Request, Response};

use crate::api::schema::tool_output_schema;
use crate::auth::{Access, Need, RepoKeys, Target};
use crate::background::Background;
use crate::error::ApiError;
use crate::http::{self, ApiResult};
use crate::repo_tools;
use crate::store::Stores;

/// Largest JSON-RPC body (a batch of calls).
const MAX_MCP_BODY: usize = 512 * 1024;
/// Messages in one JSON-RPC batch at most.
const MAX_BATCH: usize = 20;

pub async fn handle(
    req: &mut Request,
    env: &Env,
    access: &Access,
    background: &Background,
) -> ApiResult<Response> {
    let bytes = http::read_body(req, MAX_MCP_BODY).await?;
    let message: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            let body = rpc_error(&Value::Null, mcp::PARSE_ERROR, format!("the body is not valid JSON: {e}"));
            return json(400, &body);
        }
    };
    match message {
        Value::Array(items) if items.is_empty() => {
            json(400, &rpc_error(&Value::Null, mcp::INVALID_REQUEST, "empty JSON-RPC batch"))
        }
        Value::Array(items) if items.len() > MAX_BATCH => json(
            400,
            &rpc_error(&Value::Null, mcp::INVALID_REQUEST, format!("at most {MAX_BATCH} messages per batch")),
        ),
        Value::Array(items) => {
            let mut replies = Vec::new();
            for item in &items {
                if let Some(r) = answer(item, req, env, access, background).await {
                    replies.push(r);
                }
            }
            if replies.is_empty() {
                accepted()
            } else {
                json(200, &Value::Array(replies))
            }
        }
        single => match answer(&single, req, env, access, background).await {
            // A message that could not be read as a request at all is the client's error.
            Some(r) if r["id"].is_null() && r.get("error").is_some() => json(400, &r),
            Some(r) => json(mcp::http_status(&r, mcp::modern_version(&single).is_some()), &r),
            None => accepted(),
        },
    }
}

/// What a tool call needs; every tool is listed (a new tool does not compile until it says).
fn tool_need(tool: Tool, arguments: &Value) -> Need {
    match tool {
        Tool::Search(mode) => super::search::need(mode, arguments),
        // Read as the tool reads it (`repoOwner` / `repoName` first).
        Tool::IndexStatus => match crate::auth::named_repo(arguments, RepoKeys::STATUS) {
            Some((owner, name)) => Need::Read(Target::Repo { owner, name }),
            None => Need::Read(Target::Each),
        },
        // `name` is the symbol's here, so only `repoOwner` / `repoName` name the repository.
        Tool::FindSymbol
        | Tool::SymbolReferences
        | Tool::ReadFileRange
        | Tool::ListFiles
        | Tool::Outline
        | Tool::Grep
        | Tool::Map
        | Tool::Impact => match mcp::repo_tool_args(arguments) {
            Ok((owner, name, _)) => Need::Read(Target::Repo { owner, name }),
            Err(_) => Need::Read(Target::Each),
        },
    }
}

async fn answer(
    message: &Value,
    req: &Request,
    env: &Env,
    access: &Access,
    background: &Background,
) -> Option<Value> {
    let header = |name: &str| req.headers().get(name).ok().flatten();
    if let Err(mismatch) = mcp::check_headers(message, &header) {
        return Some(mismatch);
    }
    match step(message) {
        Step::NoReply => None,
        Step::Reply(r) => Some(r),
        Step::ListTools { id, modern } => Some(mcp::list_reply(&id, modern, &tool_output_schema)),
        Step::Call { id, tool, arguments, modern } => {
            if let Err(d) = access.check(&tool_need(tool, &arguments)) {
                return Some(mcp::reply_for(&id, tool_error(d.code, &d.message), modern));
            }
            let result = match tool {
                Tool::Search(mode) => {
                    match crate::search::run(env, mode, &arguments, access, background).await {
                        Ok(response) => tool_result(&serde_json::to_value(&response).unwrap_or_default()),
                        Err(e) => tool_error(e.code(), &e.to_string()),
                    }
                }
                Tool::IndexStatus => index_status(env, &arguments, access).await,
                // The repository's read tools, through their one table.
                repo_tool => match read_tool(env, repo_tool, &arguments).await {
                    Ok(body) => tool_result(&body),
                    Err(e) => tool_error(e.code, &e.message),
                },
            };
            Some(mcp::reply_for(&id, result, modern))
        }
    }
}

/// `repo.rag_index_status`: one repository's status, or every repository without arguments.
/// The caller already passed [`tool_need`]'s check; the list shows only readable repositories.
async fn index_status(env: &Env, arguments: &Value, access: &Access) -> Value {
    let repo = match mcp::index_status_args(arguments) {
        Ok(repo) => repo,
        Err(message) => return tool_error("INVALID_REQUEST", &message),
    };
    let result = match Stores::from_env(env) {
        Err(e) => Err(ApiError::from(e)),
        Ok(stores) => match repo {
            Some((owner, name)) => crate::status::repo_status(env, &stores, &owner, &name)
                .await
                .and_then(|s| serde_json::to_value(&s).map_err(|e| ApiError::internal("status JSON", e))),
            None => crate::status::list_repos(&stores, access)
                .await
                .and_then(|s| serde_json::to_value(&s).map_err(|e| ApiError::internal("status JSON", e))),
        },
    };
    match result {
        Ok(body) => tool_result(&body),
        Err(e) => tool_error(e.code, &e.message),
    }
}

/// A repository read tool (`repo.find_symbol`, …, `repo.impact`): the same table and JSON as
/// their HTTP routes.
async fn read_tool(env: &Env, tool: Tool, arguments: &Value) -> ApiResult<Value> {
    let (owner, name, call) = repo_tools::mcp_call(tool, arguments)?;
    let answer = repo_tools::answer(&Stores::from_env(env)?, &owner, &name, &call).await?;
    serde_json::to_value(answer).map_err(|e| ApiError::internal("navigation JSON", e))
}

fn json(status: u16, body: &Value) -> ApiResult<Response> {
    http::reply(status, body)
}

/// Notifications and client responses: 202 with no body (streamable HTTP).
fn accepted() -> ApiResult<Response> {
    Response::empty()
        .map(|r| r.with_status(202))
        .map_err(|e| crate::error::ApiError::internal("building the response", e))
}
