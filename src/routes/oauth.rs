//! Sign-in routes (the work is in [`crate::signin`], the rules in [`crate::oauth`]):
//!
//! | route | answer |
//! | --- | --- |
//! | `GET /.well-known/oauth-protected-resource[/mcp \| /v1]` | RFC 9728 metadata of the MCP endpoint / the API |
//! | `GET /.well-known/oauth-authorization-server` | RFC 8414 metadata |
//! | `POST /oauth/register` | RFC 7591 dynamic client registration (JSON) |
//! | `GET /oauth/authorize` | the consent page (sets the browser-binding cookie) |
//! | `POST /oauth/authorize` | the consent form → GitHub's sign-in page |
//! | `GET /oauth/callback` | GitHub's redirect → the client's redirect URI with a code |
//! | `POST /oauth/token` | codes and refresh tokens for tokens (form-encoded) |
//! | `POST /oauth/revoke` | RFC 7009 revocation (form-encoded) |
//!
//! The endpoints clients call directly answer RFC 6749's error shape
//! (`{"error","error_description","code"}`); the browser's steps answer edgerag's
//! (`{"error":{"code","message"}}`).
use serde::Serialize;
use worker::{Env, Request, Response};

use crate::config::Config;
use crate::error::ApiError;
use crate::http::{read_body, ApiResult};
use crate::oauth::{self, Form, OAuthError, Resource};
use crate::signin;

fn built(r: worker::Result<Response>) -> ApiResult<Response> {
    r.map_err(|e| ApiError::internal("building the response", e))
}

/// JSON a client on any origin may read (no cookies are involved on these endpoints).
fn open_json<T: Serialize>(status: u16, body: &T) -> ApiResult<Response> {
    let r = crate::http::reply(status, body)?;
    let _ = r.headers().set("access-control-allow-origin", "*");
    Ok(r)
}

fn oauth_error(e: &OAuthError) -> ApiResult<Response> {
    open_json(e.status, &e.body())
}

/// The endpoints a browser-based client may call from another origin (no cookies there).
pub fn cross_origin(segs: &[&str]) -> bool {
    matches!(segs, [".well-known", ..] | ["oauth", "register" | "token" | "revoke"])
}

/// `OPTIONS` on the endpoints browsers may call across origins.
pub fn preflight() -> ApiResult<Response> {
    let r = built(Response::empty().map(|r| r.with_status(204)))?;
    let h = r.headers();
    let _ = h.set("access-control-allow-origin", "*");
    let _ = h.set("access-control-allow-methods", "GET, POST, OPTIONS");
    let _ = h.set("access-control-allow-headers", "authorization, content-type, mcp-protocol-version");
    let _ = h.set("access-control-max-age", "86400");
    Ok(r)
}

pub fn protected_resource(req: &Request, cfg: &Config, resource: Resource) -> ApiResult<Response> {
    if !signin::enabled(cfg) {
        return Err(disabled());
    }
    open_json(200, &oauth::protected_resource(&signin::origin(cfg, req), resource))
}

pub fn authorization_server(req: &Request, cfg: &Config) -> ApiResult<Response> {
    if !signin::enabled(cfg) {
        return Err(disabled());
    }
    open_json(200, &oauth::authorization_server(&signin::origin(cfg, req)))
}

fn disabled() -> ApiError {
    ApiError::not_found("OAUTH_DISABLED", "sign-in is not configured on this deployment")
}

pub async fn register(req: &mut Request, env: &Env, cfg: &Config) -> ApiResult<Response> {
    if !signin::enabled(cfg) {
        return Err(disabled());
    }
    let body = read_body(req, 16 * 1024).await?;
    match signin::register(env, cfg, &body).await {
        Ok(info) => open_json(201, &info),
        Err(e) => oauth_error(&e),
    }
}

fn query(req: &Request) -> Form {
    let q = req.url().ok().and_then(|u| u.query().map(str::to_string)).unwrap_or_default();
    Form::parse(q.as_bytes())
}

/// The browser binding, from the `Cookie` header.
fn browser(req: &Request) -> Option<String> {
    let header = req.headers().get("cookie").ok().flatten()?;
    header.split(';').find_map(|c| {
        let (k, v) = c.trim().split_once('=')?;
        (k == signin::COOKIE && !v.is_empty()).then(|| v.to_string())
    })
}

fn redirect(to: &str) -> ApiResult<Response> {
    let r = built(Response::empty().map(|r| r.with_status(302)))?;
    let _ = r.headers().set("location", to);
    let _ = r.headers().set("cache-control", "no-store");
    let _ = r.headers().set("referrer-policy", "no-referrer");
    Ok(r)
}

pub async fn authorize_page(req: &Request, env: &Env, cfg: &Config) -> ApiResult<Response> {
    let origin = signin::origin(cfg, req);
    let page = signin::authorize(env, cfg, &origin, &query(req)).await?;
    let r = built(Response::from_html(page.html))?;
    let h = r.headers();
    let secure = if origin.starts_with("https://") { "; Secure" } else { "" };
    let _ = h.set(
        "set-cookie",
        &format!(
            "{}={}; Path=/oauth; HttpOnly; SameSite=Lax; Max-Age=600{secure}",
            signin::COOKIE,
            page.cookie
        ),
    );
    let _ = h.set("content-security-policy", oauth::page::CSP);
    let _ = h.set("x-frame-options", "DENY");
    let _ = h.set("cache-control", "no-store");
    let _ = h.set("referrer-policy", "no-referrer");
    Ok(r)
}

pub async fn consent(req: &mut Request, env: &Env, cfg: &Config) -> ApiResult<Response> {
    let origin = signin::origin(cfg, req);
    let cookie = browser(req);
    let body = read_body(req, 16 * 1024).await?;
    let to = signin::consent(env, cfg, &origin, &Form::parse(&body), cookie.as_deref()).await?;
    redirect(&to.0)
}

pub async fn callback(req: &Request, env: &Env, cfg: &Config) -> ApiResult<Response> {
    let origin = signin::origin(cfg, req);
    let to = signin::callback(env, cfg, &origin, &query(req), browser(req).as_deref()).await?;
    let r = redirect(&to.0)?;
    // The binding has done its job.
    let _ = r
        .headers()
        .set("set-cookie", &format!("{}=; Path=/oauth; HttpOnly; SameSite=Lax; Max-Age=0", signin::COOKIE));
    Ok(r)
}

fn form_body(req: &Request, body: &[u8]) -> Result<Form, OAuthError> {
    let ct = crate::http::content_type(req);
    if ct != "application/x-www-form-urlencoded" {
        return Err(OAuthError::new(
            "invalid_request",
            "UNSUPPORTED_MEDIA_TYPE",
            format!("expected application/x-www-form-urlencoded, got {ct:?}"),
        )
        .status(415));
    }
    Ok(Form::parse(body))
}

pub async fn token(req: &mut Request, env: &Env, cfg: &Config) -> ApiResult<Response> {
    if !signin::enabled(cfg) {
        return Err(disabled());
    }
    let origin = signin::origin(cfg, req);
    let body = read_body(req, 16 * 1024).await?;
    let answer = match form_body(req, &body) {
        Ok(form) => signin::token(env, cfg, &origin, &form).await,
        Err(e) => Err(e),
    };
    match answer {
        Ok(tokens) => open_json(200, &tokens),
        Err(e) => oauth_error(&e),
    }
}

pub async fn revoke(req: &mut Request, env: &Env, cfg: &Config) -> ApiResult<Response> {
    if !signin::enabled(cfg) {
        return Err(disabled());
    }
    let body = read_body(req, 16 * 1024).await?;
    let answer = match form_body(req, &body) {
        Ok(form) => signin::revoke(env, cfg, &form).await,
        Err(e) => Err(e),
    };
    match answer {
        Ok(()) => open_json(200, &serde_json::json!({})),
        Err(e) => oauth_error(&e),
    }
}
