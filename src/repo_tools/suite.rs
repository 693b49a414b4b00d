//! The repository tools' shared behaviour suite (`edgerag_search::repo_tools::testing`) run over
//! D1, the same cases the in-memory store passes natively: `POST /__test/repo-tools/suite`
//! `{prefix?}` (test build only, `EDGERAG_TEST_ROUTES=1`). It writes one namespace as a finished
//! job leaves it (file rows, chunks — their trigram index follows by trigger —, the code graph,
//! the ranks) and deletes it at the end.
use edgerag_core::graph::Edge;
use edgerag_search::repo_tools::memory::IndexedRepo;
use edgerag_search::repo_tools::testing::{run_suite, RepoStores};
use edgerag_search::repo_tools::RepoStore;
use edgerag_search::PortError;
use worker::{Env, Request, Response};

use super::d1::D1Repo;
use crate::error::ApiError;
use crate::store::chunks::{self, ChunkRow, FileRecord};
use crate::store::{graph, keyword, ranks, Stores};

struct D1RepoStores {
    stores: Stores,
    repo: D1Repo,
}

fn port(e: impl std::fmt::Display) -> PortError {
    PortError::new("d1", e.to_string())
}

#[async_trait::async_trait(?Send)]
impl RepoStores for D1RepoStores {
    async fn load(&self, namespace: &str, repo: &IndexedRepo) -> Result<(), PortError> {
        let db = self.stores.assign(namespace).await.map_err(port)?;
        let now = crate::time::now_iso();
        let no_tags = edgerag_core::tags::to_column(&[]);
        let mut statements = keyword::ensure_statements(&db, namespace).map_err(port)?;
        let records: Vec<FileRecord<'_>> = repo
            .files
            .iter()
            .map(|f| FileRecord {
                path: &f.path,
                content_hash: "suite",
                size: f.size as i64,
                language: &f.language,
                chunk_count: f.chunks.len() as i64,
                index_key: "",
                tags: &no_tags,
            })
            .collect();
        statements
            .extend(chunks::upsert_files_statements(&db, namespace, "suite", &now, &records).map_err(port)?);
        let rows: Vec<ChunkRow<'_>> = repo.files.iter().flat_map(|f| &f.chunks).map(ChunkRow::new).collect();
        statements.extend(chunks::upsert_chunks_statements(&db, namespace, &now, &rows).map_err(port)?);
        for f in &repo.graph {
            statements
                .extend(graph::replace_file_statements(&db, namespace, &f.path, Some(f)).map_err(port)?);
        }
        // The suite's edges are already resolved: stored as cross-file resolution would.
        let edges: Vec<&Edge> = repo.graph.iter().flat_map(|f| &f.edges).collect();
        statements.extend(graph::replace_edges_statements(&db, namespace, &edges).map_err(port)?);
        db.batch(statements).await.map_err(port)?;
        ranks::write(&db, namespace, &repo.graph).await.map_err(port)?;
        Ok(())
    }

    async fn clear(&self, namespace: &str) -> Result<(), PortError> {
        let db = &self.repo.db;
        // The namespace's keyword index goes before its chunks (see `keyword::drop_sql`).
        let mut statements = keyword::drop_statements(db, namespace).map_err(port)?;
        statements.extend([
            db.stmt("DELETE FROM chunks WHERE namespace = ?", &crate::store::args![namespace])
                .map_err(port)?,
            db.stmt("DELETE FROM files WHERE namespace = ?", &crate::store::args![namespace])
                .map_err(port)?,
            keyword::forget_statement(db, namespace).map_err(port)?,
        ]);
        statements.extend(graph::delete_namespace_statements(db, namespace).map_err(port)?);
        db.batch(statements).await.map_err(port)?;
        Ok(())
    }

    fn store(&self) -> &dyn RepoStore {
        &self.repo
    }
}

/// Handles `POST /__test/repo-tools/suite`; `None` for any other path or when test routes are off.
pub async fn handle(req: &mut Request, env: &Env) -> Option<worker::Result<Response>> {
    if !crate::vector::test_routes::enabled(env) || req.path() != "/__test/repo-tools/suite" {
        return None;
    }
    let body: serde_json::Value = req.json().await.unwrap_or_default();
    let prefix = body.get("prefix").and_then(|p| p.as_str()).unwrap_or("suite").to_string();
    let fail = |e: String| Some(Ok(crate::http::error_response(&ApiError::new(500, "NO_DB", e))));
    let stores = match Stores::from_env(env) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string()),
    };
    let namespace = format!("repo:{prefix}/tools");
    let db = match stores.assign(&namespace).await {
        Ok(db) => db,
        Err(e) => return fail(e.to_string()),
    };
    let d1 = D1RepoStores { stores, repo: D1Repo { db } };
    let report = run_suite(&d1, &prefix).await;
    Some(Response::from_json(&report))
}
