//! The embedding cache in D1 (`embedding_cache`: model, text_hash, dims, vector blob).
use std::collections::HashMap;

use edgerag_core::embed::{EmbedError, EmbeddingCache};
use edgerag_core::vector::codec::{decode_f32_hex, encode_f32_hex};
use serde::Deserialize;

use crate::store::{json_batches, numbered_placeholders, Arg, Db, JSON_BATCH_BYTES};

/// Keys per `IN (…)` (D1 allows 100 bound parameters per statement; `?1` is the model). All of a
/// lookup's statements go to D1 in one `batch` round trip.
pub(crate) const KEYS_PER_STATEMENT: usize = crate::store::MAX_PARAMS - 1;

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
        let mut statements = Vec::new();
        for group in keys.chunks(KEYS_PER_STATEMENT) {
            let sql = format!(
                "SELECT text_hash, dims, hex(vector) AS v FROM embedding_cache \
                 WHERE model = ?1 AND text_hash IN ({})",
                numbered_placeholders(2, group.len())
            );
            let mut args = vec![Arg::Text(model)];
            args.extend(group.iter().map(|k| Arg::Text(k)));
            statements.push(self.db.stmt(&sql, &args).map_err(|e| cache_err("bind", e))?);
        }
        let groups: Vec<Vec<Row>> =
            self.db.batch_rows(statements).await.map_err(|e| cache_err("read embedding_cache", e))?;
        let mut found = HashMap::new();
        for row in groups.into_iter().flatten() {
            let vector = decode_f32_hex(&row.v).map_err(|e| cache_err("cached vector", e))?;
            if vector.len() == row.dims as usize {
                found.insert(row.text_hash, vector);
            }
        }
        Ok(found)
    }

    async fn put_many(&self, model: &str, entries: &[(String, Vec<f32>)]) -> Result<(), EmbedError> {
        let now = crate::time::now_iso();
        // Vectors travel as hex text turned into BLOBs by `unhex` in SQL: a BLOB parameter crosses
        // the D1 binding as a JSON array of byte numbers (several times the bytes, and slow to
        // encode and decode on both sides).
        let rows = entries.iter().map(|(key, v)| serde_json::json!([key, v.len(), encode_f32_hex(v)]));
        let mut statements = Vec::new();
        for rows in json_batches(rows, JSON_BATCH_BYTES) {
            let args = [Arg::Text(model), Arg::Text(&now), Arg::Text(&rows)];
            statements.push(
                self.db
                    .stmt(
                        "INSERT INTO embedding_cache (model, text_hash, dims, vector, created_at) \
                         SELECT ?1, json_extract(value, '$[0]'), json_extract(value, '$[1]'), \
                           unhex(json_extract(value, '$[2]')), ?2 FROM json_each(?3) WHERE true \
                         ON CONFLICT(model, text_hash) DO UPDATE SET dims = excluded.dims, vector = excluded.vector, \
                           created_at = excluded.created_at",
                        &args,
                    )
                    .map_err(|e| cache_err("bind", e))?,
            );
        }
        // One transaction for the whole message's new vectors.
        self.db.batch(statements).await.map_err(|e| cache_err("write embedding_cache", e))?;
        Ok(())
    }
}
