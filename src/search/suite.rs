//! The search store ports' shared behaviour suite (`edgerag_search::testing`) run on D1, the same
//! cases the in-memory stores pass natively: `POST /__test/search/suite` `{prefix?}` (test build
//! only, `EDGERAG_TEST_ROUTES=1`). BM25 parity compares FTS5's ranking and scores with the
//! reference formula, so run it on a database holding nothing but the suite's chunks.
//!
//! `GET /__test/search/plans` answers SQLite's query plan of the code-graph statements a search or
//! a symbol lookup runs (`{name: [detail, …]}`), so a test can check that their cost follows the
//! chunk or name asked about, not the size of the namespace.
use edgerag_core::graph::{Edge, FileGraph};
use edgerag_core::Chunk;
use edgerag_search::ports::{
    ChunkStore, KeywordIndex, KeywordQuery, NamespaceCatalog, NamespaceInfo, ScoredKey,
};
use edgerag_search::testing::{run_suite, SearchStores};
use edgerag_search::PortError;
use worker::{Env, Request, Response};

use super::d1::{CopyConfig, D1Search};
use crate::auth::{Access, Policy, Principal};
use crate::error::ApiError;
use crate::store::chunks::{self, ChunkRow};
use crate::store::graph;
use crate::store::Stores;

struct D1Stores {
    stores: Stores,
    search: D1Search,
    /// With `{copies: true}`: keyword queries answered from the in-memory copies, each checked
    /// against FTS5's answer.
    checked: Option<CheckedCopies>,
}

/// A keyword port that answers from the namespaces' in-memory copies (built by the first query
/// after every change) and compares every answer with FTS5's for the same query: ids and scores
/// must be identical, not close.
struct CheckedCopies {
    fts: D1Search,
    copies: D1Search,
    mismatches: std::cell::RefCell<Vec<String>>,
}

#[async_trait::async_trait(?Send)]
impl KeywordIndex for CheckedCopies {
    async fn search(&self, query: &KeywordQuery) -> Result<Vec<ScoredKey>, PortError> {
        Ok(self.search_many(std::slice::from_ref(query)).await.pop().unwrap_or(Ok(Vec::new()))?)
    }

    async fn search_many(&self, queries: &[KeywordQuery]) -> Vec<Result<Vec<ScoredKey>, PortError>> {
        let want = self.fts.search_many(queries).await;
        let got = self.copies.search_many(queries).await;
        for ((q, w), g) in queries.iter().zip(&want).zip(&got) {
            if w != g {
                self.mismatches.borrow_mut().push(format!("{:?}: FTS5 {w:?}, copy {g:?}", q.terms));
            }
        }
        got
    }
}

fn port(e: impl std::fmt::Display) -> PortError {
    PortError::new("d1", e.to_string())
}

#[async_trait::async_trait(?Send)]
impl SearchStores for D1Stores {
    async fn load(&self, namespace: &str, chunks: &[Chunk], tags: &[String]) -> Result<(), PortError> {
        let db = self.stores.assign(namespace).await.map_err(port)?;
        let tags = edgerag_core::tags::to_column(tags);
        let rows: Vec<ChunkRow> = chunks.iter().map(|c| ChunkRow::new(c).with_tags(&tags)).collect();
        let mut statements = crate::store::keyword::ensure_statements(&db, namespace).map_err(port)?;
        statements.extend(
            chunks::upsert_chunks_statements(&db, namespace, &crate::time::now_iso(), &rows).map_err(port)?,
        );
        db.batch(statements).await.map_err(port)?;
        Ok(())
    }

    async fn load_graph(&self, namespace: &str, files: &[FileGraph]) -> Result<(), PortError> {
        let db = self.stores.assign(namespace).await.map_err(port)?;
        let mut statements = Vec::new();
        for f in files {
            statements
                .extend(graph::replace_file_statements(&db, namespace, &f.path, Some(f)).map_err(port)?);
        }
        // The suite's edges are already resolved: store them as cross-file resolution would.
        let edges: Vec<&Edge> = files.iter().flat_map(|f| &f.edges).collect();
        statements.extend(graph::replace_edges_statements(&db, namespace, &edges).map_err(port)?);
        db.batch(statements).await.map_err(port)?;
        Ok(())
    }

    async fn record_namespace(&self, info: &NamespaceInfo) -> Result<(), PortError> {
        let db = self.stores.assign(&info.id()).await.map_err(port)?;
        let now = crate::time::now_iso();
        db.run(
            "INSERT INTO namespaces (id, owner, name, status, ready_at, chunk_count, created_at, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7) \
             ON CONFLICT(id) DO UPDATE SET status = excluded.status, ready_at = excluded.ready_at, \
               chunk_count = excluded.chunk_count, updated_at = excluded.updated_at",
            &crate::store::args![
                &info.id(),
                &info.owner,
                &info.name,
                info.status.as_str(),
                &info.ready_at,
                info.chunk_count as i64,
                &now
            ],
        )
        .await
        .map_err(port)?;
        Ok(())
    }

    async fn clear(&self, namespace: &str) -> Result<(), PortError> {
        let db = self.stores.for_namespace(namespace).await.map_err(port)?;
        // The namespace's keyword index goes before its chunks (see `keyword::drop_sql`).
        let mut statements = crate::store::keyword::drop_statements(&db, namespace).map_err(port)?;
        statements.extend([
            db.stmt("DELETE FROM chunks WHERE namespace = ?", &crate::store::args![namespace])
                .map_err(port)?,
            crate::store::keyword::forget_statement(&db, namespace).map_err(port)?,
            db.stmt("DELETE FROM namespaces WHERE id = ?", &crate::store::args![namespace]).map_err(port)?,
        ]);
        statements.extend(graph::delete_namespace_statements(&db, namespace).map_err(port)?);
        db.batch(statements).await.map_err(port)?;
        Ok(())
    }

    fn keyword(&self) -> &dyn KeywordIndex {
        match &self.checked {
            Some(checked) => checked,
            None => &self.search,
        }
    }

    fn chunks(&self) -> &dyn ChunkStore {
        &self.search
    }

    fn catalog(&self) -> &dyn NamespaceCatalog {
        &self.search
    }
}

/// Handles `POST /__test/search/suite` and `GET /__test/search/plans`; `None` for any other path
/// or when test routes are off.
pub async fn handle(req: &mut Request, env: &Env) -> Option<worker::Result<Response>> {
    if !crate::vector::test_routes::enabled(env) {
        return None;
    }
    match req.path().as_str() {
        "/__test/search/suite" => {}
        "/__test/search/plans" => return Some(plans(env).await),
        "/__test/search/keyword-copies" => return Some(keyword_copies(req, env).await),
        "/__test/search/keyword-copies/state" => return Some(copy_state(req).await),
        "/__test/search/tokenizer" => return Some(tokenizer(req, env).await),
        _ => return None,
    }
    let body: serde_json::Value = req.json().await.unwrap_or_default();
    let prefix = body.get("prefix").and_then(|p| p.as_str()).unwrap_or("suite").to_string();
    let stores = match Stores::from_env(env) {
        Ok(s) => s,
        Err(e) => return Some(Ok(crate::http::error_response(&ApiError::new(500, "NO_DB", e.to_string())))),
    };
    let access =
        Access { who: Principal::Root, policy: Policy { public_reads: false, writes_enabled: true } };
    let copies = body.get("copies").and_then(|c| c.as_bool()).unwrap_or(false);
    let checked = copies.then(|| CheckedCopies {
        fts: D1Search::new(stores.clone(), access.clone()).with_copies(CopyConfig::OFF),
        copies: D1Search::new(stores.clone(), access.clone())
            .with_copies(CopyConfig { quiet_ms: 0.0, ..CopyConfig::default() }),
        mismatches: Default::default(),
    });
    let d1 = D1Stores {
        search: D1Search::new(stores.clone(), access).with_copies(CopyConfig::OFF),
        stores,
        checked,
    };
    let report = run_suite(&d1, &prefix).await;
    let mut out = serde_json::to_value(&report).unwrap_or_default();
    if let Some(checked) = &d1.checked {
        out["copies"] = serde_json::json!({
            "answered": checked.copies.copy_answers(),
            "mismatches": *checked.mismatches.borrow(),
        });
    }
    Some(Response::from_json(&out))
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct CopiesBody {
    namespaces: Vec<String>,
    queries: Vec<String>,
    #[serde(default)]
    filters: Vec<edgerag_search::filters::SearchFilters>,
    limit: usize,
}

/// `POST /__test/search/keyword-copies/state` `{namespace, buildDelayMs?, forget?}`: whether this
/// isolate holds a keyword copy of the namespace and whether one is being built in the background
/// (`{held, building}`); `buildDelayMs` sets the pause before every later background build;
/// `forget: true` first drops every keyword copy of the isolate (what a new isolate starts with).
async fn copy_state(req: &mut Request) -> worker::Result<Response> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct StateBody {
        namespace: String,
        build_delay_ms: Option<u64>,
        #[serde(default)]
        forget: bool,
    }
    let body: StateBody = match req.json().await {
        Ok(b) => b,
        Err(e) => {
            return Ok(crate::http::error_response(&ApiError::new(400, "INVALID_REQUEST", e.to_string())))
        }
    };
    if let Some(ms) = body.build_delay_ms {
        super::d1::copy_hooks::set_build_delay(ms);
    }
    if body.forget {
        super::d1::forget_copies();
    }
    let (held, building) = super::d1::copy_state(&body.namespace);
    Response::from_json(&serde_json::json!({ "held": held, "building": building }))
}

/// `POST /__test/search/keyword-copies` `{namespaces, queries, filters?, limit}`: each raw query
/// (its keyword terms as a search makes them), under no filter and under each of `filters`, asked
/// of FTS5 and of the namespaces' in-memory copies (built now, whatever the quiet time); answers
/// `{asked, answeredByCopy, mismatches, hits}` — `hits` counts FTS5's results, so a test can tell
/// that the comparison had something to compare.
async fn keyword_copies(req: &mut Request, env: &Env) -> worker::Result<Response> {
    let body: CopiesBody = match req.json().await {
        Ok(b) => b,
        Err(e) => {
            return Ok(crate::http::error_response(&ApiError::new(400, "INVALID_REQUEST", e.to_string())))
        }
    };
    let stores = match Stores::from_env(env) {
        Ok(s) => s,
        Err(e) => return Ok(crate::http::error_response(&ApiError::new(500, "NO_DB", e.to_string()))),
    };
    let access =
        Access { who: Principal::Root, policy: Policy { public_reads: false, writes_enabled: true } };
    let fts = D1Search::new(stores.clone(), access.clone()).with_copies(CopyConfig::OFF);
    let copies =
        D1Search::new(stores, access).with_copies(CopyConfig { quiet_ms: 0.0, ..CopyConfig::default() });
    let mut filters = vec![edgerag_search::filters::SearchFilters::default()];
    filters.extend(body.filters);
    let queries: Vec<KeywordQuery> = body
        .queries
        .iter()
        .flat_map(|q| {
            let terms = edgerag_search::query::keyword_terms(q, Default::default());
            let namespaces = body.namespaces.clone();
            filters.iter().map(move |f| KeywordQuery {
                namespaces: namespaces.clone(),
                terms: terms.clone(),
                filters: f.clone(),
                limit: body.limit,
            })
        })
        .collect();
    let want = fts.search_many(&queries).await;
    let got = copies.search_many(&queries).await;
    let mut mismatches = Vec::new();
    let mut hits = 0;
    for ((q, w), g) in queries.iter().zip(&want).zip(&got) {
        hits += w.as_ref().map_or(0, Vec::len);
        if w != g {
            mismatches.push(format!("{:?} {:?}: FTS5 {w:?}, copy {g:?}", q.terms, q.filters));
        }
    }
    Response::from_json(&serde_json::json!({
        "asked": queries.len(),
        "answeredByCopy": copies.copy_answers(),
        "mismatches": mismatches,
        "hits": hits,
    }))
}

#[derive(serde::Deserialize)]
struct TokenizerBody {
    from: u32,
    to: u32,
}

/// `POST /__test/search/tokenizer` `{from, to}`: for every code point in `from..=to` (at most
/// 40,000; surrogates skipped), the tokens FTS5 in this D1 makes of "q<c>z <c>" (a scratch table,
/// dropped after) against the in-memory index's tokenizer: `{checked, uncertain, differ,
/// examples}`. `differ` counts code points the tokenizer claims to read as FTS5 does and does not.
async fn tokenizer(req: &mut Request, env: &Env) -> worker::Result<Response> {
    let bad = |m: String| Ok(crate::http::error_response(&ApiError::new(400, "INVALID_REQUEST", m)));
    let body: TokenizerBody = match req.json().await {
        Ok(b) => b,
        Err(e) => return bad(e.to_string()),
    };
    if body.from == 0 || body.to < body.from || body.to - body.from >= 40_000 {
        return bad("from ≥ 1, to ≥ from, at most 40,000 code points".into());
    }
    let db = match Stores::from_env(env) {
        Ok(s) => s.catalog().clone(),
        Err(e) => return Ok(crate::http::error_response(&ApiError::new(500, "NO_DB", e.to_string()))),
    };
    let rows: Vec<serde_json::Value> = (body.from..=body.to)
        .filter_map(char::from_u32)
        .map(|c| serde_json::json!([c as u32, format!("q{c}z {c}")]))
        .collect();
    let fail = |e: crate::store::StoreError| {
        Ok(crate::http::error_response(&ApiError::new(500, "D1", e.to_string())))
    };
    let mut statements = Vec::new();
    for sql in [
        "DROP TABLE IF EXISTS scratch_tokenizer_v",
        "DROP TABLE IF EXISTS scratch_tokenizer",
        "CREATE VIRTUAL TABLE scratch_tokenizer USING fts5(x, tokenize = 'unicode61 remove_diacritics 2')",
        "CREATE VIRTUAL TABLE scratch_tokenizer_v USING fts5vocab(scratch_tokenizer, 'instance')",
    ] {
        match db.stmt(sql, &[]) {
            Ok(s) => statements.push(s),
            Err(e) => return fail(e),
        }
    }
    for batch in crate::store::json_batches(rows, crate::store::JSON_BATCH_BYTES) {
        let sql = "INSERT INTO scratch_tokenizer (rowid, x) \
                   SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?1)";
        match db.stmt(sql, &crate::store::args![batch.as_str()]) {
            Ok(s) => statements.push(s),
            Err(e) => return fail(e),
        }
    }
    if let Err(e) = db.batch(statements).await {
        return fail(e);
    }
    #[derive(serde::Deserialize)]
    struct Doc {
        doc: u32,
        terms: String,
    }
    let found: Result<Vec<Doc>, _> = db
        .all(
            "SELECT doc, json_group_array(term) AS terms FROM \
               (SELECT doc, term FROM scratch_tokenizer_v ORDER BY doc, \"offset\") GROUP BY doc",
            &[],
        )
        .await;
    let dropped = db
        .batch(
            match (
                db.stmt("DROP TABLE scratch_tokenizer_v", &[]),
                db.stmt("DROP TABLE scratch_tokenizer", &[]),
            ) {
                (Ok(a), Ok(b)) => vec![a, b],
                _ => Vec::new(),
            },
        )
        .await;
    let found = match (found, dropped) {
        (Ok(f), Ok(_)) => f,
        (Err(e), _) | (_, Err(e)) => return fail(e),
    };
    let theirs: std::collections::HashMap<u32, Vec<String>> =
        found.into_iter().map(|d| (d.doc, serde_json::from_str(&d.terms).unwrap_or_default())).collect();
    let (mut checked, mut uncertain, mut differ) = (0, 0, 0);
    let mut examples = Vec::new();
    for c in (body.from..=body.to).filter_map(char::from_u32) {
        checked += 1;
        let mut ours = Vec::new();
        if !edgerag_search::bm25::for_each_token(&format!("q{c}z {c}"), |t| ours.push(t.to_string())) {
            uncertain += 1;
            continue;
        }
        let want = theirs.get(&(c as u32)).cloned().unwrap_or_default();
        if ours != want {
            differ += 1;
            if examples.len() < 20 {
                examples.push(format!("U+{:04X}: ours {ours:?}, FTS5 {want:?}", c as u32));
            }
        }
    }
    Response::from_json(&serde_json::json!({
        "checked": checked, "uncertain": uncertain, "differ": differ, "examples": examples,
    }))
}

#[derive(serde::Deserialize)]
struct PlanRow {
    detail: String,
}

/// `EXPLAIN QUERY PLAN` of each code-graph statement, on the default database.
async fn plans(env: &Env) -> worker::Result<Response> {
    let failed = |e: &dyn std::fmt::Display| {
        Ok(crate::http::error_response(&ApiError::new(500, "PLAN_FAILED", e.to_string())))
    };
    let db = match Stores::from_env(env) {
        Ok(stores) => match stores.for_namespace("plan:check").await {
            Ok(db) => db,
            Err(e) => return failed(&e),
        },
        Err(e) => return failed(&e),
    };
    let links = crate::store::args![r#"[[0, "plan:check", "src/a.rs", 1, 10, "node"]]"#, 8i64];
    let by_name = crate::store::args!["plan:check", "connect", Option::<&str>::None];
    let by_name_sql = graph::nodes_by_name_sql();
    let statements: [(&str, &str, &[crate::store::Arg]); 3] = [
        ("uses", super::d1::USES_SQL, &links),
        ("usedBy", super::d1::USED_BY_SQL, &links),
        ("symbolsByName", &by_name_sql, &by_name),
    ];
    let mut out = serde_json::Map::new();
    for (name, sql, args) in statements {
        match db.all::<PlanRow>(&format!("EXPLAIN QUERY PLAN {sql}"), args).await {
            Ok(rows) => {
                out.insert(name.into(), rows.into_iter().map(|r| r.detail).collect::<Vec<_>>().into());
            }
            Err(e) => return failed(&e),
        }
    }
    Response::from_json(&out)
}
