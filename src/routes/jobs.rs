//! `GET /v1/jobs/{id}`.
use worker::{Env, Response};

use crate::auth::Access;
use crate::error::ApiError;
use crate::http::{reply, ApiResult};
use crate::store::{jobs, Stores};

/// A job of a namespace the caller may not read answers like a missing one (its id says nothing).
pub async fn get(env: &Env, access: &Access, id: &str) -> ApiResult<Response> {
    let stores = Stores::from_env(env)?;
    let db = stores.job_database(id).await?.unwrap_or_else(|| stores.catalog().clone());
    let job = jobs::get(&db, id)
        .await?
        .filter(|job| access.may_read_namespace(&job.namespace))
        .ok_or_else(|| ApiError::not_found("JOB_NOT_FOUND", format!("no job {id}")))?;
    reply(200, &jobs::load_view(&db, &job).await?)
}
