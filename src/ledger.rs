//! The limits ledger: what each invocation (HTTP request, queue batch, scheduled run) used of
//! Cloudflare's per-invocation limits, measured where the work leaves the worker.
//!
//! The limits and edgerag's budget for each are in `src/limits.json` (the one source of truth:
//! the docs' table and the e2e assertions read the same file). The seams report here:
//!
//! | figure | reported by |
//! | --- | --- |
//! | `d1Statements`, `d1MaxParams`, `d1MaxStatementBytes`, `d1MaxValueBytes` | `store::Db::stmt` (every statement is built there) |
//! | `subrequests` | each `fetch` (GitHub, OpenAI-compatible embedder, generator), queue send, Vectorize and Workers AI call |
//! | `queueMaxMessageBytes`, `queueMaxSendBatch` | the queue senders (`pipeline::producer`, the dead-letter send, document PUTs) |
//! | `queueBatch` | the queue consumer |
//! | `vectorizeMax*` | `vector::vectorize` |
//! | `embedMaxInputs` | the embedders' requests |
//! | `wallMs`, `memoryBytes` | the invocation's end: its wall time (an upper bound of its CPU time) and the wasm memory's size (the isolate's peak: it never shrinks) |
//!
//! An isolate runs invocations concurrently. Each handler runs its work inside its invocation's
//! [`Scope::within`] (the fetch, queue and scheduled handlers, and the background work a request
//! starts), so whatever a seam charges while that work runs is charged to that invocation alone:
//! an invocation's figures are its own, the statements of the vector index and of HTTP requests
//! included. Only a charge made outside any invocation's work (none is known) goes to every open
//! invocation. A queue batch's databases also carry its [`Scope`] (`pipeline::Ctx::scoped`). The
//! consumer reads the batch's count to hand the rest of a batch to a new message before its
//! statements reach their budget, and a long stage (the job's end) reads it
//! ([`current_d1_statements`]) to hand the rest of its work to a follow-up message. An invocation
//! ends when its handler returned and the background work it started (`waitUntil`) finished.
//!
//! In production an invocation over any budget logs one `limits_budget_crossed` line. The test
//! build (`test-hooks`) also keeps, per stage (kind + route or queue), the largest figure of every
//! invocation, served by `GET /__test/ledger` (`DELETE` clears it).
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll};

use serde::{Deserialize, Serialize};

/// One invocation's figures (the largest where the name says `max`, else totals).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub memory_bytes: f64,
    pub wall_ms: f64,
    pub subrequests: f64,
    pub d1_statements: f64,
    pub d1_max_params: f64,
    pub d1_max_statement_bytes: f64,
    pub d1_max_value_bytes: f64,
    pub queue_max_message_bytes: f64,
    pub queue_max_send_batch: f64,
    pub queue_batch: f64,
    pub vectorize_max_upsert: f64,
    pub vectorize_max_delete: f64,
    pub vectorize_max_top_k: f64,
    pub vectorize_max_top_k_with_metadata: f64,
    pub embed_max_inputs: f64,
}

impl Usage {
    /// The figure named as in `limits.json` (`None` for an unknown name).
    pub fn figure(&self, name: &str) -> Option<f64> {
        let value = serde_json::to_value(self).ok()?;
        value.get(name)?.as_f64()
    }

    /// Each figure the larger of the two.
    pub fn max(&mut self, other: &Usage) {
        let (Ok(serde_json::Value::Object(mut a)), Ok(serde_json::Value::Object(b))) =
            (serde_json::to_value(*self), serde_json::to_value(other))
        else {
            return;
        };
        for (k, v) in b {
            let (x, y) = (a.get(&k).and_then(|x| x.as_f64()).unwrap_or(0.0), v.as_f64().unwrap_or(0.0));
            a.insert(k, x.max(y).into());
        }
        if let Ok(merged) = serde_json::from_value(serde_json::Value::Object(a)) {
            *self = merged;
        }
    }
}

/// One row of `limits.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Limit {
    pub id: String,
    pub area: String,
    pub what: String,
    pub unit: String,
    pub paid: f64,
    pub free: f64,
    pub budget: f64,
    pub split: bool,
    pub figure: Option<String>,
    pub how: String,
    pub source: String,
    pub source_date: String,
}

#[derive(Debug, Clone, Deserialize)]
struct LimitsFile {
    limits: Vec<Limit>,
}

/// The limits table (`src/limits.json`, compiled in).
pub fn limits() -> Vec<Limit> {
    // The file is checked by this module's tests: it always parses.
    serde_json::from_str::<LimitsFile>(include_str!("limits.json")).map(|f| f.limits).unwrap_or_default()
}

/// `(figure, value, budget)` of every measured figure over its budget.
pub fn over_budget(usage: &Usage, limits: &[Limit]) -> Vec<(String, f64, f64)> {
    limits
        .iter()
        .filter_map(|l| {
            let name = l.figure.as_deref()?;
            let value = usage.figure(name)?;
            (value > l.budget).then(|| (name.to_string(), value, l.budget))
        })
        .collect()
}

struct Open {
    kind: &'static str,
    label: String,
    started: f64,
    usage: RefCell<Usage>,
    /// The wasm memory's size when the invocation began.
    memory_at_start: f64,
    /// Bytes the wasm memory grew by while this invocation's own work was polled ([`Within`]):
    /// which of the invocations running together grew the isolate's memory.
    grown: Cell<f64>,
}

impl Drop for Open {
    fn drop(&mut self) {
        let mut usage = *self.usage.borrow();
        usage.wall_ms = (crate::time::now_ms() - self.started).max(0.0);
        usage.memory_bytes = memory_bytes();
        if self.grown.get() > 0.0 {
            memory_grew(self, &usage);
        }
        finish(self.kind, &self.label, &usage);
    }
}

/// One line per invocation whose own work grew the wasm memory: its memory at the start and the
/// end, what its polls grew it by, and the other invocations open at its end (whatever they grew
/// is on their own line).
fn memory_grew(open: &Open, usage: &Usage) {
    let others: Vec<String> = OPEN.with(|o| {
        o.borrow()
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|w| !std::ptr::eq(Rc::as_ptr(w), open))
            .map(|w| format!("{} {}", w.kind, w.label))
            .collect()
    });
    crate::log::info(
        "invocation_memory_grew",
        &[
            ("kind", open.kind),
            ("stage", &open.label),
            ("memoryAtStart", &format!("{:.0}", open.memory_at_start)),
            ("grownByItself", &format!("{:.0}", open.grown.get())),
            ("memoryAtEnd", &format!("{:.0}", usage.memory_bytes)),
            ("wallMs", &format!("{:.0}", usage.wall_ms)),
            ("d1Statements", &format!("{:.0}", usage.d1_statements)),
            ("openBeside", &others.join("; ")),
        ],
    );
}

thread_local! {
    static OPEN: RefCell<Vec<Weak<Open>>> = const { RefCell::new(Vec::new()) };
    /// The invocations whose work is being polled right now, innermost last ([`Within`]).
    static CURRENT: RefCell<Vec<Weak<Open>>> = const { RefCell::new(Vec::new()) };
    static LIMITS: Vec<Limit> = limits();
    /// Memory growth already attributed to an invocation by the polls running now (a nested
    /// [`Within`]'s growth is its own, not its outer invocation's).
    static ATTRIBUTED: Cell<f64> = const { Cell::new(0.0) };
}

/// An open invocation; it ends when the last clone is dropped (clones keep it open across the
/// background work it started).
#[derive(Clone)]
pub struct Invocation(#[allow(dead_code)] Rc<Open>);

impl Invocation {
    /// A handle seams can charge this invocation alone through ([`Scope`]).
    pub fn scope(&self) -> Scope {
        Scope(Rc::downgrade(&self.0))
    }
}

/// One invocation, weakly: a seam that knows which invocation it works for (a queue stage's
/// databases carry their batch's scope, `store::Db::scoped`) charges it alone instead of every
/// open one. Once the invocation ended, charges go to every open invocation again.
#[derive(Clone)]
pub struct Scope(Weak<Open>);

impl Scope {
    /// D1 statements charged to the invocation so far (0 once it ended).
    pub fn d1_statements(&self) -> f64 {
        self.0.upgrade().map_or(0.0, |o| o.usage.borrow().d1_statements)
    }

    /// `work`, with everything it charges while it runs charged to this invocation alone (see
    /// [`Within`]).
    pub fn within<F: Future>(&self, work: F) -> Within<F> {
        Within { scope: self.0.clone(), work: Box::pin(work) }
    }
}

/// The invocation whose work is running now, if any ([`Within`]).
pub fn current() -> Option<Scope> {
    CURRENT.with(|c| c.borrow().last().cloned()).map(Scope)
}

/// D1 statements charged so far to the invocation whose work is running now (0 outside one).
pub fn current_d1_statements() -> f64 {
    current().map_or(0.0, |s| s.d1_statements())
}

/// A future that is its invocation's work: while it is polled, its invocation is the current
/// one and every charge (a statement, a subrequest, a queue send) goes to it alone. The runtime
/// runs one poll at a time on the isolate's thread, and a poll runs no other invocation's code, so
/// this is exact for what an invocation issues — the vector index's statements and the HTTP
/// requests' included — whether or not their database was scoped.
pub struct Within<F> {
    scope: Weak<Open>,
    work: Pin<Box<F>>,
}

impl<F: Future> Future for Within<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        CURRENT.with(|c| c.borrow_mut().push(self.scope.clone()));
        // Popped however the poll ends.
        struct Pop;
        impl Drop for Pop {
            fn drop(&mut self) {
                CURRENT.with(|c| c.borrow_mut().pop());
            }
        }
        let _pop = Pop;
        let (memory, attributed) = (memory_now(), ATTRIBUTED.with(Cell::get));
        let poll = self.work.as_mut().poll(cx);
        let grown = memory_now() - memory - (ATTRIBUTED.with(Cell::get) - attributed);
        if grown > 0.0 {
            ATTRIBUTED.with(|a| a.set(a.get() + grown));
            if let Some(open) = self.scope.upgrade() {
                open.grown.set(open.grown.get() + grown);
            }
        }
        poll
    }
}

/// The wasm memory's size (0 off wasm), without a call into JS: read around every poll.
fn memory_now() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        (core::arch::wasm32::memory_size(0) * 65536) as f64
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0.0
    }
}

/// Whether `n` more D1 statements fit a caller's budget: work that can be cut (an index range, the
/// code graph's resolution, a snapshot's parts) asks before each part and leaves the rest to a
/// later call.
pub trait Budget {
    fn fits(&self, n: usize) -> bool;
}

/// No budget: everything in one call.
pub struct Unbounded;

impl Budget for Unbounded {
    fn fits(&self, _: usize) -> bool {
        true
    }
}

/// The D1 statements of the invocation whose work is running ([`current_d1_statements`]: a queue
/// batch's, for a stage) against a limit (`BATCH_D1_STATEMENTS`).
pub struct Statements {
    limit: f64,
}

impl Statements {
    pub fn new(limit: f64) -> Statements {
        Statements { limit }
    }

    /// Whether `n` more statements on top of `used` stay within the limit.
    pub fn fits_after(&self, used: f64, n: usize) -> bool {
        used + n as f64 <= self.limit
    }
}

impl Budget for Statements {
    fn fits(&self, n: usize) -> bool {
        self.fits_after(current_d1_statements(), n)
    }
}

/// The budget of `figure` in `limits.json` (`None` for a figure no limit names).
pub fn budget(figure: &str) -> Option<f64> {
    LIMITS.with(|l| l.iter().find(|l| l.figure.as_deref() == Some(figure)).map(|l| l.budget))
}

/// Open an invocation of `kind` (`http`, `queue`, `scheduled`; `test` for the test build's own
/// routes); `label` names its stage.
pub fn begin(kind: &'static str, label: String) -> Invocation {
    let open = Rc::new(Open {
        kind,
        label,
        started: crate::time::now_ms(),
        usage: RefCell::new(Usage::default()),
        memory_at_start: memory_now(),
        grown: Cell::new(0.0),
    });
    OPEN.with(|o| {
        let mut o = o.borrow_mut();
        o.retain(|w| w.strong_count() > 0);
        o.push(Rc::downgrade(&open));
    });
    Invocation(open)
}

/// Charge `f` to the invocation whose work is running ([`Within`]), else to every open one.
fn charge(f: impl Fn(&mut Usage)) {
    if let Some(open) = CURRENT.with(|c| c.borrow().last().and_then(Weak::upgrade)) {
        f(&mut open.usage.borrow_mut());
        return;
    }
    OPEN.with(|o| {
        for open in o.borrow().iter().filter_map(Weak::upgrade) {
            f(&mut open.usage.borrow_mut());
        }
    });
}

/// A D1 statement was prepared: its SQL length, bound parameters and largest bound value;
/// charged to `scope`'s invocation alone while it is open, else as [`charge`] does.
pub fn d1_statement(scope: Option<&Scope>, sql_bytes: usize, params: usize, max_value_bytes: usize) {
    let f = |u: &mut Usage| {
        u.d1_statements += 1.0;
        u.d1_max_statement_bytes = u.d1_max_statement_bytes.max(sql_bytes as f64);
        u.d1_max_params = u.d1_max_params.max(params as f64);
        u.d1_max_value_bytes = u.d1_max_value_bytes.max(max_value_bytes as f64);
    };
    match scope.and_then(|s| s.0.upgrade()) {
        Some(open) => f(&mut open.usage.borrow_mut()),
        None => charge(f),
    }
}

/// A `fetch` (or another call that counts as a subrequest).
pub fn subrequest() {
    charge(|u| u.subrequests += 1.0);
}

/// One queue send of messages of these sizes (JSON bytes).
pub fn queue_send(message_bytes: &[usize]) {
    let largest = message_bytes.iter().copied().max().unwrap_or(0) as f64;
    charge(|u| {
        u.subrequests += 1.0;
        u.queue_max_message_bytes = u.queue_max_message_bytes.max(largest);
        u.queue_max_send_batch = u.queue_max_send_batch.max(message_bytes.len() as f64);
    });
}

/// A queue batch of `messages` delivered to the consumer.
pub fn queue_batch(messages: usize) {
    charge(|u| u.queue_batch = u.queue_batch.max(messages as f64));
}

/// A Vectorize upsert of `vectors`.
pub fn vectorize_upsert(vectors: usize) {
    charge(|u| {
        u.subrequests += 1.0;
        u.vectorize_max_upsert = u.vectorize_max_upsert.max(vectors as f64);
    });
}

/// A Vectorize `deleteByIds` of `ids`.
pub fn vectorize_delete(ids: usize) {
    charge(|u| {
        u.subrequests += 1.0;
        u.vectorize_max_delete = u.vectorize_max_delete.max(ids as f64);
    });
}

/// A Vectorize query for `top_k` matches, with values or metadata returned or not.
pub fn vectorize_query(top_k: usize, with_metadata: bool) {
    charge(|u| {
        u.subrequests += 1.0;
        u.vectorize_max_top_k = u.vectorize_max_top_k.max(top_k as f64);
        if with_metadata {
            u.vectorize_max_top_k_with_metadata = u.vectorize_max_top_k_with_metadata.max(top_k as f64);
        }
    });
}

/// An embedding request of `inputs` texts (Workers AI or an OpenAI-compatible server).
pub fn embed_request(inputs: usize) {
    charge(|u| {
        u.subrequests += 1.0;
        u.embed_max_inputs = u.embed_max_inputs.max(inputs as f64);
    });
}

/// The wasm memory's size now (0 off wasm): the isolate's peak so far (it never shrinks).
pub fn memory_bytes() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::JsCast;
        wasm_bindgen::memory()
            .dyn_into::<js_sys::WebAssembly::Memory>()
            .ok()
            .and_then(|m| m.buffer().dyn_into::<js_sys::ArrayBuffer>().ok())
            .map_or(0.0, |b| f64::from(b.byte_length()))
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0.0
    }
}

fn finish(kind: &str, label: &str, usage: &Usage) {
    let crossed = LIMITS.with(|l| over_budget(usage, l));
    if !crossed.is_empty() {
        let over: Vec<String> = crossed.iter().map(|(f, v, b)| format!("{f} {v} > {b}")).collect();
        let usage = serde_json::to_string(usage).unwrap_or_default();
        crate::log::warn(
            "limits_budget_crossed",
            &[("kind", kind), ("stage", label), ("over", &over.join(", ")), ("usage", &usage)],
        );
    }
    #[cfg(feature = "test-hooks")]
    test_hooks::keep(kind, label, usage);
}

/// The stage an HTTP request belongs to: method and path, with the segments that name a thing
/// (owner, repository, job id, …) replaced by `*` so the stages stay few.
pub fn http_label(method: &str, path: &str) -> String {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let fixed = |s: &str| {
        s.len() <= 24 && !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c == '-' || c == '_')
    };
    let shape: Vec<&str> = segments
        .iter()
        .enumerate()
        .map(|(i, s)| {
            // `/v1/repos/{owner}/{name}/…`: owner and name are names, whatever they look like.
            let named = segments.get(1) == Some(&"repos") && (i == 2 || i == 3);
            if !named && (fixed(s) || (i == 0 && *s == "v1")) {
                *s
            } else {
                "*"
            }
        })
        .collect();
    format!("{method} /{}", shape.join("/"))
}

#[cfg(feature = "test-hooks")]
mod test_hooks {
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    use serde::Serialize;

    use super::Usage;

    /// Stages kept at most; further ones are counted together.
    const MAX_STAGES: usize = 500;

    #[derive(Serialize, Clone)]
    #[serde(rename_all = "camelCase")]
    pub struct Stage {
        pub kind: String,
        pub stage: String,
        pub invocations: u64,
        pub max: Usage,
    }

    thread_local! {
        static STAGES: RefCell<BTreeMap<String, Stage>> = const { RefCell::new(BTreeMap::new()) };
    }

    pub fn keep(kind: &str, label: &str, usage: &Usage) {
        STAGES.with(|s| {
            let mut s = s.borrow_mut();
            let key = format!("{kind} {label}");
            let key =
                if s.len() >= MAX_STAGES && !s.contains_key(&key) { format!("{kind} other") } else { key };
            let stage = s.entry(key).or_insert_with(|| Stage {
                kind: kind.to_string(),
                stage: label.to_string(),
                invocations: 0,
                max: Usage::default(),
            });
            stage.invocations += 1;
            stage.max.max(usage);
        });
    }

    pub fn stages() -> Vec<Stage> {
        STAGES.with(|s| s.borrow().values().cloned().collect())
    }

    pub fn clear() {
        STAGES.with(|s| s.borrow_mut().clear());
    }
}

/// `GET /__test/ledger`: the largest figures per stage since the isolate started (or the last
/// `DELETE /__test/ledger`). Served only with `EDGERAG_TEST_ROUTES=1`.
#[cfg(feature = "test-hooks")]
pub fn handle(req: &worker::Request, env: &worker::Env) -> Option<worker::Result<worker::Response>> {
    if req.path() != "/__test/ledger" {
        return None;
    }
    let on = crate::bindings::var(env, "EDGERAG_TEST_ROUTES")
        .is_some_and(|v| v.trim() == "1" || v.trim() == "true");
    if !on {
        return None;
    }
    Some(match req.method() {
        worker::Method::Delete => {
            test_hooks::clear();
            worker::Response::empty().map(|r| r.with_status(204))
        }
        _ => worker::Response::from_json(&serde_json::json!({ "stages": test_hooks::stages() })),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_file_parses_and_every_figure_is_a_ledger_field() {
        let limits = limits();
        assert!(limits.len() >= 20, "{} limits", limits.len());
        let fields = serde_json::to_value(Usage::default()).expect("a Usage serializes");
        let fields = fields.as_object().expect("a Usage is an object");
        let measured: Vec<&str> = limits.iter().filter_map(|l| l.figure.as_deref()).collect();
        for name in &measured {
            assert!(fields.contains_key(*name), "limits.json names {name}, which the ledger does not record");
        }
        for name in fields.keys() {
            assert!(
                measured.contains(&name.as_str()),
                "the ledger records {name}, which no limit in limits.json names"
            );
        }
    }

    #[test]
    fn budgets_are_half_the_paid_limit_or_all_of_it_where_edgerag_splits_at_the_limit() {
        for l in limits() {
            assert!(l.budget > 0.0 && l.paid > 0.0 && l.free > 0.0, "{}", l.id);
            if l.split {
                assert_eq!(l.budget, l.paid, "{}: a split figure's budget is the limit itself", l.id);
            } else {
                assert!(l.budget <= l.paid / 2.0, "{}: budget {} over half of {}", l.id, l.budget, l.paid);
            }
            assert!(l.source.starts_with("https://developers.cloudflare.com/"), "{}: {}", l.id, l.source);
        }
    }

    #[test]
    fn the_workers_ai_models_batches_fit_the_embedding_request_limit() {
        let limit = limits().into_iter().find(|l| l.id == "embedInputs").expect("embedInputs").paid;
        for m in edgerag_core::embed::model_specs::WORKERS_AI_MODELS {
            assert!(m.max_batch as f64 <= limit, "{}: {} texts a request", m.name, m.max_batch);
        }
    }

    #[test]
    fn a_figure_over_its_budget_is_reported_and_one_under_is_not() {
        let limits = limits();
        let mut usage = Usage { d1_statements: 500.0, d1_max_params: 100.0, ..Usage::default() };
        assert!(over_budget(&usage, &limits).is_empty());
        usage.d1_statements = 501.0;
        usage.d1_max_params = 101.0;
        let over: Vec<String> = over_budget(&usage, &limits).into_iter().map(|(f, _, _)| f).collect();
        assert_eq!(over, ["d1Statements", "d1MaxParams"]);
    }

    #[test]
    fn charges_reach_every_open_invocation_and_none_after_it_ended() {
        let a = begin("http", "GET /a".into());
        d1_statement(None, 10, 2, 5);
        let b = begin("queue", "q".into());
        d1_statement(None, 30, 1, 0);
        queue_send(&[100, 300]);
        embed_request(64);
        let (ua, ub) = (*a.0.usage.borrow(), *b.0.usage.borrow());
        assert_eq!((ua.d1_statements, ua.d1_max_statement_bytes, ua.d1_max_params), (2.0, 30.0, 2.0));
        assert_eq!((ub.d1_statements, ub.d1_max_statement_bytes, ub.d1_max_params), (1.0, 30.0, 1.0));
        assert_eq!((ub.subrequests, ub.queue_max_message_bytes, ub.queue_max_send_batch), (2.0, 300.0, 2.0));
        assert_eq!(ub.embed_max_inputs, 64.0);
        let kept = a.clone();
        drop(a);
        d1_statement(None, 1, 0, 0);
        assert_eq!(kept.0.usage.borrow().d1_statements, 3.0, "a clone keeps the invocation open");
        drop(kept);
        drop(b);
        assert_eq!(OPEN.with(|o| o.borrow().iter().filter(|w| w.strong_count() > 0).count()), 0);
    }

    #[test]
    fn a_scoped_statement_is_charged_to_its_invocation_alone_while_it_is_open() {
        let a = begin("queue", "a".into());
        let b = begin("http", "b".into());
        let scope = a.scope();
        d1_statement(Some(&scope), 10, 1, 0);
        d1_statement(Some(&scope), 10, 1, 0);
        d1_statement(None, 10, 1, 0);
        assert_eq!(scope.d1_statements(), 3.0);
        assert_eq!(b.0.usage.borrow().d1_statements, 1.0, "b is not charged a's statements");
        drop(a);
        assert_eq!(scope.d1_statements(), 0.0);
        d1_statement(Some(&scope), 10, 1, 0);
        assert_eq!(b.0.usage.borrow().d1_statements, 2.0, "an ended scope charges every open invocation");
        assert_eq!(budget("d1Statements"), Some(500.0));
        assert_eq!(budget("nothing"), None);
    }

    /// Polls `work` once (it never waits here).
    fn poll_once<F: Future>(work: F) -> Poll<F::Output> {
        let mut work = std::pin::pin!(work);
        work.as_mut().poll(&mut Context::from_waker(std::task::Waker::noop()))
    }

    #[test]
    fn work_run_within_an_invocation_is_charged_to_it_alone_even_unscoped() {
        let a = begin("queue", "a".into());
        let b = begin("http", "b".into());
        let (sa, sb) = (a.scope(), b.scope());
        let done = poll_once(sa.within(async {
            d1_statement(None, 10, 1, 0);
            subrequest();
            assert_eq!(current_d1_statements(), 1.0);
            // Work of another invocation started inside it (a nested handler) is that one's.
            let _ = poll_once(sb.within(async { d1_statement(None, 10, 1, 0) }));
            d1_statement(None, 10, 1, 0);
        }));
        assert!(done.is_ready());
        let (ua, ub) = (*a.0.usage.borrow(), *b.0.usage.borrow());
        assert_eq!((ua.d1_statements, ua.subrequests), (2.0, 1.0));
        assert_eq!((ub.d1_statements, ub.subrequests), (1.0, 0.0));
        assert!(current().is_none(), "no invocation is current once its poll returned");
        assert_eq!(current_d1_statements(), 0.0);
        // Outside any invocation's work: every open one.
        d1_statement(None, 10, 1, 0);
        assert_eq!((a.0.usage.borrow().d1_statements, b.0.usage.borrow().d1_statements), (3.0, 2.0));
    }

    #[test]
    fn statements_fit_up_to_the_limit_and_no_further() {
        let budget = Statements::new(40.0);
        assert!(budget.fits_after(0.0, 40));
        assert!(budget.fits_after(28.0, 12));
        assert!(!budget.fits_after(29.0, 12));
        assert!(!budget.fits_after(41.0, 0));
        // Against the current invocation's own count.
        let a = begin("queue", "a".into());
        let fits = poll_once(a.scope().within(async {
            (0..30).for_each(|_| d1_statement(None, 10, 1, 0));
            (budget.fits(10), budget.fits(11))
        }));
        assert_eq!(fits, Poll::Ready((true, false)));
        assert!(Unbounded.fits(usize::MAX));
    }

    #[test]
    fn usage_max_takes_each_figure_s_larger_value() {
        let mut a = Usage { wall_ms: 5.0, d1_statements: 1.0, ..Usage::default() };
        a.max(&Usage { wall_ms: 2.0, d1_statements: 7.0, ..Usage::default() });
        assert_eq!((a.wall_ms, a.d1_statements), (5.0, 7.0));
    }

    #[test]
    fn http_stages_name_the_route_not_the_repository() {
        assert_eq!(http_label("GET", "/v1/repos/acme/api/search"), "GET /v1/repos/*/*/search");
        assert_eq!(http_label("GET", "/v1/jobs/0f3a9c"), "GET /v1/jobs/*");
        assert_eq!(http_label("POST", "/mcp"), "POST /mcp");
        assert_eq!(http_label("GET", "/health"), "GET /health");
    }
}
