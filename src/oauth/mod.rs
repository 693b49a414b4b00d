//! Sign-in, the pure part: the worker is the OAuth 2.1 authorization server of its own MCP
//! endpoint and API (the MCP authorization specification, 2025-11-25), with GitHub as the
//! identity provider. No I/O here: `signin` (level 3) runs the flows over `store::oauth` and the
//! GitHub adapter, `routes::oauth` answers.
//!
//! The flow, as a client that follows the MCP specification sees it:
//!
//! 1. A request without a token gets 401 with `WWW-Authenticate: Bearer resource_metadata=…`
//!    pointing at the protected-resource metadata (RFC 9728, [`protected_resource`]), which
//!    names this deployment as the authorization server ([`authorization_server`], RFC 8414).
//! 2. The client registers (RFC 7591, [`clients::check_registration`]) or uses the https URL of
//!    its Client ID Metadata Document as its id ([`clients::check_document`]).
//! 3. `GET /oauth/authorize` with PKCE S256 ([`pkce`]) and `resource` (RFC 8707,
//!    [`Resource`]): the redirect URI must equal a registered one exactly; the user sees a
//!    consent page ([`page`]) bound to their browser by a cookie, then signs in on GitHub.
//! 4. GitHub's callback: the user's repositories with `pull` permission are read from GitHub and
//!    kept with the grant; a one-time code goes to the client's redirect URI.
//! 5. `POST /oauth/token`: the code and the PKCE verifier for a short-lived access token bound to
//!    the resource and a refresh token; a refresh rotates it and asks GitHub again; a refresh
//!    token (or code) used twice revokes the whole grant.
//!
//! Codes and tokens are random (the runtime's CSPRNG), stored as BLAKE3 hashes; the GitHub user
//! token is sealed with AES-256-GCM ([`seal`]).
pub mod clients;
pub mod page;
pub mod pkce;
pub mod seal;

use serde_json::{json, Value};

/// Prefix of access tokens (`eat_<64 hex>`); the router tells them from keys by it.
pub const ACCESS_PREFIX: &str = "eat_";
/// Prefix of refresh tokens.
pub const REFRESH_PREFIX: &str = "ert_";

/// What a token may be used for: the MCP endpoint or the HTTP API, each its own resource
/// (RFC 8707): a token for one is refused by the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    Mcp,
    Api,
}

impl Resource {
    /// The resource's path under the deployment's origin.
    pub fn path(self) -> &'static str {
        match self {
            Resource::Mcp => "/mcp",
            Resource::Api => "/v1",
        }
    }

    /// The resource identifier: `<origin>/mcp` or `<origin>/v1`.
    pub fn uri(self, origin: &str) -> String {
        format!("{origin}{}", self.path())
    }

    /// The resource a request path belongs to.
    pub fn of_path(path: &str) -> Option<Resource> {
        if path == "/mcp" || path.starts_with("/mcp/") {
            Some(Resource::Mcp)
        } else if path.starts_with("/v1/") || path == "/v1" {
            Some(Resource::Api)
        } else {
            None
        }
    }

    /// The resource a `resource` parameter names (exactly one of ours; a trailing `/` is
    /// tolerated, as some clients add one).
    pub fn parse(origin: &str, value: &str) -> Option<Resource> {
        let value = value.strip_suffix('/').unwrap_or(value);
        [Resource::Mcp, Resource::Api].into_iter().find(|r| r.uri(origin) == value)
    }

    /// Where its protected-resource metadata is (RFC 9728 §3.1: the well-known path inserted
    /// before the resource's path).
    pub fn metadata_url(self, origin: &str) -> String {
        format!("{origin}/.well-known/oauth-protected-resource{}", self.path())
    }
}

/// Scopes a token may carry: `read` (what GitHub lets the user pull) and `admin` (everything,
/// only for the logins named in `OAUTH_ADMINS`).
pub const SCOPES: [&str; 2] = ["read", "admin"];

/// The scopes granted for a requested `scope` parameter: `read` always, `admin` when asked for
/// and the user is an admin. Unknown scopes are an error (RFC 6749 `invalid_scope`).
pub fn granted_scope(requested: Option<&str>, is_admin: bool) -> Result<String, String> {
    let mut admin = false;
    for s in requested.unwrap_or("read").split_whitespace() {
        match s {
            "read" => {}
            "admin" => admin = true,
            other => return Err(format!("unknown scope {other:?} (read, admin)")),
        }
    }
    Ok(if admin && is_admin { "read admin".into() } else { "read".into() })
}

/// RFC 9728 protected-resource metadata of `resource`.
pub fn protected_resource(origin: &str, resource: Resource) -> Value {
    let scopes: &[&str] = match resource {
        Resource::Mcp => &["read"],
        Resource::Api => &SCOPES,
    };
    json!({
        "resource": resource.uri(origin),
        "authorization_servers": [origin],
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": "edgerag",
    })
}

/// RFC 8414 authorization-server metadata.
pub fn authorization_server(origin: &str) -> Value {
    json!({
        "issuer": origin,
        "authorization_endpoint": format!("{origin}/oauth/authorize"),
        "token_endpoint": format!("{origin}/oauth/token"),
        "registration_endpoint": format!("{origin}/oauth/register"),
        "revocation_endpoint": format!("{origin}/oauth/revoke"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": SCOPES,
        "client_id_metadata_document_supported": true,
        "authorization_response_iss_parameter_supported": true,
    })
}

/// The `WWW-Authenticate` value of a 401 on `resource`: where its metadata is, and
/// `error="invalid_token"` when a token was sent and refused (RFC 6750 §3).
pub fn challenge(origin: &str, resource: Resource, token_refused: bool) -> String {
    let error = if token_refused { ", error=\"invalid_token\"" } else { "" };
    let scope = match resource {
        Resource::Mcp => "read",
        Resource::Api => "read admin",
    };
    format!("Bearer resource_metadata=\"{}\", scope=\"{scope}\"{error}", resource.metadata_url(origin))
}

/// An error of the token, registration and revocation endpoints, in RFC 6749 §5.2's shape
/// (`error`, `error_description`, what OAuth clients read) plus edgerag's stable `code`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthError {
    pub status: u16,
    /// RFC 6749 / 7591 / 8707 error: `invalid_request`, `invalid_grant`, `invalid_client`,
    /// `invalid_target`, `invalid_scope`, `unsupported_grant_type`, `invalid_redirect_uri`,
    /// `invalid_client_metadata`.
    pub error: &'static str,
    /// edgerag's stable code (SCREAMING_SNAKE_CASE).
    pub code: &'static str,
    pub description: String,
}

impl OAuthError {
    pub fn new(error: &'static str, code: &'static str, description: impl Into<String>) -> OAuthError {
        OAuthError { status: 400, error, code, description: description.into() }
    }

    pub fn status(mut self, status: u16) -> OAuthError {
        self.status = status;
        self
    }

    pub fn body(&self) -> Value {
        json!({"error": self.error, "error_description": self.description, "code": self.code})
    }
}

/// `application/x-www-form-urlencoded` → the value of each name (the last one wins; a name
/// given twice is refused by the caller through [`Form::once`]).
pub struct Form(Vec<(String, String)>);

impl Form {
    pub fn parse(body: &[u8]) -> Form {
        Form(url::form_urlencoded::parse(body).into_owned().collect())
    }

    /// The value of `name`: `Ok(None)` when absent or empty, an error when given twice
    /// (RFC 6749 §3.1: parameters must not be repeated).
    pub fn once(&self, name: &str) -> Result<Option<&str>, OAuthError> {
        let mut found = self.0.iter().filter(|(k, _)| k == name);
        let first = found.next();
        if found.next().is_some() {
            return Err(OAuthError::new(
                "invalid_request",
                "OAUTH_PARAMETER_REPEATED",
                format!("`{name}` is given more than once"),
            ));
        }
        Ok(first.map(|(_, v)| v.as_str()).filter(|v| !v.is_empty()))
    }

    pub fn required(&self, name: &str) -> Result<&str, OAuthError> {
        self.once(name)?.ok_or_else(|| {
            OAuthError::new("invalid_request", "OAUTH_PARAMETER_MISSING", format!("`{name}` is required"))
        })
    }
}

/// The stored form of a code, token or browser binding: BLAKE3, hex. Lookups are by this hash,
/// so comparing it is not a timing channel on the secret.
pub fn hash(secret: &str) -> String {
    blake3::hash(secret.as_bytes()).to_hex().to_string()
}

/// Whether `login` is one of the comma-separated `OAUTH_ADMINS` (GitHub logins, any case).
pub fn is_admin(admins: &[String], login: &str) -> bool {
    admins.iter().any(|a| a.eq_ignore_ascii_case(login))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const O: &str = "https://rag.example.dev";

    #[test]
    fn each_resource_has_its_identifier_and_metadata_url() {
        assert_eq!(Resource::Mcp.uri(O), "https://rag.example.dev/mcp");
        assert_eq!(
            Resource::Api.metadata_url(O),
            "https://rag.example.dev/.well-known/oauth-protected-resource/v1"
        );
        assert_eq!(Resource::parse(O, "https://rag.example.dev/mcp/"), Some(Resource::Mcp));
        assert_eq!(Resource::parse(O, "https://rag.example.dev/v1"), Some(Resource::Api));
        for other in
            ["https://rag.example.dev", "https://evil.example/mcp", "https://rag.example.dev/mcpx", ""]
        {
            assert_eq!(Resource::parse(O, other), None, "{other}");
        }
        assert_eq!(Resource::of_path("/mcp"), Some(Resource::Mcp));
        assert_eq!(Resource::of_path("/v1/repos"), Some(Resource::Api));
        assert_eq!(Resource::of_path("/health"), None);
        assert_eq!(Resource::of_path("/mcpx"), None);
    }

    #[test]
    fn metadata_names_this_deployment_and_only_s256_and_public_clients() {
        let prm = protected_resource(O, Resource::Mcp);
        assert_eq!(prm["resource"], "https://rag.example.dev/mcp");
        assert_eq!(prm["authorization_servers"][0], O);
        let asm = authorization_server(O);
        assert_eq!(asm["issuer"], O);
        assert_eq!(asm["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(asm["token_endpoint_auth_methods_supported"], json!(["none"]));
        assert_eq!(asm["client_id_metadata_document_supported"], true);
        let c = challenge(O, Resource::Mcp, true);
        assert!(c.starts_with(
            "Bearer resource_metadata=\"https://rag.example.dev/.well-known/oauth-protected-resource/mcp\""
        ));
        assert!(c.ends_with("error=\"invalid_token\""));
    }

    #[test]
    fn admin_is_granted_only_to_admins_who_ask() {
        assert_eq!(granted_scope(None, true).unwrap(), "read");
        assert_eq!(granted_scope(Some("read admin"), true).unwrap(), "read admin");
        assert_eq!(granted_scope(Some("read admin"), false).unwrap(), "read");
        assert!(granted_scope(Some("read write"), true).is_err());
        assert!(is_admin(&["Carol".into()], "carol") && !is_admin(&["carol".into()], "carolx"));
    }

    #[test]
    fn forms_refuse_repeated_parameters() {
        let f = Form::parse(b"a=1&b=&c=x%20y&a=2");
        assert_eq!(f.once("a").unwrap_err().code, "OAUTH_PARAMETER_REPEATED");
        assert_eq!(f.once("b").unwrap(), None);
        assert_eq!(f.required("c").unwrap(), "x y");
        assert_eq!(f.required("d").unwrap_err().code, "OAUTH_PARAMETER_MISSING");
    }
}
