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
use edgerag_search::ports::{ChunkStore, KeywordIndex, NamespaceCatalog, NamespaceInfo};
use edgerag_search::testing::{run_suite, SearchStores};
use edgerag_search::PortError;
use worker::{Env, Request, Response};

use super::d1::D1Search;
use crate::auth::{Access, Policy, Principal};
use crate::error::ApiError;
use crate::store::chunks::{self, ChunkRow};
use crate::store::graph;
use crate::store::Stores;

struct D1Stores {
    stores: Stores,
    search: D1Search,
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
            &crate::args![
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
            db.stmt("DELETE FROM chunks WHERE namespace = ?", &crate::args![namespace]).map_err(port)?,
            crate::store::keyword::forget_statement(&db, namespace).map_err(port)?,
            db.stmt("DELETE FROM namespaces WHERE id = ?", &crate::args![namespace]).map_err(port)?,
        ]);
        statements.extend(graph::delete_namespace_statements(&db, namespace).map_err(port)?);
        db.batch(statements).await.map_err(port)?;
        Ok(())
    }

    fn keyword(&self) -> &dyn KeywordIndex {
        &self.search
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
    let d1 = D1Stores { search: D1Search::new(stores.clone(), access), stores };
    let report = run_suite(&d1, &prefix).await;
    Some(Response::from_json(&report))
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
    let links = crate::args![r#"[[0, "plan:check", "src/a.rs", 1, 10, "node"]]"#, 8i64];
    let by_name = crate::args!["plan:check", "connect", Option::<&str>::None];
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
