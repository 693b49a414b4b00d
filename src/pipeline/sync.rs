//! Keeping GitHub repositories fresh by themselves. Every GitHub fetch — asked through the API, a
//! push webhook or the scheduled run — goes through [`request_fetch`]: it starts a job, joins an
//! active fetch that has not downloaded yet, or, when the active job cannot do the fetch (an
//! upload, a fetch that already downloaded), queues it in `pending_fetches` to start when that job
//! finishes ([`after_job`]), so a push is never answered "reused" and lost. The scheduled run
//! ([`scheduled`]) re-sends the work of quiet jobs, replaces stalled ones, starts queued fetches
//! whose job is gone and re-syncs repositories whose `syncIntervalMinutes` elapsed.
use super::lifecycle::{self, Quiet, Repo, Start};
use super::messages::StageMessage;
use super::{finish, Ctx};
use crate::error::ApiError;
use crate::http::ApiResult;
use crate::store::documents;
use crate::store::github::{self, PendingFetch};
use crate::store::jobs::{self, JobRow};
use crate::store::StoreError;

/// Attempts at starting or queueing a fetch while jobs finish under the request.
const FETCH_ATTEMPTS: usize = 3;

/// Re-syncs started by one scheduled run at most (the oldest first; the rest wait for the next).
pub const MAX_SYNCS_PER_RUN: usize = 50;
/// Most dirty documents one scheduled run sends back to chunking (per database).
const MAX_DOCUMENT_RETRIES_PER_RUN: u32 = 200;

/// Delivery ids are remembered this long (replays older than that are handled again).
pub const DELIVERY_RETENTION_DAYS: f64 = 30.0;

/// Who asked for a fetch (kept on a queued fetch, logged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Api,
    Webhook,
    Schedule,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Api => "api",
            Trigger::Webhook => "webhook",
            Trigger::Schedule => "schedule",
        }
    }

    pub fn parse(s: &str) -> Trigger {
        match s {
            "webhook" => Trigger::Webhook,
            "schedule" => Trigger::Schedule,
            _ => Trigger::Api,
        }
    }
}

/// What became of a fetch request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch {
    /// A new job (the returned one) fetches.
    Started,
    /// The active fetch of the same ref (the returned job) has not downloaded yet: it covers it.
    Joined,
    /// The returned job is active and cannot fetch: the fetch starts when it finishes.
    QueuedAfter,
}

/// Fetch `repo` at `git_ref` (see the module doc). `ctx` is on the namespace's database.
pub async fn request_fetch(
    ctx: &Ctx,
    repo: &Repo<'_>,
    git_ref: Option<&str>,
    trigger: Trigger,
) -> ApiResult<(JobRow, Fetch)> {
    let now = crate::time::now_iso();
    github::touch_synced(ctx.stores.catalog(), &repo.namespace, &now).await?;
    for _ in 0..FETCH_ATTEMPTS {
        let (job, start) = lifecycle::start(ctx, repo, "github", git_ref, false, true).await?;
        match start {
            Start::Fresh => {
                let fetch = vec![StageMessage::fetch(&job.id)];
                let job = dispatch(ctx, &job.id, &repo.namespace, fetch).await?;
                crate::log::info(
                    "fetch_started",
                    &[("namespace", &repo.namespace), ("job", &job.id), ("trigger", trigger.as_str())],
                );
                return Ok((job, Fetch::Started));
            }
            Start::QueueAfter { .. } => {
                let pending = PendingFetch {
                    namespace: repo.namespace.clone(),
                    owner: repo.owner.to_string(),
                    name: repo.name.to_string(),
                    git_ref: git_ref.map(str::to_string),
                    trigger: trigger.as_str().to_string(),
                    after_job: job.id.clone(),
                    requested_at: crate::time::now_iso(),
                };
                github::queue_fetch(&ctx.db, &pending).await?;
                // The active job may have finished between the two reads, and its finish looked
                // before the fetch was queued: take it back and start it here.
                if jobs::active(&ctx.db, &repo.namespace).await?.is_some()
                    || !github::take_fetch(&ctx.db, &pending).await?
                {
                    crate::log::info(
                        "fetch_queued",
                        &[("namespace", &repo.namespace), ("after", &job.id), ("trigger", trigger.as_str())],
                    );
                    return Ok((job, Fetch::QueuedAfter));
                }
            }
            Start::Reuse | Start::Resume | Start::Stalled => return Ok((job, Fetch::Joined)),
        }
    }
    Err(ApiError::new(
        503,
        "JOB_CONFLICT",
        "the repository's jobs kept changing during the request; try again",
    ))
}

/// Start the fetch queued for `namespace` if no job is active any more. `Ok(None)` when there is
/// none, its job is still active, or another caller took it first.
pub async fn start_pending(ctx: &Ctx, namespace: &str) -> ApiResult<Option<(JobRow, Fetch)>> {
    let Some(pending) = github::pending_fetch(&ctx.db, namespace).await? else { return Ok(None) };
    if jobs::active(&ctx.db, namespace).await?.is_some() || !github::take_fetch(&ctx.db, &pending).await? {
        return Ok(None);
    }
    let repo = Repo { owner: &pending.owner, name: &pending.name, namespace: pending.namespace.clone() };
    match request_fetch(ctx, &repo, pending.git_ref.as_deref(), Trigger::parse(&pending.trigger)).await {
        Ok(started) => Ok(Some(started)),
        Err(e) => {
            // Put it back for the next finish or scheduled run.
            github::queue_fetch(&ctx.db, &pending).await?;
            Err(e)
        }
    }
}

/// [`lifecycle::dispatch`], then — when that completed the job (nothing was left to do) — start
/// what was queued behind it.
pub async fn dispatch(
    ctx: &Ctx,
    job_id: &str,
    namespace: &str,
    messages: Vec<StageMessage>,
) -> ApiResult<JobRow> {
    let (job, completed) = lifecycle::dispatch(ctx, job_id, namespace, messages).await?;
    if completed {
        after_job(ctx, namespace).await;
    }
    Ok(job)
}

/// Called once by whoever finished a job of `namespace`: start the fetch queued behind it, then
/// store the namespace's vector copy for new isolates to read ready-made (the local index only).
/// Never fails the caller (the job is already finished); the scheduled run retries what fails here,
/// and a search that finds no current snapshot builds the copy and writes one.
pub async fn after_job(ctx: &Ctx, namespace: &str) {
    // Boxed: starting the fetch dispatches a job, and a dispatch that finishes a job calls this.
    match Box::pin(start_pending(ctx, namespace)).await {
        Ok(Some((job, _))) => {
            crate::log::info("queued_fetch_started", &[("namespace", namespace), ("job", &job.id)])
        }
        Ok(None) => {}
        Err(e) => crate::log::warn(
            "queued_fetch_failed",
            &[("namespace", namespace), ("code", e.code), ("message", &e.message)],
        ),
    }
    crate::vector::prepare_snapshot(&ctx.env, namespace, &crate::ledger::Unbounded).await;
}

/// Whether a repository synced at `last_sync_at` with `interval_minutes` is due at `now_ms`.
pub fn sync_due(last_sync_at: Option<&str>, interval_minutes: Option<i64>, now_ms: f64) -> bool {
    let Some(minutes) = interval_minutes.filter(|m| *m > 0) else { return false };
    match last_sync_at.and_then(crate::time::ms_from_iso) {
        Some(last) => now_ms - last >= minutes as f64 * 60_000.0,
        None => true,
    }
}

/// What one scheduled run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SweepReport {
    pub resumed: u32,
    pub stalled: u32,
    pub fetches_started: u32,
    pub synced: u32,
    pub documents_retried: u32,
    pub errors: u32,
}

/// The scheduled run, judging quietness and due syncs at `now_ms` (the event's scheduled time).
pub async fn scheduled(env: &worker::Env, now_ms: f64) -> Result<SweepReport, StoreError> {
    let base = Ctx::new(env)?;
    let quiet = Quiet::from_config(&base.cfg);
    let mut report = SweepReport::default();
    let databases: Vec<_> = base.stores.databases().cloned().collect();
    for db in databases {
        let ctx = base.on(db);
        for job in github::active_jobs(&ctx.db).await? {
            let idle = lifecycle::idle_ms(&job, now_ms);
            match lifecycle::decide(true, idle, quiet, true) {
                Start::Resume => match lifecycle::resume(&ctx, &job).await {
                    Ok(()) => report.resumed += 1,
                    Err(e) => failed(&mut report, "resume", &job.namespace, &e),
                },
                Start::Stalled => {
                    let error = lifecycle::stalled_error(&job, idle, &crate::time::now_iso());
                    if finish::fail(&ctx.db, &job.id, &job.namespace, &error).await? {
                        report.stalled += 1;
                    }
                    if job.source == "github" {
                        let repo =
                            Repo { owner: &job.owner, name: &job.name, namespace: job.namespace.clone() };
                        match request_fetch(&ctx, &repo, job.git_ref.as_deref(), Trigger::Schedule).await {
                            Ok(_) => report.fetches_started += 1,
                            Err(e) => failed(&mut report, "refetch", &job.namespace, &e),
                        }
                    } else {
                        after_job(&ctx, &job.namespace).await;
                    }
                }
                _ => {}
            }
        }
        // Documents still dirty long after their last write: their chunking message failed past
        // the queue's attempt limit (e.g. the embedder was down) or was lost. Chunking again is
        // safe: the consumer acts only on the latest version of a dirty document.
        let before = crate::time::iso_from_ms(now_ms - quiet.resume_seconds as f64 * 1000.0);
        let dirty = documents::dirty_before(&ctx.db, &before, MAX_DOCUMENT_RETRIES_PER_RUN).await?;
        if !dirty.is_empty() {
            let messages: Vec<StageMessage> =
                dirty.iter().map(|d| StageMessage::document(&d.namespace, &d.path, d.version)).collect();
            match super::producer::send(env, &messages, false).await {
                Ok(()) => report.documents_retried += messages.len() as u32,
                Err(e) => {
                    report.errors += 1;
                    crate::log::warn(
                        "scheduled_step_failed",
                        &[("step", "documents"), ("message", &e.to_string())],
                    );
                }
            }
        }
        for pending in github::pending_fetches(&ctx.db).await? {
            match start_pending(&ctx, &pending.namespace).await {
                Ok(Some(_)) => report.fetches_started += 1,
                Ok(None) => {}
                Err(e) => failed(&mut report, "queued_fetch", &pending.namespace, &e),
            }
        }
    }
    let due: Vec<_> = github::scheduled(base.stores.catalog())
        .await?
        .into_iter()
        .filter(|r| sync_due(r.last_sync_at.as_deref(), r.sync_interval_minutes, now_ms))
        .take(MAX_SYNCS_PER_RUN)
        .collect();
    for r in due {
        let ctx = base.on(base.stores.assign(&r.namespace).await?);
        let repo = Repo { owner: &r.owner, name: &r.name, namespace: r.namespace.clone() };
        match request_fetch(&ctx, &repo, r.git_ref.as_deref(), Trigger::Schedule).await {
            Ok(_) => report.synced += 1,
            Err(e) => failed(&mut report, "sync", &r.namespace, &e),
        }
    }
    let horizon = crate::time::iso_from_ms(now_ms - DELIVERY_RETENTION_DAYS * 86_400_000.0);
    github::prune_deliveries(base.stores.catalog(), &horizon).await?;
    // Sign-in rows (codes, tokens, authorizations, clients) a day past their expiry.
    crate::store::oauth::sweep(base.stores.catalog(), (now_ms / 1000.0) as i64).await?;
    crate::log::info(
        "scheduled_run",
        &[
            ("resumed", &report.resumed.to_string()),
            ("stalled", &report.stalled.to_string()),
            ("fetchesStarted", &report.fetches_started.to_string()),
            ("synced", &report.synced.to_string()),
            ("documentsRetried", &report.documents_retried.to_string()),
            ("errors", &report.errors.to_string()),
        ],
    );
    Ok(report)
}

/// One repository's trouble does not stop the run: counted and logged.
fn failed(report: &mut SweepReport, what: &str, namespace: &str, e: &ApiError) {
    report.errors += 1;
    crate::log::warn(
        "scheduled_step_failed",
        &[("step", what), ("namespace", namespace), ("code", e.code), ("message", &e.message)],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repository_is_due_when_its_interval_elapsed_since_the_last_sync() {
        let at = |iso: &str| crate::time::ms_from_iso(iso).unwrap_or_else(|| panic!("{iso}"));
        let last = Some("2025-01-01T00:00:00.000Z");
        assert!(!sync_due(last, Some(10), at("2025-01-01T00:09:59.999Z")));
        assert!(sync_due(last, Some(10), at("2025-01-01T00:10:00.000Z")));
        assert!(sync_due(None, Some(10), at("2025-01-01T00:00:00.000Z")), "never synced");
        assert!(sync_due(Some("garbage"), Some(10), 0.0), "an unreadable time counts as never");
    }

    #[test]
    fn a_repository_without_a_positive_interval_is_never_due() {
        assert!(!sync_due(None, None, 1e15));
        assert!(!sync_due(None, Some(0), 1e15));
        assert!(!sync_due(None, Some(-5), 1e15));
    }

    #[test]
    fn triggers_round_trip_through_their_names() {
        for t in [Trigger::Api, Trigger::Webhook, Trigger::Schedule] {
            assert_eq!(Trigger::parse(t.as_str()), t);
        }
    }
}
