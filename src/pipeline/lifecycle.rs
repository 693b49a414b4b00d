//! A job's lifecycle seen from the requests that start work: join the namespace's active job or
//! start a new one, resume a joined job whose messages may be lost, replace a stalled one, send a
//! request's stage messages, and move a request to a new job when the joined one finishes under
//! it. The decisions are pure functions ([`decide`], [`stalled_error`]); the rest is their I/O.
use crate::api::JobError;
use crate::error::ApiError;
use crate::http::ApiResult;
use crate::store::jobs::{self, JobRow, NewJob};
use crate::store::{namespaces, staging};

use super::messages::{EndStep, StageMessage};
use super::stager::{StageFailure, Stager};
use super::{finish, producer, Ctx};

/// Attempts at creating or joining a job before the request gives up (`JOB_CONFLICT`).
const START_ATTEMPTS: usize = 3;

/// The repository a request works on.
pub struct Repo<'a> {
    pub owner: &'a str,
    pub name: &'a str,
    pub namespace: String,
}

/// What to do with the job `create_or_join` returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// A new job was created for this request.
    Fresh,
    /// The active job is alive: join it.
    Reuse,
    /// The active job is alive but quiet: join it and re-send its unfinished work.
    Resume,
    /// The active job showed no activity for `JOB_STALL_SECONDS`: fail it and start another.
    Stalled,
    /// The active job is alive but cannot do this request's work (a GitHub fetch while an upload,
    /// or a fetch that already downloaded, is active): queue the fetch to start after it;
    /// `resume` when the active job is also quiet enough to have its work re-sent.
    QueueAfter { resume: bool },
}

/// How long a job may stay quiet: re-send its work after `resume_seconds`
/// (`JOB_RESUME_SECONDS`), replace it after `stall_seconds` (`JOB_STALL_SECONDS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quiet {
    pub resume_seconds: u64,
    pub stall_seconds: u64,
}

impl Quiet {
    pub fn from_config(cfg: &crate::config::Config) -> Quiet {
        Quiet { resume_seconds: cfg.job_resume_seconds, stall_seconds: cfg.job_stall_seconds }
    }
}

/// The decision for a job that was `reused` (joined) or not, idle for `idle_ms`; `joinable` says
/// whether the active job does this request's work (see [`fetch_may_join`]).
pub fn decide(reused: bool, idle_ms: f64, quiet: Quiet, joinable: bool) -> Start {
    let resume = idle_ms > quiet.resume_seconds as f64 * 1000.0;
    if !reused {
        Start::Fresh
    } else if idle_ms >= quiet.stall_seconds as f64 * 1000.0 {
        Start::Stalled
    } else if !joinable {
        Start::QueueAfter { resume }
    } else if resume {
        Start::Resume
    } else {
        Start::Reuse
    }
}

/// Whether a GitHub fetch of `git_ref` is done by joining the `active` job: only a GitHub job of
/// the same ref that has not downloaded yet fetches what the request wants (the newest state).
/// An upload, or a fetch that already downloaded, would answer "reused" and lose a push.
pub fn fetch_may_join(active: &JobRow, git_ref: Option<&str>) -> bool {
    active.source == "github" && active.staged == 0 && active.git_ref.as_deref() == git_ref
}

/// Milliseconds since the job's last sign of life (an unreadable timestamp counts as very long).
pub fn idle_ms(job: &JobRow, now_ms: f64) -> f64 {
    now_ms - crate::time::ms_from_iso(job.last_activity()).unwrap_or(0.0)
}

/// The error a stalled job is failed with.
pub fn stalled_error(job: &JobRow, idle_ms: f64, now: &str) -> JobError {
    JobError {
        code: "STALLED".into(),
        message: format!("no stage activity for {} s; replaced by a new job", (idle_ms / 1000.0).round()),
        stage: job.stage.clone().unwrap_or_else(|| "queue".into()),
        attempt: job.attempt.max(0) as u32,
        at: now.to_string(),
    }
}

/// The namespace's active job, or a new one. `(job, reused)`. A joined job that has shown no
/// activity for `JOB_STALL_SECONDS` (e.g. its messages were lost when a local server stopped) is
/// failed as `STALLED` and replaced.
pub async fn start_job(
    ctx: &Ctx,
    repo: &Repo<'_>,
    source: &str,
    git_ref: Option<&str>,
    staged: bool,
) -> ApiResult<(JobRow, bool)> {
    let (job, start) = start(ctx, repo, source, git_ref, staged, false).await?;
    Ok((job, start != Start::Fresh))
}

/// Like [`start_job`], answering how the job was got: `Fresh`, `Reuse` (also after a resume) or,
/// for a GitHub fetch (`fetch`) the active job cannot do, `QueueAfter` with that active job.
pub async fn start(
    ctx: &Ctx,
    repo: &Repo<'_>,
    source: &str,
    git_ref: Option<&str>,
    staged: bool,
    fetch: bool,
) -> ApiResult<(JobRow, Start)> {
    let now = crate::time::now_iso();
    let key = super::index_key(&ctx.env);
    for _ in 0..START_ATTEMPTS {
        let id = super::new_id("job", &repo.namespace);
        let new = NewJob {
            id: &id,
            namespace: &repo.namespace,
            owner: repo.owner,
            name: repo.name,
            git_ref,
            source,
            max_attempts: ctx.cfg.max_attempts,
            staged,
            index_key: &key,
            now: &now,
        };
        let (job, reused) = jobs::create_or_join(&ctx.db, &new).await?;
        let idle = idle_ms(&job, crate::time::now_ms());
        let joinable = !fetch || fetch_may_join(&job, git_ref);
        match decide(reused, idle, Quiet::from_config(&ctx.cfg), joinable) {
            Start::Fresh => {
                namespaces::touch_indexing(&ctx.db, &repo.namespace, repo.owner, repo.name, source, &now)
                    .await?;
                return Ok((job, Start::Fresh));
            }
            Start::Reuse => return Ok((job, Start::Reuse)),
            Start::Resume => {
                resume(ctx, &job).await?;
                return Ok((job, Start::Reuse));
            }
            Start::QueueAfter { resume: quiet } => {
                if quiet {
                    resume(ctx, &job).await?;
                }
                return Ok((job, Start::QueueAfter { resume: quiet }));
            }
            Start::Stalled => {
                finish::fail(&ctx.db, &job.id, &job.namespace, &stalled_error(&job, idle, &now)).await?;
            }
        }
    }
    Err(ApiError::new(503, "JOB_CONFLICT", "could not start a job; try again"))
}

/// Re-send the messages for everything the job has not finished.
pub async fn resume(ctx: &Ctx, job: &JobRow) -> ApiResult<()> {
    let refs = staging::refs_with_status(&ctx.db, &job.id, &["pending", "chunked", "embedded"]).await?;
    let mut messages = producer::messages_for(&job.id, &refs, ctx.cfg.files_per_message);
    if job.staged == 0 {
        messages.push(StageMessage::fetch(&job.id));
    } else if refs.is_empty() && job.stage.as_deref() == Some("finish") {
        // Every file is done and the job is in its end: start the end over (what its lost
        // messages wrote is not written again).
        messages.push(StageMessage::finish(&job.id, EndStep::Graph, None));
    }
    crate::log::info("job_resumed", &[("job", &job.id), ("messages", &messages.len().to_string())]);
    producer::send(&ctx.env, &messages, ctx.cfg.deliver_twice).await.map_err(|e| {
        ApiError::new(503, "QUEUE_UNAVAILABLE", format!("could not enqueue stage messages: {e}"))
    })
}

/// After a request staged its files: send the messages, complete the job if there is nothing to
/// do, and answer with the job and whether this call completed it (then the caller starts what was
/// queued behind the job: `sync::dispatch` does both). If the messages cannot be sent the job
/// fails (it would never finish otherwise) and the request gets a 503.
pub async fn dispatch(
    ctx: &Ctx,
    job_id: &str,
    namespace: &str,
    messages: Vec<StageMessage>,
) -> ApiResult<(JobRow, bool)> {
    if let Err(e) = producer::send(&ctx.env, &messages, ctx.cfg.deliver_twice).await {
        let error = JobError {
            code: "QUEUE_UNAVAILABLE".into(),
            message: format!("could not enqueue stage messages: {e}"),
            stage: "request".into(),
            attempt: 0,
            at: crate::time::now_iso(),
        };
        finish::fail(&ctx.db, job_id, namespace, &error).await?;
        return Err(ApiError::new(503, "QUEUE_UNAVAILABLE", error.message));
    }
    jobs::refresh_counters(&ctx.db, job_id).await?;
    let completed = super::end::settle(ctx, job_id, namespace)
        .await
        .map_err(|e| ApiError::new(503, "QUEUE_UNAVAILABLE", e.message))?;
    let job = jobs::get(&ctx.db, job_id)
        .await?
        .ok_or_else(|| ApiError::internal("reading the job", "job vanished"))?;
    Ok((job, completed))
}

/// Turn a staging result into an API result, moving to a new job when the joined one finished
/// under us (the buffered rows are flushed into the new job).
pub async fn settle(
    ctx: &Ctx,
    repo: &Repo<'_>,
    stager: &mut Stager,
    mut result: Result<(), StageFailure>,
    source: &str,
) -> ApiResult<()> {
    for _ in 0..START_ATTEMPTS {
        match result {
            Ok(()) => return Ok(()),
            Err(StageFailure::Store(e)) => return Err(e.into()),
            Err(StageFailure::JobClosed) => {
                let (job, _) = start_job(ctx, repo, source, None, true).await?;
                stager.retarget(&job.id).await?;
                result = stager.flush().await;
            }
        }
    }
    Err(ApiError::new(
        503,
        "JOB_CONFLICT",
        "the repository's jobs kept finishing during the request; try again",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(heartbeat: Option<&str>, started: Option<&str>, queued: &str) -> JobRow {
        let row = serde_json::json!({
            "id": "job_1", "namespace": "repo:o/n", "owner": "o", "name": "n", "ref": null,
            "source": "upload", "status": "RUNNING", "stage": null, "attempt": 2, "max_attempts": 5,
            "queued_at": queued, "started_at": started, "completed_at": null,
            "files_total": 0, "files_done": 0, "files_added": 0, "files_changed": 0,
            "files_unchanged": 0, "files_deleted": 0, "files_skipped": 0, "skipped": "[]",
            "chunks_total": 0, "chunks_embedded": 0, "chunks_indexed": 0, "last_error": null,
            "staged": 1, "checksum": null, "index_key": null, "messages": 0, "heartbeat_at": heartbeat,
        });
        serde_json::from_value(row).unwrap_or_else(|e| panic!("job row: {e}"))
    }

    const QUIET: Quiet = Quiet { resume_seconds: 120, stall_seconds: 1800 };

    #[test]
    fn a_new_job_is_fresh_whatever_its_age() {
        assert_eq!(decide(false, 0.0, QUIET, true), Start::Fresh);
        assert_eq!(decide(false, 1e12, QUIET, true), Start::Fresh);
        assert_eq!(decide(false, 0.0, QUIET, false), Start::Fresh);
    }

    #[test]
    fn a_joined_job_is_reused_then_resumed_then_replaced_as_it_stays_quiet() {
        assert_eq!(decide(true, 0.0, QUIET, true), Start::Reuse);
        assert_eq!(decide(true, 120_000.0, QUIET, true), Start::Reuse);
        assert_eq!(decide(true, 120_001.0, QUIET, true), Start::Resume);
        assert_eq!(decide(true, 1_799_999.0, QUIET, true), Start::Resume);
        assert_eq!(decide(true, 1_800_000.0, QUIET, true), Start::Stalled);
    }

    #[test]
    fn a_stall_limit_below_the_resume_delay_replaces_without_resuming() {
        let quiet = Quiet { resume_seconds: 120, stall_seconds: 1 };
        assert_eq!(decide(true, 999.0, quiet, true), Start::Reuse);
        assert_eq!(decide(true, 1000.0, quiet, true), Start::Stalled);
    }

    #[test]
    fn a_fetch_the_active_job_cannot_do_is_queued_after_it_not_reused() {
        assert_eq!(decide(true, 0.0, QUIET, false), Start::QueueAfter { resume: false });
        assert_eq!(decide(true, 120_001.0, QUIET, false), Start::QueueAfter { resume: true });
        // A stalled active job is still replaced: the fetch then gets the new job.
        assert_eq!(decide(true, 1_800_000.0, QUIET, false), Start::Stalled);
    }

    #[test]
    fn only_a_github_job_of_the_same_ref_that_has_not_downloaded_is_joined_by_a_fetch() {
        let mut active = job(None, None, "2025-01-01T00:00:00.000Z");
        assert!(!fetch_may_join(&active, None), "an upload job does not fetch");
        active.source = "github".into();
        assert!(!fetch_may_join(&active, None), "a fetch that already downloaded misses newer pushes");
        active.staged = 0;
        assert!(fetch_may_join(&active, None));
        assert!(!fetch_may_join(&active, Some("dev")), "another ref");
        active.git_ref = Some("dev".into());
        assert!(fetch_may_join(&active, Some("dev")));
    }

    #[test]
    fn idleness_counts_from_the_latest_sign_of_life() {
        let t0 = "2025-01-01T00:00:00.000Z";
        let t1 = "2025-01-01T00:01:00.000Z";
        let t2 = "2025-01-01T00:02:00.000Z";
        let now = crate::time::ms_from_iso("2025-01-01T00:03:00.000Z").unwrap_or_default();
        assert_eq!(idle_ms(&job(Some(t2), Some(t1), t0), now), 60_000.0);
        assert_eq!(idle_ms(&job(None, Some(t1), t0), now), 120_000.0);
        assert_eq!(idle_ms(&job(None, None, t0), now), 180_000.0);
        assert_eq!(idle_ms(&job(None, None, "garbage"), now), now);
    }

    #[test]
    fn a_stalled_job_fails_with_its_stage_attempt_and_idle_time() {
        let mut row = job(None, None, "2025-01-01T00:00:00.000Z");
        let e = stalled_error(&row, 1_812_400.0, "now");
        assert_eq!(
            (e.code.as_str(), e.stage.as_str(), e.attempt, e.at.as_str()),
            ("STALLED", "queue", 2, "now")
        );
        assert_eq!(e.message, "no stage activity for 1812 s; replaced by a new job");
        row.stage = Some("embed".into());
        assert_eq!(stalled_error(&row, 0.0, "now").stage, "embed");
    }
}
