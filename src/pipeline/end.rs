//! A job's end, once every file is indexed: the code graph's cross-file resolution and ranks
//! (`store::graph::resolve_namespace_from`), the vector index's and the keyword copy's snapshots
//! of the namespace (`keyword_copy::prepare_snapshot`, when its rows fit the message), then
//! the job's completion ([`finish::complete`]: SUCCEEDED, the namespace READY), which [`run`]
//! reports to its caller (the consumer then starts what was queued behind the job). Until then the job is RUNNING in stage `finish` and the namespace is not
//! READY.
//!
//! Each step is idempotent (a rerun finds the graph resolved and the snapshot current, the
//! completion happens once), and a message does what fits its queue batch's statement budget
//! (`BATCH_D1_STATEMENTS`): the resolution stops between pages and hands the files after the last
//! one it wrote to a follow-up message, and each later step goes on in the same message only when
//! the statements it takes still fit, else in a new one. A lost message is sent again by the
//! scheduled run ([`super::lifecycle::resume`]), which starts the end over (what was written is
//! not written again).
use super::messages::{EndStep, JobEnd, StageMessage};
use super::{finish, producer, Ctx, StageError};
use crate::ledger::{Budget, Statements};
use crate::store::graph::{self, Progress};
use crate::store::jobs;

/// Statements the vector snapshot's step takes when the snapshot is current or its copy is held
/// (a few reads, a part's write): not started in a message with fewer left.
const VECTOR_STEP_STATEMENTS: usize = 12;
/// Statements of the completion and what follows it (the completion batch, the queued fetch's
/// check, the snapshot's check).
const COMPLETE_STEP_STATEMENTS: usize = 14;

/// After an index (or fetch, or request) found its job's files all done: complete the job when
/// it changed no file, else start its end. `Ok(true)` when this call completed the job (the
/// caller then runs `sync::after_job`).
pub async fn settle(ctx: &Ctx, job_id: &str, namespace: &str) -> Result<bool, StageError> {
    let embedder = crate::embed::embedder_view(&ctx.env);
    match finish::try_complete(&ctx.db, job_id, namespace, embedder.as_ref()).await? {
        finish::Outcome::Completed => Ok(true),
        finish::Outcome::NotYet => Ok(false),
        finish::Outcome::Ending => {
            let start = StageMessage::finish(job_id, EndStep::Graph, None);
            if let Err(e) = producer::send(&ctx.env, &[start], ctx.cfg.deliver_twice).await {
                // Leave the job as it was, so the retried message starts the end again.
                jobs::leave_end(&ctx.db, job_id).await?;
                return Err(e.into());
            }
            crate::log::info("job_end_started", &[("job", job_id), ("namespace", namespace)]);
            Ok(false)
        }
    }
}

/// One message of a job's end (see the module doc). `Ok(Some(namespace))` when this message
/// completed the job: the end only reports it, and its caller runs what follows
/// (`sync::after_job`).
pub async fn run(ctx: &Ctx, msg: &JobEnd) -> Result<Option<String>, StageError> {
    let Some(job) = jobs::get(&ctx.db, &msg.job_id).await? else { return Ok(None) };
    if !job.is_active() {
        return Ok(None);
    }
    ctx.mark_running(&job.id, "finish").await?;
    ctx.lap("job");
    let ns = job.namespace.as_str();
    let budget = Statements::new(ctx.cfg.batch_d1_statements);
    let mut step = msg.step;
    if step == EndStep::Graph {
        // A job that changed no file leaves the graph as it was.
        let resolves = finish::changed_files(&job);
        if resolves && !resolve(ctx, &job.id, ns, msg.after.as_deref(), &budget).await? {
            return Ok(None);
        }
        step = EndStep::Vectors;
        // After a resolution the snapshot starts in a message of its own: it may have to build
        // the namespace's copy first (a statement per 1,000 vectors), which cannot be cut.
        if resolves || !budget.fits(VECTOR_STEP_STATEMENTS) {
            return hand_on(ctx, &job.id, step, None).await.map(|()| None);
        }
    }
    if step == EndStep::Vectors {
        let done = crate::vector::prepare_snapshot(&ctx.env, ns, &budget).await;
        ctx.lap("vectors");
        if !done {
            return hand_on(ctx, &job.id, step, None).await.map(|()| None);
        }
        keyword_snapshot(ctx, ns, &budget).await;
        step = EndStep::Complete;
        if !budget.fits(COMPLETE_STEP_STATEMENTS) {
            return hand_on(ctx, &job.id, step, None).await.map(|()| None);
        }
    }
    let embedder = crate::embed::embedder_view(&ctx.env);
    let completed = finish::complete(&ctx.db, &job.id, ns, embedder.as_ref()).await?;
    ctx.lap("complete");
    Ok(completed.then(|| ns.to_string()))
}

/// The namespace's keyword snapshot at its new generation, when it fits what the message has left
/// (otherwise, or on an error, the first search builds it as before: logged, never fatal).
async fn keyword_snapshot(ctx: &Ctx, ns: &str, budget: &Statements) {
    let (config, _) = crate::keyword_copy::CopyConfig::from_env(&ctx.env);
    let outcome = crate::keyword_copy::prepare_snapshot(config, &ctx.db, ns, budget).await;
    ctx.lap("keywords");
    match outcome {
        Ok(prepared) => crate::log::info(
            "keyword_snapshot_prepared",
            &[("namespace", ns), ("state", &format!("{prepared:?}"))],
        ),
        Err(e) => {
            crate::log::warn("keyword_snapshot_failed", &[("namespace", ns), ("detail", &e.to_string())])
        }
    }
}

/// The code graph's resolution from `after` on, as far as the budget goes: `Ok(true)` when it is
/// done (or failed: logged, the job goes on without it, as a file whose graph cannot be stored
/// does), `Ok(false)` when the rest was handed to a follow-up message.
async fn resolve(
    ctx: &Ctx,
    job_id: &str,
    ns: &str,
    after: Option<&str>,
    budget: &Statements,
) -> Result<bool, StageError> {
    let started = crate::time::now_ms();
    let memory_before = crate::ledger::memory_bytes();
    let progress = graph::resolve_namespace_from(&ctx.db, ns, ctx.cfg.graph_page_bytes, after, budget).await;
    ctx.lap("graph");
    let (r, more) = match progress {
        Ok(Progress::Done(r)) => (r, None),
        Ok(Progress::More { after, resolved }) => (resolved, Some(after)),
        Err(e) => {
            crate::log::warn(
                "graph_resolution_failed",
                &[("job", job_id), ("namespace", ns), ("error", &e.0)],
            );
            return Ok(true);
        }
    };
    crate::log::info(
        if more.is_some() { "graph_resolution_continued" } else { "graph_resolved" },
        &[
            ("job", job_id),
            ("namespace", ns),
            ("from", after.unwrap_or("")),
            ("to", more.as_deref().unwrap_or("")),
            ("files", &r.files.to_string()),
            ("edges", &r.edges.to_string()),
            ("rewrittenFiles", &r.rewritten_files.to_string()),
            ("rewrittenEdges", &r.rewritten_edges.to_string()),
            ("ranksWritten", &r.ranks_written.to_string()),
            ("pages", &r.pages.to_string()),
            ("definitionPages", &r.definition_pages.to_string()),
            ("statements", &format!("{:.0}", crate::ledger::current_d1_statements())),
            // The wasm memory before and after: what the resolution grew it by.
            ("memoryBefore", &format!("{memory_before:.0}")),
            ("memoryAfter", &format!("{:.0}", crate::ledger::memory_bytes())),
            ("ms", &format!("{:.0}", crate::time::now_ms() - started)),
        ],
    );
    match more {
        None => Ok(true),
        Some(after) => hand_on(ctx, job_id, EndStep::Graph, Some(after)).await.map(|()| false),
    }
}

/// The rest of the job's end, from `step`, in a new message.
async fn hand_on(ctx: &Ctx, job_id: &str, step: EndStep, after: Option<String>) -> Result<(), StageError> {
    let statements = format!("{:.0}", crate::ledger::current_d1_statements());
    let next = StageMessage::finish(job_id, step, after);
    crate::log::info(
        "job_end_handed_on",
        &[("job", job_id), ("step", &format!("{step:?}").to_lowercase()), ("statements", &statements)],
    );
    producer::send(&ctx.env, &[next], false).await?;
    ctx.lap("send");
    Ok(())
}
