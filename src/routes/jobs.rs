//! `GET /v1/jobs/{id}`.
use worker::{Env, Request, Response};

use crate::config::Config;
use crate::error::ApiError;
use crate::http::{reply, require_read, ApiResult};
use crate::store::{jobs, Stores};

pub async fn get(req: &Request, env: &Env, cfg: &Config, id: &str) -> ApiResult<Response> {
    require_read(req, cfg)?;
    let stores = Stores::from_env(env)?;
    let db = stores.job_database(id).await?.unwrap_or_else(|| stores.catalog().clone());
    let job = jobs::get(&db, id)
        .await?
        .ok_or_else(|| ApiError::not_found("JOB_NOT_FOUND", format!("no job {id}")))?;
    reply(200, &jobs::load_view(&db, &job).await?)
}
