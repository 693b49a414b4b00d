//! `POST /mcp`: MCP over streamable HTTP (JSON responses, no server-sent events). The protocol
//! decisions are `edgerag_search::mcp` (tested natively); this runs the tool calls:
//! the four search tools through [`super::run`], and `repo.rag_index_status` through the
//! worker's own status / list routes (the same JSON as `GET /v1/repos/{owner}/{name}/status`).
use edgerag_search::mcp::{self, rpc_error, rpc_result, step, tool_error, tool_result, Step, Tool};
use serde_json::Value;
use worker::{Env, Headers, Method, Request, RequestInit, Response};

use crate::config::Config;
use crate::http::{self, ApiResult};

/// Largest JSON-RPC body (a batch of calls).
const MAX_MCP_BODY: usize = 512 * 1024;
/// Messages in one JSON-RPC batch at most.
const MAX_BATCH: usize = 20;

pub async fn handle(req: &mut Request, env: &Env, cfg: &Config) -> ApiResult<Response> {
    http::require_read(req, cfg)?;
    let auth = req.headers().get("authorization").ok().flatten();
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
                if let Some(r) = answer(item, env, auth.as_deref()).await {
                    replies.push(r);
                }
            }
            if replies.is_empty() {
                accepted()
            } else {
                json(200, &Value::Array(replies))
            }
        }
        single => match answer(&single, env, auth.as_deref()).await {
            Some(r) => json(200, &r),
            None => accepted(),
        },
    }
}

async fn answer(message: &Value, env: &Env, auth: Option<&str>) -> Option<Value> {
    match step(message) {
        Step::NoReply => None,
        Step::Reply(r) => Some(r),
        Step::Call { id, tool, arguments } => {
            let result = match tool {
                Tool::Search(mode) => match super::run(env, mode, &arguments).await {
                    Ok(response) => tool_result(&serde_json::to_value(&response).unwrap_or_default()),
                    Err(e) => tool_error(e.code(), &e.to_string()),
                },
                Tool::IndexStatus => index_status(env, &arguments, auth).await,
            };
            Some(rpc_result(&id, result))
        }
    }
}

/// Reuse the status routes (`GET /v1/repos/{o}/{n}/status`, `GET /v1/repos`) in-process.
async fn index_status(env: &Env, arguments: &Value, auth: Option<&str>) -> Value {
    let path = match mcp::index_status_args(arguments) {
        Ok(Some((owner, name))) => {
            if let Err(e) = http::check_repo_part("owner", &owner).and(http::check_repo_part("name", &name)) {
                return tool_error(e.code, &e.message);
            }
            format!("/v1/repos/{owner}/{name}/status")
        }
        Ok(None) => "/v1/repos".to_string(),
        Err(message) => return tool_error("INVALID_REQUEST", &message),
    };
    let headers = Headers::new();
    if let Some(a) = auth {
        let _ = headers.set("authorization", a);
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Get).with_headers(headers);
    let request = match Request::new_with_init(&format!("http://edgerag.internal{path}"), &init) {
        Ok(r) => r,
        Err(e) => return tool_error("INTERNAL", &e.to_string()),
    };
    // Boxed: the router reaches this function, so the call is recursive.
    let routed: std::pin::Pin<Box<dyn std::future::Future<Output = Response>>> =
        Box::pin(crate::routes::handle(request, env.clone()));
    let mut response = routed.await;
    let status = response.status_code();
    let body: Value = match response.text().await.ok().and_then(|t| serde_json::from_str(&t).ok()) {
        Some(v) => v,
        None => return tool_error("INTERNAL", "the status route returned no JSON"),
    };
    if status >= 400 {
        let code = body["error"]["code"].as_str().unwrap_or("INTERNAL").to_string();
        let message = body["error"]["message"].as_str().unwrap_or("status failed").to_string();
        return tool_error(&code, &message);
    }
    tool_result(&body)
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
