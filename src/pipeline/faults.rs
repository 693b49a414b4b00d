//! Injected faults for the e2e fault suite: compiled only with the `test-hooks` feature and
//! armed only through a test route (served when `EDGERAG_TEST_ROUTES=1`):
//!
//! | route | body | does |
//! | --- | --- | --- |
//! | `POST /__test/faults/index-batch` | `{namespace, failures?}` | the next `failures` index-stage D1 batches of `namespace` fail mid-batch; returns `{namespace, remaining, injected}` |
//!
//! The fault is a statement that fails at run time (SQLite's integer overflow in `abs`) placed in
//! the middle of the real batch, so the earlier statements have run when it fails: what the test
//! proves is that D1 rolls the whole batch back, not that a skipped call wrote nothing.
//! The state lives in the isolate (the fetch and queue handlers share it) and is lost on restart.
use std::collections::HashMap;
use std::sync::Mutex;

use serde::Deserialize;
use worker::{D1PreparedStatement, Env, Request, Response};

use crate::store::{Db, StoreResult};

#[derive(Clone, Copy, Default)]
struct Armed {
    remaining: u32,
    injected: u32,
}

static INDEX_BATCH: Mutex<Option<HashMap<String, Armed>>> = Mutex::new(None);

/// When a fault is armed for `namespace`, puts a failing statement in the middle of `statements`.
pub fn index_batch(db: &Db, namespace: &str, statements: &mut Vec<D1PreparedStatement>) -> StoreResult<()> {
    let mut guard = INDEX_BATCH.lock().unwrap_or_else(|e| e.into_inner());
    let Some(armed) = guard.get_or_insert_with(HashMap::new).get_mut(namespace) else { return Ok(()) };
    if armed.remaining == 0 {
        return Ok(());
    }
    armed.remaining -= 1;
    armed.injected += 1;
    crate::log::info("fault_injected", &[("fault", "index_batch"), ("namespace", namespace)]);
    let failing = db.stmt("SELECT abs(-9223372036854775807 - 1) AS injected_fault", &[])?;
    statements.insert(statements.len() / 2, failing);
    Ok(())
}

#[derive(Deserialize)]
struct ArmBody {
    namespace: String,
    failures: Option<u32>,
}

/// Handles `/__test/faults/*`; `None` when the path is not one of ours or test routes are off.
pub async fn handle(req: &mut Request, env: &Env) -> Option<worker::Result<Response>> {
    if req.path() != "/__test/faults/index-batch" || !crate::vector::test_routes::enabled(env) {
        return None;
    }
    let body: ArmBody = match req.text().await.map(|t| serde_json::from_str(&t)) {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => return Some(error(&e.to_string())),
        Err(e) => return Some(error(&e.to_string())),
    };
    let mut guard = INDEX_BATCH.lock().unwrap_or_else(|e| e.into_inner());
    let armed = guard.get_or_insert_with(HashMap::new).entry(body.namespace.clone()).or_default();
    if let Some(n) = body.failures {
        armed.remaining = n;
    }
    let Armed { remaining, injected } = *armed;
    Some(Response::from_json(
        &serde_json::json!({"namespace": body.namespace, "remaining": remaining, "injected": injected}),
    ))
}

fn error(message: &str) -> worker::Result<Response> {
    Response::from_json(&serde_json::json!({"error": {"code": "INVALID_REQUEST", "message": message}}))
        .map(|r| r.with_status(400))
}
