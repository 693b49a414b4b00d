//! What a repository's index looks like right now: one function per question, called by the
//! HTTP routes (`GET /v1/repos`, `GET /v1/repos/{owner}/{name}/status`) and the MCP tool
//! `repo.rag_index_status` alike.
use worker::Env;

use crate::api::{GithubSyncView, QueuedFetchView, RepoStatusResponse, ReposResponse};
use crate::auth::Access;
use crate::error::ApiError;
use crate::http::{check_repo_part, ApiResult};
use crate::store::namespaces::{self, namespace_id};
use crate::store::{github, jobs, Stores};

/// Jobs listed in a status, newest first.
const RECENT_JOBS: u32 = 10;

/// 404 `REPO_NOT_FOUND`.
pub fn repo_not_found(owner: &str, name: &str) -> ApiError {
    ApiError::not_found("REPO_NOT_FOUND", format!("repository {owner}/{name} is not indexed"))
}

/// Every repository the caller may read, ordered by owner and name (from every database).
pub async fn list_repos(stores: &Stores, access: &Access) -> ApiResult<ReposResponse> {
    let mut rows = Vec::new();
    for db in stores.databases() {
        rows.extend(namespaces::list(db).await?.into_iter().filter(|n| access.may_read(&n.owner, &n.name)));
    }
    rows.sort_by(|a, b| (&a.owner, &a.name).cmp(&(&b.owner, &b.name)));
    Ok(ReposResponse { repos: rows.iter().map(|n| n.summary()).collect() })
}

/// One repository: readiness, its latest job's progress and error, recent jobs, the embedder.
pub async fn repo_status(
    env: &Env,
    stores: &Stores,
    owner: &str,
    name: &str,
) -> ApiResult<RepoStatusResponse> {
    check_repo_part("owner", owner)?;
    check_repo_part("name", name)?;
    let namespace = namespace_id(owner, name);
    let db = stores.for_namespace(&namespace).await?;
    let ns = namespaces::get(&db, &namespace).await?.ok_or_else(|| repo_not_found(owner, name))?;
    let recent = jobs::recent(&db, &namespace, RECENT_JOBS).await?;
    let mut views = Vec::with_capacity(recent.len());
    for job in &recent {
        views.push(jobs::load_view(&db, job).await?);
    }
    let latest = views.first().cloned();
    let summary = ns.summary();
    let github = match github::get(stores.catalog(), &namespace).await? {
        Some(r) => Some(GithubSyncView {
            git_ref: r.git_ref,
            webhook: r.webhook_secret.is_some(),
            sync_interval_minutes: r.sync_interval_minutes.and_then(|m| u32::try_from(m).ok()),
            last_sync_at: r.last_sync_at,
            queued_fetch: github::pending_fetch(&db, &namespace).await?.map(|p| QueuedFetchView {
                after_job: p.after_job,
                trigger: p.trigger,
                requested_at: p.requested_at,
            }),
        }),
        None => None,
    };
    Ok(RepoStatusResponse {
        ready: summary.ready,
        status: latest.as_ref().map(|j| j.status),
        progress: latest.as_ref().map_or(0.0, |j| j.progress),
        eta_seconds: latest.as_ref().and_then(|j| j.eta_seconds),
        attempts: latest.as_ref().map_or(0, |j| j.attempt),
        last_error: latest.as_ref().and_then(|j| j.last_error.clone()),
        job: latest,
        recent_jobs: views,
        embedder: ns.embedder().or_else(|| crate::embed::embedder_view(env)),
        vector_index: crate::vector::kind_label(env),
        repo: summary,
        github,
    })
}
