//! HTTP routing. `wrangler.toml` sends `/v1/*`, `/health` and `/mcp` here (`run_worker_first`);
//! everything else is a static asset (the preview page).
//!
//! Other parts of the worker plug in here with one match arm each (search: `/v1/search*`, MCP).
//! Handlers only parse, check and answer: the work is in [`crate::pipeline`],
//! [`crate::search`] and [`crate::status`].
mod chunk;
mod documents;
mod health;
mod jobs;
mod mcp;
mod repos;
mod search;

use worker::{Env, Method, Request, Response};

use crate::config::Config;
use crate::error::ApiError;
use crate::http::{error_response, ApiResult};

pub async fn handle(mut req: Request, env: Env) -> Response {
    let cfg = Config::from_env(&env);
    match route(&mut req, &env, &cfg).await {
        Ok(response) => response,
        Err(err) => {
            if err.status >= 500 {
                crate::log::error("request_failed", &[("path", &req.path()), ("code", err.code)]);
            }
            error_response(&err)
        }
    }
}

fn method_name(m: &Method) -> &'static str {
    match m {
        Method::Get => "GET",
        Method::Post => "POST",
        Method::Delete => "DELETE",
        Method::Put => "PUT",
        Method::Patch => "PATCH",
        Method::Head => "HEAD",
        Method::Options => "OPTIONS",
        _ => "OTHER",
    }
}

async fn route(req: &mut Request, env: &Env, cfg: &Config) -> ApiResult<Response> {
    let path = req.path();
    let method = method_name(&req.method());
    let segments: Vec<String> = path.trim_end_matches('/').split('/').skip(1).map(percent_decode).collect();
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    match (method, segs.as_slice()) {
        ("GET", ["health"]) => health::get(env).await,
        ("POST", ["v1", "chunk"]) => chunk::post(req, cfg).await,
        ("GET", ["v1", "repos"]) => repos::list(req, env, cfg).await,
        ("POST", ["v1", "repos", owner, name, "index"]) => repos::index(req, env, cfg, owner, name).await,
        ("POST", ["v1", "repos", owner, name, "files"]) => repos::upload(req, env, cfg, owner, name).await,
        ("DELETE", ["v1", "repos", owner, name, "files"]) => {
            repos::delete_files(req, env, cfg, owner, name).await
        }
        ("PUT", ["v1", "repos", owner, name, "documents", rest @ ..]) => {
            documents::put(req, env, cfg, owner, name, rest).await
        }
        ("GET", ["v1", "repos", owner, name, "documents", rest @ ..]) => {
            documents::get(req, env, cfg, owner, name, rest).await
        }
        ("DELETE", ["v1", "repos", owner, name, "documents", rest @ ..]) => {
            documents::delete(req, env, cfg, owner, name, rest).await
        }
        ("DELETE", ["v1", "repos", owner, name]) => repos::delete_repo(req, env, cfg, owner, name).await,
        ("GET", ["v1", "repos", owner, name, "status"]) => repos::status(req, env, cfg, owner, name).await,
        ("GET", ["v1", "repos", owner, name, "files"]) => repos::files(req, env, cfg, owner, name).await,
        ("GET", ["v1", "jobs", id]) => jobs::get(req, env, cfg, id).await,
        ("POST", ["v1", "search", rest @ ..]) => match search::mode_for(rest) {
            Some(mode) => search::post(req, env, cfg, mode).await,
            None => Err(ApiError::not_found("NOT_FOUND", format!("no route for {method} {path}"))),
        },
        ("POST", ["mcp"]) => mcp::handle(req, env, cfg).await,
        (_, ["v1", "search", ..]) | (_, ["mcp"]) => {
            Err(ApiError::new(405, "METHOD_NOT_ALLOWED", format!("{method} is not allowed on {path}")))
        }
        (_, ["health"])
        | (_, ["v1", "chunk"])
        | (_, ["v1", "repos"])
        | (_, ["v1", "repos", _, _, "index" | "files" | "status"])
        | (_, ["v1", "repos", _, _, "documents", ..])
        | (_, ["v1", "repos", _, _])
        | (_, ["v1", "jobs", _]) => {
            Err(ApiError::new(405, "METHOD_NOT_ALLOWED", format!("{method} is not allowed on {path}")))
        }
        _ => Err(ApiError::not_found("NOT_FOUND", format!("no route for {method} {path}"))),
    }
}

/// Decode `%XX` escapes of a path segment (invalid escapes are kept literally).
fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push(hi * 16 + lo);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn decodes_segments() {
        assert_eq!(percent_decode("a%20b"), "a b");
        assert_eq!(percent_decode("%2e%2E"), "..");
        assert_eq!(percent_decode("bad%zz%2"), "bad%zz%2");
        assert_eq!(percent_decode("%é%41"), "%éA");
    }
}
