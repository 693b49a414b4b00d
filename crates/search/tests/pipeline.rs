//! The whole pipeline over the in-memory ports, on the hand-written multi-language fixture repo
//! shared with the end-to-end tests (`tests/e2e/fixtures/search-repo`, plus another repository
//! that must never leak into it). The embedder is the core's deterministic hashing embedder, so
//! these tests check the pipeline's behaviour, not semantic quality (the benchmark does that).
#![allow(clippy::unwrap_used)]
use std::cell::RefCell;
use std::path::{Path, PathBuf};

use edgerag_core::embed::HashingEmbedder;
use edgerag_core::vector::{
    InMemoryVectorIndex, VectorError, VectorIndex, VectorMatch, VectorQuery, VectorRecord,
};
use edgerag_core::{chunk_text, ChunkConfig};
use edgerag_search::memory::{block_on, index_chunks, MemoryCatalog, MemoryStore};
use edgerag_search::ports::{
    ChunkKey, ChunkRecord, ChunkStore, EventSink, GenerateRequest, Generator, KeywordIndex, KeywordQuery,
    NamespaceInfo, NamespaceStatus, NeighborRange, NoClock, Reranker, ScoredKey, SymbolFamily,
};
use edgerag_search::profile::Profile;
use edgerag_search::{
    PortError, ProfileRegistry, SearchMode, SearchPipeline, SearchResponse, SearchServices,
};
use serde_json::{json, Value};

const SHOP: &str = "repo:acme/shop";
const OTHER: &str = "repo:doc/brown";

fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/e2e/fixtures").join(name)
}

fn files(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                out.push((rel, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

struct World {
    store: MemoryStore,
    vectors: InMemoryVectorIndex,
    embedder: HashingEmbedder,
    catalog: MemoryCatalog,
}

fn ready(owner: &str, name: &str, at: &str) -> NamespaceInfo {
    NamespaceInfo {
        owner: owner.into(),
        name: name.into(),
        status: NamespaceStatus::Ready,
        ready_at: Some(at.into()),
        chunk_count: 1,
    }
}

fn world() -> World {
    let w = World {
        store: MemoryStore::new(),
        vectors: InMemoryVectorIndex::new(256),
        embedder: HashingEmbedder::new(256),
        catalog: MemoryCatalog::new(vec![
            ready("acme", "shop", "2025-01-02T00:00:00Z"),
            ready("doc", "brown", "2025-01-01T00:00:00Z"),
        ]),
    };
    for (ns, dir) in [(SHOP, "search-repo"), (OTHER, "search-repo-other")] {
        for (path, text) in files(&fixture_dir(dir)) {
            let chunks = chunk_text(&path, &text, &ChunkConfig::default());
            block_on(index_chunks(&w.store, Some((&w.embedder, &w.vectors)), ns, chunks, &[])).unwrap();
        }
    }
    w
}

#[derive(Default)]
struct Events(RefCell<Vec<(String, Value)>>);

impl EventSink for Events {
    fn event(&self, name: &str, fields: Value) {
        self.0.borrow_mut().push((name.to_string(), fields));
    }
}

fn services<'a>(w: &'a World, events: &'a Events) -> SearchServices<'a> {
    SearchServices {
        keyword: &w.store,
        chunks: &w.store,
        catalog: &w.catalog,
        embedder: Some(&w.embedder),
        vectors: Some(&w.vectors),
        generator: None,
        reranker: None,
        clock: &NoClock,
        events,
    }
}

fn search_with(
    s: SearchServices<'_>,
    profiles: &ProfileRegistry,
    mode: SearchMode,
    body: Value,
) -> SearchResponse {
    let pipeline = SearchPipeline { services: s, profiles, config_warnings: &[] };
    block_on(pipeline.run(mode, &body)).unwrap()
}

fn search(w: &World, body: Value) -> SearchResponse {
    let events = Events::default();
    search_with(services(w, &events), &ProfileRegistry::default(), SearchMode::Repo, body)
}

fn error(w: &World, mode: SearchMode, body: Value) -> String {
    let events = Events::default();
    let profiles = ProfileRegistry::default();
    let pipeline =
        SearchPipeline { services: services(w, &events), profiles: &profiles, config_warnings: &[] };
    block_on(pipeline.run(mode, &body)).unwrap_err().code().to_string()
}

fn paths(r: &SearchResponse) -> Vec<&str> {
    r.matches.iter().map(|m| m.path.as_str()).collect()
}

fn direct(r: &SearchResponse) -> Vec<&edgerag_search::Match> {
    r.matches.iter().filter(|m| m.metadata.neighbor_of_span_hash.is_none()).collect()
}

#[test]
fn finds_code_by_symbol_name() {
    let w = world();
    let r = search(&w, json!({"owner": "acme", "name": "shop", "rawQuery": "RetryWithBackoff"}));
    assert_eq!(r.matches[0].path, "src/net/retry.go");
    assert!(r.matches[0].snippet.contains("func RetryWithBackoff"));
    assert!(r.matches[0].start_line >= 1 && r.matches[0].end_line >= r.matches[0].start_line);
    assert_eq!(r.matches[0].language, "go");
    assert!(!r.context_missing && !r.no_results && r.no_results_reason.is_none());
}

#[test]
fn finds_code_by_paraphrase_and_split_identifiers() {
    let w = world();
    let r = search(&w, json!({"rawQuery": "how is the access token refreshed before it expires?"}));
    let top = direct(&r)[0];
    assert_eq!(top.path, "src/auth/session.ts", "{:?}", paths(&r));
    assert!(top.snippet.contains("refreshAccessToken"));
    // The generated copy of the same method is penalized below the real one.
    let generated = r.matches.iter().position(|m| m.path.starts_with("generated/"));
    assert!(generated.is_none_or(|g| g > 0));

    // The architecture notes describe the LRU cache in the query's own words, so they may rank
    // first; the implementation must be the best code match and right behind them.
    let r = search(&w, json!({"rawQuery": "least recently used cache eviction"}));
    let d = direct(&r);
    let code = d.iter().position(|m| m.language != "markdown").unwrap();
    assert_eq!(d[code].path, "src/storage/cache.rs", "{:?}", paths(&r));
    assert!(code <= 1, "{:?}", paths(&r));
    assert!(d[..code].iter().all(|m| m.path == "docs/architecture.md"), "{:?}", paths(&r));
    let r = search(&w, json!({"rawQuery": "total with tax and discount"}));
    assert_eq!(direct(&r)[0].path, "src/billing/invoice.py", "{:?}", paths(&r));
}

#[test]
fn applied_modules_and_warnings_describe_the_run() {
    let w = world();
    let r = search(&w, json!({"rawQuery": "where is getJson parsed"}));
    for m in [
        "profile:balanced",
        "query.identifier-split",
        "retrieval.vector",
        "retrieval.bm25",
        "retrieval.hybrid-rrf",
        "retrieval.multi-query",
        "post.code-aware",
        "post.heuristic-rerank",
        "post.neighbor-expand:LINEAR",
        "post.context-budget",
    ] {
        assert!(r.applied_modules.contains(&m.to_string()), "{m} missing from {:?}", r.applied_modules);
    }
    assert_eq!(r.applied_modules[0], "profile:balanced");
    // Autofill of owner/name and the skipped LLM transformers are reported.
    assert!(r.warnings.iter().any(|w| w.contains("filled automatically with acme/shop")), "{:?}", r.warnings);
    assert!(r.warnings.iter().any(|w| w.contains("query transformers skipped")), "{:?}", r.warnings);
    assert_eq!(
        (r.repo_owner.as_str(), r.repo_name.as_str(), r.profile.as_str()),
        ("acme", "shop", "balanced")
    );
    assert!(r.instructions.contains("acme/shop") && r.instructions.contains("where is getJson parsed"));
    assert!(r.augmented_prompt.contains("src/net/HttpClient.java"));
    // Multi-query: every direct match says which sub-query found it.
    assert!(direct(&r).iter().all(|m| m.metadata.generated_by_sub_query.is_some()));
    // Matches are within the profile's topK plus neighbours, and one short match per further file.
    let balanced = edgerag_search::Profile::balanced();
    let further = balanced.post_processing.further_files.files as usize;
    assert!(direct(&r).len() <= balanced.retrieval.top_k as usize + further);
}

/// Without a text model the sub-queries are lexical variants that share the query's vector
/// results; a variant whose keyword terms are only some of the query's own is not searched.
#[test]
fn variants_that_only_drop_query_terms_are_not_run() {
    let w = world();
    // "getJson implemented": the terms are getjson and json ("implemented" is a function word);
    // the split form keeps only json and the content words only getjson.
    let r = search(&w, json!({"rawQuery": "where is getJson implemented", "debug": true}));
    let debug = r.debug.as_ref().unwrap();
    assert_eq!(debug.sub_queries, ["where is getJson implemented"]);
    assert!(!r.applied_modules.contains(&"retrieval.multi-query".to_string()), "{:?}", r.applied_modules);
    assert!(!r.matches.is_empty());
    // Its spellings (getjsonParsed, getjson_parsed) add a term: that variant runs.
    let r = search(&w, json!({"rawQuery": "where is getJson parsed", "debug": true}));
    let subs = &r.debug.as_ref().unwrap().sub_queries;
    assert_eq!(subs.len(), 2, "{subs:?}");
    assert!(subs[1].contains("getjsonParsed"), "{subs:?}");
    assert!(r.applied_modules.contains(&"retrieval.multi-query".to_string()));
}

#[test]
fn legacy_profile_runs_fewer_modules() {
    let w = world();
    let r = search(&w, json!({"rawQuery": "hash_key", "profile": "legacy"}));
    assert_eq!(r.applied_modules[0], "profile:legacy");
    assert!(!r.applied_modules.iter().any(|m| m == "post.code-aware" || m == "retrieval.multi-query"));
    assert!(!r.warnings.iter().any(|w| w.contains("query transformers skipped")));
}

#[test]
fn path_and_language_filters_restrict_results() {
    let w = world();
    let r = search(&w, json!({"rawQuery": "session token", "filters": {"paths": ["docs/**"]}}));
    assert!(!r.matches.is_empty());
    assert!(r.matches.iter().all(|m| m.path.starts_with("docs/")), "{:?}", paths(&r));
    let r = search(&w, json!({"rawQuery": "retry", "filters": {"languages": ["golang"]}}));
    assert!(r.matches.iter().all(|m| m.language == "go"), "{:?}", paths(&r));
    assert!(r.warnings.iter().any(|w| w.contains("`golang` was read as `go`")));
    let r = search(&w, json!({"rawQuery": "retry", "filters": {"paths": "*.py"}}));
    assert!(r.matches.iter().all(|m| m.path.ends_with(".py")), "{:?}", paths(&r));
}

#[test]
fn namespaces_never_leak() {
    let w = world();
    // The other repository has the only "capacitor"; the shop must not return it.
    let r = search(
        &w,
        json!({"owner": "acme", "name": "shop", "rawQuery": "QuantumFluxCapacitor charge for time travel"}),
    );
    assert!(r.matches.iter().all(|m| m.metadata.repo_name == "shop"), "{:?}", paths(&r));
    assert!(r.matches.iter().all(|m| !m.snippet.contains("Capacitor")));
    let r = search(&w, json!({"owner": "doc", "name": "brown", "rawQuery": "retry with backoff"}));
    assert!(r.matches.iter().all(|m| m.metadata.repo_owner == "doc"));
    assert!(r.matches.iter().all(|m| m.path == "lib/flux.rb"));
    // Global search sees both, labelled.
    let events = Events::default();
    let r = search_with(
        services(&w, &events),
        &ProfileRegistry::default(),
        SearchMode::Global,
        json!({"rawQuery": "retry with backoff", "displayRepoOwner": "all", "displayRepoName": "repos"}),
    );
    let repos: std::collections::BTreeSet<&str> =
        r.matches.iter().map(|m| m.metadata.repo_name.as_str()).collect();
    assert_eq!(repos.into_iter().collect::<Vec<_>>(), ["brown", "shop"]);
    assert_eq!((r.repo_owner.as_str(), r.repo_name.as_str()), ("all", "repos"));
}

#[test]
fn neighbours_are_tagged_with_their_origin() {
    let w = world();
    let r = search(&w, json!({"rawQuery": "evict_oldest"}));
    let neighbours: Vec<_> =
        r.matches.iter().filter(|m| m.metadata.neighbor_of_span_hash.is_some()).collect();
    assert!(!neighbours.is_empty());
    for n in neighbours {
        let origin = r
            .matches
            .iter()
            .find(|m| Some(&m.metadata.span_hash) == n.metadata.neighbor_of_span_hash.as_ref())
            .expect("origin present");
        assert_eq!(origin.path, n.path);
        // Next to its origin (which may have become a span of several chunks): their lines are
        // apart, and no other match of the file lies between them.
        let (lo, hi) = if n.start_line > origin.end_line {
            (origin.end_line, n.start_line)
        } else {
            assert!(n.end_line < origin.start_line, "a neighbour overlaps its origin");
            (n.end_line, origin.start_line)
        };
        assert!(
            !r.matches.iter().any(|m| m.path == n.path && m.start_line > lo && m.end_line < hi),
            "a match between a neighbour and its origin"
        );
    }
}

#[test]
fn nothing_found_and_not_ready() {
    let w = world();
    // Keyword only (no vectors): a query with no matching term finds nothing.
    let events = Events::default();
    let mut s = services(&w, &events);
    s.embedder = None;
    let r =
        search_with(s, &ProfileRegistry::default(), SearchMode::Repo, json!({"rawQuery": "zqxjv wvutsr"}));
    assert!(r.context_missing && r.no_results);
    assert_eq!(serde_json::to_value(r.no_results_reason).unwrap(), json!("CONTEXT_NOT_FOUND"));
    assert!(r.augmented_prompt.contains("no relevant documents"));
    let pipeline =
        SearchPipeline { services: s, profiles: &ProfileRegistry::default(), config_warnings: &[] };
    let e =
        block_on(pipeline.run(SearchMode::Repo, &json!({"rawQuery": "zqxjv", "allowEmptyContext": false})))
            .unwrap_err();
    assert_eq!(e.code(), "CONTEXT_NOT_FOUND");

    // A repository that is not indexed.
    let r = search(&w, json!({"owner": "nobody", "name": "nothing", "rawQuery": "retry"}));
    assert!(r.no_results && r.matches.is_empty());
    assert_eq!(serde_json::to_value(r.no_results_reason).unwrap(), json!("INDEX_NOT_READY"));
    assert_eq!(
        error(
            &w,
            SearchMode::Repo,
            json!({"owner": "nobody", "name": "nothing", "rawQuery": "x", "allowEmptyContext": false})
        ),
        "INDEX_NOT_READY"
    );

    // Nothing READY at all.
    let empty = World { catalog: MemoryCatalog::new(Vec::new()), ..world() };
    assert_eq!(error(&empty, SearchMode::Simple, json!({"rawQuery": "retry"})), "INDEX_NOT_READY");
    assert_eq!(error(&empty, SearchMode::Global, json!({"rawQuery": "retry"})), "INDEX_NOT_READY");
    let events = Events::default();
    let r = search_with(
        services(&empty, &events),
        &ProfileRegistry::default(),
        SearchMode::SimpleGlobal,
        json!({"rawQuery": "retry"}),
    );
    assert_eq!((r.repo_owner.as_str(), r.repo_name.as_str()), ("global", "global"));
    assert!(r.no_results);
}

#[test]
fn bad_requests_are_rejected_with_stable_codes() {
    let w = world();
    assert_eq!(error(&w, SearchMode::Repo, json!({"rawQuery": "x", "topK": 5})), "TUNING_PARAMETER_REJECTED");
    assert_eq!(error(&w, SearchMode::Repo, json!({"rawQuery": ""})), "EMPTY_QUERY");
    assert_eq!(error(&w, SearchMode::Repo, json!({"rawQuery": "x", "nope": 1})), "UNKNOWN_FIELD");
    assert_eq!(error(&w, SearchMode::Repo, json!("just a string")), "INVALID_REQUEST");
    // FTS syntax in the query is just text.
    let r = search(&w, json!({"rawQuery": "\"unbalanced AND (NEAR* OR -x:y"}));
    assert!(r.warnings.iter().all(|w| !w.contains("failed")));
}

#[test]
fn guard_clamps_configured_profiles_and_logs() {
    let w = world();
    let (profiles, cfg_warnings) = ProfileRegistry::from_config(Some(
        r#"{"profiles":{"balanced":{"retrieval":{"topK":100},"postProcessing":{"maxContextTokens":9000,"neighbor":{"limit":999,"maxLimit":999}}}}}"#,
    ));
    assert!(cfg_warnings.is_empty());
    let events = Events::default();
    let r = search_with(services(&w, &events), &profiles, SearchMode::Repo, json!({"rawQuery": "cache"}));
    let logged: Vec<String> = events
        .0
        .borrow()
        .iter()
        .filter(|(n, _)| n == "rag_parameter_guard")
        .map(|(_, f)| f["field"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        logged,
        [
            "retrieval.topK",
            "postProcessing.neighbor.maxLimit",
            "postProcessing.neighbor.limit",
            "postProcessing.maxContextTokens"
        ]
    );
    let e = &events.0.borrow()[0].1;
    assert_eq!(
        (e["profile"].as_str(), e["requested"].as_u64(), e["applied"].as_u64()),
        (Some("balanced"), Some(100), Some(40))
    );
    assert_eq!(r.warnings.iter().filter(|w| w.contains("outside the allowed range")).count(), 4);
    assert!(r.applied_modules.contains(&"guard.clamp".to_string()));
}

#[test]
fn context_budget_keeps_at_least_one() {
    let w = world();
    let (profiles, _) = ProfileRegistry::from_config(Some(
        r#"{"profiles":{"balanced":{"postProcessing":{"maxContextTokens":256}}}}"#,
    ));
    let events = Events::default();
    let r = search_with(
        services(&w, &events),
        &profiles,
        SearchMode::Repo,
        json!({"rawQuery": "session token refresh"}),
    );
    assert!(!r.matches.is_empty());
    let total: u32 = r.matches.iter().map(|m| m.metadata.token_count).sum();
    assert!(total <= 256 || r.matches.len() == 1, "{total} tokens in {} matches", r.matches.len());
}

#[test]
fn aggressive_profile_returns_parents_once() {
    let w = world();
    let r = search(&w, json!({"rawQuery": "refresh access token session expired", "profile": "aggressive"}));
    assert!(r.applied_modules.iter().any(|m| m == "post.parent-child"));
    assert!(r.applied_modules.iter().any(|m| m == "post.neighbor-expand:PARENT_SYMBOL"));
    let mut seen = std::collections::HashSet::new();
    for m in direct(&r) {
        if let Some(p) = &m.metadata.parent_symbol {
            assert!(seen.insert((m.path.clone(), p.clone())), "parent {p} of {} returned twice", m.path);
        }
    }
}

#[test]
fn debug_output_has_plan_and_timings() {
    let w = world();
    let r = search(&w, json!({"rawQuery": "hash_key", "debug": true}));
    let d = r.debug.unwrap();
    assert!(d.timings.iter().any(|t| t.module == "retrieval.search"));
    assert!(d.timings.iter().any(|t| t.module == "post.code-aware"));
    assert_eq!(d.plan["profile"], "balanced");
    assert!(d.keyword_query.unwrap().contains("\"hash\""));
    assert!(search(&w, json!({"rawQuery": "hash_key"})).debug.is_none());
}

#[test]
fn parent_child_request_options_override_the_profile_within_the_guard() {
    let w = world();
    let r = search(
        &w,
        json!({"rawQuery": "hash_key", "debug": true, "parentChild": {"normalizeScores": true, "contextWindowChars": 50}}),
    );
    let pc = &r.debug.unwrap().plan["settings"]["postProcessing"]["parentChild"];
    assert_eq!(pc["normalizeScores"], true);
    assert_eq!(pc["contextWindowChars"], 200);
    assert!(
        r.warnings.iter().any(|w| w.starts_with("parentChild.contextWindowChars 50 was clamped to 200")),
        "{:?}",
        r.warnings
    );
    let e = error(&w, SearchMode::Repo, json!({"rawQuery": "q", "parentChild": {"window": 3}}));
    assert_eq!(e, "INVALID_REQUEST");
}

// ---- optional ports and failures ----

struct ScriptedGenerator(RefCell<Vec<GenerateRequest>>);

#[async_trait::async_trait(?Send)]
impl Generator for ScriptedGenerator {
    fn name(&self) -> String {
        "scripted".into()
    }
    async fn generate(&self, request: &GenerateRequest) -> Result<String, PortError> {
        self.0.borrow_mut().push(request.clone());
        Ok(if request.prompt.contains("different versions") {
            "exponential backoff between attempts\njitter sleep retry".into()
        } else if request.system.contains("Translate") {
            "retry backoff".into()
        } else if request.system.contains("standalone") {
            "como funciona a repetição com espera na rede?".into()
        } else {
            "repetição com espera para a rede".into()
        })
    }
}

struct ReverseReranker;

#[async_trait::async_trait(?Send)]
impl Reranker for ReverseReranker {
    fn name(&self) -> String {
        "reverse".into()
    }
    async fn rerank(&self, _query: &str, documents: &[String]) -> Result<Vec<f32>, PortError> {
        Ok((0..documents.len()).map(|i| i as f32).collect())
    }
}

#[test]
fn generator_and_reranker_modules_run_when_configured() {
    let w = world();
    let events = Events::default();
    let generator = ScriptedGenerator(RefCell::new(Vec::new()));
    let mut s = services(&w, &events);
    s.generator = Some(&generator);
    s.reranker = Some(&ReverseReranker);
    let r = search_with(
        s,
        &ProfileRegistry::default(),
        SearchMode::Repo,
        json!({"rawQuery": "como funciona a repetição com espera?", "conversationContext": ["we talked about networking", "yes"]}),
    );
    for m in [
        "query.compression",
        "query.rewrite",
        "query.translation",
        "retrieval.multi-query",
        "post.cross-encoder",
    ] {
        assert!(r.applied_modules.contains(&m.to_string()), "{m} missing from {:?}", r.applied_modules);
    }
    assert!(r.rerank_applied);
    let subs: std::collections::BTreeSet<_> =
        r.matches.iter().filter_map(|m| m.metadata.generated_by_sub_query.clone()).collect();
    assert!(
        subs.iter().all(|s| ["retry backoff", "exponential backoff between attempts", "jitter sleep retry"]
            .contains(&s.as_str())),
        "{subs:?}"
    );
    assert!(generator.0.borrow()[0].prompt.contains("we talked about networking"));
    // The agent still sees the question as asked.
    assert!(r.instructions.contains("como funciona"));
}

struct Failing;

#[async_trait::async_trait(?Send)]
impl KeywordIndex for Failing {
    async fn search(&self, _q: &KeywordQuery) -> Result<Vec<ScoredKey>, PortError> {
        Err(PortError::new("keyword-index", "D1 is down"))
    }
}

#[async_trait::async_trait(?Send)]
impl ChunkStore for Failing {
    async fn get(&self, _k: &[ChunkKey]) -> Result<Vec<ChunkRecord>, PortError> {
        Err(PortError::new("chunk-store", "D1 is down"))
    }
    async fn neighbors(&self, _r: &[NeighborRange]) -> Result<Vec<ChunkRecord>, PortError> {
        Err(PortError::new("chunk-store", "D1 is down"))
    }
    async fn families(&self, _f: &[SymbolFamily], _l: usize) -> Result<Vec<ChunkRecord>, PortError> {
        Err(PortError::new("chunk-store", "D1 is down"))
    }
}

#[test]
fn one_failing_retriever_degrades_both_failing_is_an_error() {
    let w = world();
    let events = Events::default();
    let mut s = services(&w, &events);
    s.keyword = &Failing;
    let r = search_with(s, &ProfileRegistry::default(), SearchMode::Repo, json!({"rawQuery": "LruCache"}));
    assert!(!r.matches.is_empty());
    assert!(r.warnings.iter().any(|w| w.contains("keyword search failed")));
    assert!(!r.applied_modules.iter().any(|m| m == "retrieval.bm25"));
    s.embedder = None;
    let pipeline =
        SearchPipeline { services: s, profiles: &ProfileRegistry::default(), config_warnings: &[] };
    let e = block_on(pipeline.run(SearchMode::Repo, &json!({"rawQuery": "LruCache"}))).unwrap_err();
    assert_eq!(e.code(), "SEARCH_BACKEND_UNAVAILABLE");
    // Neighbour lookups failing only lose the neighbours.
    let flaky = NeighborsFail(&w.store);
    let mut s = services(&w, &events);
    s.chunks = &flaky;
    let r = search_with(s, &ProfileRegistry::default(), SearchMode::Repo, json!({"rawQuery": "LruCache"}));
    assert!(!r.matches.is_empty());
    assert!(r.matches.iter().all(|m| m.metadata.neighbor_of_span_hash.is_none()));
    assert!(r.warnings.iter().any(|w| w.contains("neighbor expansion failed")));
}

struct NeighborsFail<'a>(&'a MemoryStore);

#[async_trait::async_trait(?Send)]
impl ChunkStore for NeighborsFail<'_> {
    async fn get(&self, k: &[ChunkKey]) -> Result<Vec<ChunkRecord>, PortError> {
        self.0.get(k).await
    }
    async fn neighbors(&self, _r: &[NeighborRange]) -> Result<Vec<ChunkRecord>, PortError> {
        Err(PortError::new("chunk-store", "timeout"))
    }
    async fn families(&self, _f: &[SymbolFamily], _l: usize) -> Result<Vec<ChunkRecord>, PortError> {
        Err(PortError::new("chunk-store", "timeout"))
    }
}

/// A repository of two Python files where `caller` (a.py) calls `target_helper` (b.py), with the
/// graph the worker would store for it; `with_graph: false` stores none.
/// An empty world with one ready repository, `acme/calls`.
fn calls_world() -> World {
    World {
        store: MemoryStore::new(),
        vectors: InMemoryVectorIndex::new(256),
        embedder: HashingEmbedder::new(256),
        catalog: MemoryCatalog::new(vec![ready("acme", "calls", "2025-01-02T00:00:00Z")]),
    }
}

/// A Python function's graph node.
fn py_function(path: &str, name: &str, lines: (u32, u32)) -> edgerag_core::graph::Node {
    use edgerag_core::graph::{node_id, Node, NodeKind};
    Node {
        id: node_id(path, NodeKind::Function, name, 0),
        kind: NodeKind::Function,
        name: name.into(),
        fqn: name.into(),
        package: None,
        signature: None,
        doc: None,
        path: path.into(),
        language: edgerag_core::Language::Python,
        start_line: lines.0,
        end_line: lines.1,
        parent: None,
        route: None,
        http_method: None,
        declared_type: None,
    }
}

/// A resolved call from `src` at `path:line` to `dst`.
fn call_edge(
    src: &edgerag_core::graph::Node,
    dst: &edgerag_core::graph::Node,
    path: &str,
    line: u32,
) -> edgerag_core::graph::Edge {
    use edgerag_core::graph::{Edge, EdgeKind, Resolution};
    Edge {
        kind: EdgeKind::Calls,
        src: src.id.clone(),
        dst: Some(dst.id.clone()),
        dst_name: dst.name.clone(),
        confidence: Resolution::Import.confidence(),
        resolution: Resolution::Import,
        path: path.into(),
        line,
        hint: None,
    }
}

fn call_world(with_graph: bool) -> World {
    use edgerag_core::graph::{Edge, FileGraph, Node};
    use edgerag_core::Language;
    let ns = "repo:acme/calls";
    let w = calls_world();
    let caller = py_function("a.py", "caller", (1, 2));
    let helper = py_function("b.py", "target_helper", (1, 2));
    let sources = [
        ("a.py", "def caller():\n    return target_helper()\n", &caller),
        ("b.py", "def target_helper():\n    return 42\n", &helper),
    ];
    for (path, text, symbol) in sources {
        let mut chunks = chunk_text(path, text, &ChunkConfig::default());
        assert_eq!(chunks.len(), 1, "{path}");
        chunks[0].metadata.symbol_id = Some(symbol.id.to_string());
        block_on(index_chunks(&w.store, Some((&w.embedder, &w.vectors)), ns, chunks, &[])).unwrap();
    }
    if with_graph {
        let call = call_edge(&caller, &helper, "a.py", 2);
        let file = |path: &str, nodes: Vec<Node>, edges: Vec<Edge>| FileGraph {
            path: path.into(),
            language: Language::Python,
            package: None,
            nodes,
            edges,
            imports: Vec::new(),
        };
        w.store.set_graph(
            ns,
            vec![file("a.py", vec![caller.clone()], vec![call]), file("b.py", vec![helper.clone()], vec![])],
        );
    }
    w
}

fn call_graph_search(w: &World, query: &str) -> SearchResponse {
    let (profiles, cfg_warnings) = ProfileRegistry::from_config(Some(
        r#"{"profiles":{"graph":{"extends":"balanced","retrieval":{"topK":1},"postProcessing":{"neighbor":{"strategy":"CALL_GRAPH","radius":1,"limit":4}}}}}"#,
    ));
    assert!(cfg_warnings.is_empty(), "{cfg_warnings:?}");
    let events = Events::default();
    search_with(
        services(w, &events),
        &profiles,
        SearchMode::Repo,
        json!({"owner": "acme", "name": "calls", "rawQuery": query, "profile": "graph"}),
    )
}

#[test]
fn call_graph_brings_the_callee_after_the_caller_and_names_it_in_uses() {
    let w = call_world(true);
    let r = call_graph_search(&w, "caller");
    assert_eq!(paths(&r), ["a.py", "b.py"], "{:?}", r.warnings);
    assert_eq!(
        r.matches[1].metadata.neighbor_of_span_hash.as_deref(),
        Some(r.matches[0].metadata.span_hash.as_str())
    );
    assert_eq!(r.matches[0].metadata.uses, ["target_helper"]);
    assert!(r.matches[0].metadata.used_by.is_empty());
    assert!(r.matches[0].metadata.symbol_id.is_some());
    assert!(r.applied_modules.iter().any(|m| m == "post.neighbor-expand:CALL_GRAPH"));
    assert!(!r.warnings.iter().any(|w| w.contains("CALL_GRAPH")), "{:?}", r.warnings);
    // And the other way: the callee's match brings its caller, named in usedBy.
    let r = call_graph_search(&w, "target_helper 42");
    assert_eq!(paths(&r), ["b.py", "a.py"]);
    assert_eq!(r.matches[0].metadata.used_by, ["caller"]);
}

#[test]
fn call_graph_without_a_graph_uses_linear_and_says_so() {
    let w = call_world(false);
    let r = call_graph_search(&w, "caller");
    assert_eq!(paths(&r)[0], "a.py");
    assert!(r.matches.iter().all(|m| m.metadata.uses.is_empty() && m.metadata.used_by.is_empty()));
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("CALL_GRAPH") && w.contains("no code graph") && w.contains("LINEAR")),
        "{:?}",
        r.warnings
    );
}

/// The callee of the best match, in the same file, joins the candidates (`graphCandidates`) though
/// no retriever found it; in another file it does not.
#[test]
fn a_callee_in_the_matchs_own_file_joins_the_candidates() {
    use edgerag_core::graph::FileGraph;
    let ns = "repo:acme/calls";
    let w = calls_world();
    // More than three blank lines apart: two matches, not one span.
    let text = "def caller():\n    return target_helper()\n\n\n\n\n\ndef target_helper():\n    return 42\n";
    let caller = py_function("a.py", "caller", (1, 2));
    let helper = py_function("a.py", "target_helper", (8, 9));
    let mut chunks = chunk_text("a.py", text, &ChunkConfig::default());
    assert_eq!(chunks.len(), 2, "{chunks:?}");
    for (chunk, node) in chunks.iter_mut().zip([&caller, &helper]) {
        assert_eq!(chunk.start_line, node.start_line);
        chunk.metadata.symbol_id = Some(node.id.to_string());
    }
    block_on(index_chunks(&w.store, Some((&w.embedder, &w.vectors)), ns, chunks, &[])).unwrap();
    let graph = FileGraph {
        path: "a.py".into(),
        language: edgerag_core::Language::Python,
        package: None,
        nodes: vec![caller.clone(), helper.clone()],
        edges: vec![call_edge(&caller, &helper, "a.py", 2)],
        imports: Vec::new(),
    };
    w.store.set_graph(ns, vec![graph]);
    // Keyword retrieval only: "caller" finds the caller alone.
    let ask = |graph_candidates: Value| {
        let config = json!({"profiles": {"kw": {"extends": "balanced",
            "retrieval": {"vectorWeight": 0.0, "keywordWeight": 1.0},
            "postProcessing": {"neighbor": {"strategy": "OFF"}, "graphCandidates": graph_candidates}}}});
        let (profiles, warnings) = ProfileRegistry::from_config(Some(&config.to_string()));
        assert!(warnings.is_empty(), "{warnings:?}");
        let events = Events::default();
        search_with(
            services(&w, &events),
            &profiles,
            SearchMode::Repo,
            json!({"owner": "acme", "name": "calls", "rawQuery": "caller", "profile": "kw"}),
        )
    };
    let on = ask(serde_json::to_value(Profile::balanced().post_processing.graph_candidates).unwrap());
    let lines: Vec<(u32, u32)> = on.matches.iter().map(|m| (m.start_line, m.end_line)).collect();
    assert_eq!(lines, [(1, 2), (8, 9)], "{:?}", on.applied_modules);
    assert!(on.applied_modules.iter().any(|m| m == "post.graph-candidates"));
    assert!(on.matches[1].score < on.matches[0].score);
    let off = ask(json!({"seeds": 0, "perSeed": 2, "calleeWeight": 0.7, "callerWeight": 0.4}));
    assert_eq!(off.matches.len(), 1, "{:?}", off.matches);
    assert!(!off.applied_modules.iter().any(|m| m == "post.graph-candidates"));
}

/// Counts the keyword statements the pipeline issues and the term lists they carry.
struct CountingKeywords<'a>(&'a MemoryStore, RefCell<Vec<Vec<String>>>);

#[async_trait::async_trait(?Send)]
impl KeywordIndex for CountingKeywords<'_> {
    async fn search(&self, q: &KeywordQuery) -> Result<Vec<ScoredKey>, PortError> {
        self.1
            .borrow_mut()
            .push(q.terms.iter().map(|t| format!("{}{}", t.text, if t.prefix { "*" } else { "" })).collect());
        self.0.search(q).await
    }
}

#[test]
fn sub_queries_with_the_same_keyword_terms_share_one_keyword_search() {
    let w = world();
    let events = Events::default();
    let counting = CountingKeywords(&w.store, RefCell::new(Vec::new()));
    let mut s = services(&w, &events);
    s.keyword = &counting;
    // "how is the session refreshed" has a content-words variant ("session refreshed") whose
    // keyword terms equal the question's: the stopwords are dropped either way.
    let body = json!({"rawQuery": "how is the session refreshed?", "debug": true});
    let r = search_with(s, &ProfileRegistry::default(), SearchMode::Repo, body.clone());
    assert!(r.applied_modules.contains(&"retrieval.multi-query".to_string()), "{:?}", r.applied_modules);
    let sub_queries = r.debug.as_ref().unwrap().sub_queries.clone();
    assert!(sub_queries.len() > 1, "{sub_queries:?}");
    let issued = counting.1.borrow().clone();
    assert!(issued.len() < sub_queries.len(), "{} statements for {sub_queries:?}: {issued:?}", issued.len());
    let mut distinct = issued.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), issued.len(), "a term list was searched twice: {issued:?}");
    // And the search still answers.
    assert!(!r.matches.is_empty());
}

/// Reads chunk rows through the memory store, recording the keys of each lookup.
struct RecordingChunks<'a>(&'a MemoryStore, RefCell<Vec<Vec<ChunkKey>>>);

#[async_trait::async_trait(?Send)]
impl ChunkStore for RecordingChunks<'_> {
    async fn get(&self, k: &[ChunkKey]) -> Result<Vec<ChunkRecord>, PortError> {
        self.1.borrow_mut().push(k.to_vec());
        self.0.get(k).await
    }
    async fn neighbors(&self, r: &[NeighborRange]) -> Result<Vec<ChunkRecord>, PortError> {
        self.0.neighbors(r).await
    }
    async fn families(&self, f: &[SymbolFamily], l: usize) -> Result<Vec<ChunkRecord>, PortError> {
        self.0.families(f, l).await
    }
}

/// A keyword index that ignores the filters: the pipeline's exact check has to drop the rest.
struct UnfilteredKeywords<'a>(&'a MemoryStore);

#[async_trait::async_trait(?Send)]
impl KeywordIndex for UnfilteredKeywords<'_> {
    async fn search(&self, q: &KeywordQuery) -> Result<Vec<ScoredKey>, PortError> {
        self.0.search(&KeywordQuery { filters: Default::default(), ..q.clone() }).await
    }
}

/// Chunk rows are read for the hits a sub-query's list can keep (its first `topKPerQuery` with a
/// row that passes the filters), not for every fused hit; when the exact filter leaves a list
/// short, the next hits' rows are read until it is full.
#[test]
fn chunk_rows_are_read_for_the_hits_a_list_keeps() {
    let w = world();
    let (profiles, warnings) = ProfileRegistry::from_config(Some(
        r#"{"profiles": {"narrow": {"extends": "balanced", "retrieval": {"topKPerQuery": 2}, "multiQuery": {"enabled": false},
            "postProcessing": {"furtherFiles": {"files": 12, "lines": 3, "depth": 1}}}}}"#,
    ));
    assert!(warnings.is_empty(), "{warnings:?}");
    let events = Events::default();
    let recording = RecordingChunks(&w.store, RefCell::new(Vec::new()));
    let mut s = services(&w, &events);
    s.chunks = &recording;
    let body = json!({"rawQuery": "retry the request with backoff", "profile": "narrow", "debug": true});
    let r = search_with(s, &profiles, SearchMode::Repo, body);
    assert!(!r.matches.is_empty());
    let lookups = recording.1.borrow().clone();
    // One list, two hits kept as candidates and one more for further files: the first lookup
    // reads three rows, not every fused hit (the two retrievers bring up to 2 × 2 × 2 of them).
    assert_eq!(lookups[0].len(), 3, "{lookups:?}");

    // Python only, from a keyword index that ignores the filter and a vector index that honours
    // it: rows of other languages are read, dropped, and the next hits read until three are kept.
    let recording = RecordingChunks(&w.store, RefCell::new(Vec::new()));
    let unfiltered = UnfilteredKeywords(&w.store);
    let mut s = services(&w, &events);
    s.chunks = &recording;
    s.keyword = &unfiltered;
    s.vectors = None;
    let body = json!({"rawQuery": "retry the request with backoff total invoice", "profile": "narrow",
        "filters": {"languages": ["python"]}});
    let r = search_with(s, &profiles, SearchMode::Repo, body);
    let lookups = recording.1.borrow().clone();
    assert_eq!(lookups[0].len(), 3, "{lookups:?}");
    assert!(lookups.len() >= 2, "the first three rows are not both python, so more are read: {lookups:?}");
    let direct = direct(&r);
    assert!(!direct.is_empty() && direct.iter().all(|m| m.path.ends_with(".py")), "{:?}", paths(&r));
}

/// A vector index as the pipeline sees it, recording each query; `globs: false` plays one that
/// cannot apply path globs (as Vectorize): it filters by their prefix alone.
struct GlobVectors<'a> {
    inner: &'a InMemoryVectorIndex,
    globs: bool,
    asked: RefCell<Vec<VectorQuery>>,
}

#[async_trait::async_trait(?Send)]
impl VectorIndex for GlobVectors<'_> {
    fn dims(&self) -> usize {
        self.inner.dims()
    }
    fn applies_path_globs(&self) -> bool {
        self.globs
    }
    async fn upsert(&self, namespace: &str, records: &[VectorRecord]) -> Result<(), VectorError> {
        self.inner.upsert(namespace, records).await
    }
    async fn query(&self, namespace: &str, query: &VectorQuery) -> Result<Vec<VectorMatch>, VectorError> {
        self.asked.borrow_mut().push(query.clone());
        let mut query = query.clone();
        if !self.globs {
            query.filter.path_globs.clear();
        }
        self.inner.query(namespace, &query).await
    }
    async fn get_by_ids(&self, namespace: &str, ids: &[String]) -> Result<Vec<VectorRecord>, VectorError> {
        self.inner.get_by_ids(namespace, ids).await
    }
    async fn delete_by_ids(&self, namespace: &str, ids: &[String]) -> Result<(), VectorError> {
        self.inner.delete_by_ids(namespace, ids).await
    }
}

/// A path glob filters vector hits before they are ranked, whether the index applies it (asked
/// for the list's size) or only its literal prefix, none for `**/*.py` (asked for twice as many,
/// checked in the pipeline): every hit of the list is one the filter keeps and one lookup reads
/// exactly the rows the list keeps.
#[test]
fn vector_hits_are_checked_against_a_path_glob_before_ranking() {
    let w = world();
    let (profiles, warnings) = ProfileRegistry::from_config(Some(
        r#"{"profiles": {"vectors": {"extends": "balanced", "retrieval": {"topKPerQuery": 2, "keywordWeight": 0}, "multiQuery": {"enabled": false}}}}"#,
    ));
    assert!(warnings.is_empty(), "{warnings:?}");
    let (mut answers, mut asked_for) = (Vec::new(), Vec::new());
    for applies in [true, false] {
        let events = Events::default();
        let recording = RecordingChunks(&w.store, RefCell::new(Vec::new()));
        let vectors = GlobVectors { inner: &w.vectors, globs: applies, asked: RefCell::default() };
        let mut s = services(&w, &events);
        s.chunks = &recording;
        s.vectors = Some(&vectors);
        let body = json!({"rawQuery": "retry the request with backoff total invoice", "profile": "vectors",
            "filters": {"paths": ["**/*.py"]}});
        let r = search_with(s, &profiles, SearchMode::Repo, body);
        let lookups = recording.1.borrow().clone();
        assert_eq!(lookups.len(), 1, "one round of rows (index applies globs: {applies}): {lookups:?}");
        let direct = direct(&r);
        assert!(!direct.is_empty() && direct.iter().all(|m| m.path.ends_with(".py")), "{:?}", paths(&r));
        let asked = vectors.asked.borrow();
        assert!(!asked.is_empty());
        for q in asked.iter() {
            assert_eq!(q.filter.path_globs, ["**/*.py"]);
        }
        asked_for.push(asked[0].top_k);
        answers.push(direct.len());
    }
    // The index that applies the glob ranks every matching vector, not only those among the best
    // unfiltered ones: it finds at least as many.
    assert!(answers[0] >= answers[1], "{answers:?}");
    assert_eq!(asked_for[1], 2 * asked_for[0], "twice as many asked of an index that only takes the prefix");
}

#[test]
fn a_match_the_budget_has_no_room_for_still_names_its_file() {
    let ns = "repo:acme/calls";
    let w = calls_world();
    // Five files of one long function each, all about the question: two become matches (topK 2),
    // three are left for the further files.
    for (i, path) in (1..=5).map(|i| format!("ledger_{i}.py")).enumerate() {
        let body: String = (0..40)
            .map(|l| format!("    rotation_{i}_{l} = rotate_ledger_key(ledger, step={l})\n"))
            .collect();
        let text = format!("def rotate_ledger_{i}(ledger):\n{body}    return ledger\n");
        let chunks = chunk_text(&path, &text, &ChunkConfig::default());
        block_on(index_chunks(&w.store, Some((&w.embedder, &w.vectors)), ns, chunks, &[])).unwrap();
    }
    let budget = 700;
    let (profiles, warnings) = ProfileRegistry::from_config(Some(&format!(
        r#"{{"profiles":{{"balanced":{{"retrieval":{{"topK":2}},"postProcessing":{{"maxContextTokens":{budget},"neighbor":{{"limit":0}}}}}}}}}}"#
    )));
    assert!(warnings.is_empty(), "{warnings:?}");
    let events = Events::default();
    let ask = |profiles: &ProfileRegistry| {
        search_with(
            services(&w, &events),
            profiles,
            SearchMode::Repo,
            json!({"owner": "acme", "name": "calls", "rawQuery": "rotate the ledger key"}),
        )
    };
    let r = ask(&profiles);
    let tokens: u32 = r.matches.iter().map(|m| m.snippet.len() as u32 / 4).sum();
    assert!(tokens <= budget, "{tokens} tokens");
    // The first match is cut to half the budget; the second no longer fits beside it and the
    // further files' reserve, so it comes back as a few lines, right after the first, and the
    // answer still names every file.
    let full = r.matches.iter().filter(|m| m.end_line - m.start_line + 1 > 3).count();
    assert_eq!(full, 1, "{:?}", paths_and_lines(&r));
    let files: std::collections::BTreeSet<&str> = paths(&r).into_iter().collect();
    assert_eq!(files.len(), 5, "{:?}", paths_and_lines(&r));

    // With a budget both matches fit, the second is whole.
    let (roomy, _) = ProfileRegistry::from_config(Some(
        r#"{"profiles":{"balanced":{"retrieval":{"topK":2},"postProcessing":{"maxContextTokens":4000,"neighbor":{"limit":0}}}}}"#,
    ));
    let r = ask(&roomy);
    assert_eq!(
        r.matches.iter().filter(|m| m.end_line - m.start_line + 1 > 3).count(),
        2,
        "{:?}",
        paths_and_lines(&r)
    );
}

fn paths_and_lines(r: &SearchResponse) -> Vec<String> {
    r.matches.iter().map(|m| format!("{}:{}-{}", m.path, m.start_line, m.end_line)).collect()
}

#[test]
fn further_files_are_looked_for_past_each_lists_candidates() {
    let ns = "repo:acme/calls";
    let w = calls_world();
    for i in 1..=6 {
        let text = format!("def settle_invoice_{i}(invoice):\n    return settle(invoice, {i})\n");
        let chunks = chunk_text(&format!("billing_{i}.py"), &text, &ChunkConfig::default());
        block_on(index_chunks(&w.store, Some((&w.embedder, &w.vectors)), ns, chunks, &[])).unwrap();
    }
    let ask = |depth: u32| {
        let (profiles, warnings) = ProfileRegistry::from_config(Some(&format!(
            r#"{{"profiles": {{"balanced": {{"retrieval": {{"topK": 2, "topKPerQuery": 2, "candidateMultiplier": 4}}, "multiQuery": {{"enabled": false}},
                "postProcessing": {{"furtherFiles": {{"files": 12, "lines": 3, "depth": {depth}}}}}}}}}}}"#
        )));
        assert!(warnings.is_empty(), "{warnings:?}");
        let events = Events::default();
        let r = search_with(
            services(&w, &events),
            &profiles,
            SearchMode::Repo,
            json!({"owner": "acme", "name": "calls", "rawQuery": "settle the invoice"}),
        );
        paths(&r).into_iter().map(String::from).collect::<Vec<_>>()
    };
    // Two hits per list are the candidates either way (the same two matches lead); past them,
    // four more files are found.
    let shallow = ask(0);
    assert_eq!(shallow.len(), 2, "{shallow:?}");
    let deep = ask(4);
    assert_eq!(deep.len(), 6, "{deep:?}");
    assert_eq!(deep[..2], shallow[..], "{deep:?}");
    assert_eq!(deep.iter().collect::<std::collections::BTreeSet<_>>().len(), 6, "{deep:?}");
}

/// `debug: true` lists the candidates as they stood before the topK cut: best first, the
/// matches among them in their order, candidates that fell short after them, each with what
/// the retrievers made of it. Without `debug` there is no ranking at all.
#[test]
fn debug_lists_the_ranking_before_the_top_k_cut() {
    let w = world();
    let body = json!({"rawQuery": "retry the request with backoff", "debug": true});
    let r = search(&w, body);
    let ranking = &r.debug.as_ref().unwrap().ranking;
    let top_k = edgerag_search::Profile::balanced().retrieval.top_k as usize;
    assert!(ranking.len() > top_k, "{} candidates: nothing fell short of the topK", ranking.len());
    assert!(ranking.windows(2).all(|p| p[0].score >= p[1].score), "not best first");
    assert!(ranking.iter().all(|c| c.vector_rank.is_some() || c.keyword_rank.is_some()));
    assert!(ranking.iter().all(|c| c.fused_score > 0.0 && c.start_line <= c.end_line));
    // The first match of the answer holds the first of the ranking (code first moves only tests
    // and prose, and this question's best candidate is code; a touching neighbour may widen it).
    let first = r.matches.iter().find(|m| m.metadata.neighbor_of_span_hash.is_none()).unwrap();
    assert_eq!(ranking[0].path, first.path);
    assert!(first.start_line <= ranking[0].start_line && ranking[0].end_line <= first.end_line);
    // Candidates past the topK cut are listed, yet no match holds them.
    let held = |c: &edgerag_search::response::RankedCandidate| {
        r.matches.iter().any(|m| m.path == c.path && m.start_line <= c.start_line && c.end_line <= m.end_line)
    };
    assert!(ranking[top_k..].iter().any(|c| !held(c)));
    let plain = search(&w, json!({"rawQuery": "retry the request with backoff"}));
    assert!(plain.debug.is_none());
}

/// An issue report: a title, a long body about sessions and retries, and a traceback whose frame
/// is in the billing code.
fn issue_report(with_traceback: bool) -> String {
    let mut q = String::from("Crash when the session retries a request\n\n");
    q.push_str(
        "When the access token expires while a request is retried with backoff, the client logs a \
         warning about the session and the retry loop keeps running; the cache of responses is \
         not evicted either. We use the HTTP client with three attempts, an exponential base \
         delay, and a custom token refresher configured in our application settings module. \
         Expected: the request succeeds after one refresh. Observed: an exception from the \
         pricing step is raised after the retries, and nothing is shown to the customer. \
         Environment: Linux, Python 3.11, the latest release, installed from the package index.\n\n",
    );
    if with_traceback {
        q.push_str(
            "Traceback (most recent call last):\n  File \"/srv/app/main.py\", line 12, in <module>\n    run()\n  \
             File \"/srv/venv/lib/python3.11/site-packages/shop/src/billing/invoice.py\", line 29, in apply_discount\n    \
             reduced = amount - amount * percent\nTypeError: unsupported operand type(s)\n",
        );
    }
    q
}

#[test]
fn a_long_question_searches_the_files_it_names() {
    let w = world();
    let named = search(&w, json!({"owner": "acme", "name": "shop", "rawQuery": issue_report(true)}));
    assert!(named.applied_modules.iter().any(|m| m == "query.evidence"), "{:?}", named.applied_modules);
    assert!(
        named.applied_modules.iter().any(|m| m == "retrieval.named-files"),
        "{:?}",
        named.applied_modules
    );
    let rank = |r: &SearchResponse| r.matches.iter().position(|m| m.path == "src/billing/invoice.py");
    let with = rank(&named).expect("the file the traceback names is in the answer");
    assert!(with < 3, "{:?}", paths(&named));
    // Without the traceback, nothing points there: the same report ranks it lower, or not at all.
    let unnamed = search(&w, json!({"owner": "acme", "name": "shop", "rawQuery": issue_report(false)}));
    assert!(!unnamed.applied_modules.iter().any(|m| m == "retrieval.named-files"));
    assert!(rank(&unnamed).is_none_or(|r| r > with), "{:?}", paths(&unnamed));
}

#[test]
fn a_short_question_is_searched_as_written() {
    let w = world();
    let r = search(
        &w,
        json!({"owner": "acme", "name": "shop", "rawQuery": "apply_discount in src/billing/invoice.py"}),
    );
    assert!(!r.applied_modules.iter().any(|m| m == "query.evidence" || m == "retrieval.named-files"));
}
