//! The embedding cache in D1 (`embedding_cache`: model, text_hash, dims, vector blob).
use std::collections::HashMap;

use edgerag_core::embed::{EmbedError, EmbeddingCache};
use edgerag_core::vector::codec::{decode_f32_hex, encode_f32_le};
use serde::Deserialize;

use crate::store::{Arg, Db};

/// Keys per `IN (…)` (D1 allows 100 bound parameters per statement).
const KEYS_PER_STATEMENT: usize = 90;
/// Rows per D1 `batch()` when writing.
const ROWS_PER_BATCH: usize = 100;

pub struct D1EmbeddingCache {
    db: Db,
}

impl D1EmbeddingCache {
    pub fn new(db: Db) -> Self {
        D1EmbeddingCache { db }
    }
}

#[derive(Deserialize)]
struct Row {
    text_hash: String,
    dims: f64,
    v: String,
}

fn cache_err(what: &str, e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Cache(format!("{what}: {e}"))
}

#[async_trait::async_trait(?Send)]
impl EmbeddingCache for D1EmbeddingCache {
    async fn get_many(&self, model: &str, keys: &[String]) -> Result<HashMap<String, Vec<f32>>, EmbedError> {
        let mut found = HashMap::new();
        for group in keys.chunks(KEYS_PER_STATEMENT) {
            let placeholders = (0..group.len()).map(|i| format!("?{}", i + 2)).collect::<Vec<_>>().join(",");
            let sql = format!(
                "SELECT text_hash, dims, hex(vector) AS v FROM embedding_cache \
                 WHERE model = ?1 AND text_hash IN ({placeholders})"
            );
            let mut args = vec![Arg::Text(model)];
            args.extend(group.iter().map(|k| Arg::Text(k)));
            let rows: Vec<Row> =
                self.db.all(&sql, &args).await.map_err(|e| cache_err("read embedding_cache", e))?;
            for row in rows {
                let vector = decode_f32_hex(&row.v).map_err(|e| cache_err("cached vector", e))?;
                if vector.len() == row.dims as usize {
                    found.insert(row.text_hash, vector);
                }
            }
        }
        Ok(found)
    }

    async fn put_many(&self, model: &str, entries: &[(String, Vec<f32>)]) -> Result<(), EmbedError> {
        let now = crate::time::now_iso();
        let sql = "INSERT INTO embedding_cache (model, text_hash, dims, vector, created_at) VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT(model, text_hash) DO UPDATE SET dims = excluded.dims, vector = excluded.vector, \
             created_at = excluded.created_at";
        for group in entries.chunks(ROWS_PER_BATCH) {
            let mut statements = Vec::with_capacity(group.len());
            for (key, vector) in group {
                let bytes = encode_f32_le(vector);
                let args = [
                    Arg::Text(model),
                    Arg::Text(key),
                    Arg::from(vector.len()),
                    Arg::Blob(&bytes),
                    Arg::Text(&now),
                ];
                statements.push(self.db.stmt(sql, &args).map_err(|e| cache_err("bind", e))?);
            }
            self.db.batch(statements).await.map_err(|e| cache_err("write embedding_cache", e))?;
        }
        Ok(())
    }
}
