//! The queue consumer. Exported by hand (instead of `#[event(queue)]`) to read each message's
//! delivery `attempts`, which workers-rs 0.8 does not expose.
//!
//! Per message: run its stage; on success `ack`; on a retryable failure record `last_error` on the
//! job and `retry` with exponential backoff (`RETRY_BASE_DELAY_SECONDS × 2^(attempt-1)`); on a
//! permanent failure, or when `attempts` reached `MAX_ATTEMPTS`, fail the job (keeping the error),
//! send the message to the dead-letter queue and `ack`. The dead-letter queue's own consumer
//! records what arrives in `dead_letters` and fails the job if something else was still running it.
// The handlers run only under the wasm32 export; natively they are compiled (and type-checked) only.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

use wasm_bindgen::JsValue;
use worker::worker_sys::Message as MessageSys;

use super::messages::{DeadLetter, StageMessage, MESSAGE_VERSION};
use super::{finish, Ctx, StageError};
use crate::api::JobError;
use crate::bindings::DEAD_LETTER_QUEUE as DLQ_BINDING;
use crate::store::jobs;

/// Queues whose name ends with this are dead-letter queues.
pub const DLQ_SUFFIX: &str = "-dlq";

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub async fn queue(
    batch: worker::worker_sys::MessageBatch,
    env: worker::Env,
    _ctx: worker::worker_sys::Context,
) -> Result<JsValue, JsValue> {
    let queue_name: String = batch.queue().map(String::from).unwrap_or_default();
    let invocation = crate::ledger::begin("queue", queue_name.clone());
    let scope = invocation.scope();
    // Everything the batch does is charged to it alone.
    let result = scope.within(consume(batch, env, queue_name, scope.clone())).await;
    drop(invocation);
    result
}

#[cfg(target_arch = "wasm32")]
async fn consume(
    batch: worker::worker_sys::MessageBatch,
    env: worker::Env,
    queue_name: String,
    scope: crate::ledger::Scope,
) -> Result<JsValue, JsValue> {
    let messages = batch.messages()?;
    crate::ledger::queue_batch(messages.length() as usize);
    let ctx = match Ctx::new(&env) {
        Ok(ctx) => ctx.scoped(&scope),
        Err(e) => {
            // No database: nothing can be processed; let the platform redeliver.
            crate::log::error("queue_no_database", &[("error", &e.to_string())]);
            batch.retry_all(JsValue::null())?;
            return Ok(JsValue::UNDEFINED);
        }
    };
    let all: Vec<MessageSys> =
        messages.iter().map(wasm_bindgen::JsCast::unchecked_into::<MessageSys>).collect();
    let mut guard = StatementGuard::new(ctx.cfg.batch_d1_statements);
    for (i, message) in all.iter().enumerate() {
        let used = scope.d1_statements();
        if !guard.take_next(i, used) || (i > 0 && is_job_end(message)) {
            hand_over(&ctx, &queue_name, &all[i..], used).await;
            break;
        }
        if queue_name.ends_with(DLQ_SUFFIX) {
            handle_dead_letter(&ctx, &queue_name, message).await;
        } else {
            handle(&ctx, &queue_name, message).await;
        }
        guard.done(scope.d1_statements() - used);
    }
    Ok(JsValue::UNDEFINED)
}

/// Whether a queue batch takes its next message: not when the statements its messages used so
/// far, plus room for a message twice as large as the largest so far, would pass the batch's
/// statement budget (`limits.json`'s `d1Statements`, or `BATCH_D1_STATEMENTS`). The first message
/// is always taken (a message's own statements are bounded by its stage: an index message splits
/// its range when its writes would pass the budget, a job's end hands its rest on).
#[derive(Debug, Clone, Copy)]
pub struct StatementGuard {
    budget: f64,
    largest: f64,
}

impl StatementGuard {
    pub fn new(budget: f64) -> StatementGuard {
        StatementGuard { budget, largest: 0.0 }
    }

    /// Before message `index`, with `used` statements charged to the batch so far.
    pub fn take_next(&self, index: usize, used: f64) -> bool {
        index == 0 || used + 2.0 * self.largest <= self.budget
    }

    /// A message took `statements`.
    pub fn done(&mut self, statements: f64) {
        self.largest = self.largest.max(statements);
    }
}

/// Hands `rest` of a batch to new messages (the same bodies, sent again) and acks them, so a
/// message is never retried (and its attempts counted) for the batch's budget. A body that does
/// not parse, or a send that fails, is retried at once instead.
async fn hand_over(ctx: &Ctx, queue_name: &str, rest: &[MessageSys], used: f64) {
    crate::log::info(
        "batch_handed_over",
        &[
            ("queue", queue_name),
            ("messages", &rest.len().to_string()),
            ("statements", &format!("{used:.0}")),
        ],
    );
    if queue_name.ends_with(DLQ_SUFFIX) {
        rest.iter().for_each(|m| retry(m, 0));
        return;
    }
    let parsed: Vec<Option<StageMessage>> =
        rest.iter().map(|m| serde_json::from_value(body_json(m)).ok()).collect();
    let again: Vec<StageMessage> = parsed.iter().flatten().cloned().collect();
    let sent = super::producer::send(&ctx.env, &again, false).await;
    for (message, parsed) in rest.iter().zip(&parsed) {
        match (parsed, &sent) {
            (Some(_), Ok(())) => ack(message),
            _ => retry(message, 0),
        }
    }
}

/// A job's end measures its own budget from the batch's count: it runs only as a batch's first
/// message (with the whole budget), else it is handed to a new message.
fn is_job_end(message: &MessageSys) -> bool {
    body_json(message).get("stage").and_then(|s| s.as_str()) == Some("finish")
}

fn attempts(message: &MessageSys) -> u32 {
    js_sys::Reflect::get(message, &JsValue::from_str("attempts"))
        .ok()
        .and_then(|v| v.as_f64())
        .map_or(1, |a| a.max(1.0) as u32)
}

fn body_json(message: &MessageSys) -> serde_json::Value {
    message
        .body()
        .ok()
        .and_then(|b| serde_wasm_bindgen::from_value::<serde_json::Value>(b).ok())
        .unwrap_or(serde_json::Value::Null)
}

fn ack(message: &MessageSys) {
    if let Err(e) = message.ack() {
        crate::log::error("queue_ack_failed", &[("error", &format!("{e:?}"))]);
    }
}

fn retry(message: &MessageSys, delay_seconds: u32) {
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(
        &options,
        &JsValue::from_str("delaySeconds"),
        &JsValue::from_f64(delay_seconds.into()),
    );
    if let Err(e) = message.retry(options.into()) {
        crate::log::error("queue_retry_failed", &[("error", &format!("{e:?}"))]);
    }
}

async fn run_stage(ctx: &Ctx, msg: &StageMessage) -> Result<(), StageError> {
    if msg.version() != MESSAGE_VERSION {
        return Err(StageError::permanent(
            "UNSUPPORTED_MESSAGE_VERSION",
            format!("message version {} (this worker reads {MESSAGE_VERSION})", msg.version()),
        ));
    }
    match msg {
        StageMessage::Fetch(m) => super::fetch::run(ctx, m).await,
        StageMessage::Chunk(m) => super::chunk::run(ctx, m).await,
        StageMessage::Embed(m) => super::embed::run(ctx, m).await,
        StageMessage::Index(m) => super::index::run(ctx, m).await,
        StageMessage::Document(m) => super::document::run(ctx, m).await,
        StageMessage::Plan(m) => super::plans::run(ctx, m).await,
        StageMessage::Finish(m) => {
            // The end reports the job it completed; what follows the job (the fetch queued
            // behind it, the vector snapshot) runs here.
            if let Some(namespace) = super::end::run(ctx, m).await? {
                super::sync::after_job(ctx, &namespace).await;
            }
            Ok(())
        }
    }
}

async fn handle(batch: &Ctx, queue_name: &str, message: &MessageSys) {
    let attempt = attempts(message);
    batch.attempt.set(attempt);
    let body = body_json(message);
    let ctx = match batch.for_job(body.get("jobId").and_then(|j| j.as_str())).await {
        Ok(ctx) => ctx,
        Err(e) => {
            crate::log::error("queue_no_database", &[("error", &e.to_string())]);
            retry(message, batch.cfg.retry_delay_seconds(attempt));
            return;
        }
    };
    let ctx = &ctx;
    let parsed: Result<StageMessage, _> = serde_json::from_value(body.clone());
    let (job_id, stage, result) = match &parsed {
        Ok(msg) => {
            let started = crate::time::now_ms();
            let statements_before = crate::ledger::current_d1_statements();
            let result = run_stage(ctx, msg).await;
            let statements = crate::ledger::current_d1_statements() - statements_before;
            // Wall time of the stage (CPU and I/O as the isolate sees them): where ingestion time
            // goes, per stage (scripts/bench/ingest.sh sums these).
            let ms = format!("{:.0}", crate::time::now_ms() - started);
            let outcome = if result.is_ok() { "ok" } else { "error" };
            crate::log::info(
                "stage_done",
                &[
                    ("stage", msg.name()),
                    ("job", msg.job_id()),
                    ("ms", &ms),
                    ("parts", &ctx.laps()),
                    // This message's D1 statements, and the batch's so far.
                    ("statements", &format!("{statements:.0}")),
                    ("batchStatements", &format!("{:.0}", crate::ledger::current_d1_statements())),
                    // The isolate's wasm memory after the message (it never shrinks).
                    ("memory", &format!("{:.0}", crate::ledger::memory_bytes())),
                    ("outcome", outcome),
                ],
            );
            (Some(msg.job_id().to_string()), msg.name(), result)
        }
        Err(e) => (
            body.get("jobId").and_then(|j| j.as_str()).map(String::from),
            "unknown",
            Err(StageError::permanent("INVALID_MESSAGE", format!("undecodable message: {e}"))),
        ),
    };
    let error = match result {
        Ok(()) => {
            ack(message);
            return;
        }
        Err(error) => error,
    };
    let job_error = JobError {
        code: error.code.clone(),
        message: error.message.clone(),
        stage: stage.into(),
        attempt,
        at: crate::time::now_iso(),
    };
    let job = match &job_id {
        Some(id) => jobs::get(&ctx.db, id).await.ok().flatten(),
        None => None,
    };
    let give_up = !error.retryable || attempt >= ctx.cfg.max_attempts;
    crate::log::warn(
        "stage_failed",
        &[
            ("queue", queue_name),
            ("job", job_id.as_deref().unwrap_or("")),
            ("stage", stage),
            ("attempt", &attempt.to_string()),
            ("code", &error.code),
            ("message", &error.message),
            ("giveUp", &give_up.to_string()),
        ],
    );
    if !give_up {
        if let Some(job) = &job {
            let _ = jobs::record_failure(&ctx.db, &job.id, attempt, &job_error).await;
        }
        retry(message, ctx.cfg.retry_delay_seconds(attempt));
        return;
    }
    if let Some(job) = &job {
        match finish::fail(&ctx.db, &job.id, &job.namespace, &job_error).await {
            // A fetch queued behind the failed job starts now.
            Ok(true) => super::sync::after_job(ctx, &job.namespace).await,
            Ok(false) => {}
            Err(e) => {
                // Could not record the failure: keep the message alive and try again later.
                crate::log::error("job_fail_failed", &[("job", &job.id), ("error", &e.to_string())]);
                retry(message, ctx.cfg.retry_delay_seconds(attempt));
                return;
            }
        }
    }
    let letter =
        DeadLetter { v: MESSAGE_VERSION, message: body.to_string(), error: job_error, attempts: attempt };
    match ctx.env.queue(DLQ_BINDING) {
        Ok(dlq) => {
            crate::ledger::queue_send(&[serde_json::to_string(&letter).map_or(0, |j| j.len())]);
            if let Err(e) = dlq.send(letter).await {
                crate::log::error("dead_letter_send_failed", &[("error", &e.to_string())]);
            }
        }
        Err(e) => crate::log::error("dead_letter_queue_missing", &[("error", &e.to_string())]),
    }
    ack(message);
}

/// Record a dead letter; fail its job if it is somehow still active (the platform dead-letters
/// messages on its own when an invocation crashes repeatedly).
async fn handle_dead_letter(batch: &Ctx, queue_name: &str, message: &MessageSys) {
    let body = body_json(message);
    let attempt = attempts(message);
    let (inner, error) = match serde_json::from_value::<DeadLetter>(body.clone()) {
        Ok(letter) => {
            (serde_json::from_str(&letter.message).unwrap_or(serde_json::Value::Null), Some(letter.error))
        }
        Err(_) => (body.clone(), None),
    };
    let job_id = inner.get("jobId").and_then(|j| j.as_str()).map(String::from);
    let error = error.unwrap_or_else(|| JobError {
        code: "DEAD_LETTERED".into(),
        message: "the message exhausted its deliveries without the worker recording an outcome".into(),
        stage: inner.get("stage").and_then(|s| s.as_str()).unwrap_or("unknown").into(),
        attempt,
        at: crate::time::now_iso(),
    });
    let recorded = batch
        .stores
        .catalog()
        .run(
            "INSERT INTO dead_letters (queue, job_id, body, error, attempts, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            &crate::store::args![
                queue_name,
                job_id.as_deref(),
                &inner.to_string(),
                &serde_json::to_string(&error).unwrap_or_default(),
                error.attempt,
                &crate::time::now_iso()
            ],
        )
        .await;
    if let Some(id) = &job_id {
        let ctx = batch.for_job(Some(id)).await.unwrap_or_else(|_| batch.on(batch.db.clone()));
        if let Ok(Some(job)) = jobs::get(&ctx.db, id).await {
            if job.is_active() {
                let _ = finish::fail(&ctx.db, &job.id, &job.namespace, &error).await;
            }
        }
    }
    match recorded {
        Ok(_) => ack(message),
        Err(e) => {
            crate::log::error("dead_letter_record_failed", &[("error", &e.to_string())]);
            retry(message, 5);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StatementGuard;

    #[test]
    fn a_batch_takes_messages_while_twice_the_largest_one_so_far_still_fits_its_budget() {
        let mut guard = StatementGuard::new(100.0);
        assert!(guard.take_next(0, 0.0));
        guard.done(20.0);
        assert!(guard.take_next(1, 20.0));
        guard.done(30.0);
        assert!(guard.take_next(2, 40.0), "40 used + room for 2 × 30 = 100");
        guard.done(10.0);
        assert!(!guard.take_next(3, 50.0), "50 + 2 × 30 > 100");
        // The first message is always taken, whatever it may cost.
        assert!(StatementGuard::new(0.0).take_next(0, 0.0));
    }
}
