//! Fetch stage: download the repository tarball through the GitHub REST API
//! (`GET {GITHUB_API_URL}/repos/{owner}/{name}/tarball[/{ref}]`, redirects followed), then stage
//! its files like a `replace` upload: files missing from the tarball are deleted.
use worker::{Fetch, Headers, Method, Request, RequestInit};

use super::messages::JobRef;
use super::stager::{StageFailure, Stager};
use super::{producer, Ctx, StageError};
use crate::ingest::archive::{self, ArchiveOptions, Scanner};
use crate::store::{jobs, staging};

/// Percent-encode each segment of a git ref, keeping `/` (refs like `feature/x`).
pub fn encode_ref(git_ref: &str) -> String {
    git_ref
        .split('/')
        .map(|segment| {
            segment
                .bytes()
                .map(|b| match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                        (b as char).to_string()
                    }
                    _ => format!("%{b:02X}"),
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("/")
}

pub fn tarball_url(base: &str, owner: &str, name: &str, git_ref: Option<&str>) -> String {
    match git_ref {
        Some(r) if !r.is_empty() => format!("{base}/repos/{owner}/{name}/tarball/{}", encode_ref(r)),
        _ => format!("{base}/repos/{owner}/{name}/tarball"),
    }
}

/// Map a GitHub answer to a stage error (`None` for success).
pub fn status_error(status: u16, owner: &str, name: &str) -> Option<StageError> {
    match status {
        200..=299 => None,
        404 => Some(StageError::permanent("REPO_NOT_FOUND", format!("GitHub has no repository {owner}/{name} (or the ref does not exist, or it is private and no token is set)"))),
        401 => Some(StageError::permanent("GITHUB_UNAUTHORIZED", "GitHub rejected the token (401)")),
        403 | 429 => Some(StageError::retryable("GITHUB_RATE_LIMITED", format!("GitHub answered {status} (rate limit or forbidden)"))),
        s => Some(StageError::retryable("GITHUB_UNAVAILABLE", format!("GitHub answered {s}"))),
    }
}

/// The token a tarball is fetched with: the GitHub App installation's for a repository an
/// installation added (never a signed-in user's), else `GITHUB_TOKEN`, else none.
async fn token_for(ctx: &Ctx, owner: &str, name: &str) -> Result<Option<String>, StageError> {
    if ctx.cfg.github_app().is_none() {
        return Ok(ctx.cfg.github_token.clone());
    }
    let namespace = crate::store::namespaces::namespace_id(owner, name);
    let registered = crate::store::github::get(ctx.stores.catalog(), &namespace)
        .await
        .map_err(|e| StageError::retryable("D1_UNAVAILABLE", e.0))?;
    match registered.and_then(|r| r.installation_id) {
        Some(installation) => {
            crate::github::app::installation_token(&ctx.cfg, installation).await.map(Some).map_err(|e| {
                StageError::retryable("GITHUB_APP_TOKEN_FAILED", format!("installation {installation}: {e}"))
            })
        }
        None => Ok(ctx.cfg.github_token.clone()),
    }
}

async fn download(ctx: &Ctx, owner: &str, name: &str, git_ref: Option<&str>) -> Result<Vec<u8>, StageError> {
    let url = tarball_url(&ctx.cfg.github_api_url, owner, name, git_ref);
    let headers = Headers::new();
    headers.set("Accept", "application/vnd.github+json")?;
    headers.set("User-Agent", "edgerag")?;
    headers.set("X-GitHub-Api-Version", "2022-11-28")?;
    if let Some(token) = token_for(ctx, owner, name).await? {
        headers.set("Authorization", &format!("Bearer {token}"))?;
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Get).with_headers(headers);
    let request = Request::new_with_init(&url, &init)?;
    crate::ledger::subrequest();
    let mut response = Fetch::Request(request)
        .send()
        .await
        .map_err(|e| StageError::retryable("GITHUB_UNREACHABLE", format!("GET {url}: {e}")))?;
    if let Some(err) = status_error(response.status_code(), owner, name) {
        return Err(err);
    }
    if let Some(len) =
        response.headers().get("content-length").ok().flatten().and_then(|l| l.parse::<usize>().ok())
    {
        if len > ctx.cfg.max_tarball_bytes {
            return Err(too_large(ctx.cfg.max_tarball_bytes));
        }
    }
    let bytes = response
        .bytes()
        .await
        .map_err(|e| StageError::retryable("GITHUB_UNAVAILABLE", format!("reading the tarball: {e}")))?;
    if bytes.len() > ctx.cfg.max_tarball_bytes {
        return Err(too_large(ctx.cfg.max_tarball_bytes));
    }
    Ok(bytes)
}

fn too_large(limit: usize) -> StageError {
    StageError::permanent(
        "TARBALL_TOO_LARGE",
        format!("the tarball is larger than MAX_TARBALL_BYTES ({limit})"),
    )
}

pub fn archive_options(ctx: &Ctx, strip_first_segment: bool) -> ArchiveOptions {
    ArchiveOptions {
        strip_first_segment,
        max_file_bytes: ctx.cfg.max_file_bytes,
        max_unpacked_bytes: ctx.cfg.max_archive_bytes,
        max_entries: 200_000,
        rules: edgerag_core::ignore::IgnoreRules::new(),
    }
}

/// Stage every entry of an archive. Holds the entry iterator across the D1 writes, so at most one
/// flush worth of file bodies is in memory at a time.
pub async fn stage_archive(
    stager: &mut Stager,
    bytes: &[u8],
    opts: ArchiveOptions,
) -> Result<(), ArchiveStageError> {
    let mut archive = archive::open(bytes).map_err(ArchiveStageError::Archive)?;
    let entries = archive
        .entries()
        .map_err(|e| ArchiveStageError::Archive(archive::ArchiveError::Corrupt(e.to_string())))?;
    let mut scanner = Scanner::new(opts);
    for entry in entries {
        if let Some(candidate) = scanner.item(entry).map_err(ArchiveStageError::Archive)? {
            stager.add(candidate).await.map_err(ArchiveStageError::Stage)?;
        }
    }
    Ok(())
}

#[derive(Debug, thiserror::Error)]
pub enum ArchiveStageError {
    #[error(transparent)]
    Archive(archive::ArchiveError),
    #[error(transparent)]
    Stage(StageFailure),
}

pub async fn run(ctx: &Ctx, msg: &JobRef) -> Result<(), StageError> {
    let Some(job) = jobs::get(&ctx.db, &msg.job_id).await? else { return Ok(()) };
    if !job.is_active() {
        return Ok(());
    }
    ctx.mark_running(&job.id, "fetch").await?;
    if job.staged == 0 {
        let bytes = download(ctx, &job.owner, &job.name, job.git_ref.as_deref()).await?;
        let checksum = blake3::hash(&bytes).to_hex().to_string();
        let key = job.index_key.clone().unwrap_or_else(|| super::index_key(&ctx.env));
        // First pass: the archive is readable and within limits, and its ignore files are known
        // before any entry is staged.
        let mut opts = archive_options(ctx, true);
        let survey = archive::survey(&bytes, &opts)
            .map_err(|e| StageError::permanent(e.code(), format!("GitHub tarball: {e}")))?;
        opts.rules = survey.rules();
        let mut stager = Stager::new(&ctx.db, &job.id, &job.namespace, &key).await?;
        let staged = match stage_archive(&mut stager, &bytes, opts).await {
            Ok(()) => stager.finish(true).await.map_err(ArchiveStageError::Stage),
            Err(e) => Err(e),
        };
        match staged {
            Ok(()) => {}
            Err(ArchiveStageError::Archive(e)) => {
                return Err(StageError::permanent(e.code(), format!("GitHub tarball: {e}")));
            }
            Err(ArchiveStageError::Stage(StageFailure::JobClosed)) => return Ok(()),
            Err(ArchiveStageError::Stage(StageFailure::Store(e))) => return Err(e.into()),
        }
        ctx.db
            .run(
                "UPDATE repo_rag_index_job SET staged = 1, checksum = ? WHERE id = ? AND status IN ('QUEUED', 'RUNNING')",
                &crate::store::args![&checksum, &job.id],
            )
            .await?;
    }
    // Messages for everything still to do (also after a crash between staging and sending).
    let refs = staging::refs_with_status(&ctx.db, &job.id, &["pending", "embedded"]).await?;
    let messages = producer::messages_for(&job.id, &refs, ctx.cfg.files_per_message);
    producer::send(&ctx.env, &messages, ctx.cfg.deliver_twice).await?;
    jobs::refresh_counters(&ctx.db, &job.id).await?;
    if super::end::settle(ctx, &job.id, &job.namespace).await? {
        super::sync::after_job(ctx, &job.namespace).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_errors() {
        assert_eq!(tarball_url("http://h", "o", "r", None), "http://h/repos/o/r/tarball");
        assert_eq!(
            tarball_url("http://h", "o", "r", Some("feature/a b")),
            "http://h/repos/o/r/tarball/feature/a%20b"
        );
        assert!(status_error(200, "o", "r").is_none());
        assert!(!status_error(404, "o", "r").unwrap_or_else(|| StageError::retryable("x", "")).retryable);
        assert!(status_error(503, "o", "r").is_some_and(|e| e.retryable));
        assert!(status_error(403, "o", "r").is_some_and(|e| e.retryable && e.code == "GITHUB_RATE_LIMITED"));
    }
}
