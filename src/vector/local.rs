//! The exact local index in D1 (`local_vectors`), used whenever no Vectorize binding exists.
//!
//! A query scans the namespace in pages of [`PAGE_ROWS`] rows ordered by `rowid`, with the filters
//! in SQL, scoring each page and keeping only a bounded top-K: memory stays at one page plus K
//! entries whatever the namespace size (the isolate has 128 MB). A page crosses from D1 as one
//! row: the ids joined by U+001F and the vectors' `hex()` concatenated (a BLOB would arrive as a JS
//! array of numbers, and one object per row costs more than the scoring); vectors are decoded into
//! a reused buffer. Metadata is read only for the final top-K.
use edgerag_core::vector::codec::{decode_f32_hex, decode_f32_hex_into, encode_f32_le};
use edgerag_core::vector::topk::{cosine_with_norm, norm, TopK};
use edgerag_core::vector::{
    dedup_last_wins, validate_namespace, validate_query, validate_records, VectorError, VectorFilter,
    VectorIndex, VectorMatch, VectorMetadata, VectorQuery, VectorRecord,
};
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1Database;

/// Rows per scan page (one page ≈ 3 MB of hex at 384 dims, fetched as a single result row).
pub const PAGE_ROWS: usize = 1000;
/// Ids per `IN (…)`: D1 allows 100 bound parameters per statement.
const IDS_PER_STATEMENT: usize = 90;
/// Statements per D1 `batch()` on upsert.
const ROWS_PER_BATCH: usize = 100;

pub struct LocalD1Index {
    db: D1Database,
    dims: usize,
    page_rows: usize,
}

impl LocalD1Index {
    pub fn new(db: D1Database, dims: usize) -> Self {
        LocalD1Index { db, dims, page_rows: PAGE_ROWS }
    }

    pub fn with_page_rows(mut self, rows: usize) -> Self {
        self.page_rows = rows.max(1);
        self
    }
}

fn d1(what: &str, e: impl std::fmt::Display) -> VectorError {
    VectorError::Backend(format!("local index {what}: {e}"))
}

#[derive(Deserialize)]
struct PageRow {
    n: f64,
    last: Option<f64>,
    ids: Option<String>,
    vs: Option<String>,
}

#[derive(Deserialize)]
struct FullRow {
    id: String,
    v: String,
    metadata: String,
}

#[derive(Deserialize)]
struct MetaRow {
    id: String,
    metadata: String,
}

fn parse_metadata(id: &str, json: &str) -> Result<VectorMetadata, VectorError> {
    serde_json::from_str(json)
        .map_err(|e| VectorError::Backend(format!("local index: metadata of {id}: {e}")))
}

/// `,tag1,tag2,` so that `instr(tags, ',tag,')` matches whole tags only.
fn tags_column(tags: &[String]) -> String {
    if tags.is_empty() {
        String::new()
    } else {
        format!(",{},", tags.join(","))
    }
}

/// The filter as SQL over `local_vectors` with its parameters, numbered from `first`.
fn filter_sql(filter: &VectorFilter, first: usize) -> (String, Vec<JsValue>) {
    let mut sql = String::new();
    let mut args = Vec::new();
    let mut n = first;
    if !filter.languages.is_empty() {
        let ph: Vec<String> = filter
            .languages
            .iter()
            .map(|_| {
                let p = format!("?{n}");
                n += 1;
                p
            })
            .collect();
        sql.push_str(&format!(" AND language IN ({})", ph.join(",")));
        args.extend(filter.languages.iter().map(|l| JsValue::from_str(l)));
    }
    if let Some(prefix) = &filter.path_prefix {
        // substr/length count characters on both sides; no LIKE, so `%` and `_` are plain.
        sql.push_str(&format!(" AND substr(path, 1, length(?{n})) = ?{n}"));
        n += 1;
        args.push(JsValue::from_str(prefix));
    }
    if let Some(tag) = &filter.tag {
        sql.push_str(&format!(" AND instr(tags, ?{n}) > 0"));
        args.push(JsValue::from_str(&format!(",{tag},")));
    }
    (sql, args)
}

fn placeholders(from: usize, count: usize) -> String {
    (from..from + count).map(|i| format!("?{i}")).collect::<Vec<_>>().join(",")
}

#[async_trait::async_trait(?Send)]
impl VectorIndex for LocalD1Index {
    fn dims(&self) -> usize {
        self.dims
    }

    fn kind(&self) -> &'static str {
        "local-d1"
    }

    async fn upsert(&self, namespace: &str, records: &[VectorRecord]) -> Result<(), VectorError> {
        validate_records(namespace, records, self.dims)?;
        let stmt = self.db.prepare(
            "INSERT INTO local_vectors (namespace, id, dims, vector, metadata, path, language, tags) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
             ON CONFLICT(namespace, id) DO UPDATE SET dims = excluded.dims, vector = excluded.vector, \
             metadata = excluded.metadata, path = excluded.path, language = excluded.language, tags = excluded.tags",
        );
        let records = dedup_last_wins(records);
        for group in records.chunks(ROWS_PER_BATCH) {
            let mut statements = Vec::with_capacity(group.len());
            for r in group {
                let metadata = serde_json::to_string(&r.metadata).map_err(|e| d1("metadata", e))?;
                let args = [
                    JsValue::from_str(namespace),
                    JsValue::from_str(&r.id),
                    JsValue::from_f64(self.dims as f64),
                    super::blob(&encode_f32_le(&r.values)),
                    JsValue::from_str(&metadata),
                    JsValue::from_str(&r.metadata.path),
                    JsValue::from_str(&r.metadata.language),
                    JsValue::from_str(&tags_column(&r.metadata.tags)),
                ];
                statements.push(stmt.clone().bind(&args).map_err(|e| d1("bind", e))?);
            }
            self.db.batch(statements).await.map_err(|e| d1("upsert", e))?;
        }
        Ok(())
    }

    async fn query(&self, namespace: &str, query: &VectorQuery) -> Result<Vec<VectorMatch>, VectorError> {
        validate_query(namespace, query, self.dims)?;
        let (filter, filter_args) = filter_sql(&query.filter, 5);
        // One result row per page: the page's ids and its vectors' hex concatenated, so a page
        // crosses from D1 as two strings instead of `page_rows` objects (the per-row cost dominates).
        // Both aggregates walk the same rows in the same order; TopK does not depend on that order.
        let sql = format!(
            "SELECT count(*) AS n, max(r) AS last, group_concat(id, char(31)) AS ids, group_concat(v, '') AS vs \
             FROM (SELECT rowid AS r, id, hex(vector) AS v FROM local_vectors \
                   WHERE namespace = ?1 AND dims = ?2 AND rowid > ?3{filter} ORDER BY rowid LIMIT ?4)"
        );
        let stmt = self.db.prepare(sql);
        let qn = norm(&query.vector);
        let mut top: TopK<()> = TopK::new(query.top_k);
        let mut buf: Vec<f32> = Vec::with_capacity(self.dims);
        let hex_len = self.dims * 8;
        let mut after = -1f64;
        loop {
            let mut args = vec![
                JsValue::from_str(namespace),
                JsValue::from_f64(self.dims as f64),
                JsValue::from_f64(after),
                JsValue::from_f64(self.page_rows as f64),
            ];
            args.extend(filter_args.iter().cloned());
            let page: Option<PageRow> = stmt
                .clone()
                .bind(&args)
                .map_err(|e| d1("bind", e))?
                .first(None)
                .await
                .map_err(|e| d1("scan", e))?;
            let Some(page) = page.filter(|p| p.n > 0.0) else { break };
            let (ids, vs) = (page.ids.unwrap_or_default(), page.vs.unwrap_or_default());
            let n = page.n as usize;
            if vs.len() != n * hex_len {
                return Err(VectorError::Backend(format!(
                    "local index: page of {n} vectors has {} hex chars, expected {}",
                    vs.len(),
                    n * hex_len
                )));
            }
            for (i, id) in ids.split('\u{1f}').enumerate().take(n) {
                decode_f32_hex_into(&vs[i * hex_len..(i + 1) * hex_len], &mut buf)?;
                let score = cosine_with_norm(&query.vector, qn, &buf);
                if top.accepts(score, id) {
                    top.push(score, id.to_string(), ());
                }
            }
            after = page.last.unwrap_or(f64::MAX);
            if n < self.page_rows {
                break;
            }
        }

        let best = top.into_sorted();
        let ids: Vec<String> = best.iter().map(|(_, id, _)| id.clone()).collect();
        let mut metadata = self.metadata_of(namespace, &ids).await?;
        best.into_iter()
            .map(|(score, id, ())| {
                let meta = metadata.remove(&id).ok_or_else(|| {
                    VectorError::Backend(format!("local index: {id} vanished during the query"))
                })?;
                Ok(VectorMatch { id, score, metadata: meta })
            })
            .collect()
    }

    async fn get_by_ids(&self, namespace: &str, ids: &[String]) -> Result<Vec<VectorRecord>, VectorError> {
        validate_namespace(namespace)?;
        let mut found = std::collections::HashMap::new();
        for group in ids.chunks(IDS_PER_STATEMENT) {
            let sql = format!(
                "SELECT id, hex(vector) AS v, metadata FROM local_vectors WHERE namespace = ?1 AND id IN ({})",
                placeholders(2, group.len())
            );
            let mut args = vec![JsValue::from_str(namespace)];
            args.extend(group.iter().map(|id| JsValue::from_str(id)));
            let rows: Vec<FullRow> = self
                .db
                .prepare(sql)
                .bind(&args)
                .map_err(|e| d1("bind", e))?
                .all()
                .await
                .map_err(|e| d1("get", e))?
                .results()
                .map_err(|e| d1("get rows", e))?;
            for row in rows {
                let values = decode_f32_hex(&row.v)?;
                let metadata = parse_metadata(&row.id, &row.metadata)?;
                found.insert(row.id.clone(), VectorRecord { id: row.id, values, metadata });
            }
        }
        Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
    }

    async fn delete_by_ids(&self, namespace: &str, ids: &[String]) -> Result<(), VectorError> {
        validate_namespace(namespace)?;
        let mut statements = Vec::new();
        for group in ids.chunks(IDS_PER_STATEMENT) {
            let sql = format!(
                "DELETE FROM local_vectors WHERE namespace = ?1 AND id IN ({})",
                placeholders(2, group.len())
            );
            let mut args = vec![JsValue::from_str(namespace)];
            args.extend(group.iter().map(|id| JsValue::from_str(id)));
            statements.push(self.db.prepare(sql).bind(&args).map_err(|e| d1("bind", e))?);
        }
        if !statements.is_empty() {
            self.db.batch(statements).await.map_err(|e| d1("delete", e))?;
        }
        Ok(())
    }
}

impl LocalD1Index {
    async fn metadata_of(
        &self,
        namespace: &str,
        ids: &[String],
    ) -> Result<std::collections::HashMap<String, VectorMetadata>, VectorError> {
        let mut out = std::collections::HashMap::new();
        for group in ids.chunks(IDS_PER_STATEMENT) {
            let sql = format!(
                "SELECT id, metadata FROM local_vectors WHERE namespace = ?1 AND id IN ({})",
                placeholders(2, group.len())
            );
            let mut args = vec![JsValue::from_str(namespace)];
            args.extend(group.iter().map(|id| JsValue::from_str(id)));
            let rows: Vec<MetaRow> = self
                .db
                .prepare(sql)
                .bind(&args)
                .map_err(|e| d1("bind", e))?
                .all()
                .await
                .map_err(|e| d1("metadata", e))?
                .results()
                .map_err(|e| d1("metadata rows", e))?;
            for row in rows {
                let m = parse_metadata(&row.id, &row.metadata)?;
                out.insert(row.id, m);
            }
        }
        Ok(out)
    }
}
