//! Sign-in with GitHub: the user's code for a user token (the GitHub App's, or OAuth app's,
//! client id and secret), who the user is, and the repositories they may pull.
use serde::Deserialize;
use worker::Method;

use super::{json, send, GitHubError};
use crate::config::{Config, OAuthConfig};

/// GitHub's sign-in page for `state`, coming back to `callback`.
pub fn authorize_url(oauth: &OAuthConfig, client_id: &str, callback: &str, state: &str) -> String {
    let query: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", callback)
        .append_pair("state", state)
        .append_pair("allow_signup", "false")
        .finish();
    format!("{}/login/oauth/authorize?{query}", oauth.github_oauth_url)
}

#[derive(Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    access_token: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

/// Exchange the code GitHub's callback carried for the user's token. `None` when GitHub refuses
/// the code (expired, used, or not for this client).
pub async fn exchange_code(cfg: &Config, code: &str, callback: &str) -> Result<Option<String>, GitHubError> {
    let Some((client_id, secret)) = cfg.oauth.github_client() else {
        return Err(GitHubError::Failed("sign-in is not configured".into()));
    };
    let body: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("client_id", client_id)
        .append_pair("client_secret", secret)
        .append_pair("code", code)
        .append_pair("redirect_uri", callback)
        .finish();
    let url = format!("{}/login/oauth/access_token", cfg.oauth.github_oauth_url);
    let response = send(Method::Post, &url, None, Some(("application/x-www-form-urlencoded", body))).await?;
    let answer: TokenAnswer = json(response, "the code exchange").await?;
    Ok(answer.access_token.filter(|t| !t.is_empty() && answer.error.is_none()))
}

#[derive(Debug, Clone, Deserialize)]
pub struct GitHubUser {
    pub login: String,
    pub id: i64,
}

pub async fn who(cfg: &Config, token: &str) -> Result<GitHubUser, GitHubError> {
    let response = send(Method::Get, &format!("{}/user", cfg.github_api_url), Some(token), None).await?;
    json(response, "GET /user").await
}

#[derive(Deserialize)]
struct Repo {
    full_name: String,
    #[serde(default)]
    permissions: Option<Permissions>,
}

#[derive(Deserialize)]
struct Permissions {
    #[serde(default)]
    pull: bool,
}

/// Pages of `GET /user/repos` read at most (100 repositories a page).
const MAX_PAGES: u32 = 10;

/// Lower-case `owner/name` of every repository the user may pull (`GET /user/repos`, which for
/// a GitHub App's user token lists the repositories both the user and the app can reach).
pub async fn pullable_repos(cfg: &Config, token: &str) -> Result<Vec<String>, GitHubError> {
    let mut out = Vec::new();
    for page in 1..=MAX_PAGES {
        let url = format!("{}/user/repos?per_page=100&page={page}", cfg.github_api_url);
        let repos: Vec<Repo> =
            json(send(Method::Get, &url, Some(token), None).await?, "GET /user/repos").await?;
        let last = repos.len() < 100;
        out.extend(
            repos
                .into_iter()
                .filter(|r| r.permissions.as_ref().is_some_and(|p| p.pull))
                .map(|r| r.full_name.to_ascii_lowercase()),
        );
        if last {
            break;
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}
