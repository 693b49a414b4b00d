//! `POST /v1/repos/{owner}/{name}/plans` (start a per-node chunk plan run, 202 with its record) and
//! `GET /v1/repos/{owner}/{name}/plans/{runId}` (the record). The work runs on the queue
//! ([`crate::pipeline::plans`]).
use worker::{Env, Request, Response};

use crate::api::{PlanRequest, PlanRunResponse};
use crate::error::ApiError;
use crate::http::{parse_json, read_body, reply, ApiResult};
use crate::pipeline::{plans, Ctx};
use crate::repo_tools;
use crate::store::Stores;

pub async fn post(req: &mut Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let body = read_body(req, 64 * 1024).await?;
    let request: PlanRequest = parse_json(req, &body, true)?;
    let options = edgerag_core::graph::plan::run_options(
        request.strategy.as_deref(),
        request.batch_size,
        request.limit_nodes,
        request.include_kinds.as_deref(),
    )
    .map_err(|e| ApiError::bad_request(e.code(), e.to_string()))?;
    let repo = repo_tools::open(&Stores::from_env(env)?, owner, name).await?;
    let ctx = Ctx::new(env)?.on(repo.db);
    let with_edges = request.with_edges_relations.unwrap_or(true);
    let run = plans::start(&ctx, &repo.namespace, &options, request.dry_run, with_edges).await?;
    reply(202, &PlanRunResponse { run: plans::view(&run, owner, name) })
}

pub async fn get(env: &Env, owner: &str, name: &str, run_id: &str) -> ApiResult<Response> {
    let repo = repo_tools::open(&Stores::from_env(env)?, owner, name).await?;
    let Some(run) = crate::store::plans::get_run(&repo.db, &repo.namespace, run_id).await? else {
        return Err(ApiError::not_found(
            "PLAN_RUN_NOT_FOUND",
            format!("no plan run {run_id:?} in repository {owner}/{name}"),
        ));
    };
    reply(200, &PlanRunResponse { run: plans::view(&run, owner, name) })
}
