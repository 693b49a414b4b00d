//! The GitHub adapter: what the worker asks GitHub besides tarballs. [`user`] is the sign-in
//! side (a user's code for a token, who they are, which repositories they may pull). Every call
//! goes to the configured URLs only (`GITHUB_OAUTH_URL`, `GITHUB_API_URL`), and no token is ever
//! logged.
pub mod app;
pub mod user;

use worker::{Fetch, Headers, Method, Request, RequestInit, Response};

/// Why a GitHub call did not give an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitHubError {
    /// GitHub refused the credentials (401): a user's token expired or was revoked.
    Unauthorized,
    /// Unreachable, a 5xx, or an answer that is not what GitHub sends.
    Failed(String),
}

impl std::fmt::Display for GitHubError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GitHubError::Unauthorized => f.write_str("GitHub refused the credentials (401)"),
            GitHubError::Failed(m) => f.write_str(m),
        }
    }
}

/// Send one request to GitHub with its usual headers; `bearer` as `Authorization`.
pub async fn send(
    method: Method,
    url: &str,
    bearer: Option<&str>,
    body: Option<(&str, String)>,
) -> Result<Response, GitHubError> {
    let failed = |e: worker::Error| GitHubError::Failed(format!("{url}: {e}"));
    let headers = Headers::new();
    headers.set("Accept", "application/json").map_err(failed)?;
    headers.set("User-Agent", "edgerag").map_err(failed)?;
    headers.set("X-GitHub-Api-Version", "2022-11-28").map_err(failed)?;
    if let Some(token) = bearer {
        headers.set("Authorization", &format!("Bearer {token}")).map_err(failed)?;
    }
    let mut init = RequestInit::new();
    init.with_method(method);
    if let Some((content_type, text)) = body {
        headers.set("Content-Type", content_type).map_err(failed)?;
        init.with_body(Some(text.into()));
    }
    init.with_headers(headers);
    let request = Request::new_with_init(url, &init).map_err(failed)?;
    crate::ledger::subrequest();
    let response = Fetch::Request(request).send().await.map_err(failed)?;
    match response.status_code() {
        401 => Err(GitHubError::Unauthorized),
        s if s >= 500 => Err(GitHubError::Failed(format!("{url}: GitHub answered {s}"))),
        _ => Ok(response),
    }
}

/// The JSON body of a 2xx answer.
pub async fn json<T: serde::de::DeserializeOwned>(
    mut response: Response,
    what: &str,
) -> Result<T, GitHubError> {
    let status = response.status_code();
    if !(200..300).contains(&status) {
        return Err(GitHubError::Failed(format!("{what}: GitHub answered {status}")));
    }
    response.json::<T>().await.map_err(|e| GitHubError::Failed(format!("{what}: unexpected answer: {e}")))
}
