//! Per-repository settings stored on the `namespaces` row (migration 0031).
use serde::Deserialize;

use super::{Db, StoreResult};
use crate::api::ChunkingMode;
use crate::store::args;

#[derive(Deserialize)]
struct Row {
    chunking: Option<String>,
}

/// The namespace's chunking mode; `flat` when unset or the namespace does not exist.
pub async fn chunking(db: &Db, namespace: &str) -> StoreResult<ChunkingMode> {
    let row: Option<Row> =
        db.first("SELECT chunking FROM namespaces WHERE id = ?", &args![namespace]).await?;
    Ok(row.and_then(|r| r.chunking).and_then(|c| ChunkingMode::parse(&c)).unwrap_or_default())
}

/// Create the namespace (EMPTY) if needed and set its chunking mode.
pub async fn set_chunking(
    db: &Db,
    namespace: &str,
    owner: &str,
    name: &str,
    mode: ChunkingMode,
    now: &str,
) -> StoreResult<()> {
    db.run(
        "INSERT INTO namespaces (id, owner, name, source, status, created_at, updated_at, chunking) \
         VALUES (?1, ?2, ?3, 'upload', 'EMPTY', ?4, ?4, ?5) \
         ON CONFLICT(id) DO UPDATE SET chunking = excluded.chunking, updated_at = excluded.updated_at",
        &args![namespace, owner, name, now, mode.as_str()],
    )
    .await?;
    Ok(())
}
