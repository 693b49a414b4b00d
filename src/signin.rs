//! Sign-in flows: the authorization server's endpoints as work over `store::oauth` and GitHub
//! (the pure rules are in [`crate::oauth`]; `routes::oauth` parses and answers). Every failure
//! is a 4xx with a stable code, and nothing is issued on any of them:
//!
//! | step | checks | codes |
//! | --- | --- | --- |
//! | [`authorize`] | known client, redirect URI equal to a registered one, `code`, S256 challenge, our resource, known scopes | `CLIENT_UNKNOWN`, `REDIRECT_URI_MISMATCH`, `PKCE_REQUIRED`, `INVALID_TARGET`, … |
//! | [`consent`] | the same browser (cookie), once, before expiry | `OAUTH_REQUEST_INVALID` |
//! | [`callback`] | the state: consented, from that browser, once, before expiry; GitHub accepts the code | `OAUTH_STATE_INVALID`, `GITHUB_CODE_INVALID` |
//! | [`token`] | a code once (a second use revokes the grant), same client and redirect URI, the PKCE verifier, same resource; a refresh token once (likewise), GitHub asked again | `CODE_INVALID`, `CODE_REUSED`, `PKCE_MISMATCH`, `REFRESH_TOKEN_REUSED`, … |
//! | [`principal`] | an access token: live, not revoked, for this resource | `TOKEN_EXPIRED`, `TOKEN_REVOKED`, `TOKEN_WRONG_RESOURCE` |
use serde_json::{json, Value};
use worker::{Env, Fetch, Headers, Method, Request, RequestInit};

use crate::auth::{Principal, User};
use crate::config::Config;
use crate::error::ApiError;
use crate::github::{user as github_user, GitHubError};
use crate::oauth::clients::{self, Client};
use crate::oauth::{self, pkce, seal, Form, OAuthError, Resource};
use crate::store::oauth::{self as store, GrantRow, NewToken, RequestRow};
use crate::store::{Db, Stores};

/// How long a user has to consent and sign in on GitHub.
const REQUEST_SECONDS: i64 = 600;
/// How long a code lives.
const CODE_SECONDS: i64 = 120;
/// Registered clients are kept this long.
const CLIENT_SECONDS: i64 = 365 * 86_400;
/// A fetched client metadata document is trusted this long before it is fetched again.
const DOCUMENT_SECONDS: i64 = 3600;

/// The cookie that binds an authorization to the browser that saw the consent page.
pub const COOKIE: &str = "edgerag_signin";

fn now() -> i64 {
    (crate::time::now_ms() / 1000.0) as i64
}

fn disabled() -> ApiError {
    ApiError::not_found(
        "OAUTH_DISABLED",
        "sign-in is not configured on this deployment (GITHUB_CLIENT_ID / GITHUB_CLIENT_SECRET)",
    )
}

fn catalog(env: &Env) -> Result<Db, ApiError> {
    Ok(Stores::from_env(env)?.catalog().clone())
}

/// Whether sign-in is configured.
pub fn enabled(cfg: &Config) -> bool {
    cfg.oauth.github_client().is_some()
}

/// The deployment's origin as clients see it: `PUBLIC_URL`, else the request's.
pub fn origin(cfg: &Config, req: &Request) -> String {
    if let Some(u) = &cfg.oauth.public_url {
        return u.clone();
    }
    req.url().map(|u| u.origin().ascii_serialization()).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------------------------

/// `POST /oauth/register` (RFC 7591): the client information response.
pub async fn register(env: &Env, cfg: &Config, body: &[u8]) -> Result<Value, OAuthError> {
    if !enabled(cfg) {
        return Err(
            OAuthError::new("invalid_request", "OAUTH_DISABLED", "sign-in is not configured").status(404)
        );
    }
    let meta: clients::Metadata = serde_json::from_slice(body).map_err(|e| {
        OAuthError::new(
            "invalid_client_metadata",
            "CLIENT_METADATA_INVALID",
            format!("not client metadata JSON: {e}"),
        )
    })?;
    let client = clients::check_registration(&meta)?;
    let client_id = format!("ec_{}", crate::random::hex(16).map_err(internal)?);
    let now = now();
    let db = catalog(env).map_err(internal)?;
    store::put_client(
        &db,
        &client_id,
        "registered",
        client.name.as_deref(),
        &client.redirect_uris,
        now,
        now + CLIENT_SECONDS,
    )
    .await
    .map_err(|e| internal(e.into()))?;
    Ok(json!({
        "client_id": client_id,
        "client_id_issued_at": now,
        "redirect_uris": client.redirect_uris,
        "client_name": client.name,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }))
}

fn internal(e: ApiError) -> OAuthError {
    OAuthError::new("server_error", e.code, e.message).status(e.status)
}

/// The client behind `client_id`: a registered one, or a metadata document (fetched, checked,
/// cached for an hour).
async fn client(db: &Db, client_id: &str) -> Result<Client, ApiError> {
    let unknown =
        || ApiError::bad_request("CLIENT_UNKNOWN", format!("no client {client_id:?} is registered here"));
    let now = now();
    if let Some(row) = store::client(db, client_id, now).await? {
        return Ok(Client { name: row.client_name.clone(), redirect_uris: row.redirect_uris() });
    }
    if !clients::is_document_url(client_id, cfg!(feature = "test-hooks")) {
        return Err(unknown());
    }
    let body = fetch_document(client_id).await?;
    let client = clients::check_document(client_id, &body)
        .map_err(|e| ApiError::bad_request("CLIENT_METADATA_INVALID", e.description))?;
    store::put_client(
        db,
        client_id,
        "document",
        client.name.as_deref(),
        &client.redirect_uris,
        now,
        now + DOCUMENT_SECONDS,
    )
    .await?;
    Ok(client)
}

async fn fetch_document(url: &str) -> Result<Vec<u8>, ApiError> {
    let failed = |m: String| ApiError::bad_request("CLIENT_METADATA_UNREACHABLE", m);
    let headers = Headers::new();
    let _ = headers.set("Accept", "application/json");
    let _ = headers.set("User-Agent", "edgerag");
    let mut init = RequestInit::new();
    init.with_method(Method::Get).with_headers(headers);
    let request = Request::new_with_init(url, &init).map_err(|e| failed(format!("{url}: {e}")))?;
    crate::ledger::subrequest();
    let mut response =
        Fetch::Request(request).send().await.map_err(|e| failed(format!("fetching {url}: {e}")))?;
    if response.status_code() != 200 {
        return Err(failed(format!("{url} answered {}", response.status_code())));
    }
    let bytes = response.bytes().await.map_err(|e| failed(format!("reading {url}: {e}")))?;
    if bytes.len() > clients::MAX_DOCUMENT_BYTES {
        return Err(failed(format!("{url} is over {} bytes", clients::MAX_DOCUMENT_BYTES)));
    }
    Ok(bytes)
}

// ---------------------------------------------------------------------------------------------
// The browser's part: authorize, consent, GitHub's callback
// ---------------------------------------------------------------------------------------------

/// What `GET /oauth/authorize` answers: the consent page and the browser binding to set.
pub struct ConsentPage {
    pub html: String,
    pub cookie: String,
}

/// `GET /oauth/authorize`: check the client's request and show the consent page. Nothing is
/// redirected before the redirect URI is known to be the client's, and every error is a JSON
/// 4xx (a page shown in the browser).
pub async fn authorize(env: &Env, cfg: &Config, origin: &str, q: &Form) -> Result<ConsentPage, ApiError> {
    if !enabled(cfg) {
        return Err(disabled());
    }
    let p = |name: &str| q.once(name).map_err(|e| ApiError::bad_request(e.code, e.description));
    let need = |name: &str| {
        p(name)?
            .ok_or_else(|| ApiError::bad_request("OAUTH_PARAMETER_MISSING", format!("`{name}` is required")))
    };
    let client_id = need("client_id")?;
    let redirect_uri = need("redirect_uri")?;
    let db = catalog(env)?;
    let client = client(&db, client_id).await?;
    if !client.redirect_uris.iter().any(|u| u == redirect_uri) {
        return Err(ApiError::bad_request(
            "REDIRECT_URI_MISMATCH",
            "redirect_uri is not one of the client's registered redirect URIs (compared exactly)",
        ));
    }
    if p("response_type")? != Some("code") {
        return Err(ApiError::bad_request("UNSUPPORTED_RESPONSE_TYPE", "response_type must be `code`"));
    }
    let challenge = p("code_challenge")?.unwrap_or("");
    if p("code_challenge_method")? != Some("S256") || !pkce::valid_challenge(challenge) {
        return Err(ApiError::bad_request(
            "PKCE_REQUIRED",
            "a PKCE code_challenge (43 base64url characters) with code_challenge_method=S256 is required",
        ));
    }
    // RFC 8707: the token is bound to one of our resources; without the parameter, the MCP one.
    let resource = match p("resource")? {
        None => Resource::Mcp,
        Some(r) => Resource::parse(origin, r).ok_or_else(|| {
            ApiError::bad_request(
                "INVALID_TARGET",
                format!("resource must be {} or {}", Resource::Mcp.uri(origin), Resource::Api.uri(origin)),
            )
        })?,
    };
    let scope = p("scope")?;
    oauth::granted_scope(scope, true).map_err(|m| ApiError::bad_request("INVALID_SCOPE", m))?;
    let client_state = p("state")?;
    if client_state.is_some_and(|s| s.len() > 1024) {
        return Err(ApiError::bad_request("OAUTH_PARAMETER_INVALID", "state is over 1024 bytes"));
    }
    let state = crate::random::hex(32)?;
    let browser = crate::random::hex(32)?;
    store::insert_request(
        &db,
        &RequestRow {
            id: oauth::hash(&state),
            browser_hash: oauth::hash(&browser),
            client_id: client_id.to_string(),
            redirect_uri: redirect_uri.to_string(),
            code_challenge: challenge.to_string(),
            resource: resource.uri(origin),
            scope: scope.unwrap_or("read").to_string(),
            client_state: client_state.map(str::to_string),
            consented: 0,
            used_at: None,
            expires_at: now() + REQUEST_SECONDS,
        },
    )
    .await?;
    let host =
        url::Url::parse(redirect_uri).ok().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_default();
    let html = oauth::page::render(&oauth::page::Consent {
        client_name: client.name.as_deref(),
        client_id,
        redirect_host: &host,
        scope: scope.unwrap_or("read"),
        request: &state,
    });
    Ok(ConsentPage { html, cookie: browser })
}

/// Where the browser goes next.
pub struct Redirect(pub String);

fn invalid_request() -> ApiError {
    ApiError::bad_request(
        "OAUTH_REQUEST_INVALID",
        "this sign-in is unknown, expired, already answered, or was started in another browser: start again from the application",
    )
}

/// `POST /oauth/authorize` (the consent form): `allow` → GitHub's sign-in page; `deny` → the
/// client's redirect URI with `error=access_denied`.
pub async fn consent(
    env: &Env,
    cfg: &Config,
    origin: &str,
    form: &Form,
    browser: Option<&str>,
) -> Result<Redirect, ApiError> {
    let Some((client_id, _)) = cfg.oauth.github_client() else {
        return Err(disabled());
    };
    let bad = |e: OAuthError| ApiError::bad_request(e.code, e.description);
    let state = form.required("request").map_err(bad)?;
    let decision = form.required("decision").map_err(bad)?;
    let browser = browser.ok_or_else(invalid_request)?;
    let db = catalog(env)?;
    let id = oauth::hash(state);
    let row = store::request(&db, &id).await?.ok_or_else(invalid_request)?;
    if !store::consent(&db, &id, &oauth::hash(browser), now()).await? {
        return Err(invalid_request());
    }
    if decision != "allow" {
        // Consumed: the request can no longer reach GitHub.
        store::take_request(&db, &id, &oauth::hash(browser), now()).await?;
        return Ok(Redirect(client_redirect(
            &row.redirect_uri,
            &[("error", "access_denied")],
            row.client_state.as_deref(),
            origin,
        )));
    }
    let callback = format!("{origin}/oauth/callback");
    Ok(Redirect(github_user::authorize_url(&cfg.oauth, client_id, &callback, state)))
}

fn client_redirect(redirect_uri: &str, params: &[(&str, &str)], state: Option<&str>, origin: &str) -> String {
    let mut url = match url::Url::parse(redirect_uri) {
        Ok(u) => u,
        Err(_) => return redirect_uri.to_string(),
    };
    {
        let mut q = url.query_pairs_mut();
        for (k, v) in params {
            q.append_pair(k, v);
        }
        if let Some(s) = state {
            q.append_pair("state", s);
        }
        // RFC 9207: which authorization server answered.
        q.append_pair("iss", origin);
    }
    url.to_string()
}

/// `GET /oauth/callback` (GitHub's redirect): the user signed in on GitHub; read who they are
/// and what they may pull, keep the grant, send a code to the client.
pub async fn callback(
    env: &Env,
    cfg: &Config,
    origin: &str,
    q: &Form,
    browser: Option<&str>,
) -> Result<Redirect, ApiError> {
    let Some((_, client_secret)) = cfg.oauth.github_client() else {
        return Err(disabled());
    };
    let bad = |e: OAuthError| ApiError::bad_request(e.code, e.description);
    let state_invalid = || {
        ApiError::bad_request(
            "OAUTH_STATE_INVALID",
            "the state is unknown, expired, already used, or from another browser: start again from the application",
        )
    };
    let state = q.required("state").map_err(bad)?;
    let browser = browser.ok_or_else(state_invalid)?;
    let db = catalog(env)?;
    let id = oauth::hash(state);
    let row = store::request(&db, &id).await?.ok_or_else(state_invalid)?;
    if !store::take_request(&db, &id, &oauth::hash(browser), now()).await? {
        return Err(state_invalid());
    }
    if q.once("error").map_err(bad)?.is_some() {
        return Ok(Redirect(client_redirect(
            &row.redirect_uri,
            &[("error", "access_denied")],
            row.client_state.as_deref(),
            origin,
        )));
    }
    let code = q.required("code").map_err(bad)?;
    let github =
        |e: GitHubError| ApiError::new(502, "GITHUB_UNAVAILABLE", format!("signing in with GitHub: {e}"));
    let callback = format!("{origin}/oauth/callback");
    let token = github_user::exchange_code(cfg, code, &callback).await.map_err(github)?.ok_or_else(|| {
        ApiError::bad_request("GITHUB_CODE_INVALID", "GitHub did not accept the sign-in code")
    })?;
    let user = github_user::who(cfg, &token).await.map_err(github)?;
    let repos = github_user::pullable_repos(cfg, &token).await.map_err(github)?;
    let scope = oauth::granted_scope(Some(&row.scope), oauth::is_admin(&cfg.oauth.admins, &user.login))
        .map_err(|m| ApiError::bad_request("INVALID_SCOPE", m))?;
    let now = now();
    // A fresh nonce per sealed token, never a fixed fallback (a repeated nonce breaks GCM).
    let nonce: [u8; 12] = crate::random::bytes(12)?.try_into().map_err(|_| {
        ApiError::internal("sealing the GitHub token", "the CSPRNG gave a nonce of the wrong size")
    })?;
    let sealed = seal::seal(&seal::key(client_secret), nonce, &token)
        .ok_or_else(|| ApiError::internal("sealing the GitHub token", "AES-GCM refused the input"))?;
    let grant_id = crate::random::hex(16)?;
    store::insert_grant(
        &db,
        &GrantRow {
            id: grant_id.clone(),
            client_id: row.client_id.clone(),
            login: user.login.clone(),
            github_id: user.id,
            github_token: sealed,
            resource: row.resource.clone(),
            scope,
            repos: crate::store::json_array(&repos)?,
            repos_checked_at: now,
            created_at: now,
            revoked_at: None,
            expires_at: now + cfg.oauth.refresh_token_seconds as i64,
        },
    )
    .await?;
    let code = crate::random::hex(32)?;
    let code_hash = oauth::hash(&code);
    store::insert_tokens(
        &db,
        &[NewToken {
            hash: &code_hash,
            kind: "code",
            grant_id: &grant_id,
            redirect_uri: Some(&row.redirect_uri),
            code_challenge: Some(&row.code_challenge),
            expires_at: now + CODE_SECONDS,
        }],
    )
    .await?;
    crate::log::info(
        "signed_in",
        &[("login", &user.login), ("client", &row.client_id), ("repos", &repos.len().to_string())],
    );
    Ok(Redirect(client_redirect(&row.redirect_uri, &[("code", &code)], row.client_state.as_deref(), origin)))
}

// ---------------------------------------------------------------------------------------------
// The client's part: token, revocation
// ---------------------------------------------------------------------------------------------

fn grant_error(code: &'static str, description: &str) -> OAuthError {
    OAuthError::new("invalid_grant", code, description)
}

/// `POST /oauth/token`: the token response (RFC 6749 §5.1).
pub async fn token(env: &Env, cfg: &Config, origin: &str, form: &Form) -> Result<Value, OAuthError> {
    if !enabled(cfg) {
        return Err(
            OAuthError::new("invalid_request", "OAUTH_DISABLED", "sign-in is not configured").status(404)
        );
    }
    let db = catalog(env).map_err(internal)?;
    match form.required("grant_type")? {
        "authorization_code" => exchange_code(&db, cfg, origin, form).await,
        "refresh_token" => refresh(&db, cfg, origin, form).await,
        other => Err(OAuthError::new(
            "unsupported_grant_type",
            "UNSUPPORTED_GRANT_TYPE",
            format!("grant_type {other:?} is not supported (authorization_code, refresh_token)"),
        )),
    }
}

fn store_error(e: crate::store::StoreError) -> OAuthError {
    internal(e.into())
}

/// The `resource` of a token request, if given, must be the grant's.
fn same_resource(origin: &str, form: &Form, grant: &GrantRow) -> Result<(), OAuthError> {
    match form.once("resource")? {
        None => Ok(()),
        Some(r) if Resource::parse(origin, r).is_some_and(|r| r.uri(origin) == grant.resource) => Ok(()),
        Some(_) => Err(OAuthError::new(
            "invalid_target",
            "INVALID_TARGET",
            "resource is not the one this grant was made for",
        )),
    }
}

async fn exchange_code(db: &Db, cfg: &Config, origin: &str, form: &Form) -> Result<Value, OAuthError> {
    let code = form.required("code")?;
    let client_id = form.required("client_id")?;
    let redirect_uri = form.required("redirect_uri")?;
    let verifier = form.required("code_verifier")?;
    let now = now();
    let hash = oauth::hash(code);
    let row = store::token(db, &hash).await.map_err(store_error)?;
    let Some(row) = row.filter(|r| r.kind == "code") else {
        return Err(grant_error("CODE_INVALID", "unknown authorization code"));
    };
    // Any attempt uses the code up: a code that leaked is worth one try, never two.
    if !store::use_token(db, &hash, now).await.map_err(store_error)? {
        store::revoke_grant(db, &row.grant_id, now).await.map_err(store_error)?;
        return Err(grant_error(
            "CODE_REUSED",
            "the authorization code was already used; its grant is revoked",
        ));
    }
    if row.expires_at <= now {
        return Err(grant_error("CODE_EXPIRED", "the authorization code expired"));
    }
    let grant = store::grant(db, &row.grant_id)
        .await
        .map_err(store_error)?
        .ok_or_else(|| grant_error("CODE_INVALID", "unknown grant"))?;
    if grant.revoked_at.is_some() {
        return Err(grant_error("GRANT_REVOKED", "this sign-in was revoked"));
    }
    if grant.client_id != client_id {
        return Err(grant_error("CLIENT_MISMATCH", "the code was issued to another client"));
    }
    if row.redirect_uri.as_deref() != Some(redirect_uri) {
        return Err(grant_error(
            "REDIRECT_URI_MISMATCH",
            "redirect_uri differs from the authorization request's",
        ));
    }
    if !pkce::matches(verifier, row.code_challenge.as_deref().unwrap_or("")) {
        return Err(grant_error("PKCE_MISMATCH", "code_verifier does not match the code_challenge"));
    }
    same_resource(origin, form, &grant)?;
    issue(db, cfg, &grant, now).await
}

async fn refresh(db: &Db, cfg: &Config, origin: &str, form: &Form) -> Result<Value, OAuthError> {
    let refresh_token = form.required("refresh_token")?;
    let client_id = form.required("client_id")?;
    let now = now();
    let hash = oauth::hash(refresh_token);
    let row = store::token(db, &hash).await.map_err(store_error)?;
    let Some(row) = row.filter(|r| r.kind == "refresh" && refresh_token.starts_with(oauth::REFRESH_PREFIX))
    else {
        return Err(grant_error("REFRESH_TOKEN_INVALID", "unknown refresh token"));
    };
    let grant = store::grant(db, &row.grant_id)
        .await
        .map_err(store_error)?
        .ok_or_else(|| grant_error("REFRESH_TOKEN_INVALID", "unknown grant"))?;
    if grant.revoked_at.is_some() {
        return Err(grant_error("GRANT_REVOKED", "this sign-in was revoked"));
    }
    if row.used_at.is_some() {
        // A rotated refresh token came back: someone else holds a copy. End the sign-in.
        store::revoke_grant(db, &grant.id, now).await.map_err(store_error)?;
        return Err(grant_error(
            "REFRESH_TOKEN_REUSED",
            "the refresh token was already used; the sign-in is revoked",
        ));
    }
    if row.expires_at <= now {
        return Err(grant_error("REFRESH_TOKEN_EXPIRED", "the sign-in expired: sign in again"));
    }
    if grant.client_id != client_id {
        return Err(grant_error("CLIENT_MISMATCH", "the refresh token was issued to another client"));
    }
    same_resource(origin, form, &grant)?;
    // Ask GitHub again before the token is used up, so an outage costs a retry, not the sign-in.
    let repos = recheck(db, cfg, &grant, now).await?;
    if !store::use_token(db, &hash, now).await.map_err(store_error)? {
        store::revoke_grant(db, &grant.id, now).await.map_err(store_error)?;
        return Err(grant_error(
            "REFRESH_TOKEN_REUSED",
            "the refresh token was already used; the sign-in is revoked",
        ));
    }
    store::set_repos(db, &grant.id, &repos, now).await.map_err(store_error)?;
    issue(db, cfg, &grant, now).await
}

/// The repositories GitHub lets the grant's user pull, asked with their sealed GitHub token.
async fn recheck(db: &Db, cfg: &Config, grant: &GrantRow, now: i64) -> Result<Vec<String>, OAuthError> {
    let (_, secret) = cfg.oauth.github_client().unwrap_or(("", ""));
    let Some(token) = seal::open(&seal::key(secret), &grant.github_token) else {
        store::revoke_grant(db, &grant.id, now).await.map_err(store_error)?;
        return Err(grant_error(
            "GITHUB_SIGNIN_EXPIRED",
            "the GitHub sign-in can no longer be read: sign in again",
        ));
    };
    match github_user::pullable_repos(cfg, &token).await {
        Ok(repos) => Ok(repos),
        Err(GitHubError::Unauthorized) => {
            store::revoke_grant(db, &grant.id, now).await.map_err(store_error)?;
            Err(grant_error("GITHUB_SIGNIN_EXPIRED", "GitHub no longer accepts this sign-in: sign in again"))
        }
        Err(GitHubError::Failed(m)) => Err(OAuthError::new(
            "temporarily_unavailable",
            "GITHUB_UNAVAILABLE",
            format!("GitHub could not be asked which repositories you may read: {m}"),
        )
        .status(503)),
    }
}

/// A new access token and refresh token for `grant`.
async fn issue(db: &Db, cfg: &Config, grant: &GrantRow, now: i64) -> Result<Value, OAuthError> {
    let access = format!("{}{}", oauth::ACCESS_PREFIX, crate::random::hex(32).map_err(internal)?);
    let refresh = format!("{}{}", oauth::REFRESH_PREFIX, crate::random::hex(32).map_err(internal)?);
    let (access_hash, refresh_hash) = (oauth::hash(&access), oauth::hash(&refresh));
    let lifetime = cfg.oauth.access_token_seconds as i64;
    store::insert_tokens(
        db,
        &[
            NewToken {
                hash: &access_hash,
                kind: "access",
                grant_id: &grant.id,
                redirect_uri: None,
                code_challenge: None,
                expires_at: now + lifetime,
            },
            NewToken {
                hash: &refresh_hash,
                kind: "refresh",
                grant_id: &grant.id,
                redirect_uri: None,
                code_challenge: None,
                expires_at: grant.expires_at,
            },
        ],
    )
    .await
    .map_err(store_error)?;
    Ok(json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": lifetime,
        "refresh_token": refresh,
        "scope": grant.scope,
    }))
}

/// `POST /oauth/revoke` (RFC 7009): an access or refresh token ends its whole sign-in. Unknown
/// tokens are not an error (the answer says nothing about what exists).
pub async fn revoke(env: &Env, cfg: &Config, form: &Form) -> Result<(), OAuthError> {
    if !enabled(cfg) {
        return Err(
            OAuthError::new("invalid_request", "OAUTH_DISABLED", "sign-in is not configured").status(404)
        );
    }
    let token = form.required("token")?;
    let db = catalog(env).map_err(internal)?;
    if let Some(row) = store::token(&db, &oauth::hash(token)).await.map_err(store_error)? {
        if row.kind == "access" || row.kind == "refresh" {
            store::revoke_grant(&db, &row.grant_id, now()).await.map_err(store_error)?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Requests with an access token
// ---------------------------------------------------------------------------------------------

/// The signed-in user behind an access token, for a request to `resource`.
pub async fn principal(
    env: &Env,
    cfg: &Config,
    origin: &str,
    token: &str,
    resource: Resource,
) -> Result<Principal, ApiError> {
    let invalid = || ApiError::new(401, "UNAUTHORIZED", "invalid bearer token");
    if !enabled(cfg) {
        return Err(invalid());
    }
    let db = catalog(env)?;
    let Some(row) = store::access(&db, &oauth::hash(token)).await? else {
        return Err(invalid());
    };
    if row.kind != "access" {
        return Err(invalid());
    }
    if row.revoked_at.is_some() || row.used_at.is_some() {
        return Err(ApiError::new(401, "TOKEN_REVOKED", "this access token was revoked"));
    }
    if row.expires_at <= now() {
        return Err(ApiError::new(401, "TOKEN_EXPIRED", "this access token expired: refresh it"));
    }
    if row.resource != resource.uri(origin) {
        return Err(ApiError::new(
            401,
            "TOKEN_WRONG_RESOURCE",
            format!("this access token is for {}, not {}", row.resource, resource.uri(origin)),
        ));
    }
    Ok(Principal::User(User {
        login: row.login,
        grant_id: row.grant_id,
        admin: row.scope.split_whitespace().any(|s| s == "admin"),
        repos: serde_json::from_str(&row.repos).unwrap_or_default(),
    }))
}

/// `POST /__test/oauth/age` `{seconds}` (test build, `EDGERAG_TEST_ROUTES=1`): every sign-in
/// row expires `seconds` sooner, so tests see expiry without waiting.
#[cfg(feature = "test-hooks")]
pub async fn handle_test(req: &mut Request, env: &Env) -> Option<worker::Result<worker::Response>> {
    if !crate::vector::test_routes::enabled(env) || req.path() != "/__test/oauth/age" {
        return None;
    }
    let body: Value = req.json().await.unwrap_or_default();
    let seconds = body.get("seconds").and_then(Value::as_i64).unwrap_or(0);
    let run = async {
        let db = catalog(env)?;
        db.batch(vec![
            db.stmt("UPDATE oauth_tokens SET expires_at = expires_at - ?", &crate::store::args![seconds])?,
            db.stmt("UPDATE oauth_requests SET expires_at = expires_at - ?", &crate::store::args![seconds])?,
        ])
        .await?;
        Ok::<_, ApiError>(())
    };
    Some(match run.await {
        Ok(()) => worker::Response::from_json(&json!({"aged": seconds})),
        Err(e) => Ok(crate::http::error_response(&e)),
    })
}
