//! Test-only routes for the vector index and embedder: compiled only with the `test-hooks` feature
//! (`scripts/build-worker.sh --test-hooks`, the e2e / benchmark build) and served only when the
//! worker also runs with `EDGERAG_TEST_ROUTES=1` (the e2e harness sets it):
//!
//! | route | body | does |
//! | --- | --- | --- |
//! | `POST /__test/vectors/suite` | `{prefix?}` | runs the shared VectorIndex suite on the local D1 index |
//! | `POST /__test/vectors/load` | `{namespace, count, dims, seed?, start?}` | upserts `count` deterministic random unit vectors |
//! | `POST /__test/vectors/query` | `{namespace, dims, queries, topK?, seed?, filter?, together?}` | runs queries (`together` at a time through `query_many`), returns the ms of each call |
//! | `POST /__test/vectors/clear` | `{namespace}` | deletes a namespace's local vectors |
//! | `POST /__test/vectors/forget` | `{}` | drops the isolate's in-memory copies (what a new isolate has) |
//! | `POST /__test/vectors/prepare` | `{namespace, dims}` | brings the namespace's stored snapshot to its generation (what a job's end does) |
//! | `POST /__test/vectors/sql` | `{namespace, sql, params?}` | runs one statement on the namespace's database, past the index (as another writer would) |
//! | `POST /__test/vectors/nearest` | `{namespace, text, topK?, filter?}` | embeds `text` with the configured embedder and queries |
//! | `POST /__test/embed` | `{texts}` | embeds through the D1 cache, returns vectors and cache stats |
use edgerag_core::vector::testing::run_suite;
use edgerag_core::vector::{VectorFilter, VectorIndex, VectorMetadata, VectorQuery, VectorRecord};
use serde::Deserialize;
use worker::{Env, Request, Response};

use super::LocalD1Index;
use crate::store::Stores;

/// Whether test routes are on (`EDGERAG_TEST_ROUTES=1`).
pub fn enabled(env: &Env) -> bool {
    crate::bindings::var(env, "EDGERAG_TEST_ROUTES").is_some_and(|v| v.trim() == "1" || v.trim() == "true")
}

/// Handles a test route; `None` when the path is not one of ours or test routes are off.
pub async fn handle(req: &mut Request, env: &Env) -> Option<worker::Result<Response>> {
    let path = req.path();
    const OURS: [&str; 9] = [
        "/__test/vectors/forget",
        "/__test/vectors/prepare",
        "/__test/vectors/suite",
        "/__test/vectors/load",
        "/__test/vectors/query",
        "/__test/vectors/clear",
        "/__test/vectors/sql",
        "/__test/vectors/nearest",
        "/__test/embed",
    ];
    // Only our own paths: the body of any other test route is its handler's to read.
    if !OURS.contains(&path.as_str()) || !enabled(env) {
        return None;
    }
    let body: serde_json::Value = match req.text().await {
        Ok(t) if t.trim().is_empty() => serde_json::json!({}),
        Ok(t) => match serde_json::from_str(&t) {
            Ok(v) => v,
            Err(e) => return Some(error(400, "INVALID_JSON", &e.to_string())),
        },
        Err(e) => return Some(error(400, "INVALID_REQUEST", &e.to_string())),
    };
    let result = match path.as_str() {
        "/__test/vectors/suite" => suite(env, body).await,
        "/__test/vectors/load" => load(env, body).await,
        "/__test/vectors/query" => query(env, body).await,
        "/__test/vectors/clear" => clear(env, body).await,
        "/__test/vectors/forget" => Ok(serde_json::json!({"forgotten": super::local::forget_copies()})),
        "/__test/vectors/prepare" => prepare(env, body).await,
        "/__test/vectors/sql" => sql(env, body).await,
        "/__test/vectors/nearest" => nearest(env, body).await,
        "/__test/embed" => embed(env, body).await,
        _ => return None,
    };
    Some(match result {
        Ok(v) => Response::from_json(&v),
        Err((status, code, message)) => error(status, code, &message),
    })
}

type RouteResult = Result<serde_json::Value, (u16, &'static str, String)>;

fn error(status: u16, code: &str, message: &str) -> worker::Result<Response> {
    Response::from_json(&serde_json::json!({"error": {"code": code, "message": message}}))
        .map(|r| r.with_status(status))
}

fn bad(e: impl std::fmt::Display) -> (u16, &'static str, String) {
    (400, "INVALID_REQUEST", e.to_string())
}

fn failed(code: &'static str, e: impl std::fmt::Display) -> (u16, &'static str, String) {
    (500, code, e.to_string())
}

fn vector_failed(e: edgerag_core::vector::VectorError) -> (u16, &'static str, String) {
    let status = if e.is_retryable() { 500 } else { 400 };
    (status, e.code(), e.to_string())
}

fn stores(env: &Env) -> Result<Stores, (u16, &'static str, String)> {
    Stores::from_env(env).map_err(|e| failed("NO_DB", e))
}

/// Bytes of wasm linear memory: it only grows, so this is the peak heap of this isolate so far.
fn wasm_memory_bytes() -> Option<u64> {
    #[cfg(target_arch = "wasm32")]
    {
        Some(core::arch::wasm32::memory_size(0) as u64 * 65536)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        None
    }
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

async fn suite(env: &Env, body: serde_json::Value) -> RouteResult {
    let prefix = body.get("prefix").and_then(|p| p.as_str()).unwrap_or("suite").to_string();
    let stores = stores(env)?;
    let started = now_ms();
    // Optional: `cacheBytes` (0 = always scan D1) and `pageRows`, to run the suite on every path.
    let cache_bytes = body.get("cacheBytes").and_then(|v| v.as_u64()).map(|v| v as usize);
    let page_rows = body.get("pageRows").and_then(|v| v.as_u64()).map(|v| v as usize);
    let make = |dims| {
        let mut index = LocalD1Index::new(stores.clone(), dims);
        if let Some(bytes) = cache_bytes {
            index = index.with_cache_bytes(bytes);
        }
        if let Some(rows) = page_rows {
            index = index.with_page_rows(rows);
        }
        index
    };
    let report = run_suite(make, &prefix).await;
    let mut v = serde_json::to_value(&report).map_err(|e| failed("INTERNAL", e))?;
    v["ms"] = serde_json::json!(now_ms() - started);
    Ok(v)
}

/// xorshift64*: deterministic vectors for loads and queries.
struct Rng(u64);
impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((x >> 11) as f64 / (1u64 << 53) as f64) as f32 * 2.0 - 1.0
    }
    fn unit(&mut self, dims: usize) -> Vec<f32> {
        let mut v: Vec<f32> = (0..dims).map(|_| self.next_f32()).collect();
        let n = edgerag_core::vector::topk::norm(&v);
        if n > 0.0 {
            v.iter_mut().for_each(|x| *x /= n);
        }
        v
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LoadBody {
    namespace: String,
    count: usize,
    dims: usize,
    #[serde(default = "one")]
    seed: u64,
    #[serde(default)]
    start: usize,
}

fn one() -> u64 {
    1
}

const LANGS: [&str; 5] = ["rust", "python", "typescript", "go", "markdown"];

async fn load(env: &Env, body: serde_json::Value) -> RouteResult {
    let b: LoadBody = serde_json::from_value(body).map_err(bad)?;
    if b.count > 5_000 || b.dims == 0 || b.dims > edgerag_core::vector::MAX_DIMS {
        return Err(bad("count ≤ 5000 per call, dims in 1..=1536"));
    }
    let index = LocalD1Index::new(stores(env)?, b.dims);
    let mut rng = Rng(b.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(b.start as u64) | 1);
    let records: Vec<VectorRecord> = (b.start..b.start + b.count)
        .map(|i| VectorRecord {
            id: format!("vec-{i:08}"),
            values: rng.unit(b.dims),
            metadata: VectorMetadata {
                path: format!("dir{}/file{}.txt", i % 20, i),
                language: LANGS[i % LANGS.len()].to_string(),
                chunk_type: "text".into(),
                symbol: None,
                start_line: 1,
                end_line: 10,
                chunk_hash: format!("{i:064x}"),
                tags: if i % 10 == 0 { vec!["ten".into()] } else { vec![] },
            },
        })
        .collect();
    let started = now_ms();
    index.upsert(&b.namespace, &records).await.map_err(vector_failed)?;
    Ok(
        serde_json::json!({"inserted": records.len(), "ms": now_ms() - started, "wasmMemoryBytes": wasm_memory_bytes()}),
    )
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct QueryBody {
    namespace: String,
    dims: usize,
    #[serde(default = "one_usize")]
    queries: usize,
    #[serde(default = "ten")]
    top_k: usize,
    #[serde(default = "one")]
    seed: u64,
    #[serde(default)]
    filter: VectorFilter,
    /// Memory for the in-memory copies (default: `LOCAL_INDEX_CACHE_MB`; 0 = always scan D1).
    #[serde(default)]
    cache_bytes: Option<usize>,
    /// Queries per call: above 1, each call is one `query_many` of this many queries.
    #[serde(default = "one_usize")]
    together: usize,
}

fn one_usize() -> usize {
    1
}
fn ten() -> usize {
    10
}

async fn query(env: &Env, body: serde_json::Value) -> RouteResult {
    let b: QueryBody = serde_json::from_value(body).map_err(bad)?;
    if b.queries == 0 || b.queries > 200 {
        return Err(bad("queries must be in 1..=200"));
    }
    // The deployment's budget (`LOCAL_INDEX_CACHE_MB`) unless the body sets one.
    let budget = super::local_cache_bytes(env).map_err(vector_failed)?;
    let mut index = LocalD1Index::new(stores(env)?, b.dims).with_cache_bytes(budget);
    if let Some(bytes) = b.cache_bytes {
        index = index.with_cache_bytes(bytes);
    }
    let mut rng = Rng(b.seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1);
    let memory_before = wasm_memory_bytes();
    let mut ms = Vec::with_capacity(b.queries);
    let mut paths = Vec::with_capacity(b.queries);
    let mut last = Vec::new();
    if !(1..=16).contains(&b.together) {
        return Err(bad("together must be in 1..=16"));
    }
    for _ in 0..b.queries {
        let qs: Vec<VectorQuery> = (0..b.together)
            .map(|_| VectorQuery { vector: rng.unit(b.dims), top_k: b.top_k, filter: b.filter.clone() })
            .collect();
        let started = now_ms();
        if b.together == 1 {
            let (matches, path) = index.query_traced(&b.namespace, &qs[0]).await.map_err(vector_failed)?;
            paths.push(format!("{path:?}").to_lowercase());
            last = matches;
        } else {
            for answer in index.query_many(&b.namespace, &qs).await {
                last = answer.map_err(vector_failed)?;
            }
            paths.push("many".to_string());
        }
        ms.push(now_ms() - started);
    }
    Ok(serde_json::json!({
        "ms": ms,
        "cache": paths,
        "lastMatches": last.iter().map(|m| serde_json::json!({"id": m.id, "score": m.score})).collect::<Vec<_>>(),
        "wasmMemoryBytesBefore": memory_before,
        "wasmMemoryBytes": wasm_memory_bytes(),
    }))
}

async fn clear(env: &Env, body: serde_json::Value) -> RouteResult {
    let namespace =
        body.get("namespace").and_then(|n| n.as_str()).ok_or_else(|| bad("namespace is required"))?;
    let db = stores(env)?.for_namespace(namespace).await.map_err(|e| failed("D1", e))?;
    let changes = db
        .run("DELETE FROM local_vectors WHERE namespace = ?1", &crate::store::args![namespace])
        .await
        .map_err(|e| failed("D1", e))?;
    Ok(serde_json::json!({"deleted": changes}))
}

async fn prepare(env: &Env, body: serde_json::Value) -> RouteResult {
    let namespace =
        body.get("namespace").and_then(|n| n.as_str()).ok_or_else(|| bad("namespace is required"))?;
    let dims = body.get("dims").and_then(|n| n.as_u64()).ok_or_else(|| bad("dims is required"))? as usize;
    let budget = super::local_cache_bytes(env).map_err(vector_failed)?;
    let index = LocalD1Index::new(stores(env)?, dims).with_cache_bytes(budget);
    // `statements`: the request's D1 statement budget (parts beyond it are left).
    let state = match body.get("statements").and_then(|n| n.as_f64()) {
        Some(limit) => index.prepare_snapshot(namespace, &crate::ledger::Statements::new(limit)).await,
        None => index.prepare_snapshot(namespace, &crate::ledger::Unbounded).await,
    }
    .map_err(vector_failed)?;
    Ok(serde_json::json!({"state": state.map(|s| format!("{s:?}").to_lowercase())}))
}

#[derive(Deserialize)]
struct SqlBody {
    namespace: String,
    sql: String,
    #[serde(default)]
    params: Vec<String>,
}

async fn sql(env: &Env, body: serde_json::Value) -> RouteResult {
    let b: SqlBody = serde_json::from_value(body).map_err(bad)?;
    let db = stores(env)?.for_namespace(&b.namespace).await.map_err(|e| failed("D1", e))?;
    let args: Vec<crate::store::Arg<'_>> = b.params.iter().map(|p| crate::store::Arg::Text(p)).collect();
    let changes = db.run(&b.sql, &args).await.map_err(|e| failed("D1", e))?;
    Ok(serde_json::json!({"changes": changes}))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NearestBody {
    namespace: String,
    text: String,
    #[serde(default = "ten")]
    top_k: usize,
    #[serde(default)]
    filter: VectorFilter,
}

async fn nearest(env: &Env, body: serde_json::Value) -> RouteResult {
    let b: NearestBody = serde_json::from_value(body).map_err(bad)?;
    let embedder = crate::embed::cached_embedder_from_env(env).map_err(|e| failed(e.code(), e))?;
    let vectors = edgerag_core::embed::Embedder::embed(&embedder, std::slice::from_ref(&b.text))
        .await
        .map_err(|e| failed(e.code(), e))?;
    let vector = vectors.into_iter().next().ok_or_else(|| failed("EMBED", "no vector"))?;
    let index = super::vector_index_from_env(env).map_err(vector_failed)?;
    let matches = index
        .query(&b.namespace, &VectorQuery { vector, top_k: b.top_k, filter: b.filter })
        .await
        .map_err(vector_failed)?;
    Ok(serde_json::json!({ "matches": matches, "index": index.kind() }))
}

async fn embed(env: &Env, body: serde_json::Value) -> RouteResult {
    let texts: Vec<String> = body
        .get("texts")
        .cloned()
        .map(serde_json::from_value)
        .transpose()
        .map_err(bad)?
        .ok_or_else(|| bad("texts is required"))?;
    let embedder = crate::embed::embedder_from_env(env).map_err(|e| failed(e.code(), e))?;
    let cache = crate::embed::embedding_cache_from_env(env).map_err(|e| failed(e.code(), e))?;
    let info = edgerag_core::embed::Embedder::info(&embedder);
    match edgerag_core::embed::embed_cached(&embedder, &cache, &texts).await {
        Ok((vectors, stats)) => Ok(serde_json::json!({"vectors": vectors, "stats": stats, "embedder": info})),
        Err(e) => Err((502, e.code(), e.to_string())),
    }
}
