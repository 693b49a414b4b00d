//! The exact local index in D1 (`local_vectors`), used whenever no Vectorize binding exists.
//!
//! A query scans the namespace in pages of [`PAGE_ROWS`] rows ordered by `rowid`, with the filters
//! in SQL, scoring each page and keeping only a bounded top-K: memory stays at one page plus K
//! entries whatever the namespace size (the isolate has 128 MB). A page crosses from D1 as one
//! row: the ids joined by U+001F and the vectors' `hex()` concatenated (a BLOB would arrive as a JS
//! array of numbers, and one object per row costs more than the scoring); vectors are decoded into
//! a reused buffer. Metadata is read only for the final top-K.
//!
//! Scanning D1 costs far more than scoring, so the isolate also keeps a compact copy of each
//! namespace ([`QuantizedVectors`]: 16-bit codes, half the size of f32) within a memory budget
//! (`LOCAL_INDEX_CACHE_MB`, default 64 MB for all namespaces together, least recently used evicted
//! first). The copy is trusted only at the namespace's generation it was built at — a counter in
//! `local_vector_generations` that triggers bump on every write to `local_vectors` — so a query
//! costs one small read, an in-memory pass, and an exact re-scoring of the few vectors that could
//! make the top K (their f32 values read back by id): results are identical to the full scan. The
//! first query after a change rebuilds the copy from one unfiltered scan (and answers from it); a
//! namespace larger than the budget is always answered by the filtered scan.
use std::cell::RefCell;
use std::collections::HashMap;

use edgerag_core::vector::cache::{GenerationCache, Lookup};
use edgerag_core::vector::codec::{decode_f32_hex, decode_f32_hex_into, encode_f32_le};
use edgerag_core::vector::quantized::{rescore, FilterFields, QuantizedVectors};
use edgerag_core::vector::topk::{cosine_with_norm, norm, TopK};
use edgerag_core::vector::{
    dedup_last_wins, validate_namespace, validate_query, validate_records, VectorError, VectorFilter,
    VectorIndex, VectorMatch, VectorMetadata, VectorQuery, VectorRecord,
};
use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::D1PreparedStatement;

use crate::store::{Db, Stores};

/// Rows per scan page (one page ≈ 3 MB of hex at 384 dims, fetched as a single result row).
pub const PAGE_ROWS: usize = 1000;
/// Ids per `IN (…)`: D1 allows 100 bound parameters per statement.
const IDS_PER_STATEMENT: usize = 90;
/// Statements per D1 `batch()` on upsert.
const ROWS_PER_BATCH: usize = 100;
/// Default memory for the in-memory copies of all namespaces together.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

/// The local index over every database of the deployment: each call goes to the namespace's
/// database ([`Stores::for_namespace`]).
pub struct LocalD1Index {
    stores: Stores,
    dims: usize,
    page_rows: usize,
    cache_bytes: usize,
}

impl LocalD1Index {
    pub fn new(stores: Stores, dims: usize) -> Self {
        LocalD1Index { stores, dims, page_rows: PAGE_ROWS, cache_bytes: DEFAULT_CACHE_BYTES }
    }

    pub fn with_page_rows(mut self, rows: usize) -> Self {
        self.page_rows = rows.max(1);
        self
    }

    /// Memory for the in-memory copies (0: never cache, always scan D1).
    pub fn with_cache_bytes(mut self, bytes: usize) -> Self {
        self.cache_bytes = bytes;
        self
    }

    /// The index over `namespace`'s database.
    async fn on(&self, namespace: &str) -> Result<D1Vectors, VectorError> {
        let db = self.stores.for_namespace(namespace).await.map_err(|e| d1("namespace database", e))?;
        Ok(D1Vectors { db, dims: self.dims, page_rows: self.page_rows, cache_bytes: self.cache_bytes })
    }

    /// [`VectorIndex::query`], saying how the cache served it.
    pub async fn query_traced(
        &self,
        namespace: &str,
        query: &VectorQuery,
    ) -> Result<(Vec<VectorMatch>, CachePath), VectorError> {
        validate_query(namespace, query, self.dims)?;
        self.on(namespace).await?.query_traced(namespace, query).await
    }
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
        self.on(namespace).await?.upsert(namespace, records).await
    }

    async fn query(&self, namespace: &str, query: &VectorQuery) -> Result<Vec<VectorMatch>, VectorError> {
        Ok(self.query_traced(namespace, query).await?.0)
    }

    async fn get_by_ids(&self, namespace: &str, ids: &[String]) -> Result<Vec<VectorRecord>, VectorError> {
        validate_namespace(namespace)?;
        self.on(namespace).await?.get_by_ids(namespace, ids).await
    }

    async fn delete_by_ids(&self, namespace: &str, ids: &[String]) -> Result<(), VectorError> {
        validate_namespace(namespace)?;
        self.on(namespace).await?.delete_by_ids(namespace, ids).await
    }
}

/// The local index in one D1 database.
struct D1Vectors {
    db: Db,
    dims: usize,
    page_rows: usize,
    cache_bytes: usize,
}

/// How one query found a namespace in the isolate's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CachePath {
    /// Answered from the in-memory copy.
    Hit,
    /// The copy was (re)built by this query's scan.
    Built,
    /// Scanned D1: caching is off, or the namespace does not fit the budget.
    Scan,
}

thread_local! {
    static CACHE: RefCell<GenerationCache> = RefCell::new(GenerationCache::default());
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

/// A page of the unfiltered scan that builds the in-memory copy (JSON arrays: any path is safe).
#[derive(Deserialize)]
struct BuildPageRow {
    n: f64,
    last: Option<f64>,
    ids: Option<String>,
    paths: Option<String>,
    langs: Option<String>,
    tags: Option<String>,
    vs: Option<String>,
}

#[derive(Deserialize)]
struct GenerationRow {
    generation: f64,
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

/// A page's concatenated hex must hold exactly `n` vectors.
fn check_page_hex(vs: &str, n: usize, hex_len: usize) -> Result<(), VectorError> {
    if vs.len() == n * hex_len {
        return Ok(());
    }
    Err(VectorError::Backend(format!(
        "local index: page of {n} vectors has {} hex chars, expected {}",
        vs.len(),
        n * hex_len
    )))
}

fn placeholders(from: usize, count: usize) -> String {
    (from..from + count).map(|i| format!("?{i}")).collect::<Vec<_>>().join(",")
}

impl D1Vectors {
    async fn upsert(&self, namespace: &str, records: &[VectorRecord]) -> Result<(), VectorError> {
        let stmt = self.db.raw().prepare(
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
                    js_sys::Uint8Array::from(encode_f32_le(&r.values).as_slice()).buffer().into(),
                    JsValue::from_str(&metadata),
                    JsValue::from_str(&r.metadata.path),
                    JsValue::from_str(&r.metadata.language),
                    JsValue::from_str(&tags_column(&r.metadata.tags)),
                ];
                statements.push(stmt.clone().bind(&args).map_err(|e| d1("bind", e))?);
            }
            self.db.raw().batch(statements).await.map_err(|e| d1("upsert", e))?;
        }
        Ok(())
    }

    async fn get_by_ids(&self, namespace: &str, ids: &[String]) -> Result<Vec<VectorRecord>, VectorError> {
        let rows: Vec<FullRow> = self
            .by_ids(namespace, ids, "SELECT id, hex(vector) AS v, metadata FROM local_vectors", "get")
            .await?;
        let mut found = std::collections::HashMap::new();
        for row in rows {
            let values = decode_f32_hex(&row.v)?;
            let metadata = parse_metadata(&row.id, &row.metadata)?;
            found.insert(row.id.clone(), VectorRecord { id: row.id, values, metadata });
        }
        Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
    }

    /// Rows of `select` (over `local_vectors`) for `ids` of `namespace`, in any order. Every
    /// statement of the lookup goes out in one `batch` — one round trip however many ids (the
    /// exact re-scoring of a query reads a few hundred).
    async fn by_ids<T: serde::de::DeserializeOwned>(
        &self,
        namespace: &str,
        ids: &[String],
        select: &str,
        what: &str,
    ) -> Result<Vec<T>, VectorError> {
        let mut statements = Vec::new();
        for group in ids.chunks(IDS_PER_STATEMENT) {
            let sql = format!("{select} WHERE namespace = ?1 AND id IN ({})", placeholders(2, group.len()));
            let mut args = vec![JsValue::from_str(namespace)];
            args.extend(group.iter().map(|id| JsValue::from_str(id)));
            statements.push(self.db.raw().prepare(sql).bind(&args).map_err(|e| d1("bind", e))?);
        }
        let groups: Vec<Vec<T>> = self.db.batch_rows(statements).await.map_err(|e| d1(what, e))?;
        Ok(groups.into_iter().flatten().collect())
    }

    async fn delete_by_ids(&self, namespace: &str, ids: &[String]) -> Result<(), VectorError> {
        let mut statements = Vec::new();
        for group in ids.chunks(IDS_PER_STATEMENT) {
            let sql = format!(
                "DELETE FROM local_vectors WHERE namespace = ?1 AND id IN ({})",
                placeholders(2, group.len())
            );
            let mut args = vec![JsValue::from_str(namespace)];
            args.extend(group.iter().map(|id| JsValue::from_str(id)));
            statements.push(self.db.raw().prepare(sql).bind(&args).map_err(|e| d1("bind", e))?);
        }
        if !statements.is_empty() {
            self.db.raw().batch(statements).await.map_err(|e| d1("delete", e))?;
        }
        Ok(())
    }
}

impl D1Vectors {
    /// The filtered paged scan: exact, memory bounded by one page.
    async fn scan(&self, namespace: &str, query: &VectorQuery) -> Result<Vec<VectorMatch>, VectorError> {
        let (filter, filter_args) = filter_sql(&query.filter, 5);
        // One result row per page: the page's ids and its vectors' hex concatenated, so a page
        // crosses from D1 as two strings instead of `page_rows` objects (the per-row cost dominates).
        // Both aggregates walk the same rows in the same order; TopK does not depend on that order.
        let sql = format!(
            "SELECT count(*) AS n, max(r) AS last, group_concat(id, char(31)) AS ids, group_concat(v, '') AS vs \
             FROM (SELECT rowid AS r, id, hex(vector) AS v FROM local_vectors \
                   WHERE namespace = ?1 AND dims = ?2 AND rowid > ?3{filter} ORDER BY rowid LIMIT ?4)"
        );
        let stmt = self.db.raw().prepare(sql);
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
            let page: Option<PageRow> = Self::first_row(&stmt, &args, "scan").await?;
            let Some(page) = page.filter(|p| p.n > 0.0) else { break };
            let (ids, vs) = (page.ids.unwrap_or_default(), page.vs.unwrap_or_default());
            let n = page.n as usize;
            check_page_hex(&vs, n, hex_len)?;
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

        let best = top.into_sorted().into_iter().map(|(score, id, ())| (score, id)).collect();
        self.with_metadata(namespace, best).await
    }

    async fn query_traced(
        &self,
        namespace: &str,
        query: &VectorQuery,
    ) -> Result<(Vec<VectorMatch>, CachePath), VectorError> {
        if self.cache_bytes == 0 {
            return Ok((self.scan(namespace, query).await?, CachePath::Scan));
        }
        let generation = self.generation(namespace).await?;
        match CACHE.with(|c| c.borrow_mut().lookup(namespace, self.dims, generation)) {
            Lookup::Hit(set) => Ok((self.answer_from(&set, namespace, query).await?, CachePath::Hit)),
            Lookup::TooBig => Ok((self.scan(namespace, query).await?, CachePath::Scan)),
            Lookup::Miss => self.build_and_answer(namespace, query, generation).await,
        }
    }

    /// The first row of `stmt` bound to `args` (`what` names the query in errors).
    async fn first_row<T: serde::de::DeserializeOwned>(
        stmt: &D1PreparedStatement,
        args: &[JsValue],
        what: &str,
    ) -> Result<Option<T>, VectorError> {
        stmt.clone().bind(args).map_err(|e| d1("bind", e))?.first(None).await.map_err(|e| d1(what, e))
    }

    async fn count(&self, namespace: &str) -> Result<usize, VectorError> {
        #[derive(Deserialize)]
        struct CountRow {
            n: f64,
        }
        let stmt = self
            .db
            .raw()
            .prepare("SELECT count(*) AS n FROM local_vectors WHERE namespace = ?1 AND dims = ?2");
        let args = [JsValue::from_str(namespace), JsValue::from_f64(self.dims as f64)];
        let row: Option<CountRow> = Self::first_row(&stmt, &args, "count").await?;
        Ok(row.map_or(0, |r| r.n as usize))
    }

    async fn generation(&self, namespace: &str) -> Result<f64, VectorError> {
        let stmt =
            self.db.raw().prepare("SELECT generation FROM local_vector_generations WHERE namespace = ?1");
        let row: Option<GenerationRow> =
            Self::first_row(&stmt, &[JsValue::from_str(namespace)], "generation").await?;
        Ok(row.map_or(0.0, |r| r.generation))
    }

    /// Top K from the in-memory copy: its candidates re-scored exactly with their f32 values.
    async fn answer_from(
        &self,
        set: &QuantizedVectors,
        namespace: &str,
        query: &VectorQuery,
    ) -> Result<Vec<VectorMatch>, VectorError> {
        let candidates: Vec<String> = set
            .candidates(&query.vector, query.top_k, &query.filter)
            .into_iter()
            .map(str::to_string)
            .collect();
        let records = self.get_by_ids(namespace, &candidates).await?;
        let records: Vec<&VectorRecord> = records.iter().filter(|r| r.values.len() == self.dims).collect();
        let best =
            rescore(&query.vector, query.top_k, records.iter().map(|r| (r.id.as_str(), r.values.as_slice())));
        let mut meta: HashMap<&str, &VectorMetadata> =
            records.iter().map(|r| (r.id.as_str(), &r.metadata)).collect();
        best.into_iter()
            .map(|(score, id)| {
                let metadata = meta.remove(id.as_str()).cloned().ok_or_else(|| {
                    VectorError::Backend(format!("local index: {id} vanished during the query"))
                })?;
                Ok(VectorMatch { id, score, metadata })
            })
            .collect()
    }

    /// One unfiltered scan that answers the query exactly (filters applied here) and builds the
    /// namespace's in-memory copy, kept if it fits the budget.
    async fn build_and_answer(
        &self,
        namespace: &str,
        query: &VectorQuery,
        generation: f64,
    ) -> Result<(Vec<VectorMatch>, CachePath), VectorError> {
        let stmt = self.db.raw().prepare(
            "SELECT count(*) AS n, max(r) AS last, json_group_array(id) AS ids, \
             json_group_array(path) AS paths, json_group_array(language) AS langs, \
             json_group_array(tags) AS tags, group_concat(v, '') AS vs \
             FROM (SELECT rowid AS r, id, path, language, tags, hex(vector) AS v FROM local_vectors \
                   WHERE namespace = ?1 AND dims = ?2 AND rowid > ?3 ORDER BY rowid LIMIT ?4)",
        );
        // Sized up front (and skipped when it cannot fit): growing the codes by doubling would
        // briefly need twice their memory.
        let rows = self.count(namespace).await?;
        let fits = rows.saturating_mul(QuantizedVectors::bytes_per_vector(self.dims)) <= self.cache_bytes;
        let qn = norm(&query.vector);
        let mut top: TopK<()> = TopK::new(query.top_k);
        // A few rows may arrive between the count and the scan: the copy then grows a little.
        let mut set = fits.then(|| QuantizedVectors::with_capacity(self.dims, rows + 16));
        let mut buf: Vec<f32> = Vec::with_capacity(self.dims);
        let hex_len = self.dims * 8;
        let mut after = -1f64;
        loop {
            let args = [
                JsValue::from_str(namespace),
                JsValue::from_f64(self.dims as f64),
                JsValue::from_f64(after),
                JsValue::from_f64(self.page_rows as f64),
            ];
            let page: Option<BuildPageRow> = Self::first_row(&stmt, &args, "scan").await?;
            let Some(page) = page.filter(|p| p.n > 0.0) else { break };
            let n = page.n as usize;
            let column = |name: &str, json: Option<String>| -> Result<Vec<String>, VectorError> {
                let values: Vec<String> = serde_json::from_str(json.as_deref().unwrap_or("[]"))
                    .map_err(|e| d1(&format!("scan page {name}"), e))?;
                if values.len() != n {
                    return Err(d1("scan page", format!("{} {name} for {n} rows", values.len())));
                }
                Ok(values)
            };
            let ids = column("ids", page.ids)?;
            let paths = column("paths", page.paths)?;
            let langs = column("languages", page.langs)?;
            let tags = column("tags", page.tags)?;
            let vs = page.vs.unwrap_or_default();
            check_page_hex(&vs, n, hex_len)?;
            let rows = ids.into_iter().zip(paths).zip(langs).zip(tags);
            for (i, (((id, path), language), tags)) in rows.enumerate() {
                decode_f32_hex_into(&vs[i * hex_len..(i + 1) * hex_len], &mut buf)?;
                let fields = FilterFields {
                    path,
                    language,
                    tags: tags.split(',').filter(|t| !t.is_empty()).map(str::to_string).collect(),
                };
                let passes = fields.matches(&query.filter);
                if passes {
                    let score = cosine_with_norm(&query.vector, qn, &buf);
                    if top.accepts(score, &id) {
                        top.push(score, id.clone(), ());
                    }
                }
                if let Some(s) = set.as_mut() {
                    s.push(id, &buf, fields);
                    if s.bytes() > self.cache_bytes {
                        set = None; // does not fit: answer this query, cache nothing
                    }
                }
            }
            after = page.last.unwrap_or(f64::MAX);
            if n < self.page_rows {
                break;
            }
        }
        let path = if set.is_some() { CachePath::Built } else { CachePath::Scan };
        CACHE.with(|c| c.borrow_mut().store(namespace, self.dims, generation, set, self.cache_bytes));
        let best = top.into_sorted().into_iter().map(|(score, id, ())| (score, id)).collect();
        Ok((self.with_metadata(namespace, best).await?, path))
    }

    /// `(score, id)` best first → matches with their metadata.
    async fn with_metadata(
        &self,
        namespace: &str,
        best: Vec<(f32, String)>,
    ) -> Result<Vec<VectorMatch>, VectorError> {
        let ids: Vec<String> = best.iter().map(|(_, id)| id.clone()).collect();
        let mut metadata = self.metadata_of(namespace, &ids).await?;
        best.into_iter()
            .map(|(score, id)| {
                let meta = metadata.remove(&id).ok_or_else(|| {
                    VectorError::Backend(format!("local index: {id} vanished during the query"))
                })?;
                Ok(VectorMatch { id, score, metadata: meta })
            })
            .collect()
    }

    async fn metadata_of(
        &self,
        namespace: &str,
        ids: &[String],
    ) -> Result<std::collections::HashMap<String, VectorMetadata>, VectorError> {
        let rows: Vec<MetaRow> =
            self.by_ids(namespace, ids, "SELECT id, metadata FROM local_vectors", "metadata").await?;
        let mut out = std::collections::HashMap::new();
        for row in rows {
            let m = parse_metadata(&row.id, &row.metadata)?;
            out.insert(row.id, m);
        }
        Ok(out)
    }
}
