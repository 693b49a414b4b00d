//! `POST /mcp`: MCP over streamable HTTP (JSON responses, no server-sent events). The protocol
//! decisions are `edgerag_search::mcp` (tested natively); this runs the tool calls:
//! the four search tools through [`crate::search::run`], and `repo.rag_index_status` through
//! [`crate::status`] (the same JSON as `GET /v1/repos/{owner}/{name}/status` and `GET /v1/repos`).
use edgerag_search::mcp::{self, rpc_error, step, tool_error, tool_result, Step, Tool};
use serde_json::Value;
use worker::{Env, Request, Response};

use crate::api::schema::tool_output_schema;
use crate::api::{
    GrepRequest, ImpactRequest, LinesQuery, ListFilesQuery, MapRequest, OutlineQuery, ReferencesQuery,
    SymbolQuery,
};
use crate::auth::{Access, Need, RepoKeys, Target};
use crate::background::Background;
use crate::error::ApiError;
use crate::http::{self, ApiResult};
use crate::store::Stores;
use crate::symbols::{self, parse_args, tools};

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
                Tool::FindSymbol
                | Tool::SymbolReferences
                | Tool::ReadFileRange
                | Tool::ListFiles
                | Tool::Outline
                | Tool::Grep
                | Tool::Map
                | Tool::Impact => match navigate(env, tool, &arguments).await {
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

/// `repo.find_symbol`, `repo.symbol_references`, `repo.read_file_range`: the same functions and
/// JSON as the `/v1/repos/{owner}/{name}/symbols…` and `…/files/{path}/lines` routes.
async fn navigate(env: &Env, tool: Tool, arguments: &Value) -> ApiResult<Value> {
    let invalid = |m: String| ApiError::bad_request("INVALID_REQUEST", m);
    let (owner, name, mut rest) = mcp::repo_tool_args(arguments).map_err(invalid)?;
    let mut take = |key: &str| match rest.as_object_mut().and_then(|o| o.remove(key)) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        _ => Err(invalid(format!("give {key} (a non-empty string)"))),
    };
    let stores = Stores::from_env(env)?;
    let body = match tool {
        Tool::FindSymbol => {
            let query: SymbolQuery = parse_args(rest)?;
            let repo = symbols::open(&stores, &owner, &name).await?;
            serde_json::to_value(symbols::find_symbols(&repo, &query).await?)
        }
        Tool::SymbolReferences => {
            let id = take("id")?;
            let query: ReferencesQuery = parse_args(rest)?;
            let repo = symbols::open(&stores, &owner, &name).await?;
            serde_json::to_value(symbols::references(&repo, &id, &query).await?)
        }
        Tool::ReadFileRange => {
            let path = take("path")?;
            let query: LinesQuery =
                parse_args(rest).map_err(|e| ApiError::bad_request("BAD_RANGE", e.message))?;
            let repo = symbols::open(&stores, &owner, &name).await?;
            serde_json::to_value(symbols::read_lines(&repo, &path, &query).await?)
        }
        Tool::ListFiles => {
            let query: ListFilesQuery = parse_args(rest)?;
            let repo = symbols::open(&stores, &owner, &name).await?;
            serde_json::to_value(tools::list_files(&repo, &query).await?)
        }
        Tool::Outline => {
            let query: OutlineQuery = parse_args(rest)?;
            let repo = symbols::open(&stores, &owner, &name).await?;
            serde_json::to_value(tools::outline(&repo, &query).await?)
        }
        Tool::Grep => {
            let request: GrepRequest = parse_args(rest)?;
            let repo = symbols::open(&stores, &owner, &name).await?;
            serde_json::to_value(tools::grep(&repo, &request).await?)
        }
        Tool::Map => {
            let request: MapRequest = parse_args(rest)?;
            let repo = symbols::open(&stores, &owner, &name).await?;
            serde_json::to_value(tools::map(&repo, &request).await?)
        }
        Tool::Impact => {
            let request: ImpactRequest = parse_args(rest)?;
            let repo = symbols::open(&stores, &owner, &name).await?;
            serde_json::to_value(tools::impact(&repo, &request).await?)
        }
        Tool::Search(_) | Tool::IndexStatus => {
            return Err(invalid(format!("{} is not a navigation tool", tool.name())))
        }
    };
    body.map_err(|e| ApiError::internal("navigation JSON", e))
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
