//! OAuth clients: who may ask for a code, and where it may be sent. Every client is public (PKCE,
//! no secret). Two ways in:
//! - dynamic registration (RFC 7591): [`check_registration`] keeps the redirect URIs and name;
//! - a Client ID Metadata Document: the client id is an https URL whose JSON names the same
//!   `client_id` and the redirect URIs ([`check_document`]); the worker fetches it.
//!
//! Redirect URIs are compared exactly (no prefix or pattern matching); each must be https, or
//! http on a loopback host (native apps), without a fragment or user info.
use serde::Deserialize;

use super::OAuthError;

/// Most redirect URIs a client may register.
pub const MAX_REDIRECT_URIS: usize = 10;
/// Largest metadata document fetched.
pub const MAX_DOCUMENT_BYTES: usize = 16 * 1024;

/// A client as the authorization endpoint needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    pub name: Option<String>,
    pub redirect_uris: Vec<String>,
}

/// The registration request's fields edgerag reads (others are ignored, as RFC 7591 allows).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Metadata {
    #[serde(default)]
    pub client_id: Option<String>,
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    #[serde(default)]
    pub client_name: Option<String>,
    #[serde(default)]
    pub grant_types: Option<Vec<String>>,
    #[serde(default)]
    pub response_types: Option<Vec<String>>,
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
}

fn loopback(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

/// Whether `uri` may be a redirect URI.
pub fn check_redirect_uri(uri: &str) -> Result<(), String> {
    let parsed =
        url::Url::parse(uri).map_err(|e| format!("redirect URI {uri:?} is not an absolute URL: {e}"))?;
    if parsed.fragment().is_some() {
        return Err(format!("redirect URI {uri:?} has a fragment"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(format!("redirect URI {uri:?} has user info"));
    }
    let host = parsed.host_str().unwrap_or("");
    match parsed.scheme() {
        "https" if !host.is_empty() => Ok(()),
        "http" if loopback(host) => Ok(()),
        _ => Err(format!("redirect URI {uri:?} must be https, or http on localhost / 127.0.0.1 / [::1]")),
    }
}

fn name_of(name: Option<&str>) -> Option<String> {
    name.map(|n| n.chars().filter(|c| !c.is_control()).take(100).collect::<String>())
        .filter(|n| !n.trim().is_empty())
}

fn check_common(meta: &Metadata) -> Result<Client, OAuthError> {
    let bad = |code, msg: String| OAuthError::new("invalid_client_metadata", code, msg);
    if meta.redirect_uris.is_empty() {
        return Err(OAuthError::new(
            "invalid_redirect_uri",
            "REDIRECT_URI_INVALID",
            "redirect_uris is required",
        ));
    }
    if meta.redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(OAuthError::new(
            "invalid_redirect_uri",
            "REDIRECT_URI_INVALID",
            format!("at most {MAX_REDIRECT_URIS} redirect URIs"),
        ));
    }
    for uri in &meta.redirect_uris {
        check_redirect_uri(uri)
            .map_err(|m| OAuthError::new("invalid_redirect_uri", "REDIRECT_URI_INVALID", m))?;
    }
    if let Some(types) = &meta.grant_types {
        if let Some(t) = types.iter().find(|t| !matches!(t.as_str(), "authorization_code" | "refresh_token"))
        {
            return Err(bad("CLIENT_METADATA_INVALID", format!("grant type {t:?} is not supported")));
        }
    }
    if let Some(types) = &meta.response_types {
        if types.iter().any(|t| t != "code") {
            return Err(bad("CLIENT_METADATA_INVALID", "only the `code` response type is supported".into()));
        }
    }
    Ok(Client { name: name_of(meta.client_name.as_deref()), redirect_uris: meta.redirect_uris.clone() })
}

/// A dynamic registration request. Every client is public: a request for another
/// `token_endpoint_auth_method` is answered with `none` (RFC 7591 §3.2.1 lets the server
/// replace a value it does not support).
pub fn check_registration(meta: &Metadata) -> Result<Client, OAuthError> {
    check_common(meta)
}

/// Whether `client_id` is a Client ID Metadata Document URL: https with a path, no fragment.
/// `allow_loopback_http` admits `http://127.0.0.1…` (the test build only, where no TLS exists).
pub fn is_document_url(client_id: &str, allow_loopback_http: bool) -> bool {
    let Ok(url) = url::Url::parse(client_id) else {
        return false;
    };
    let scheme_ok = url.scheme() == "https"
        || (allow_loopback_http && url.scheme() == "http" && url.host_str().is_some_and(loopback));
    scheme_ok && url.path() != "/" && url.fragment().is_none() && url.username().is_empty()
}

/// A fetched metadata document for `client_id`: it must name itself and be a public client.
pub fn check_document(client_id: &str, body: &[u8]) -> Result<Client, OAuthError> {
    let bad = |m: String| OAuthError::new("invalid_client", "CLIENT_METADATA_INVALID", m).status(401);
    let meta: Metadata = serde_json::from_slice(body)
        .map_err(|e| bad(format!("the client metadata document is not JSON: {e}")))?;
    if meta.client_id.as_deref() != Some(client_id) {
        return Err(bad("the client metadata document's client_id is not its own URL".into()));
    }
    if meta.token_endpoint_auth_method.as_deref().is_some_and(|m| m != "none") {
        return Err(bad("only public clients (token_endpoint_auth_method `none`) are supported".into()));
    }
    check_common(&meta).map_err(|e| bad(e.description))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn redirect_uris_are_https_or_loopback_without_fragments() {
        for ok in
            ["https://claude.ai/api/mcp/auth_callback", "http://127.0.0.1:33418/cb", "http://localhost/cb"]
        {
            assert!(check_redirect_uri(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://evil.example/cb",
            "https://claude.ai/cb#x",
            "https://user:pw@claude.ai/cb",
            "javascript:alert(1)",
            "/relative",
            "",
        ] {
            assert!(check_redirect_uri(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn registration_keeps_exact_uris_and_refuses_other_grants() {
        let meta = Metadata {
            redirect_uris: vec!["http://127.0.0.1:1/cb".into()],
            client_name: Some("Agent\u{7}".into()),
            token_endpoint_auth_method: Some("client_secret_basic".into()),
            ..Metadata::default()
        };
        let c = check_registration(&meta).unwrap();
        assert_eq!(c.redirect_uris, ["http://127.0.0.1:1/cb"]);
        assert_eq!(c.name.as_deref(), Some("Agent"));
        let implicit = Metadata { grant_types: Some(vec!["implicit".into()]), ..meta.clone() };
        assert_eq!(check_registration(&implicit).unwrap_err().code, "CLIENT_METADATA_INVALID");
        let none = Metadata { redirect_uris: vec![], ..meta };
        assert_eq!(check_registration(&none).unwrap_err().error, "invalid_redirect_uri");
    }

    #[test]
    fn a_metadata_document_must_name_itself() {
        let id = "https://app.example/oauth/client.json";
        assert!(is_document_url(id, false));
        assert!(!is_document_url("https://app.example/", false));
        assert!(!is_document_url("http://127.0.0.1:9/c.json", false));
        assert!(is_document_url("http://127.0.0.1:9/c.json", true));
        assert!(!is_document_url("not a url", true));
        let doc = serde_json::json!({"client_id": id, "redirect_uris": ["https://app.example/cb"], "client_name": "App"});
        assert_eq!(check_document(id, doc.to_string().as_bytes()).unwrap().name.as_deref(), Some("App"));
        let other = serde_json::json!({"client_id": "https://evil.example/c.json", "redirect_uris": ["https://app.example/cb"]});
        assert_eq!(
            check_document(id, other.to_string().as_bytes()).unwrap_err().code,
            "CLIENT_METADATA_INVALID"
        );
        assert!(check_document(id, b"<html>").is_err());
    }
}
