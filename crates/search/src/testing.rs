//! The one behavioural suite every implementation of the search store ports runs
//! ([`KeywordIndex`], [`ChunkStore`], [`NamespaceCatalog`]), like the core's `VectorIndex` suite:
//! natively against the in-memory stores ([`MemoryStores`]) and in workerd against D1 (through the
//! worker's test route). BM25 parity is one of its cases: the store under test must rank and score
//! a query exactly like the in-memory reference ([`MemoryStore`], FTS5's formula) loaded with the
//! same chunks.
//!
//! The suite writes namespaces under a caller-chosen `prefix` and deletes them at the end. BM25's
//! statistics are per namespace (in D1 each namespace has its own FTS5 index), so the score
//! comparison holds whatever else the store holds. Each case reports pass or its first failed check; nothing
//! panics.
use edgerag_core::chunk::CHUNK_SCHEMA_VERSION;
use edgerag_core::graph::{node_id, Edge, EdgeKind, FileGraph, Node, NodeKind, Resolution};
use edgerag_core::{ids, Chunk, ChunkMetadata, ChunkType, Language};
use serde::Serialize;

use crate::error::PortError;
use crate::filters::SearchFilters;
use crate::memory::{MemoryCatalog, MemoryStore};
use crate::ports::{
    namespace_id, ChunkKey, ChunkRecord, ChunkStore, KeywordIndex, KeywordQuery, LinePoint, LinkDirection,
    NamespaceCatalog, NamespaceInfo, NamespaceStatus, NeighborRange, ScoredKey, SymbolFamily, SymbolQuery,
};
use crate::query::{keyword_terms, TermOptions};

/// The stores under test plus the writes the suite needs to set them up (what ingestion does).
#[async_trait::async_trait(?Send)]
pub trait SearchStores {
    /// Store `chunks` of one file in `namespace` with the file's tags (replacing same ids).
    async fn load(&self, namespace: &str, chunks: &[Chunk], tags: &[String]) -> Result<(), PortError>;
    /// Store a namespace's code graph: these files' graphs, edges already resolved (what the
    /// chunk stage and cross-file resolution write).
    async fn load_graph(&self, namespace: &str, files: &[FileGraph]) -> Result<(), PortError>;
    /// Create or replace the namespace row.
    async fn record_namespace(&self, info: &NamespaceInfo) -> Result<(), PortError>;
    /// Delete the namespace and everything in it (nothing to delete is not an error).
    async fn clear(&self, namespace: &str) -> Result<(), PortError>;
    fn keyword(&self) -> &dyn KeywordIndex;
    fn chunks(&self) -> &dyn ChunkStore;
    fn catalog(&self) -> &dyn NamespaceCatalog;
}

#[derive(Debug, Default, Serialize)]
pub struct SuiteReport {
    pub passed: Vec<String>,
    pub failed: Vec<CaseFailure>,
}

#[derive(Debug, Serialize)]
pub struct CaseFailure {
    pub case: String,
    pub error: String,
}

type CaseResult = Result<(), String>;

macro_rules! check {
    ($cond:expr, $($msg:tt)+) => {
        let ok: bool = $cond;
        if !ok {
            return Err(format!($($msg)+));
        }
    };
}

/// Number of cases [`run_suite`] runs.
pub const CASES: usize = 13;

/// The suite's data: two namespaces, a few files with tags, a class split into methods.
struct Fixture {
    one: NamespaceInfo,
    two: NamespaceInfo,
    /// `(namespace, chunks of one file, tags)`.
    files: Vec<(String, Vec<Chunk>, Vec<String>)>,
    /// Namespace one's code graph.
    graph: Vec<FileGraph>,
}

fn node(path: &str, kind: NodeKind, name: &str, lines: (u32, u32), parent: Option<&Node>) -> Node {
    let fqn = parent
        .filter(|p| p.kind != NodeKind::Module)
        .map_or(name.to_string(), |p| format!("{}.{name}", p.fqn));
    Node {
        id: node_id(path, kind, &fqn, 0),
        kind,
        name: name.into(),
        fqn,
        package: None,
        signature: None,
        doc: None,
        path: path.into(),
        language: Language::detect(path),
        start_line: lines.0,
        end_line: lines.1,
        parent: parent.map(|p| p.id.clone()),
        route: None,
        http_method: None,
        declared_type: None,
    }
}

fn call(src: &Node, dst: Option<&Node>, name: &str, line: u32, resolution: Resolution) -> Edge {
    Edge {
        kind: EdgeKind::Calls,
        src: src.id.clone(),
        dst: dst.map(|d| d.id.clone()),
        dst_name: name.into(),
        confidence: resolution.confidence(),
        resolution,
        path: src.path.clone(),
        line,
        hint: None,
    }
}

/// The client calls `helper` from both methods and `retry_with_backoff` (another file) from
/// `send`; `helper` calls a library; `retry_with_backoff` calls `backoff`, which has no chunk.
fn graph() -> Vec<FileGraph> {
    let (ts, rs) = ("src/client.ts", "src/net/retry.rs");
    let ts_module = node(ts, NodeKind::Module, "client", (1, 40), None);
    let client = node(ts, NodeKind::Class, "Client", (1, 29), Some(&ts_module));
    let connect = node(ts, NodeKind::Method, "connect", (11, 11), Some(&client));
    let send = node(ts, NodeKind::Method, "send", (21, 21), Some(&client));
    let helper = node(ts, NodeKind::Function, "helper", (31, 31), Some(&ts_module));
    let rs_module = node(rs, NodeKind::Module, "retry", (1, 7), None);
    let retry = node(rs, NodeKind::Function, "retry_with_backoff", (1, 3), Some(&rs_module));
    let backoff = node(rs, NodeKind::Function, "backoff", (5, 7), Some(&rs_module));
    let file = |path: &str, nodes: Vec<Node>, edges: Vec<Edge>| FileGraph {
        path: path.into(),
        language: Language::detect(path),
        package: None,
        nodes,
        edges,
        imports: Vec::new(),
    };
    vec![
        file(
            ts,
            vec![ts_module.clone(), client.clone(), connect.clone(), send.clone(), helper.clone()],
            vec![
                call(&connect, Some(&helper), "helper", 11, Resolution::SameFile),
                call(&send, Some(&helper), "helper", 21, Resolution::SameFile),
                call(&send, Some(&retry), "retrySend", 21, Resolution::Import),
                call(&helper, None, "console.log", 31, Resolution::External),
            ],
        ),
        file(
            rs,
            vec![rs_module, retry.clone(), backoff.clone()],
            vec![call(&retry, Some(&backoff), "backoff", 2, Resolution::SameFile)],
        ),
    ]
}

fn chunk(
    path: &str,
    chunk_type: ChunkType,
    text: &str,
    index: u32,
    symbol: Option<&str>,
    parent: Option<&str>,
) -> Chunk {
    let start_line = 1 + index * 10;
    let end_line = start_line + text.lines().count().max(1) as u32 - 1;
    Chunk {
        id: ids::chunk_id(text, path, start_line, end_line),
        text_hash: ids::text_hash(text),
        path: path.to_string(),
        language: Language::detect(path),
        chunk_type,
        text: text.to_string(),
        start_line,
        end_line,
        start_byte: (index as usize) * 1000,
        end_byte: (index as usize) * 1000 + text.len(),
        chunk_index: index,
        token_count: text.chars().count().div_ceil(4) as u32,
        keywords: Vec::new(),
        metadata: ChunkMetadata {
            symbol_name: symbol.map(String::from),
            parent_symbol: parent.map(String::from),
            span_hash: ids::span_hash(path, start_line, end_line),
            ..Default::default()
        },
        updated_at: None,
        version: CHUNK_SCHEMA_VERSION,
    }
}

fn fixture(prefix: &str) -> Fixture {
    let info = |owner: String, status, ready_at: Option<&str>, chunk_count| NamespaceInfo {
        owner,
        name: "app".into(),
        status,
        ready_at: ready_at.map(String::from),
        chunk_count,
    };
    let one = info(format!("{prefix}-one"), NamespaceStatus::Ready, Some("2025-01-02T00:00:00.000Z"), 6);
    let two = info(format!("{prefix}-two"), NamespaceStatus::Indexing, None, 1);
    let retry = "fn retry_with_backoff(attempts: u32) -> Duration {\n    backoff(attempts)\n}";
    let client = [
        (
            "class Client {\n  constructor(url) { this.url = url; }",
            ChunkType::CodeClass,
            Some("Client"),
            None,
        ),
        (
            "  connect() { return openSocket(this.url); }",
            ChunkType::CodeMethod,
            Some("connect"),
            Some("Client"),
        ),
        (
            "  send(message) { return retrySend(message); }",
            ChunkType::CodeMethod,
            Some("send"),
            Some("Client"),
        ),
        ("function helper() { return 42; }", ChunkType::CodeFunction, Some("helper"), None),
    ];
    let client_chunks = client
        .iter()
        .enumerate()
        .map(|(i, (text, ty, symbol, parent))| chunk("src/client.ts", *ty, text, i as u32, *symbol, *parent))
        .collect();
    let guide = "## Retry policy\n\nWe retry failed requests with exponential backoff.";
    let (ns1, ns2) = (one.id(), two.id());
    Fixture {
        files: vec![
            (
                ns1.clone(),
                vec![chunk(
                    "src/net/retry.rs",
                    ChunkType::CodeFunction,
                    retry,
                    0,
                    Some("retry_with_backoff"),
                    None,
                )],
                vec!["api".into(), "net".into()],
            ),
            (ns1.clone(), client_chunks, Vec::new()),
            (
                ns1,
                vec![chunk(
                    "docs/guide.md",
                    ChunkType::MarkdownSection,
                    guide,
                    0,
                    Some("Retry policy"),
                    None,
                )],
                vec!["docs".into()],
            ),
            (
                ns2,
                vec![chunk(
                    "src/net/retry.rs",
                    ChunkType::CodeFunction,
                    retry,
                    0,
                    Some("retry_with_backoff"),
                    None,
                )],
                vec!["api".into()],
            ),
        ],
        one,
        two,
        graph: graph(),
    }
}

/// Set up the fixture under `prefix`, run every case, clean up.
pub async fn run_suite(stores: &dyn SearchStores, prefix: &str) -> SuiteReport {
    let fx = fixture(prefix);
    let mut report = SuiteReport::default();
    if let Err(e) = setup(stores, &fx).await {
        report.failed.push(CaseFailure { case: "setup".into(), error: e.to_string() });
        let _ = teardown(stores, &fx).await;
        return report;
    }
    let reference = MemoryStore::new();
    for (ns, chunks, tags) in &fx.files {
        reference.upsert(ns, chunks.iter().cloned(), tags);
    }
    let cases: [(&str, CaseResult); CASES] = [
        ("keyword_ranks_and_scores_like_the_reference_bm25", bm25_parity(stores, &reference, &fx).await),
        ("keyword_without_terms_finds_nothing", no_terms(stores, &fx).await),
        ("keyword_namespaces_never_leak", namespaces_never_leak(stores, &fx).await),
        ("keyword_filters_languages_paths_and_tags", filters(stores, &fx).await),
        ("keyword_limit_keeps_the_best", limit(stores, &fx).await),
        ("keyword_many_queries_answer_as_each_alone", many_queries(stores, &fx).await),
        ("chunks_get_returns_what_was_stored_and_skips_missing", get(stores, &fx).await),
        ("chunks_neighbors_come_in_file_order", neighbors(stores, &fx).await),
        ("chunks_families_hold_the_definition_and_its_pieces", families(stores, &fx).await),
        ("catalog_lists_the_recorded_namespaces", catalog(stores, &fx).await),
        ("graph_links_are_callees_and_callers_best_first", graph_links(stores, &fx).await),
        ("chunks_at_finds_the_chunks_holding_a_line", chunks_at(stores, &fx).await),
        // Last: it adds rows to namespace two.
        ("keyword_scores_follow_their_namespace_alone", scores_follow_the_namespace(stores, &fx).await),
    ];
    for (case, result) in cases {
        match result {
            Ok(()) => report.passed.push(case.to_string()),
            Err(error) => report.failed.push(CaseFailure { case: case.to_string(), error }),
        }
    }
    if let Err(e) = teardown(stores, &fx).await {
        report.failed.push(CaseFailure { case: "teardown".into(), error: e.to_string() });
    }
    report
}

async fn setup(stores: &dyn SearchStores, fx: &Fixture) -> Result<(), PortError> {
    teardown(stores, fx).await?;
    for info in [&fx.one, &fx.two] {
        stores.record_namespace(info).await?;
    }
    for (ns, chunks, tags) in &fx.files {
        stores.load(ns, chunks, tags).await?;
    }
    stores.load_graph(&fx.one.id(), &fx.graph).await
}

async fn teardown(stores: &dyn SearchStores, fx: &Fixture) -> Result<(), PortError> {
    stores.clear(&fx.one.id()).await?;
    stores.clear(&fx.two.id()).await
}

fn query(namespaces: &[String], text: &str, filters: SearchFilters, limit: usize) -> KeywordQuery {
    KeywordQuery {
        namespaces: namespaces.to_vec(),
        terms: keyword_terms(text, TermOptions::default()),
        filters,
        limit,
    }
}

async fn search(stores: &dyn SearchStores, q: &KeywordQuery) -> Result<Vec<ScoredKey>, String> {
    stores.keyword().search(q).await.map_err(|e| format!("search failed: {e}"))
}

fn paths_of(fx: &Fixture, hits: &[ScoredKey]) -> Vec<String> {
    hits.iter()
        .map(|h| {
            fx.files
                .iter()
                .flat_map(|(ns, chunks, _)| chunks.iter().map(move |c| (ns, c)))
                .find(|(ns, c)| **ns == h.key.namespace && c.id == h.key.id)
                .map_or_else(|| format!("unknown {}", h.key.id), |(_, c)| c.path.clone())
        })
        .collect()
}

async fn bm25_parity(stores: &dyn SearchStores, reference: &MemoryStore, fx: &Fixture) -> CaseResult {
    let q = query(&[fx.one.id()], "where do we retry with backoff", SearchFilters::default(), 10);
    let got = search(stores, &q).await?;
    let want = reference.search(&q).await.map_err(|e| e.to_string())?;
    check!(want.len() >= 3, "the reference found only {} chunks", want.len());
    let keys = |hits: &[ScoredKey]| hits.iter().map(|h| h.key.clone()).collect::<Vec<_>>();
    check!(
        keys(&got) == keys(&want),
        "ranking differs from the reference: got {:?}, want {:?}",
        paths_of(fx, &got),
        paths_of(fx, &want)
    );
    for (g, w) in got.iter().zip(&want) {
        check!(g.score > 0.0, "score of {} is {} (BM25 is reported positive)", g.key.id, g.score);
        let tolerance = 1e-3 * w.score.abs().max(1.0);
        check!(
            (g.score - w.score).abs() <= tolerance,
            "score of {} is {}, the reference says {}",
            g.key.id,
            g.score,
            w.score
        );
    }
    for pair in got.windows(2) {
        let ordered = pair[0].score > pair[1].score
            || (pair[0].score == pair[1].score && pair[0].key.id <= pair[1].key.id);
        check!(ordered, "not best first, ties by id: {pair:?}");
    }
    // Any-term semantics: the helper function matches no term and must not appear.
    let helper = &fx.files[1].1[3];
    check!(!got.iter().any(|h| h.key.id == helper.id), "a chunk without any query term was returned");
    Ok(())
}

/// Namespace one's scores are its own: namespace two gaining copies of all of namespace one's
/// chunks (every term's document frequency and the average length change database-wide) moves
/// neither its ranking nor a score.
async fn scores_follow_the_namespace(stores: &dyn SearchStores, fx: &Fixture) -> CaseResult {
    let q = query(&[fx.one.id()], "where do we retry with backoff", SearchFilters::default(), 10);
    let before = search(stores, &q).await?;
    check!(before.len() >= 3, "namespace one matched only {} chunks", before.len());
    for (_, chunks, tags) in fx.files.iter().filter(|(ns, _, _)| *ns == fx.one.id()) {
        stores.load(&fx.two.id(), chunks, tags).await.map_err(|e| e.to_string())?;
    }
    let two = search(
        stores,
        &query(&[fx.two.id()], "where do we retry with backoff", SearchFilters::default(), 10),
    )
    .await?;
    check!(two.len() > 1, "the copies in namespace two are searchable: {two:?}");
    let after = search(stores, &q).await?;
    check!(after == before, "namespace one's results moved: before {before:?}, after {after:?}");
    Ok(())
}

/// Several queries in one call (a search's sub-queries) get exactly what each gets alone, also
/// when an index shares work between them: a query that only adds a spelling no chunk holds ranks
/// exactly as the query without it, one that adds a held term does not (queries that extend
/// another with held terms, one and two of them, with and without a spelling nobody holds).
async fn many_queries(stores: &dyn SearchStores, fx: &Fixture) -> CaseResult {
    let one = [fx.one.id()];
    let base = query(&one, "retry backoff", SearchFilters::default(), 10);
    let with = |extra: &str| {
        let mut q = base.clone();
        q.terms.extend(keyword_terms(extra, TermOptions::default()));
        q
    };
    let unheld = with("retrybackoffspelling");
    let held = with("client");
    let queries = [
        base.clone(),
        unheld.clone(),
        held.clone(),
        query(&one, "retrybackoffspelling", SearchFilters::default(), 10),
        with("client connect retrybackoffspelling"),
        query(&[fx.one.id(), fx.two.id()], "retry backoff", SearchFilters::default(), 10),
        query(
            &one,
            "client connect send",
            SearchFilters { languages: vec![Language::Typescript], ..Default::default() },
            2,
        ),
        base.clone(),
    ];
    let many = stores.keyword().search_many(&queries).await;
    check!(many.len() == queries.len(), "{} answers for {} queries", many.len(), queries.len());
    for (q, got) in queries.iter().zip(&many) {
        let alone = search(stores, q).await?;
        let got = got.as_ref().map_err(|e| format!("search_many failed: {e}"))?;
        check!(*got == alone, "{:?}: together {got:?}, alone {alone:?}", q.terms);
    }
    let hits = |i: usize| many[i].as_ref().map_err(|e| e.to_string());
    check!(hits(0)?.len() >= 2, "the base query found {:?}", hits(0)?);
    check!(hits(1)? == hits(0)?, "a spelling no chunk holds changed the ranking: {:?}", hits(1)?);
    check!(hits(2)? != hits(0)?, "a held term changed nothing: {:?}", hits(2)?);
    check!(hits(3)?.is_empty(), "only an unheld spelling found {:?}", hits(3)?);
    Ok(())
}

async fn no_terms(stores: &dyn SearchStores, fx: &Fixture) -> CaseResult {
    let q = KeywordQuery { terms: Vec::new(), ..query(&[fx.one.id()], "", SearchFilters::default(), 10) };
    let got = search(stores, &q).await?;
    check!(got.is_empty(), "empty terms found {got:?}");
    Ok(())
}

async fn namespaces_never_leak(stores: &dyn SearchStores, fx: &Fixture) -> CaseResult {
    let got = search(stores, &query(&[fx.two.id()], "retry backoff", SearchFilters::default(), 10)).await?;
    check!(got.len() == 1, "namespace two holds one matching chunk, got {}", got.len());
    check!(got.iter().all(|h| h.key.namespace == fx.two.id()), "another namespace leaked in: {got:?}");
    let both = [fx.one.id(), fx.two.id()];
    let got = search(stores, &query(&both, "retry backoff", SearchFilters::default(), 10)).await?;
    for ns in &both {
        check!(got.iter().any(|h| &h.key.namespace == ns), "{ns} missing from a two-namespace search");
    }
    let unknown = namespace_id("nobody", "nothing");
    let got = search(stores, &query(&[unknown], "retry backoff", SearchFilters::default(), 10)).await?;
    check!(got.is_empty(), "an unknown namespace found {got:?}");
    Ok(())
}

async fn filters(stores: &dyn SearchStores, fx: &Fixture) -> CaseResult {
    let ns = [fx.one.id()];
    let run = |filters: SearchFilters| {
        let q = query(&ns, "retry backoff client", filters, 10);
        async move { search(stores, &q).await.map(|hits| paths_of(fx, &hits)) }
    };
    let all = run(SearchFilters::default()).await?;
    check!(
        all.iter().any(|p| p.starts_with("src/")) && all.iter().any(|p| p.starts_with("docs/")),
        "{all:?}"
    );
    let md = run(SearchFilters { languages: vec![Language::Markdown], ..Default::default() }).await?;
    check!(md == ["docs/guide.md"], "languages=[markdown] gave {md:?}");
    let two =
        run(SearchFilters { languages: vec![Language::Rust, Language::Markdown], ..Default::default() })
            .await?;
    check!(
        two.len() == 2
            && two.contains(&"docs/guide.md".to_string())
            && two.contains(&"src/net/retry.rs".to_string()),
        "languages=[rust, markdown] gave {two:?}"
    );
    // Below the number of kept matches, a filtered search keeps the best of them in order.
    let ts = SearchFilters { languages: vec![Language::Typescript], ..Default::default() };
    let ts_query = |limit| query(&ns, "client connect send helper url message", ts.clone(), limit);
    let ts_all = search(stores, &ts_query(10)).await?;
    let ts_two = search(stores, &ts_query(2)).await?;
    check!(ts_all.len() >= 3, "languages=[typescript] gave {ts_all:?}");
    check!(
        ts_two.iter().map(|h| &h.key).eq(ts_all.iter().take(2).map(|h| &h.key)),
        "limit 2 gave {ts_two:?}, limit 10 {ts_all:?}"
    );
    let src = run(SearchFilters { paths: vec!["src/**".into()], ..Default::default() }).await?;
    check!(!src.is_empty() && src.iter().all(|p| p.starts_with("src/")), "paths=[src/**] gave {src:?}");
    let glob = run(SearchFilters { paths: vec!["*.rs".into()], ..Default::default() }).await?;
    check!(glob == ["src/net/retry.rs"], "paths=[*.rs] gave {glob:?}");
    let all_kinds = SearchFilters {
        languages: vec![Language::Rust, Language::Typescript],
        paths: vec!["src/net/**".into()],
        tags: vec!["api".into()],
    };
    let all_kinds = run(all_kinds).await?;
    check!(all_kinds == ["src/net/retry.rs"], "languages + paths + tags gave {all_kinds:?}");
    let ts_src = run(SearchFilters {
        languages: vec![Language::Typescript],
        paths: vec!["src/*.ts".into()],
        ..Default::default()
    })
    .await?;
    check!(
        !ts_src.is_empty() && ts_src.iter().all(|p| p == "src/client.ts"),
        "languages + paths gave {ts_src:?}"
    );
    let api = run(SearchFilters { tags: vec!["api".into()], ..Default::default() }).await?;
    check!(api == ["src/net/retry.rs"], "tags=[api] gave {api:?}");
    let any = run(SearchFilters { tags: vec!["docs".into(), "net".into()], ..Default::default() }).await?;
    check!(any.len() == 2 && any.contains(&"docs/guide.md".to_string()), "tags=[docs, net] gave {any:?}");
    let none = run(SearchFilters { tags: vec!["nope".into()], ..Default::default() }).await?;
    check!(none.is_empty(), "tags=[nope] gave {none:?}");
    Ok(())
}

async fn limit(stores: &dyn SearchStores, fx: &Fixture) -> CaseResult {
    let ns = [fx.one.id()];
    let all = search(stores, &query(&ns, "retry backoff", SearchFilters::default(), 10)).await?;
    let one = search(stores, &query(&ns, "retry backoff", SearchFilters::default(), 1)).await?;
    check!(all.len() >= 2, "expected several hits, got {}", all.len());
    check!(one.len() == 1 && one[0].key == all[0].key, "limit 1 gave {one:?}, the best is {:?}", all[0]);
    Ok(())
}

fn same_chunk(got: &Chunk, want: &Chunk) -> bool {
    // `updated_at` is the store's to set.
    Chunk { updated_at: None, ..got.clone() } == *want
}

async fn get(stores: &dyn SearchStores, fx: &Fixture) -> CaseResult {
    let (ns, chunks, tags) = &fx.files[0];
    let keys = [
        ChunkKey::new(ns, &chunks[0].id),
        ChunkKey::new(ns, "0".repeat(64)),
        ChunkKey::new(fx.two.id(), &fx.files[1].1[0].id),
    ];
    let got = stores.chunks().get(&keys).await.map_err(|e| format!("get failed: {e}"))?;
    check!(got.len() == 1, "one of three keys exists, got {} records", got.len());
    let record = &got[0];
    check!(record.namespace == *ns, "namespace {}", record.namespace);
    check!(same_chunk(&record.chunk, &chunks[0]), "stored {:?}\nread back {:?}", chunks[0], record.chunk);
    check!(record.tags == *tags, "tags {:?}, stored {tags:?}", record.tags);
    let empty = stores.chunks().get(&[]).await.map_err(|e| format!("get failed: {e}"))?;
    check!(empty.is_empty(), "no keys gave {empty:?}");
    Ok(())
}

fn order_of(records: &[ChunkRecord]) -> Vec<(String, String, u32)> {
    records.iter().map(|r| (r.namespace.clone(), r.chunk.path.clone(), r.chunk.chunk_index)).collect()
}

async fn neighbors(stores: &dyn SearchStores, fx: &Fixture) -> CaseResult {
    let ns = fx.one.id();
    let range = |path: &str, from_index, to_index| NeighborRange {
        namespace: ns.clone(),
        path: path.into(),
        from_index,
        to_index,
    };
    let ranges =
        [range("src/net/retry.rs", 0, 3), range("src/client.ts", 1, 2), range("docs/guide.md", 5, 9)];
    let got = stores.chunks().neighbors(&ranges).await.map_err(|e| format!("neighbors failed: {e}"))?;
    let want = vec![
        (ns.clone(), "src/client.ts".to_string(), 1),
        (ns.clone(), "src/client.ts".to_string(), 2),
        (ns.clone(), "src/net/retry.rs".to_string(), 0),
    ];
    check!(order_of(&got) == want, "got {:?}, want {want:?}", order_of(&got));
    Ok(())
}

async fn families(stores: &dyn SearchStores, fx: &Fixture) -> CaseResult {
    let ns = fx.one.id();
    let family =
        SymbolFamily { namespace: ns.clone(), path: "src/client.ts".into(), symbol: "Client".into() };
    let got = stores
        .chunks()
        .families(std::slice::from_ref(&family), 10)
        .await
        .map_err(|e| format!("families failed: {e}"))?;
    let indexes: Vec<u32> = got.iter().map(|r| r.chunk.chunk_index).collect();
    check!(indexes == [0, 1, 2], "the Client family is the class and its two methods, got {indexes:?}");
    let got = stores.chunks().families(&[family], 2).await.map_err(|e| format!("families failed: {e}"))?;
    let indexes: Vec<u32> = got.iter().map(|r| r.chunk.chunk_index).collect();
    check!(indexes == [0, 1], "limit 2 gave {indexes:?}");
    let elsewhere =
        SymbolFamily { namespace: fx.two.id(), path: "src/client.ts".into(), symbol: "Client".into() };
    let got =
        stores.chunks().families(&[elsewhere], 10).await.map_err(|e| format!("families failed: {e}"))?;
    check!(got.is_empty(), "a family leaked across namespaces: {:?}", order_of(&got));
    Ok(())
}

async fn graph_links(stores: &dyn SearchStores, fx: &Fixture) -> CaseResult {
    let (ns1, ns2) = (fx.one.id(), fx.two.id());
    let symbol = |name: &str| {
        fx.graph.iter().flat_map(|f| &f.nodes).find(|n| n.name == name).map(|n| n.id.to_string())
    };
    let q = |ns: &str, path: &str, lines: (u32, u32), name: &str| SymbolQuery {
        namespace: ns.into(),
        path: path.into(),
        start_line: lines.0,
        end_line: lines.1,
        symbol_id: symbol(name),
    };
    let queries = [
        q(&ns1, "src/client.ts", (21, 21), "send"),
        q(&ns1, "src/client.ts", (31, 31), "helper"),
        q(&ns1, "src/net/retry.rs", (1, 3), "retry_with_backoff"),
        q(&ns2, "src/net/retry.rs", (1, 3), "retry_with_backoff"),
    ];
    let namespaces = [ns1.clone(), ns2.clone()];
    let got = stores
        .chunks()
        .graph_links(&namespaces, &queries, 5)
        .await
        .map_err(|e| format!("graph_links failed: {e}"))?;
    check!(got.with_graph == [ns1.clone()], "namespaces with a graph: {:?}", got.with_graph);
    let of = |query: usize, direction| {
        got.links
            .iter()
            .filter(|l| l.query == query && l.direction == direction)
            .map(|l| (l.name.clone(), l.path.clone(), l.line))
            .collect::<Vec<_>>()
    };
    let link = |name: &str, path: &str, line| (name.to_string(), path.to_string(), line);
    // Same-file (0.9) before import (0.85); the library call is not a link.
    let uses = of(0, LinkDirection::Uses);
    let want = [link("helper", "src/client.ts", 31), link("retry_with_backoff", "src/net/retry.rs", 1)];
    check!(uses == want, "send uses {uses:?}, want {want:?}");
    check!(of(0, LinkDirection::UsedBy).is_empty(), "nobody calls send: {:?}", of(0, LinkDirection::UsedBy));
    // Equal confidence: the nearer call site first; callers are located at the call.
    let used_by = of(1, LinkDirection::UsedBy);
    let want = [link("send", "src/client.ts", 21), link("connect", "src/client.ts", 11)];
    check!(used_by == want, "helper is used by {used_by:?}, want {want:?}");
    check!(
        of(1, LinkDirection::Uses).is_empty(),
        "helper only calls a library: {:?}",
        of(1, LinkDirection::Uses)
    );
    check!(
        of(2, LinkDirection::UsedBy) == [link("send", "src/client.ts", 21)],
        "retry used by {:?}",
        of(2, LinkDirection::UsedBy)
    );
    check!(
        of(2, LinkDirection::Uses) == [link("backoff", "src/net/retry.rs", 5)],
        "retry uses {:?}",
        of(2, LinkDirection::Uses)
    );
    check!(
        of(3, LinkDirection::Uses).is_empty() && of(3, LinkDirection::UsedBy).is_empty(),
        "a graph leaked across namespaces"
    );
    let confidence =
        got.links.iter().find(|l| l.query == 2 && l.direction == LinkDirection::UsedBy).map(|l| l.confidence);
    check!(confidence == Some(Resolution::Import.confidence()), "confidence {confidence:?}");
    let one = stores
        .chunks()
        .graph_links(&namespaces, &queries[1..2], 1)
        .await
        .map_err(|e| format!("graph_links failed: {e}"))?;
    let names: Vec<&str> = one.links.iter().map(|l| l.name.as_str()).collect();
    check!(names == ["send"], "per_query 1 kept {names:?}");
    // The limit holds per asked chunk and direction, not for the whole answer.
    let each = stores
        .chunks()
        .graph_links(&namespaces, &queries[..3], 1)
        .await
        .map_err(|e| format!("graph_links failed: {e}"))?;
    let mut kept: Vec<(usize, LinkDirection, &str)> =
        each.links.iter().map(|l| (l.query, l.direction, l.name.as_str())).collect();
    kept.sort();
    let want = [
        (0, LinkDirection::Uses, "helper"),
        (1, LinkDirection::UsedBy, "send"),
        (2, LinkDirection::Uses, "backoff"),
        (2, LinkDirection::UsedBy, "send"),
    ];
    check!(kept == want, "per_query 1 over three chunks kept {kept:?}, want {want:?}");
    Ok(())
}

async fn chunks_at(stores: &dyn SearchStores, fx: &Fixture) -> CaseResult {
    let (ns1, ns2) = (fx.one.id(), fx.two.id());
    let p = |ns: &str, path: &str, line| LinePoint { namespace: ns.into(), path: path.into(), line };
    let points = [
        p(&ns1, "src/net/retry.rs", 2),
        p(&ns1, "src/client.ts", 21),
        p(&ns1, "src/net/retry.rs", 6),
        p(&ns2, "src/client.ts", 21),
    ];
    let got = stores.chunks().chunks_at(&points).await.map_err(|e| format!("chunks_at failed: {e}"))?;
    let want =
        vec![(ns1.clone(), "src/client.ts".to_string(), 2), (ns1.clone(), "src/net/retry.rs".to_string(), 0)];
    check!(order_of(&got) == want, "got {:?}, want {want:?}", order_of(&got));
    let none = stores.chunks().chunks_at(&[]).await.map_err(|e| format!("chunks_at failed: {e}"))?;
    check!(none.is_empty(), "no points gave {}", none.len());
    Ok(())
}

async fn catalog(stores: &dyn SearchStores, fx: &Fixture) -> CaseResult {
    let listed = stores.catalog().list().await.map_err(|e| format!("list failed: {e}"))?;
    for want in [&fx.one, &fx.two] {
        let Some(got) = listed.iter().find(|n| n.id() == want.id()) else {
            return Err(format!("{} is not listed", want.id()));
        };
        check!(
            got.status == want.status,
            "{}: status {:?}, recorded {:?}",
            want.id(),
            got.status,
            want.status
        );
        check!(
            got.ready_at == want.ready_at,
            "{}: readyAt {:?}, recorded {:?}",
            want.id(),
            got.ready_at,
            want.ready_at
        );
        check!(
            got.chunk_count == want.chunk_count,
            "{}: {} chunks, {} stored",
            want.id(),
            got.chunk_count,
            want.chunk_count
        );
        check!(got.is_searchable() == (want.status == NamespaceStatus::Ready), "{}: searchable", want.id());
    }
    Ok(())
}

/// The in-memory stores behind the ports, set up the way [`SearchStores`] asks.
#[derive(Debug, Default)]
pub struct MemoryStores {
    pub store: MemoryStore,
    pub catalog: MemoryCatalog,
}

#[async_trait::async_trait(?Send)]
impl SearchStores for MemoryStores {
    async fn load(&self, namespace: &str, chunks: &[Chunk], tags: &[String]) -> Result<(), PortError> {
        self.store.upsert(namespace, chunks.iter().cloned(), tags);
        Ok(())
    }

    async fn load_graph(&self, namespace: &str, files: &[FileGraph]) -> Result<(), PortError> {
        self.store.set_graph(namespace, files.to_vec());
        Ok(())
    }

    async fn record_namespace(&self, info: &NamespaceInfo) -> Result<(), PortError> {
        let mut namespaces = self.catalog.namespaces.borrow_mut();
        namespaces.retain(|n| n.id() != info.id());
        namespaces.push(info.clone());
        Ok(())
    }

    async fn clear(&self, namespace: &str) -> Result<(), PortError> {
        for record in self.store.records(namespace) {
            self.store.remove(&ChunkKey::new(namespace, &record.chunk.id));
        }
        self.store.set_graph(namespace, Vec::new());
        self.catalog.namespaces.borrow_mut().retain(|n| n.id() != namespace);
        Ok(())
    }

    fn keyword(&self) -> &dyn KeywordIndex {
        &self.store
    }

    fn chunks(&self) -> &dyn ChunkStore {
        &self.store
    }

    fn catalog(&self) -> &dyn NamespaceCatalog {
        &self.catalog
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::block_on;

    #[test]
    fn the_in_memory_stores_pass_the_suite() {
        let stores = MemoryStores::default();
        let report = block_on(run_suite(&stores, "suite"));
        assert!(report.failed.is_empty(), "{:#?}", report.failed);
        assert_eq!(report.passed.len(), CASES);
        assert!(
            stores.store.is_empty() && stores.catalog.namespaces.borrow().is_empty(),
            "teardown left data"
        );
    }

    /// A keyword index that answers in the wrong order and ignores namespaces and filters.
    struct Careless(MemoryStores);

    #[async_trait::async_trait(?Send)]
    impl KeywordIndex for Careless {
        async fn search(&self, query: &KeywordQuery) -> Result<Vec<ScoredKey>, PortError> {
            let namespaces = self.0.catalog.namespaces.borrow().iter().map(NamespaceInfo::id).collect();
            let loose = KeywordQuery { namespaces, filters: SearchFilters::default(), ..query.clone() };
            let mut hits = self.0.store.search(&loose).await?;
            hits.reverse();
            Ok(hits)
        }
    }

    #[async_trait::async_trait(?Send)]
    impl SearchStores for Careless {
        async fn load(&self, namespace: &str, chunks: &[Chunk], tags: &[String]) -> Result<(), PortError> {
            self.0.load(namespace, chunks, tags).await
        }
        async fn load_graph(&self, namespace: &str, files: &[FileGraph]) -> Result<(), PortError> {
            self.0.load_graph(namespace, files).await
        }
        async fn record_namespace(&self, info: &NamespaceInfo) -> Result<(), PortError> {
            self.0.record_namespace(info).await
        }
        async fn clear(&self, namespace: &str) -> Result<(), PortError> {
            self.0.clear(namespace).await
        }
        fn keyword(&self) -> &dyn KeywordIndex {
            self
        }
        fn chunks(&self) -> &dyn ChunkStore {
            &self.0.store
        }
        fn catalog(&self) -> &dyn NamespaceCatalog {
            &self.0.catalog
        }
    }

    #[test]
    fn a_store_that_ranks_wrong_and_leaks_fails_the_keyword_cases() {
        let report = block_on(run_suite(&Careless(MemoryStores::default()), "careless"));
        let failed: Vec<&str> = report.failed.iter().map(|f| f.case.as_str()).collect();
        for case in [
            "keyword_ranks_and_scores_like_the_reference_bm25",
            "keyword_namespaces_never_leak",
            "keyword_filters_languages_paths_and_tags",
            "keyword_limit_keeps_the_best",
        ] {
            assert!(failed.contains(&case), "{case} passed: {failed:?}");
        }
        assert!(report.passed.contains(&"chunks_get_returns_what_was_stored_and_skips_missing".to_string()));
    }
}
