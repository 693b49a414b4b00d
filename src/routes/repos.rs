//! `/v1/repos/...`: start indexing jobs (GitHub fetch, uploads, deletions), delete a repository,
//! list repositories and report their status.
use worker::{Env, Request, Response};

use edgerag_core::tags;

use crate::api::{
    DeleteFilesRequest, DeleteRepoResponse, FilesResponse, IndexedFileView, JobAccepted, UploadRequest,
};
use crate::auth::Access;
use crate::config::Config;
use crate::error::ApiError;
use crate::http::{check_ref, check_repo_part, content_type, parse_json, read_body, reply, ApiResult};
use crate::ingest::archive::{self, ArchiveOptions};
use crate::ingest::{filter, paths};
use crate::pipeline::fetch::{archive_options, stage_archive, ArchiveStageError};
use crate::pipeline::lifecycle::{settle, start_job, Repo};
use crate::pipeline::stager::{StageFailure, Stager};
use crate::pipeline::sync::{self, Fetch, Trigger};
use crate::pipeline::{producer, Ctx};
use crate::status::repo_not_found;
use crate::store::github;
use crate::store::jobs::{self, JobRow};
use crate::store::namespaces::{self, namespace_id};
use crate::store::{chunks, Stores};

/// Most files (or paths) in one JSON request.
pub const MAX_FILES_PER_REQUEST: usize = 20_000;

fn repo<'a>(owner: &'a str, name: &'a str) -> ApiResult<Repo<'a>> {
    check_repo_part("owner", owner)?;
    check_repo_part("name", name)?;
    Ok(Repo { owner, name, namespace: namespace_id(owner, name) })
}

/// A context on the repository's database; `create` when the request may create the namespace.
async fn ctx(env: &Env, repo: &Repo<'_>, create: bool) -> ApiResult<Ctx> {
    Ok(Ctx::for_namespace(env, &repo.namespace, create).await?)
}

async fn accepted(
    ctx: &Ctx,
    job: &JobRow,
    reused: bool,
    received: u64,
    stager: Option<&Stager>,
) -> ApiResult<Response> {
    let view = jobs::load_view(&ctx.db, job).await?;
    let body = JobAccepted {
        job: view,
        reused,
        received,
        staged: stager.map(|s| s.counters.clone()).unwrap_or_default(),
        skipped: stager.map(|s| s.skipped.clone()).unwrap_or_default(),
        queued_after: None,
    };
    reply(202, &body)
}

fn query_pairs(req: &Request) -> Vec<(String, String)> {
    req.url()
        .map(|u| u.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect())
        .unwrap_or_default()
}

/// `POST /v1/repos/{owner}/{name}/index` `{ref?, webhookSecret?, syncIntervalMinutes?}`: register
/// the repository (its tracked ref, webhook secret and sync interval) and fetch it.
pub async fn index(req: &mut Request, env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let repo = repo(owner, name)?;
    let body = read_body(req, 64 * 1024).await?;
    let request: crate::api::IndexRequest = parse_json(req, &body, true)?;
    if let Some(r) = &request.git_ref {
        check_ref(r)?;
    }
    if let Some(secret) = &request.webhook_secret {
        if secret.is_empty() || secret.len() > 256 {
            return Err(ApiError::bad_request(
                "INVALID_WEBHOOK_SECRET",
                "webhookSecret must be 1 to 256 bytes (the secret set on the GitHub webhook)",
            ));
        }
    }
    if let Some(minutes) = request.sync_interval_minutes {
        if !(1..=43_200).contains(&minutes) {
            return Err(ApiError::bad_request(
                "INVALID_SYNC_INTERVAL",
                format!("syncIntervalMinutes must be 1 to 43200 (30 days), not {minutes}"),
            ));
        }
    }
    let ctx = ctx(env, &repo, true).await?;
    let registration = github::Registration {
        namespace: &repo.namespace,
        owner,
        name,
        git_ref: request.git_ref.as_deref(),
        webhook_secret: request.webhook_secret.as_deref(),
        sync_interval_minutes: request.sync_interval_minutes,
    };
    github::register(ctx.stores.catalog(), &registration, &crate::time::now_iso()).await?;
    let (job, fetch) = sync::request_fetch(&ctx, &repo, request.git_ref.as_deref(), Trigger::Api).await?;
    let view = jobs::load_view(&ctx.db, &job).await?;
    reply(
        202,
        &JobAccepted {
            job: view,
            reused: fetch == Fetch::Joined,
            received: 0,
            staged: Default::default(),
            skipped: Vec::new(),
            queued_after: (fetch == Fetch::QueuedAfter).then(|| job.id.clone()),
        },
    )
}

/// 400 for unreadable archives, 413 for archives over the unpack limits.
fn archive_error(e: &archive::ArchiveError) -> ApiError {
    let status = if e.code() == "ARCHIVE_TOO_LARGE" { 413 } else { 400 };
    ApiError::new(status, e.code(), e.to_string())
}

enum UploadBody {
    Json(UploadRequest),
    Archive {
        bytes: Vec<u8>,
        replace: bool,
        git_ref: Option<String>,
        rules: edgerag_core::ignore::IgnoreRules,
        tags: Vec<String>,
    },
}

fn tags_error(e: tags::TagError) -> ApiError {
    ApiError::bad_request("INVALID_TAGS", e.to_string())
}

/// `POST /v1/repos/{owner}/{name}/files`: JSON `{files, tags?, replace?, ref?}` or a `.tar.gz` body
/// (`?replace=`, `?ref=`, `?tags=a,b`).
pub async fn upload(
    req: &mut Request,
    env: &Env,
    cfg: &Config,
    owner: &str,
    name: &str,
) -> ApiResult<Response> {
    let repo = repo(owner, name)?;
    let ct = content_type(req);
    let body = read_body(req, cfg.max_upload_bytes).await?;
    let upload = match ct.as_str() {
        "" | "application/json" => UploadBody::Json(parse_json(req, &body, false)?),
        "application/gzip"
        | "application/x-gzip"
        | "application/x-tar"
        | "application/x-gtar"
        | "application/x-compressed-tar"
        | "application/octet-stream" => {
            let mut replace = false;
            let mut git_ref = None;
            let mut tags = Vec::new();
            for (k, v) in query_pairs(req) {
                match k.as_str() {
                    "replace" => replace = matches!(v.as_str(), "true" | "1" | "yes"),
                    "ref" => git_ref = Some(v),
                    "tags" => tags = edgerag_core::tags::parse_list(&v).map_err(tags_error)?,
                    other => {
                        return Err(ApiError::bad_request(
                            "INVALID_REQUEST",
                            format!("unknown query parameter {other:?}"),
                        ))
                    }
                }
            }
            // Read the whole archive once before anything is staged: a corrupt archive must not
            // leave a half-staged job behind, and its ignore files must apply to every entry.
            let survey = archive::survey(&body, &archive_options(&Ctx::new(env)?, false))
                .map_err(|e| archive_error(&e))?;
            UploadBody::Archive { bytes: body, replace, git_ref, rules: survey.rules(), tags }
        }
        other => {
            return Err(ApiError::new(
                415,
                "UNSUPPORTED_MEDIA_TYPE",
                format!("send application/json or application/gzip (a .tar.gz), not {other}"),
            ))
        }
    };
    let (replace, git_ref) = match &upload {
        UploadBody::Json(r) => (r.replace, r.git_ref.clone()),
        UploadBody::Archive { replace, git_ref, .. } => (*replace, git_ref.clone()),
    };
    if let Some(r) = &git_ref {
        check_ref(r)?;
    }
    // Every file's tags, checked before anything is staged.
    let mut file_tags: Vec<Vec<String>> = Vec::new();
    let upload_tags = match &upload {
        UploadBody::Json(r) => {
            if r.files.len() > MAX_FILES_PER_REQUEST {
                return Err(ApiError::bad_request(
                    "TOO_MANY_FILES",
                    format!("at most {MAX_FILES_PER_REQUEST} files per request; send several batches"),
                ));
            }
            let upload_tags = tags::normalize(r.tags.iter().map(String::as_str)).map_err(tags_error)?;
            for f in &r.files {
                let own = tags::normalize(f.tags.iter().map(String::as_str)).map_err(tags_error)?;
                tags::normalize(upload_tags.iter().chain(&own).map(String::as_str)).map_err(tags_error)?;
                file_tags.push(own);
            }
            upload_tags
        }
        UploadBody::Archive { tags, .. } => tags.clone(),
    };
    let ctx = ctx(env, &repo, true).await?;
    let (job, reused) = start_job(&ctx, &repo, "upload", git_ref.as_deref(), true).await?;
    let key = job.index_key.clone().unwrap_or_else(|| crate::pipeline::index_key(env));
    let mut stager = Stager::new(&ctx.db, &job.id, &repo.namespace, &key).await?;
    stager.tags = upload_tags;
    let mut received = 0u64;
    match upload {
        UploadBody::Json(request) => {
            // The upload's own .gitignore / .mcpignore files apply to it.
            let ignore_files: Vec<(String, &str)> = request
                .files
                .iter()
                .filter(|f| filter::is_ignore_file(&f.path))
                .filter_map(|f| Some((paths::normalize(&f.path).ok()?, f.content.as_str())))
                .collect();
            let rules = filter::rules_from(ignore_files.iter().map(|(p, c)| (p.as_str(), *c)));
            for (file, own_tags) in request.files.into_iter().zip(file_tags) {
                received += 1;
                let candidate =
                    filter::classify(&file.path, file.content.as_bytes(), &rules, cfg.max_file_bytes);
                let result = stager.add_tagged(candidate, &own_tags).await;
                settle(&ctx, &repo, &mut stager, result, "upload").await?;
            }
        }
        UploadBody::Archive { bytes, rules, .. } => {
            let opts = ArchiveOptions { rules, ..archive_options(&ctx, false) };
            match stage_archive(&mut stager, &bytes, opts).await {
                Ok(()) => {}
                Err(ArchiveStageError::Stage(StageFailure::Store(e))) => return Err(e.into()),
                Err(ArchiveStageError::Stage(StageFailure::JobClosed)) => {
                    // The joined job finished while this archive was being staged (rare).
                    return Err(ApiError::new(
                        503,
                        "JOB_CONFLICT",
                        "the repository's job finished during the upload; send the archive again",
                    ));
                }
                Err(ArchiveStageError::Archive(e)) => return Err(archive_error(&e)),
            }
        }
    }
    if received == 0 {
        received = stager.counters.total;
    }
    let result = stager.finish(replace).await;
    settle(&ctx, &repo, &mut stager, result, "upload").await?;
    let messages = producer::messages_for(&stager.job_id, &stager.refs, ctx.cfg.files_per_message);
    let reused = reused && stager.job_id == job.id;
    let job = sync::dispatch(&ctx, &stager.job_id, &repo.namespace, messages).await?;
    accepted(&ctx, &job, reused, received, Some(&stager)).await
}

/// `DELETE /v1/repos/{owner}/{name}/files` `{paths}`.
pub async fn delete_files(
    req: &mut Request,
    env: &Env,
    cfg: &Config,
    owner: &str,
    name: &str,
) -> ApiResult<Response> {
    let repo = repo(owner, name)?;
    let body = read_body(req, cfg.max_upload_bytes).await?;
    let request: DeleteFilesRequest = parse_json(req, &body, false)?;
    if request.paths.len() > MAX_FILES_PER_REQUEST {
        return Err(ApiError::bad_request(
            "TOO_MANY_FILES",
            format!("at most {MAX_FILES_PER_REQUEST} paths per request"),
        ));
    }
    let ctx = ctx(env, &repo, false).await?;
    if namespaces::get(&ctx.db, &repo.namespace).await?.is_none() {
        return Err(repo_not_found(owner, name));
    }
    let (job, reused) = start_job(&ctx, &repo, "delete", None, true).await?;
    let key = job.index_key.clone().unwrap_or_else(|| crate::pipeline::index_key(env));
    let mut stager = Stager::new(&ctx.db, &job.id, &repo.namespace, &key).await?;
    for path in &request.paths {
        let result = stager.delete(path).await;
        settle(&ctx, &repo, &mut stager, result, "delete").await?;
    }
    let result = stager.finish(false).await;
    settle(&ctx, &repo, &mut stager, result, "delete").await?;
    let messages = producer::messages_for(&stager.job_id, &stager.refs, ctx.cfg.files_per_message);
    let reused = reused && stager.job_id == job.id;
    let job = sync::dispatch(&ctx, &stager.job_id, &repo.namespace, messages).await?;
    accepted(&ctx, &job, reused, request.paths.len() as u64, Some(&stager)).await
}

/// `DELETE /v1/repos/{owner}/{name}`: cancel its job, delete its vectors, chunks (and FTS rows),
/// files, jobs, runs and the namespace.
pub async fn delete_repo(env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let repo = repo(owner, name)?;
    let ctx = ctx(env, &repo, false).await?;
    let Some(deleted) = crate::pipeline::remove::repository(&ctx, &repo.namespace).await? else {
        return Err(repo_not_found(owner, name));
    };
    reply(200, &DeleteRepoResponse { namespace: repo.namespace.clone(), deleted })
}

/// `GET /v1/repos`.
pub async fn list(env: &Env, access: &Access) -> ApiResult<Response> {
    reply(200, &crate::status::list_repos(&Stores::from_env(env)?, access).await?)
}

/// `GET /v1/repos/{owner}/{name}/files`.
pub async fn files(env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    let repo = repo(owner, name)?;
    let db = ctx(env, &repo, false).await?.db;
    if namespaces::get(&db, &repo.namespace).await?.is_none() {
        return Err(repo_not_found(owner, name));
    }
    let key = crate::pipeline::index_key(env);
    let files = chunks::list_files(&db, &repo.namespace)
        .await?
        .into_iter()
        .map(|f| IndexedFileView {
            current: f.index_key.as_deref() == Some(key.as_str()),
            tags: tags::from_column(&f.tags),
            path: f.path,
            content_hash: f.content_hash,
            size: f.size.max(0) as u64,
            language: f.language,
            chunk_count: f.chunk_count.max(0) as u64,
            updated_at: f.updated_at,
        })
        .collect();
    reply(200, &FilesResponse { namespace: repo.namespace.clone(), files })
}

/// `GET /v1/repos/{owner}/{name}/status` (MCP `repo.rag_index_status` answers the same).
pub async fn status(env: &Env, owner: &str, name: &str) -> ApiResult<Response> {
    reply(200, &crate::status::repo_status(env, &Stores::from_env(env)?, owner, name).await?)
}
