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
//! namespace ([`QuantizedVectors`]: 8-bit codes, a quarter of the size of f32, keyed by `rowid`,
//! ≈ 430 bytes a vector of 384 dims) within a memory budget (`LOCAL_INDEX_CACHE_MB`, default 16 MB
//! for all namespaces together — about 39,000 such vectors — least recently used evicted first).
//! The copy is trusted only at the namespace's generation it was built at — a counter in
//! `local_vector_generations` that triggers bump on every write to `local_vectors` — so a query
//! costs one small read, an in-memory pass, and an exact re-scoring of the few vectors that could
//! make the top K (their f32 values read back by `rowid`, one statement): results are identical to
//! the full scan. The first query after a change rebuilds the copy from one unfiltered scan (and
//! answers from it); a namespace larger than the budget is always answered by the filtered scan.
//! A new isolate first reads the copy ready-made from the namespace's stored snapshot
//! (`local_vector_snapshots`, written when a job finishes and after any build, versioned by the
//! generation; an older one is refreshed from the logged changes), and builds it only when there
//! is no usable snapshot.
//!
//! | file | job |
//! | --- | --- |
//! | `mod.rs` | [`LocalD1Index`]: the port, routing each namespace to its database |
//! | `d1.rs` | the index in one database: writes, reads, the scans |
//! | `sql.rs` | rows, filters as SQL, the page check (pure) |
//! | `edgerag_core::vector::cache` | the generation-keyed LRU of in-memory copies (pure) |
use std::cell::RefCell;

use edgerag_core::vector::cache::{GenerationCache, Lookup};
use edgerag_core::vector::{
    validate_namespace, validate_query, validate_records, VectorError, VectorIndex, VectorMatch, VectorQuery,
    VectorRecord,
};

use crate::store::Stores;

mod d1;
mod sql;

use d1::D1Vectors;
pub use d1::SnapshotState;

/// Rows per scan page (one page ≈ 3 MB of hex at 384 dims, fetched as a single result row).
pub const PAGE_ROWS: usize = 1000;
/// Ids per `IN (…)`: D1 allows 100 bound parameters per statement.
pub(super) const IDS_PER_STATEMENT: usize = 90;
/// `rowid`s per statement when candidates are read back (one JSON array parameter).
pub(super) const KEYS_PER_STATEMENT: usize = 2000;
/// A stale in-memory copy is brought up to date by reading the rows changed since it was built
/// when at most this many changed; past that it is rebuilt by one scan.
pub(super) const MAX_REFRESH_ROWS: usize = 2000;
/// Changed rows are logged for this many generations (a write bumps one per row) and pruned
/// by the index's writes after that.
pub(super) const LOGGED_GENERATIONS: usize = 2 * MAX_REFRESH_ROWS;

/// Default memory for the in-memory copies of all namespaces together: 16 MB (≈ 39,000 vectors of
/// 384 dims). With the keyword copies' 16 MB beside it, the copies take at most half of the
/// isolate's 64 MB memory budget (`src/limits.json`), leaving the rest to the module and to a
/// request's own work; a namespace over it is answered by the paged D1 scan.
pub const DEFAULT_CACHE_BYTES: usize = 16 << 20;

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

    /// Brings the namespace's stored snapshot of its in-memory copy to its current generation
    /// (see `d1.rs`); nothing when copies are off; as far as `budget` goes (a later call writes the rest: [`SnapshotState::Partial`]).
    pub async fn prepare_snapshot(
        &self,
        namespace: &str,
        budget: &dyn crate::ledger::Budget,
    ) -> Result<Option<SnapshotState>, VectorError> {
        validate_namespace(namespace)?;
        if self.cache_bytes == 0 {
            return Ok(None);
        }
        self.on(namespace).await?.prepare_snapshot(namespace, budget).await.map(Some)
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

    fn applies_path_globs(&self) -> bool {
        true
    }

    async fn upsert(&self, namespace: &str, records: &[VectorRecord]) -> Result<(), VectorError> {
        validate_records(namespace, records, self.dims)?;
        self.on(namespace).await?.upsert(namespace, records).await
    }

    async fn query(&self, namespace: &str, query: &VectorQuery) -> Result<Vec<VectorMatch>, VectorError> {
        Ok(self.query_traced(namespace, query).await?.0)
    }

    async fn query_many(
        &self,
        namespace: &str,
        queries: &[VectorQuery],
    ) -> Vec<Result<Vec<VectorMatch>, VectorError>> {
        let valid: Vec<Result<(), VectorError>> =
            queries.iter().map(|q| validate_query(namespace, q, self.dims)).collect();
        let asked: Vec<&VectorQuery> =
            queries.iter().zip(&valid).filter(|(_, v)| v.is_ok()).map(|(q, _)| q).collect();
        let mut answers = match self.on(namespace).await {
            Ok(db) => db.query_many(namespace, &asked).await,
            Err(e) => asked.iter().map(|_| Err(e.clone())).collect(),
        }
        .into_iter();
        valid
            .into_iter()
            .map(|v| {
                v.and_then(|()| {
                    answers.next().unwrap_or_else(|| Err(d1("query", "a query of the batch went unanswered")))
                })
            })
            .collect()
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

/// How one query found a namespace in the isolate's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CachePath {
    /// Answered from the in-memory copy.
    Hit,
    /// The copy was (re)built by this query's scan.
    Built,
    /// The copy was brought up to date with the rows changed since it was built.
    Refreshed,
    /// The copy was read from the namespace's stored snapshot (and brought up to date).
    Loaded,
    /// Scanned D1: caching is off, or the namespace does not fit the budget.
    Scan,
}

thread_local! {
    static CACHE: RefCell<GenerationCache> = RefCell::new(GenerationCache::default());
}

/// Drops every in-memory copy of this isolate (a test route: what a new isolate starts with);
/// returns how many bytes they held.
#[cfg(feature = "test-hooks")]
pub fn forget_copies() -> usize {
    CACHE.with(|c| {
        let bytes = c.borrow().bytes();
        *c.borrow_mut() = GenerationCache::default();
        bytes
    })
}

fn d1(what: &str, e: impl std::fmt::Display) -> VectorError {
    VectorError::Backend(format!("local index {what}: {e}"))
}
