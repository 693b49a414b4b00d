//! The one behavioural suite every [`VectorIndex`] implementation runs (like tantivy's `Directory`
//! tests): natively against [`super::InMemoryVectorIndex`], in workerd against the D1 local index
//! (the worker's test route), and against Vectorize when a real binding exists.
//!
//! Cases use namespaces under a caller-chosen `prefix` and delete what they wrote, so the suite can
//! run against a persistent store again and again. Each case reports pass or the first failed
//! check; nothing panics.
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use serde::Serialize;

use super::{cosine, VectorError, VectorFilter, VectorIndex, VectorMetadata, VectorQuery, VectorRecord};

/// Polls a future to completion on this thread. For futures that never wait on anything external
/// (the in-memory implementations); it spins on `Pending`.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::yield_now();
    }
}

#[derive(Debug, Default, Serialize)]
pub struct SuiteReport {
    pub implementation: String,
    pub passed: Vec<String>,
    pub failed: Vec<CaseFailure>,
}

#[derive(Debug, Serialize)]
pub struct CaseFailure {
    pub case: String,
    pub error: String,
}

/// The dimension every case uses.
pub const SUITE_DIMS: usize = 4;

type CaseResult = Result<(), String>;

macro_rules! check {
    ($cond:expr, $($msg:tt)+) => {
        let ok: bool = $cond;
        if !ok {
            return Err(format!($($msg)+));
        }
    };
}

/// Runs every case. `make(dims)` returns an index of that dimension over the store under test.
pub async fn run_suite<I, F>(make: F, prefix: &str) -> SuiteReport
where
    I: VectorIndex,
    F: Fn(usize) -> I,
{
    let index = make(SUITE_DIMS);
    let mut report = SuiteReport { implementation: index.kind().to_string(), ..SuiteReport::default() };
    macro_rules! case {
        ($name:ident) => {{
            let ns = format!("{prefix}:{}", stringify!($name));
            let result = $name(&index, &ns).await;
            // Best-effort cleanup of everything a case may have written.
            let _ = index.delete_by_ids(&ns, &all_ids()).await;
            let _ = index.delete_by_ids(&format!("{ns}:other"), &all_ids()).await;
            match result {
                Ok(()) => report.passed.push(stringify!($name).to_string()),
                Err(error) => report.failed.push(CaseFailure { case: stringify!($name).to_string(), error }),
            }
        }};
    }
    case!(empty_index);
    case!(upsert_then_get_round_trips);
    case!(upsert_replaces_by_id);
    case!(duplicate_ids_in_one_batch_last_wins);
    case!(delete_removes_only_given_ids);
    case!(namespaces_are_isolated);
    case!(ranks_by_cosine);
    case!(ties_in_stable_order);
    case!(top_k_limits);
    case!(filter_by_language);
    case!(filter_by_path_prefix);
    case!(filter_by_tag);
    case!(filters_combine_and_apply_before_top_k);
    case!(path_globs_apply_before_top_k_where_supported);
    case!(dimension_mismatch_rejected);
    case!(invalid_records_rejected_whole_batch);
    case!(large_batch_and_exact_ranking);
    case!(many_queries_in_one_call_answer_as_each_alone);
    report
}

const LARGE: usize = 1_234;

/// Every id a case may use (for cleanup).
fn all_ids() -> Vec<String> {
    let mut ids: Vec<String> =
        ["a", "b", "c", "d", "e", "f", "g", "x", "y", "z"].iter().map(|s| s.to_string()).collect();
    ids.extend((0..LARGE).map(large_id));
    ids
}

fn large_id(i: usize) -> String {
    format!("v{i:05}")
}

fn meta(path: &str, language: &str, tags: &[&str]) -> VectorMetadata {
    VectorMetadata {
        path: path.to_string(),
        language: language.to_string(),
        chunk_type: "code-function".to_string(),
        symbol: Some(format!("sym_{}", path.len())),
        start_line: 3,
        end_line: 9,
        chunk_hash: format!("hash-of-{path}"),
        tags: tags.iter().map(|t| t.to_string()).collect(),
    }
}

fn rec(id: &str, values: [f32; SUITE_DIMS], m: VectorMetadata) -> VectorRecord {
    VectorRecord { id: id.to_string(), values: values.to_vec(), metadata: m }
}

fn q(vector: [f32; SUITE_DIMS], top_k: usize) -> VectorQuery {
    VectorQuery { vector: vector.to_vec(), top_k, filter: VectorFilter::default() }
}

fn ids_of(matches: &[super::VectorMatch]) -> Vec<&str> {
    matches.iter().map(|m| m.id.as_str()).collect()
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn err<T: std::fmt::Debug>(r: Result<T, VectorError>, what: &str) -> Result<T, String> {
    r.map_err(|e| format!("{what}: {e}"))
}

async fn empty_index<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    check!(ix.dims() == SUITE_DIMS, "dims() is {}, expected {SUITE_DIMS}", ix.dims());
    let m = err(ix.query(ns, &q([1.0, 0.0, 0.0, 0.0], 10)).await, "query")?;
    check!(m.is_empty(), "empty namespace returned {m:?}");
    let g = err(ix.get_by_ids(ns, &s(&["a", "b"])).await, "get")?;
    check!(g.is_empty(), "get on empty namespace returned {g:?}");
    err(ix.delete_by_ids(ns, &s(&["a"])).await, "delete of a missing id")?;
    err(ix.upsert(ns, &[]).await, "empty upsert")?;
    Ok(())
}

async fn upsert_then_get_round_trips<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    let recs = vec![
        rec("a", [1.0, 0.0, 0.0, 0.0], meta("src/a.rs", "rust", &["api"])),
        rec("b", [0.25, -0.5, 1e-7, 3.5], meta("docs/ü.md", "markdown", &[])),
        rec(
            "c",
            [0.0, 0.0, 1.0, 0.0],
            VectorMetadata { symbol: None, ..meta("c.py", "python", &["x", "y"]) },
        ),
    ];
    err(ix.upsert(ns, &recs).await, "upsert")?;
    let got = err(ix.get_by_ids(ns, &s(&["c", "missing", "a", "b"])).await, "get")?;
    check!(got.len() == 3, "expected 3 records, got {}", got.len());
    check!(
        got[0] == recs[2] && got[1] == recs[0] && got[2] == recs[1],
        "records differ or out of order: {got:?}"
    );
    Ok(())
}

async fn upsert_replaces_by_id<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    err(ix.upsert(ns, &[rec("a", [1.0, 0.0, 0.0, 0.0], meta("old.rs", "rust", &[]))]).await, "upsert 1")?;
    err(ix.upsert(ns, &[rec("b", [0.0, 1.0, 0.0, 0.0], meta("b.rs", "rust", &[]))]).await, "upsert 2")?;
    let new = rec("a", [0.0, 0.0, 1.0, 0.0], meta("new.rs", "go", &["t"]));
    err(ix.upsert(ns, std::slice::from_ref(&new)).await, "upsert 3")?;
    let got = err(ix.get_by_ids(ns, &s(&["a"])).await, "get")?;
    check!(got == vec![new], "replacement not stored: {got:?}");
    let m = err(ix.query(ns, &q([0.0, 0.0, 1.0, 0.0], 10)).await, "query")?;
    check!(ids_of(&m) == ["a", "b"], "expected [a, b] once each, got {:?}", ids_of(&m));
    check!(m[0].metadata.path == "new.rs", "query returned stale metadata {:?}", m[0].metadata);
    check!((m[0].score - 1.0).abs() < 1e-5, "replaced vector scores {}", m[0].score);
    Ok(())
}

async fn duplicate_ids_in_one_batch_last_wins<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    let batch = vec![
        rec("a", [1.0, 0.0, 0.0, 0.0], meta("first.rs", "rust", &[])),
        rec("a", [0.0, 1.0, 0.0, 0.0], meta("second.rs", "rust", &[])),
    ];
    err(ix.upsert(ns, &batch).await, "upsert")?;
    let got = err(ix.get_by_ids(ns, &s(&["a"])).await, "get")?;
    check!(got.len() == 1 && got[0] == batch[1], "expected the last duplicate, got {got:?}");
    Ok(())
}

async fn delete_removes_only_given_ids<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    let recs = vec![
        rec("a", [1.0, 0.0, 0.0, 0.0], meta("a", "rust", &[])),
        rec("b", [0.9, 0.1, 0.0, 0.0], meta("b", "rust", &[])),
        rec("c", [0.8, 0.2, 0.0, 0.0], meta("c", "rust", &[])),
    ];
    err(ix.upsert(ns, &recs).await, "upsert")?;
    err(ix.delete_by_ids(ns, &s(&["b", "nope"])).await, "delete")?;
    let m = err(ix.query(ns, &q([1.0, 0.0, 0.0, 0.0], 10)).await, "query")?;
    check!(ids_of(&m) == ["a", "c"], "after delete expected [a, c], got {:?}", ids_of(&m));
    let got = err(ix.get_by_ids(ns, &s(&["a", "b", "c"])).await, "get")?;
    check!(got.iter().map(|r| r.id.as_str()).collect::<Vec<_>>() == ["a", "c"], "get after delete: {got:?}");
    err(ix.delete_by_ids(ns, &s(&["a", "c"])).await, "delete rest")?;
    let m = err(ix.query(ns, &q([1.0, 0.0, 0.0, 0.0], 10)).await, "query")?;
    check!(m.is_empty(), "namespace not empty after deleting everything: {m:?}");
    Ok(())
}

async fn namespaces_are_isolated<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    let other = format!("{ns}:other");
    err(ix.upsert(ns, &[rec("a", [1.0, 0.0, 0.0, 0.0], meta("mine.rs", "rust", &[]))]).await, "upsert ns")?;
    err(
        ix.upsert(&other, &[rec("a", [0.0, 1.0, 0.0, 0.0], meta("theirs.rs", "rust", &[]))]).await,
        "upsert other",
    )?;
    err(
        ix.upsert(&other, &[rec("b", [1.0, 0.0, 0.0, 0.0], meta("b.rs", "rust", &[]))]).await,
        "upsert other b",
    )?;
    let m = err(ix.query(ns, &q([1.0, 0.0, 0.0, 0.0], 10)).await, "query ns")?;
    check!(ids_of(&m) == ["a"] && m[0].metadata.path == "mine.rs", "ns saw foreign vectors: {m:?}");
    let g = err(ix.get_by_ids(ns, &s(&["a", "b"])).await, "get ns")?;
    check!(g.len() == 1 && g[0].metadata.path == "mine.rs", "get crossed namespaces: {g:?}");
    err(ix.delete_by_ids(ns, &s(&["a"])).await, "delete ns")?;
    let g = err(ix.get_by_ids(&other, &s(&["a"])).await, "get other")?;
    check!(g.len() == 1 && g[0].metadata.path == "theirs.rs", "delete in ns removed other's vector: {g:?}");
    Ok(())
}

async fn ranks_by_cosine<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    let recs = vec![
        rec("a", [1.0, 0.0, 0.0, 0.0], meta("a", "rust", &[])),
        rec("b", [10.0, 10.0, 0.0, 0.0], meta("b", "rust", &[])),
        rec("c", [0.0, 1.0, 0.0, 0.0], meta("c", "rust", &[])),
        rec("d", [-1.0, 0.0, 0.0, 0.0], meta("d", "rust", &[])),
        rec("e", [3.0, 0.0, 4.0, 0.0], meta("e", "rust", &[])),
    ];
    err(ix.upsert(ns, &recs).await, "upsert")?;
    let query = [2.0, 0.0, 0.0, 0.0];
    let m = err(ix.query(ns, &q(query, 5)).await, "query")?;
    check!(ids_of(&m) == ["a", "b", "e", "c", "d"], "order by cosine wrong: {:?}", ids_of(&m));
    for (mm, r) in m.iter().zip(["a", "b", "e", "c", "d"]) {
        let want = recs.iter().find(|x| x.id == r).map(|x| cosine(&query, &x.values)).unwrap_or(f32::NAN);
        check!((mm.score - want).abs() < 1e-5, "score of {} is {}, cosine is {want}", mm.id, mm.score);
    }
    check!((m[0].score - 1.0).abs() < 1e-6, "magnitude must not matter: {}", m[0].score);
    check!(m[1].metadata == recs[1].metadata, "match metadata differs: {:?}", m[1].metadata);
    Ok(())
}

async fn ties_in_stable_order<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    // Inserted in reverse id order, identical vectors: ties must come back id-ascending.
    let recs: Vec<VectorRecord> = ["g", "f", "e", "d", "c"]
        .iter()
        .map(|id| rec(id, [0.5, 0.5, 0.0, 0.0], meta(id, "rust", &[])))
        .collect();
    err(ix.upsert(ns, &recs).await, "upsert")?;
    err(ix.upsert(ns, &[rec("z", [1.0, 0.0, 0.0, 0.0], meta("z", "rust", &[]))]).await, "upsert z")?;
    let m = err(ix.query(ns, &q([0.5, 0.5, 0.0, 0.0], 4)).await, "query")?;
    check!(ids_of(&m) == ["c", "d", "e", "f"], "ties not in id order: {:?}", ids_of(&m));
    let m2 = err(ix.query(ns, &q([0.5, 0.5, 0.0, 0.0], 4)).await, "query again")?;
    check!(m == m2, "same query gave different answers");
    // A zero query scores every vector 0: the smallest ids (asked after an index may have built
    // its in-memory state).
    let zero = err(ix.query(ns, &q([0.0; SUITE_DIMS], 3)).await, "zero query")?;
    check!(
        ids_of(&zero) == ["c", "d", "e"] && zero.iter().all(|m| m.score == 0.0),
        "a zero query gave {:?}",
        zero.iter().map(|m| (&m.id, m.score)).collect::<Vec<_>>()
    );
    Ok(())
}

async fn top_k_limits<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    let recs: Vec<VectorRecord> = ["a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, id)| rec(id, [1.0, i as f32, 0.0, 0.0], meta(id, "rust", &[])))
        .collect();
    err(ix.upsert(ns, &recs).await, "upsert")?;
    let m = err(ix.query(ns, &q([1.0, 0.0, 0.0, 0.0], 2)).await, "topK 2")?;
    check!(ids_of(&m) == ["a", "b"], "topK 2 gave {:?}", ids_of(&m));
    let m = err(ix.query(ns, &q([1.0, 0.0, 0.0, 0.0], 100)).await, "topK 100")?;
    check!(m.len() == 3, "topK 100 over 3 vectors gave {}", m.len());
    for bad in [0, 101, 1000] {
        let r = ix.query(ns, &q([1.0, 0.0, 0.0, 0.0], bad)).await;
        check!(matches!(r, Err(VectorError::Invalid(_))), "topK {bad} must be rejected, got {r:?}");
    }
    Ok(())
}

async fn filter_fixture<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    let recs = vec![
        rec("a", [1.0, 0.0, 0.0, 0.0], meta("src/a.rs", "rust", &["api", "core"])),
        rec("b", [0.9, 0.1, 0.0, 0.0], meta("src/web/b.ts", "typescript", &["web"])),
        rec("c", [0.8, 0.2, 0.0, 0.0], meta("srcx/c.rs", "rust", &["apis"])),
        rec("d", [0.7, 0.3, 0.0, 0.0], meta("lib/src/d.py", "python", &["api"])),
        rec("e", [0.6, 0.4, 0.0, 0.0], meta("src/%_odd/e.rs", "rust", &[])),
        rec("f", [0.5, 0.5, 0.0, 0.0], meta("文档/f.md", "markdown", &["api"])),
    ];
    err(ix.upsert(ns, &recs).await, "upsert")
}

async fn filtered<I: VectorIndex>(
    ix: &I,
    ns: &str,
    filter: VectorFilter,
    top_k: usize,
) -> Result<Vec<String>, String> {
    let query = VectorQuery { vector: vec![1.0, 0.0, 0.0, 0.0], top_k, filter: filter.clone() };
    let m = err(ix.query(ns, &query).await, &format!("query {filter:?}"))?;
    Ok(m.into_iter().map(|m| m.id).collect())
}

async fn filter_by_language<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    filter_fixture(ix, ns).await?;
    let f = |l: &[&str]| VectorFilter { languages: s(l), ..VectorFilter::default() };
    let got = filtered(ix, ns, f(&["rust"]), 10).await?;
    check!(got == ["a", "c", "e"], "language rust: {got:?}");
    let got = filtered(ix, ns, f(&["python", "typescript"]), 10).await?;
    check!(got == ["b", "d"], "language in [python, typescript]: {got:?}");
    let got = filtered(ix, ns, f(&["cobol"]), 10).await?;
    check!(got.is_empty(), "unknown language: {got:?}");
    Ok(())
}

async fn filter_by_path_prefix<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    filter_fixture(ix, ns).await?;
    let f = |p: &str| VectorFilter { path_prefix: Some(p.to_string()), ..VectorFilter::default() };
    let got = filtered(ix, ns, f("src/"), 10).await?;
    check!(got == ["a", "b", "e"], "prefix src/: {got:?}");
    let got = filtered(ix, ns, f("src"), 10).await?;
    check!(got == ["a", "b", "c", "e"], "prefix src: {got:?}");
    let got = filtered(ix, ns, f("src/%"), 10).await?;
    check!(got == ["e"], "prefix with LIKE metacharacters: {got:?}");
    let got = filtered(ix, ns, f("文档/"), 10).await?;
    check!(got == ["f"], "non-ASCII prefix: {got:?}");
    let got = filtered(ix, ns, f("src/a.rs"), 10).await?;
    check!(got == ["a"], "whole path as prefix: {got:?}");
    Ok(())
}

async fn filter_by_tag<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    filter_fixture(ix, ns).await?;
    let f = |t: &str| VectorFilter { tag: Some(t.to_string()), ..VectorFilter::default() };
    let got = filtered(ix, ns, f("api"), 10).await?;
    check!(got == ["a", "d", "f"], "tag api (exact, not apis): {got:?}");
    let got = filtered(ix, ns, f("core"), 10).await?;
    check!(got == ["a"], "second tag of a vector: {got:?}");
    let got = filtered(ix, ns, f("ap"), 10).await?;
    check!(got.is_empty(), "tag substring must not match: {got:?}");
    Ok(())
}

async fn filters_combine_and_apply_before_top_k<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    filter_fixture(ix, ns).await?;
    let all = VectorFilter {
        languages: s(&["rust", "python"]),
        path_prefix: Some("src/".into()),
        tag: Some("api".into()),
        path_globs: Vec::new(),
    };
    let got = filtered(ix, ns, all, 10).await?;
    check!(got == ["a"], "language + prefix + tag: {got:?}");
    // The best matches overall are a, b, c; filtered to markdown only f qualifies: topK counts
    // after filtering, so topK 1 must still find it.
    let md = VectorFilter { languages: s(&["markdown"]), ..VectorFilter::default() };
    let got = filtered(ix, ns, md, 1).await?;
    check!(got == ["f"], "filter applied after topK: {got:?}");
    let got =
        filtered(ix, ns, VectorFilter { tag: Some("api".into()), ..VectorFilter::default() }, 2).await?;
    check!(got == ["a", "d"], "tag then topK 2: {got:?}");
    Ok(())
}

/// An index that applies path globs ranks only the matching vectors (top K counts after them);
/// one that does not filters by the prefix alone and leaves the globs to its caller.
async fn path_globs_apply_before_top_k_where_supported<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    filter_fixture(ix, ns).await?;
    let exact = ix.applies_path_globs();
    let g = |globs: &[&str], prefix: Option<&str>| VectorFilter {
        path_prefix: prefix.map(str::to_string),
        path_globs: s(globs),
        ..VectorFilter::default()
    };
    // The best two overall are a and b; `*.rs` (any folder) leaves a, c, e.
    let got = filtered(ix, ns, g(&["*.rs"], None), 2).await?;
    let want: &[&str] = if exact { &["a", "c"] } else { &["a", "b"] };
    check!(got == want, "`*.rs`, topK 2 (exact: {exact}): {got:?}");
    let got = filtered(ix, ns, g(&["src/**/*.rs"], Some("src/")), 10).await?;
    let want: &[&str] = if exact { &["a", "e"] } else { &["a", "b", "e"] };
    check!(got == want, "`src/**/*.rs` with its prefix (exact: {exact}): {got:?}");
    let got = filtered(ix, ns, g(&["{lib,文档}/**", "nothing/*"], None), 1).await?;
    let want: &[&str] = if exact { &["d"] } else { &["a"] };
    check!(got == want, "alternatives, two globs, topK 1 (exact: {exact}): {got:?}");
    let got = filtered(ix, ns, g(&[r"src/%\_odd/*"], Some("src/%")), 10).await?;
    check!(got == ["e"], "an escaped `_` and a `%` are plain characters: {got:?}");
    if exact {
        let got = filtered(ix, ns, g(&["src/[a"], None), 10).await?;
        check!(got.is_empty(), "a glob that does not compile matches nothing: {got:?}");
    }
    Ok(())
}

async fn dimension_mismatch_rejected<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    let good = rec("a", [1.0, 0.0, 0.0, 0.0], meta("a", "rust", &[]));
    let bad = VectorRecord { id: "b".into(), values: vec![1.0, 0.0, 0.0], metadata: meta("b", "rust", &[]) };
    let r = ix.upsert(ns, &[good.clone(), bad]).await;
    check!(
        r == Err(VectorError::DimensionMismatch { expected: SUITE_DIMS, got: 3 }),
        "upsert with a 3-dim vector: {r:?}"
    );
    let got = err(ix.get_by_ids(ns, &s(&["a", "b"])).await, "get")?;
    check!(got.is_empty(), "a rejected batch must write nothing, found {got:?}");
    err(ix.upsert(ns, &[good]).await, "upsert good")?;
    let query = VectorQuery { vector: vec![1.0; 5], top_k: 1, filter: VectorFilter::default() };
    let r = ix.query(ns, &query).await;
    check!(r == Err(VectorError::DimensionMismatch { expected: SUITE_DIMS, got: 5 }), "5-dim query: {r:?}");
    Ok(())
}

async fn invalid_records_rejected_whole_batch<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    let good = rec("a", [1.0, 0.0, 0.0, 0.0], meta("a", "rust", &[]));
    let cases: Vec<(&str, VectorRecord)> = vec![
        ("empty id", rec("", [1.0, 0.0, 0.0, 0.0], meta("x", "rust", &[]))),
        ("65-byte id", rec(&"x".repeat(65), [1.0, 0.0, 0.0, 0.0], meta("x", "rust", &[]))),
        ("control character in id", rec("b\u{1f}c", [1.0, 0.0, 0.0, 0.0], meta("x", "rust", &[]))),
        ("NaN value", rec("b", [f32::NAN, 0.0, 0.0, 0.0], meta("x", "rust", &[]))),
        ("tag with comma", rec("b", [1.0, 0.0, 0.0, 0.0], meta("x", "rust", &["a,b"]))),
        ("metadata over 10 KiB", rec("b", [1.0, 0.0, 0.0, 0.0], meta(&"p".repeat(11 * 1024), "rust", &[]))),
    ];
    for (what, bad) in cases {
        let r = ix.upsert(ns, &[good.clone(), bad]).await;
        check!(matches!(r, Err(VectorError::Invalid(_))), "{what} must be Invalid, got {r:?}");
    }
    let got = err(ix.get_by_ids(ns, &s(&["a", "b"])).await, "get")?;
    check!(got.is_empty(), "rejected batches wrote {got:?}");
    let ok = rec(&"y".repeat(64), [1.0, 0.0, 0.0, 0.0], meta("x", "rust", &[]));
    err(ix.upsert(ns, std::slice::from_ref(&ok)).await, "64-byte id is allowed")?;
    err(ix.delete_by_ids(ns, &[ok.id]).await, "delete 64-byte id")?;
    Ok(())
}

/// `LARGE` deterministic random records over three languages, seven directories and one tag, and
/// a generator of further random vectors (queries).
fn large_records() -> (Vec<VectorRecord>, impl FnMut() -> Vec<f32>) {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        ((seed >> 11) as f64 / (1u64 << 53) as f64) as f32 * 2.0 - 1.0
    };
    let langs = ["rust", "python", "go"];
    let recs: Vec<VectorRecord> = (0..LARGE)
        .map(|i| VectorRecord {
            id: large_id(i),
            values: (0..SUITE_DIMS).map(|_| next()).collect(),
            metadata: meta(
                &format!("dir{}/f{i}.x", i % 7),
                langs[i % 3],
                if i % 5 == 0 { &["five"] } else { &[] },
            ),
        })
        .collect();
    (recs, move || (0..SUITE_DIMS).map(|_| next()).collect())
}

/// More vectors than one Vectorize upsert call (1000) and than one local-index scan page (500):
/// the answer must equal an exact brute-force ranking.
async fn large_batch_and_exact_ranking<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    let (recs, mut vector) = large_records();
    err(ix.upsert(ns, &recs).await, "upsert large batch")?;
    let query: Vec<f32> = vector();
    for filter in [
        VectorFilter::default(),
        VectorFilter {
            languages: s(&["go"]),
            path_prefix: Some("dir3/".into()),
            tag: Some("five".into()),
            path_globs: Vec::new(),
        },
        // Globs, where the index applies them (else the same filter by prefix alone).
        VectorFilter {
            languages: s(&["rust", "go"]),
            path_prefix: Some("dir".into()),
            path_globs: if ix.applies_path_globs() { s(&["dir{1,4}/*.x", "**/f1?.x"]) } else { Vec::new() },
            ..VectorFilter::default()
        },
    ] {
        let mut expected: Vec<(f32, &str)> = recs
            .iter()
            .filter(|r| filter.matches(&r.metadata))
            .map(|r| (cosine(&query, &r.values), r.id.as_str()))
            .collect();
        expected.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        expected.truncate(25);
        let vq = VectorQuery { vector: query.clone(), top_k: 25, filter: filter.clone() };
        let m = err(ix.query(ns, &vq).await, "query large")?;
        let got: Vec<&str> = ids_of(&m);
        let want: Vec<&str> = expected.iter().map(|e| e.1).collect();
        check!(
            got == want,
            "ranking over {LARGE} vectors with {filter:?} differs:\n got {got:?}\nwant {want:?}"
        );
    }
    Ok(())
}

async fn many_queries_in_one_call_answer_as_each_alone<I: VectorIndex>(ix: &I, ns: &str) -> CaseResult {
    let (recs, mut vector) = large_records();
    err(ix.upsert(ns, &recs).await, "upsert large batch")?;
    let go = VectorFilter { languages: s(&["go"]), ..VectorFilter::default() };
    let queries = vec![
        VectorQuery { vector: vector(), top_k: 25, filter: VectorFilter::default() },
        VectorQuery { vector: vector(), top_k: 7, filter: VectorFilter::default() },
        VectorQuery { vector: vector(), top_k: 25, filter: go.clone() },
        VectorQuery { vector: vec![1.0, 0.0], top_k: 5, filter: VectorFilter::default() },
        VectorQuery { vector: vector(), top_k: 0, filter: go },
        VectorQuery { vector: vec![0.0; SUITE_DIMS], top_k: 3, filter: VectorFilter::default() },
    ];
    // Twice: the first call may build an index's in-memory state, the second reads it.
    for round in 0..2 {
        let together = ix.query_many(ns, &queries).await;
        check!(
            together.len() == queries.len(),
            "round {round}: {} answers to {} queries",
            together.len(),
            queries.len()
        );
        for (i, (q, got)) in queries.iter().zip(together).enumerate() {
            let alone = ix.query(ns, q).await;
            match (&got, &alone) {
                (Ok(g), Ok(a)) => {
                    check!(
                        g == a,
                        "round {round}, query {i}: together {:?}, alone {:?}",
                        ids_of(g),
                        ids_of(a)
                    );
                }
                (Err(g), Err(a)) => {
                    check!(g.code() == a.code(), "round {round}, query {i}: {g} vs {a}");
                }
                _ => return Err(format!("round {round}, query {i}: together {got:?}, alone {alone:?}")),
            }
        }
    }
    let answered = ix.query_many(ns, &queries[..3]).await;
    check!(
        answered.iter().all(|r| r.as_ref().is_ok_and(|m| !m.is_empty())),
        "valid queries unanswered: {answered:?}"
    );
    Ok(())
}
