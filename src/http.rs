//! Request plumbing shared by the routes: the bearer token, body limits, JSON in and out.
//! (Who may call what is decided once, in the router: see `crate::auth`.)
use serde::de::DeserializeOwned;
use serde::Serialize;
use worker::{Headers, Request, Response};

use crate::error::{from_json_error, ApiError};

pub type ApiResult<T> = Result<T, ApiError>;

/// The bearer token of a request, if any.
pub fn bearer(req: &Request) -> Option<String> {
    let value = req.headers().get("authorization").ok().flatten()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_string())
}

pub fn content_type(req: &Request) -> String {
    req.headers()
        .get("content-type")
        .ok()
        .flatten()
        .map(|c| c.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// The body, refusing anything over `limit` bytes (by `Content-Length` first, then by size).
pub async fn read_body(req: &mut Request, limit: usize) -> ApiResult<Vec<u8>> {
    let declared =
        req.headers().get("content-length").ok().flatten().and_then(|l| l.trim().parse::<u64>().ok());
    if declared.is_some_and(|l| l > limit as u64) {
        return Err(too_large(limit));
    }
    let bytes = req
        .bytes()
        .await
        .map_err(|e| ApiError::bad_request("INVALID_BODY", format!("could not read the body: {e}")))?;
    if bytes.len() > limit {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

fn too_large(limit: usize) -> ApiError {
    ApiError::too_large("PAYLOAD_TOO_LARGE", format!("request body is over the {limit}-byte limit"))
}

/// Parse a JSON body (`deny_unknown_fields` on every request type). An empty body is `{}` when
/// `empty_ok`. A declared non-JSON content type is refused.
pub fn parse_json<T: DeserializeOwned>(req: &Request, bytes: &[u8], empty_ok: bool) -> ApiResult<T> {
    let ct = content_type(req);
    if !ct.is_empty() && ct != "application/json" && !ct.ends_with("+json") {
        return Err(ApiError::new(
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            format!("expected application/json, got {ct}"),
        ));
    }
    let bytes: &[u8] = if empty_ok && bytes.iter().all(u8::is_ascii_whitespace) { b"{}" } else { bytes };
    serde_json::from_slice(bytes).map_err(|e| from_json_error(&e))
}

pub fn json<T: Serialize>(status: u16, body: &T) -> worker::Result<Response> {
    let text = serde_json::to_string(body).map_err(|e| worker::Error::RustError(e.to_string()))?;
    let headers = Headers::new();
    headers.set("content-type", "application/json; charset=utf-8")?;
    headers.set("cache-control", "no-store")?;
    Ok(Response::ok(text)?.with_status(status).with_headers(headers))
}

/// A JSON response, or an internal error if it cannot be built.
pub fn reply<T: Serialize>(status: u16, body: &T) -> ApiResult<Response> {
    json(status, body).map_err(|e| ApiError::internal("building the response", e))
}

pub fn error_response(err: &ApiError) -> Response {
    let built = json(err.status, &err.body()).inspect(|r| {
        if err.status == 401 {
            let _ = r.headers().set("www-authenticate", "Bearer");
        }
        if let Some(seconds) = err.retry_after {
            let _ = r.headers().set("retry-after", &seconds.to_string());
        }
    });
    match built {
        Ok(r) => r,
        // Building a response from a string cannot realistically fail; keep a last resort anyway.
        Err(_) => Response::empty()
            .map(|r| r.with_status(err.status))
            .unwrap_or_else(|_| Response::from_bytes(Vec::new()).unwrap_or_else(|_| unreachable_response())),
    }
}

#[allow(clippy::unwrap_used)] // a plain empty response is infallible
fn unreachable_response() -> Response {
    Response::empty().unwrap()
}

/// `owner` / `name` of a repository: GitHub's character set, 1–100 chars, not `.`/`..`.
pub fn check_repo_part(kind: &str, value: &str) -> ApiResult<()> {
    let ok = !value.is_empty()
        && value.len() <= 100
        && value != "."
        && value != ".."
        && value.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad_request(
            "INVALID_REPO",
            format!("invalid repository {kind} {value:?} (letters, digits, `-`, `_`, `.`; 1–100 chars)"),
        ))
    }
}

/// A git ref: 1–255 chars, no control characters, spaces, `..`, or leading `/`/`-`.
pub fn check_ref(value: &str) -> ApiResult<()> {
    let ok = !value.is_empty()
        && value.len() <= 255
        && !value.contains("..")
        && !value.starts_with('/')
        && !value.starts_with('-')
        && value
            .chars()
            .all(|c| !c.is_control() && c != ' ' && c != '\\' && c != '~' && c != '^' && c != ':');
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad_request("INVALID_REF", format!("invalid git ref {value:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_parts_and_refs() {
        assert!(check_repo_part("owner", "rust-lang").is_ok());
        assert!(check_repo_part("name", "foo.js_2").is_ok());
        for bad in ["", ".", "..", "a/b", "a b", "ä", &"x".repeat(101)] {
            assert_eq!(check_repo_part("name", bad).map_err(|e| e.code), Err("INVALID_REPO"), "{bad}");
        }
        assert!(check_ref("main").is_ok());
        assert!(check_ref("feature/x-1").is_ok());
        assert!(check_ref("v1.2.3").is_ok());
        for bad in ["", "a..b", "/x", "-x", "a b", "a\nb"] {
            assert!(check_ref(bad).is_err(), "{bad}");
        }
    }
}
