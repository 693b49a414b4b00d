//! `namespaces`: one row per repository (`repo:<owner>/<name>`).
use serde::Deserialize;

use super::{Db, StoreResult};
use crate::api::{EmbedderView, RepoSummary};
use crate::store::args;

#[derive(Debug, Clone, Deserialize)]
pub struct NamespaceRow {
    pub id: String,
    pub owner: String,
    pub name: String,
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    pub source: Option<String>,
    pub status: String,
    pub ready_at: Option<String>,
    pub embed_model: Option<String>,
    pub embed_dims: Option<i64>,
    pub file_count: i64,
    pub chunk_count: i64,
    pub fetched_at: Option<String>,
    pub checksum: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl NamespaceRow {
    pub fn summary(&self) -> RepoSummary {
        RepoSummary {
            namespace: self.id.clone(),
            owner: self.owner.clone(),
            name: self.name.clone(),
            status: self.status.clone(),
            ready: self.status == "READY",
            ready_at: self.ready_at.clone(),
            git_ref: self.git_ref.clone(),
            source: self.source.clone(),
            file_count: self.file_count.max(0) as u64,
            chunk_count: self.chunk_count.max(0) as u64,
            updated_at: self.updated_at.clone(),
        }
    }

    /// The embedder whose vectors this namespace holds, parsed from `provider:model` storage.
    pub fn embedder(&self) -> Option<EmbedderView> {
        let stored = self.embed_model.as_deref()?;
        let (provider, model) = stored.split_once('|').unwrap_or(("", stored));
        Some(EmbedderView {
            provider: provider.to_string(),
            model: model.to_string(),
            dims: self.embed_dims.unwrap_or(0).max(0) as u32,
        })
    }
}

/// `repo:<owner>/<name>`.
pub fn namespace_id(owner: &str, name: &str) -> String {
    format!("repo:{owner}/{name}")
}

pub async fn get(db: &Db, id: &str) -> StoreResult<Option<NamespaceRow>> {
    db.first("SELECT * FROM namespaces WHERE id = ?", &args![id]).await
}

pub async fn list(db: &Db) -> StoreResult<Vec<NamespaceRow>> {
    db.all("SELECT * FROM namespaces ORDER BY owner, name", &[]).await
}

/// Create the namespace if needed and mark it INDEXING (a job was just queued for it).
pub async fn touch_indexing(
    db: &Db,
    id: &str,
    owner: &str,
    name: &str,
    source: &str,
    now: &str,
) -> StoreResult<()> {
    db.run(
        "INSERT INTO namespaces (id, owner, name, source, status, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, 'INDEXING', ?5, ?5) \
         ON CONFLICT(id) DO UPDATE SET status = 'INDEXING', updated_at = ?5",
        &args![id, owner, name, source, now],
    )
    .await?;
    Ok(())
}
