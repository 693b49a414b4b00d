//! In-memory implementations of the stores: [`MemoryStore`] (a [`KeywordIndex`] with the exact
//! BM25 formula of SQLite FTS5, and a [`ChunkStore`]) and [`MemoryCatalog`]. They back native
//! tests, the CLI's offline mode and the retrieval benchmark; the D1 implementations in the
//! worker run the same queries in SQL.
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use edgerag_core::embed::Embedder;
use edgerag_core::graph::{EdgeKind, FileGraph, Node};
use edgerag_core::text::{embedding_text, fts_document, keyword_terms};
use edgerag_core::vector::{VectorIndex, VectorRecord};
use edgerag_core::Chunk;

use crate::bm25::{Bm25Index, DocInput, Phrase};
use crate::error::PortError;
use crate::ports::{
    link_order, ChunkKey, ChunkRecord, ChunkStore, GraphLinks, KeywordIndex, KeywordQuery, LinePoint,
    LinkDirection, NamespaceCatalog, NamespaceInfo, NeighborRange, ScoredKey, SymbolFamily, SymbolLink,
    SymbolQuery,
};

#[derive(Debug)]
struct Doc {
    record: ChunkRecord,
    live: bool,
}

#[derive(Debug, Default)]
struct Inner {
    docs: Vec<Doc>,
    by_key: HashMap<ChunkKey, usize>,
    live_docs: usize,
    /// Per namespace, its BM25 index: the statistics are a namespace's own (as each namespace's
    /// FTS5 index in D1), so another namespace's rows never move a score.
    keyword: HashMap<String, Bm25Index>,
}

/// Chunks in memory with an FTS5-equivalent BM25 index over
/// `(fts_document(chunk), path, symbol_name)` (path and name with their `keyword_terms`), and each namespace's resolved code graph.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: RefCell<Inner>,
    graphs: RefCell<BTreeMap<String, Vec<FileGraph>>>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Insert or replace chunks of a namespace (by chunk id).
    pub fn upsert(&self, namespace: &str, chunks: impl IntoIterator<Item = Chunk>, tags: &[String]) {
        for chunk in chunks {
            self.upsert_record(ChunkRecord { namespace: namespace.to_string(), chunk, tags: tags.to_vec() });
        }
    }

    pub fn upsert_record(&self, record: ChunkRecord) {
        let key = ChunkKey::new(&record.namespace, &record.chunk.id);
        let namespace = record.namespace.clone();
        self.remove(&key);
        let mut inner = self.inner.borrow_mut();
        let doc_id = inner.docs.len();
        let search_text = fts_document(&record.chunk);
        let chunk = &record.chunk;
        // The path and name columns as the D1 index holds them (`chunks.path_terms`, `symbol_terms`).
        let path_column = keyword_terms(&chunk.path).unwrap_or_else(|| chunk.path.clone());
        let symbol = chunk.metadata.symbol_name.as_deref().unwrap_or_default();
        let symbol_column = keyword_terms(symbol).unwrap_or_else(|| symbol.to_string());
        inner.keyword.entry(namespace).or_default().insert(DocInput {
            id: &chunk.id,
            row: doc_id as i64,
            columns: [&search_text, &path_column, &symbol_column],
            path: &chunk.path,
            language: chunk.language,
            tags: &record.tags,
        });
        inner.docs.push(Doc { record, live: true });
        inner.by_key.insert(key, doc_id);
        inner.live_docs += 1;
    }

    /// Remove one chunk (postings are dropped lazily: dead docs are skipped).
    pub fn remove(&self, key: &ChunkKey) -> bool {
        let mut inner = self.inner.borrow_mut();
        let Some(doc_id) = inner.by_key.remove(key) else { return false };
        inner.docs[doc_id].live = false;
        inner.live_docs -= 1;
        if let Some(index) = inner.keyword.get_mut(&key.namespace) {
            index.remove(&key.id);
        }
        true
    }

    /// Every live chunk of a namespace.
    pub fn records(&self, namespace: &str) -> Vec<ChunkRecord> {
        let inner = self.inner.borrow();
        inner
            .docs
            .iter()
            .filter(|d| d.live && d.record.namespace == namespace)
            .map(|d| d.record.clone())
            .collect()
    }

    pub fn len(&self) -> usize {
        self.inner.borrow().live_docs
    }

    /// Replace a namespace's code graph with these files' graphs, resolved across files (what
    /// the worker does when a job completes). No files: the namespace has no graph.
    pub fn set_graph(&self, namespace: &str, mut files: Vec<FileGraph>) {
        let mut graphs = self.graphs.borrow_mut();
        if files.is_empty() {
            graphs.remove(namespace);
        } else {
            edgerag_core::graph::resolve(&mut files);
            graphs.insert(namespace.to_string(), files);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[async_trait::async_trait(?Send)]
impl KeywordIndex for MemoryStore {
    async fn search(&self, query: &KeywordQuery) -> Result<Vec<ScoredKey>, PortError> {
        let inner = self.inner.borrow();
        if query.terms.is_empty() || inner.live_docs == 0 || query.limit == 0 {
            return Ok(Vec::new());
        }
        let phrases: Vec<Phrase> = query.terms.iter().filter_map(Phrase::of).map(|(p, _)| p).collect();
        let matcher = query.filters.matcher();
        let mut namespaces: Vec<&String> = query.namespaces.iter().collect();
        namespaces.sort();
        namespaces.dedup();
        let mut hits: Vec<ScoredKey> = Vec::new();
        for namespace in namespaces {
            let Some(index) = inner.keyword.get(namespace) else { continue };
            hits.extend(
                index
                    .search(&phrases, &matcher, query.limit)
                    .into_iter()
                    .map(|h| ScoredKey { key: ChunkKey::new(namespace, h.id), score: h.score as f32 }),
            );
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)));
        hits.truncate(query.limit);
        Ok(hits)
    }
}

fn sorted(mut records: Vec<ChunkRecord>) -> Vec<ChunkRecord> {
    records.sort_by(|a, b| {
        (a.namespace.as_str(), a.chunk.path.as_str(), a.chunk.chunk_index).cmp(&(
            b.namespace.as_str(),
            b.chunk.path.as_str(),
            b.chunk.chunk_index,
        ))
    });
    records
}

#[async_trait::async_trait(?Send)]
impl ChunkStore for MemoryStore {
    async fn get(&self, keys: &[ChunkKey]) -> Result<Vec<ChunkRecord>, PortError> {
        let inner = self.inner.borrow();
        Ok(keys.iter().filter_map(|k| inner.by_key.get(k).map(|&d| inner.docs[d].record.clone())).collect())
    }

    async fn neighbors(&self, ranges: &[NeighborRange]) -> Result<Vec<ChunkRecord>, PortError> {
        let inner = self.inner.borrow();
        let found = inner
            .docs
            .iter()
            .filter(|d| d.live)
            .filter(|d| {
                ranges.iter().any(|r| {
                    d.record.namespace == r.namespace
                        && d.record.chunk.path == r.path
                        && (r.from_index..=r.to_index).contains(&d.record.chunk.chunk_index)
                })
            })
            .map(|d| d.record.clone())
            .collect();
        Ok(sorted(found))
    }

    async fn families(&self, families: &[SymbolFamily], limit: usize) -> Result<Vec<ChunkRecord>, PortError> {
        let inner = self.inner.borrow();
        let mut out = Vec::new();
        for f in families {
            let members: Vec<ChunkRecord> = sorted(
                inner
                    .docs
                    .iter()
                    .filter(|d| d.live && d.record.namespace == f.namespace && d.record.chunk.path == f.path)
                    .filter(|d| {
                        let m = &d.record.chunk.metadata;
                        m.parent_symbol.as_deref() == Some(f.symbol.as_str())
                            || m.symbol_name.as_deref() == Some(f.symbol.as_str())
                    })
                    .map(|d| d.record.clone())
                    .collect(),
            );
            out.extend(members.into_iter().take(limit));
        }
        Ok(sorted(out))
    }

    async fn graph_links(
        &self,
        namespaces: &[String],
        queries: &[SymbolQuery],
        per_query: usize,
    ) -> Result<GraphLinks, PortError> {
        let graphs = self.graphs.borrow();
        let mut with_graph: Vec<String> =
            namespaces.iter().filter(|n| graphs.contains_key(n.as_str())).cloned().collect();
        with_graph.sort();
        with_graph.dedup();
        let mut links = Vec::new();
        for (qi, q) in queries.iter().enumerate() {
            if let Some(files) = graphs.get(&q.namespace) {
                links.extend(links_of(files, qi, q, per_query));
            }
        }
        Ok(GraphLinks { with_graph, links })
    }

    async fn chunks_at(&self, points: &[LinePoint]) -> Result<Vec<ChunkRecord>, PortError> {
        let inner = self.inner.borrow();
        let found = inner
            .docs
            .iter()
            .filter(|d| d.live)
            .filter(|d| {
                let c = &d.record.chunk;
                points.iter().any(|p| {
                    d.record.namespace == p.namespace
                        && c.path == p.path
                        && c.start_line <= p.line
                        && c.end_line >= p.line
                })
            })
            .map(|d| d.record.clone())
            .collect();
        Ok(sorted(found))
    }
}

/// One namespace's links for one query, as the D1 statements compute them.
fn links_of(files: &[FileGraph], qi: usize, q: &SymbolQuery, per_query: usize) -> Vec<SymbolLink> {
    let nodes: HashMap<&str, &Node> = files.iter().flat_map(|f| &f.nodes).map(|n| (&*n.id, n)).collect();
    let calls: Vec<_> = files
        .iter()
        .flat_map(|f| &f.edges)
        .filter(|e| e.kind == EdgeKind::Calls && e.dst.is_some())
        .collect();
    let on_lines = |path: &str, line: u32| path == q.path && (q.start_line..=q.end_line).contains(&line);
    // One link per other symbol and direction: the best confidence, the first call site.
    let mut best: BTreeMap<(LinkDirection, String), SymbolLink> = BTreeMap::new();
    let mut keep = |direction, key: &str, name: &str, path: &str, line: u32, confidence: f32| {
        best.entry((direction, key.to_string()))
            .and_modify(|l: &mut SymbolLink| {
                l.confidence = l.confidence.max(confidence);
                l.line = l.line.min(line);
            })
            .or_insert_with(|| SymbolLink {
                query: qi,
                direction,
                name: name.into(),
                path: path.into(),
                line,
                confidence,
            });
    };
    for e in &calls {
        let dst = e.dst.as_deref().unwrap_or_default();
        if on_lines(&e.path, e.line) {
            if let Some(n) = nodes.get(dst) {
                keep(LinkDirection::Uses, dst, &n.name, &n.path, n.start_line, e.confidence);
            }
        }
        let target = nodes.get(dst).is_some_and(|n| {
            q.symbol_id.as_deref() == Some(dst)
                || (*n.path == *q.path && (q.start_line..=q.end_line).contains(&n.start_line))
        });
        if target && !on_lines(&e.path, e.line) {
            if let Some(src) = nodes.get(&*e.src) {
                keep(LinkDirection::UsedBy, &e.src, &src.name, &e.path, e.line, e.confidence);
            }
        }
    }
    let mut out = Vec::new();
    for direction in [LinkDirection::Uses, LinkDirection::UsedBy] {
        let mut mine: Vec<SymbolLink> =
            best.iter().filter(|((d, _), _)| *d == direction).map(|(_, l)| l.clone()).collect();
        mine.sort_by(|a, b| link_order(q, a, b));
        out.extend(mine.into_iter().take(per_query));
    }
    out
}

/// Index chunks the way the worker does, in memory: the store (BM25 + lookups) and, when given,
/// the embedder + vector index (vectors of [`embedding_text`]).
pub async fn index_chunks(
    store: &MemoryStore,
    vectors: Option<(&dyn Embedder, &dyn VectorIndex)>,
    namespace: &str,
    chunks: Vec<Chunk>,
    tags: &[String],
) -> Result<(), PortError> {
    if let Some((embedder, index)) = vectors {
        let batch = embedder.info().max_batch.max(1);
        for group in chunks.chunks(batch) {
            let texts: Vec<String> = group.iter().map(embedding_text).collect();
            let values =
                embedder.embed(&texts).await.map_err(|e| PortError::new("embedder", e.to_string()))?;
            let records: Vec<VectorRecord> =
                group.iter().zip(values).map(|(c, v)| VectorRecord::of_chunk(c, v, tags)).collect();
            index
                .upsert(namespace, &records)
                .await
                .map_err(|e| PortError::new("vector-index", e.to_string()))?;
        }
    }
    store.upsert(namespace, chunks, tags);
    Ok(())
}

/// A fixed list of namespaces.
#[derive(Debug, Default)]
pub struct MemoryCatalog {
    pub namespaces: RefCell<Vec<NamespaceInfo>>,
}

impl MemoryCatalog {
    pub fn new(namespaces: Vec<NamespaceInfo>) -> Self {
        MemoryCatalog { namespaces: RefCell::new(namespaces) }
    }
}

#[async_trait::async_trait(?Send)]
impl NamespaceCatalog for MemoryCatalog {
    async fn list(&self) -> Result<Vec<NamespaceInfo>, PortError> {
        Ok(self.namespaces.borrow().clone())
    }
}

/// Run a future whose ports never wait on I/O (the in-memory ones) to completion.
pub fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
    }
}
