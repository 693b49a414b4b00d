//! HTTP routing. `wrangler.toml` sends `/v1/*`, `/health` and `/mcp` here (`run_worker_first`);
//! everything else is a static asset (the preview page).
//!
//! Every request passes [`gate`] first: the route's scope comes from [`crate::auth::need_for`]
//! (a new route declares its scope there; `/v1/repos/{owner}/{name}/...` routes get one by
//! their shape). Writes are audited after the handler.
//!
//! Other parts of the worker plug in here with one match arm each (search: `/v1/search*`, MCP).
//! Handlers only parse, check and answer: the work is in [`crate::pipeline`],
//! [`crate::search`] and [`crate::status`].
mod chunk;
mod documents;
mod health;
mod jobs;
mod keys;
mod mcp;
mod oauth;
mod plans;
mod repos;
mod search;
mod settings;
#[cfg(feature = "test-hooks")]
pub mod test_hooks;
mod tools;
mod webhooks;

use worker::{Env, Method, Request, Response};

use crate::auth::{self, Access, Need, Policy, Principal, Target};
use crate::background::Background;
use crate::config::Config;
use crate::error::ApiError;
use crate::http::{error_response, ApiResult};
use crate::store::Stores;

pub async fn handle(mut req: Request, env: Env, background: Background) -> Response {
    let cfg = Config::from_env(&env);
    let path = req.path();
    let method = method_name(&req.method());
    let segments: Vec<String> = path.trim_end_matches('/').split('/').skip(1).map(percent_decode).collect();
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    let need = auth::need_for(method, &segs);
    let bearer = crate::http::bearer(&req).is_some();
    let result = match gate(&req, &env, &cfg, &need).await {
        Ok(access) => {
            let mut result = route(&mut req, &env, &cfg, &access, &background, method, &segs).await;
            if writes(method, &need) {
                audit(&env, &access, method, &path, &need, &mut result).await;
            }
            result
        }
        Err(e) => Err(e),
    };
    match result {
        Ok(response) => response,
        Err(err) => {
            if err.status >= 500 {
                crate::log::error("request_failed", &[("path", &path), ("code", err.code)]);
            }
            let response = error_response(&err);
            if err.status == 401 {
                challenge(&req, &cfg, &path, bearer, &response);
            }
            response
        }
    }
}

/// A 401 on the MCP endpoint or the API names where its protected-resource metadata is
/// (RFC 9728 §5.1), so a client that follows the MCP authorization spec can sign in.
fn challenge(req: &Request, cfg: &Config, path: &str, bearer: bool, response: &Response) {
    if !crate::signin::enabled(cfg) {
        return;
    }
    let resource = crate::oauth::Resource::of_path(path).unwrap_or(crate::oauth::Resource::Api);
    let value = crate::oauth::challenge(&crate::signin::origin(cfg, req), resource, bearer);
    let _ = response.headers().set("www-authenticate", &value);
}

/// The one authorization step of every request: who is calling (the `API_TOKEN`, a scoped key,
/// nobody), whether the route's [`auth::need_for`] allows it, and the key's rate limit.
async fn gate(req: &Request, env: &Env, cfg: &Config, need: &Need) -> ApiResult<Access> {
    let policy = Policy { public_reads: cfg.public_reads, writes_enabled: cfg.api_token.is_some() };
    if *need == Need::Open {
        // Health checks and signed webhooks: whatever `Authorization` says is not looked at.
        return Ok(Access { who: Principal::Anonymous, policy });
    }
    let who = principal(req, env, cfg).await?;
    auth::authorize(&who, need, policy).map_err(denied)?;
    let limited = match &who {
        Principal::Key(grant) => Some(grant.id.clone()),
        Principal::User(user) => Some(user.audit_id()),
        _ => None,
    };
    if let Some(id) = limited {
        match crate::ratelimit::check(env, &id, cfg.rate_limit_per_minute).await {
            Ok(None) => {}
            Ok(Some(retry_after)) => {
                return Err(ApiError::new(
                    429,
                    "RATE_LIMITED",
                    format!("{id} is over its rate limit; retry in {retry_after} s"),
                )
                .retry_after(retry_after))
            }
            // A limiter outage must not lock every key out.
            Err(e) => crate::log::warn("rate_limit_unavailable", &[("detail", &e)]),
        }
    }
    Ok(Access { who, policy })
}

pub fn denied(d: auth::Denied) -> ApiError {
    ApiError::new(d.status, d.code, d.message)
}

/// The caller behind the bearer token. A token that is neither the `API_TOKEN` nor a live key is
/// refused (401) even where anonymous requests would pass: a typo must not silently downgrade.
async fn principal(req: &Request, env: &Env, cfg: &Config) -> ApiResult<Principal> {
    let Some(token) = crate::http::bearer(req) else {
        return Ok(Principal::Anonymous);
    };
    if cfg.api_token.as_ref().is_some_and(|t| auth::same(token.as_bytes(), t.as_bytes())) {
        return Ok(Principal::Root);
    }
    let invalid = || ApiError::new(401, "UNAUTHORIZED", "invalid bearer token");
    if token.starts_with(crate::oauth::ACCESS_PREFIX) {
        let path = req.path();
        let resource = crate::oauth::Resource::of_path(&path).unwrap_or(crate::oauth::Resource::Api);
        return crate::signin::principal(env, cfg, &crate::signin::origin(cfg, req), &token, resource).await;
    }
    let Some((id, secret)) = auth::split_token(&token) else {
        return Err(invalid());
    };
    let stores = Stores::from_env(env)?;
    let Some(row) = crate::store::keys::get(stores.catalog(), id).await? else {
        return Err(invalid());
    };
    if !auth::secret_matches(secret, &row.secret_hash) {
        return Err(invalid());
    }
    if row.revoked_at.is_some() {
        return Err(ApiError::new(401, "KEY_REVOKED", format!("key {id} was revoked")));
    }
    let scopes: Vec<String> = serde_json::from_str(&row.scopes).unwrap_or_default();
    let patterns: Vec<String> = serde_json::from_str(&row.namespaces).unwrap_or_default();
    Ok(Principal::Key(auth::Grant {
        id: row.id,
        scopes: scopes.iter().filter_map(|s| auth::Scope::parse(s)).collect(),
        patterns: patterns.iter().filter_map(|p| auth::NamespacePattern::parse(p).ok()).collect(),
    }))
}

/// Requests that change state (and so are audited).
fn writes(method: &str, need: &Need) -> bool {
    method != "GET" && method != "HEAD" && !matches!(need, Need::Open | Need::Read(_))
}

/// One audit row per write: who, what, which namespace and job, and the outcome. A failing audit
/// write is logged, not turned into a failed request (the write already happened).
async fn audit(
    env: &Env,
    access: &Access,
    method: &str,
    path: &str,
    need: &Need,
    result: &mut ApiResult<Response>,
) {
    let namespace = match need {
        Need::Write(Target::Repo { owner, name }) => {
            Some(crate::store::namespaces::namespace_id(owner, name))
        }
        _ => None,
    };
    let (status, job_id) = match result {
        Ok(r) => {
            let job = match r.cloned() {
                Ok(mut copy) => copy.text().await.ok().and_then(|t| {
                    let v: serde_json::Value = serde_json::from_str(&t).ok()?;
                    v["job"]["id"].as_str().map(str::to_string)
                }),
                Err(_) => None,
            };
            (r.status_code(), job)
        }
        Err(e) => (e.status, None),
    };
    let record = crate::store::keys::AuditRecord {
        id: 0,
        key_id: access.who.audit_id(),
        method: method.to_string(),
        route: path.to_string(),
        namespace,
        job_id,
        status: i64::from(status),
        at: crate::time::now_iso(),
    };
    let written = match Stores::from_env(env) {
        Ok(stores) => crate::store::keys::audit(stores.catalog(), &record).await,
        Err(e) => Err(e),
    };
    if let Err(e) = written {
        crate::log::error("audit_failed", &[("route", path), ("detail", &e.to_string())]);
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

async fn route(
    req: &mut Request,
    env: &Env,
    cfg: &Config,
    access: &Access,
    background: &Background,
    method: &str,
    segs: &[&str],
) -> ApiResult<Response> {
    let path = req.path();
    if method == "OPTIONS" && oauth::cross_origin(segs) {
        return oauth::preflight();
    }
    match (method, segs) {
        ("GET", ["health"]) => health::get(env).await,
        ("POST", ["v1", "chunk"]) => chunk::post(req, cfg).await,
        ("GET", ["v1", "repos"]) => repos::list(env, access).await,
        ("GET", ["v1", "me"]) => keys::me(access),
        ("POST", ["v1", "repos", owner, name, "index"]) => repos::index(req, env, owner, name).await,
        ("POST", ["v1", "repos", owner, name, "files"]) => repos::upload(req, env, cfg, owner, name).await,
        ("DELETE", ["v1", "repos", owner, name, "files"]) => {
            repos::delete_files(req, env, cfg, owner, name).await
        }
        ("PUT", ["v1", "repos", owner, name, "documents", rest @ ..]) => {
            documents::put(req, env, cfg, owner, name, rest).await
        }
        ("GET", ["v1", "repos", owner, name, "documents", rest @ ..]) => {
            documents::get(env, owner, name, rest).await
        }
        ("DELETE", ["v1", "repos", owner, name, "documents", rest @ ..]) => {
            documents::delete(env, owner, name, rest).await
        }
        ("GET", ["v1", "repos", owner, name, "settings"]) => settings::get(env, owner, name).await,
        ("PUT", ["v1", "repos", owner, name, "settings"]) => settings::put(req, env, cfg, owner, name).await,
        ("DELETE", ["v1", "repos", owner, name]) => repos::delete_repo(env, owner, name).await,
        ("GET", ["v1", "repos", owner, name, "status"]) => repos::status(env, owner, name).await,
        ("GET", ["v1", "repos", owner, name, "files"]) => repos::files(env, owner, name).await,
        ("GET", ["v1", "repos", owner, name, "tree"]) => tools::tree(req, env, owner, name).await,
        ("GET", ["v1", "repos", owner, name, "outline"]) => tools::outline(req, env, owner, name).await,
        ("POST", ["v1", "repos", owner, name, "grep"]) => tools::grep(req, env, owner, name).await,
        ("POST", ["v1", "repos", owner, name, "map"]) => tools::map(req, env, owner, name).await,
        ("POST", ["v1", "repos", owner, name, "impact"]) => tools::impact(req, env, owner, name).await,
        ("GET", ["v1", "repos", owner, name, "files", path @ .., "lines"]) if !path.is_empty() => {
            tools::lines(req, env, owner, name, &path.join("/")).await
        }
        ("POST", ["v1", "repos", owner, name, "plans"]) => plans::post(req, env, owner, name).await,
        ("GET", ["v1", "repos", owner, name, "plans", run_id]) => plans::get(env, owner, name, run_id).await,
        ("GET", ["v1", "repos", owner, name, "symbols"]) => tools::find(req, env, owner, name).await,
        ("GET", ["v1", "repos", owner, name, "symbols", id]) => tools::symbol(env, owner, name, id).await,
        ("GET", ["v1", "repos", owner, name, "symbols", id, "references"]) => {
            tools::references(req, env, owner, name, id).await
        }
        ("GET", ["v1", "jobs", id]) => jobs::get(env, access, id).await,
        ("POST", ["v1", "search", rest @ ..]) => match search::mode_for(rest) {
            Some(mode) => search::post(req, env, access, background, mode).await,
            None => Err(ApiError::not_found("NOT_FOUND", format!("no route for {method} {path}"))),
        },
        ("POST", ["mcp"]) => mcp::handle(req, env, access, background).await,
        ("POST", ["v1", "keys"]) => keys::create(req, env, &access.who.audit_id()).await,
        ("GET", ["v1", "keys"]) => keys::list(env).await,
        ("DELETE", ["v1", "keys", id]) => keys::revoke(env, id).await,
        ("GET", ["v1", "audit"]) => keys::audit(req, env).await,
        ("POST", ["v1", "webhooks", "github"]) => webhooks::github(req, env, cfg).await,
        ("GET", [".well-known", "oauth-protected-resource"])
        | ("GET", [".well-known", "oauth-protected-resource", "mcp"]) => {
            oauth::protected_resource(req, cfg, crate::oauth::Resource::Mcp)
        }
        ("GET", [".well-known", "oauth-protected-resource", "v1"]) => {
            oauth::protected_resource(req, cfg, crate::oauth::Resource::Api)
        }
        ("GET", [".well-known", "oauth-authorization-server"]) => oauth::authorization_server(req, cfg),
        ("POST", ["oauth", "register"]) => oauth::register(req, env, cfg).await,
        ("GET", ["oauth", "authorize"]) => oauth::authorize_page(req, env, cfg).await,
        ("POST", ["oauth", "authorize"]) => oauth::consent(req, env, cfg).await,
        ("GET", ["oauth", "callback"]) => oauth::callback(req, env, cfg).await,
        ("POST", ["oauth", "token"]) => oauth::token(req, env, cfg).await,
        ("POST", ["oauth", "revoke"]) => oauth::revoke(req, env, cfg).await,
        (_, ["v1", "search", ..]) | (_, ["mcp"]) => {
            Err(ApiError::new(405, "METHOD_NOT_ALLOWED", format!("{method} is not allowed on {path}")))
        }
        (_, ["health"])
        | (_, ["v1", "chunk"])
        | (_, ["v1", "repos"])
        | (_, ["v1", "me"])
        | (
            _,
            ["v1", "repos", _, _, "index" | "files" | "status" | "settings" | "plans" | "tree" | "outline" | "grep" | "map"
            | "impact"],
        )
        | (_, ["v1", "repos", _, _, "plans", _])
        | (_, ["v1", "repos", _, _, "documents", ..])
        | (_, ["v1", "repos", _, _])
        | (_, ["v1", "jobs", _])
        | (_, ["v1", "keys"])
        | (_, ["v1", "keys", _])
        | (_, ["v1", "audit"])
        | (_, ["v1", "webhooks", "github"])
        | (_, ["oauth", "register" | "authorize" | "callback" | "token" | "revoke"]) => {
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
