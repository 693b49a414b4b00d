//! `/v1/repos/{owner}/{name}/settings`: per-repository settings (the chunking mode of Markdown
//! and text files). A bad value is a 400 `INVALID_SETTINGS` naming what is accepted.
use worker::{Env, Request, Response};

use crate::api::RepoSettings;
use crate::config::Config;
use crate::error::ApiError;
use crate::http::{check_repo_part, parse_json, read_body, reply, ApiResult};
use crate::pipeline::Ctx;
use crate::store::namespaces::namespace_id;
use crate::store::settings;

/// Settings bodies are tiny.
const MAX_SETTINGS_BYTES: usize = 4096;

pub async fn get(env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    check_repo_part("owner", owner)?;
    check_repo_part("name", name)?;
    let ns = namespace_id(owner, name);
    let db = Ctx::for_namespace(env, &ns, false).await?.db;
    reply(200, &RepoSettings { chunking: settings::chunking(&db, &ns).await? })
}

pub async fn put(
    req: &mut Request,
    env: &Env,
    _cfg: &Config,
    owner: &str,
    name: &str,
) -> ApiResult<Response> {
    check_repo_part("owner", owner)?;
    check_repo_part("name", name)?;
    let body = read_body(req, MAX_SETTINGS_BYTES).await?;
    // JSON first (a syntax error is `INVALID_JSON`), then the settings: any wrong field or value
    // is `INVALID_SETTINGS`.
    let raw: serde_json::Value = parse_json(req, &body, false)?;
    let wanted: RepoSettings = serde_json::from_value(raw).map_err(|e| {
        ApiError::bad_request(
            "INVALID_SETTINGS",
            format!("{e}; accepted: {{\"chunking\": \"flat\" | \"parent-child\"}}"),
        )
    })?;
    let ns = namespace_id(owner, name);
    let db = Ctx::for_namespace(env, &ns, true).await?.db;
    settings::set_chunking(&db, &ns, owner, name, wanted.chunking, &crate::time::now_iso()).await?;
    reply(200, &wanted)
}
