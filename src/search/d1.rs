//! The search ports over D1: BM25 through FTS5 (`chunks_fts` joined to `chunks` by rowid), chunk
//! lookups by id / position / symbol, and the namespace catalog. Every statement stays under D1's
//! 100 bound parameters; lookups of one request go out as one `batch` per database (one round
//! trip each): namespaces are grouped by the database that holds them ([`Stores`]).
use edgerag_core::{Chunk, ChunkMetadata, ChunkType, Language};
use edgerag_search::ports::{
    ChunkKey, ChunkRecord, ChunkStore, KeywordIndex, KeywordQuery, NamespaceCatalog, NamespaceInfo,
    NamespaceStatus, NeighborRange, ScoredKey, SymbolFamily,
};
use edgerag_search::query::{fts5_expression, BM25_WEIGHTS};
use edgerag_search::PortError;
use serde::Deserialize;

use crate::auth::Access;
use crate::store::{placeholders, Arg, Db, StoreError, Stores, MAX_PARAMS};

/// D1-backed implementation of every store port, over every database of the deployment, limited
/// to the namespaces the caller may read: the catalog lists only those, and lookups drop any
/// other namespace they are asked for.
pub struct D1Search {
    stores: Stores,
    access: Access,
}

impl D1Search {
    pub fn new(stores: Stores, access: Access) -> Self {
        D1Search { stores, access }
    }

    /// `items` grouped by the database of their namespace.
    async fn by_database<'a, T>(
        &self,
        items: &'a [T],
        namespace: impl Fn(&T) -> &str,
        backend: &str,
    ) -> Result<Vec<(Db, Vec<&'a T>)>, PortError> {
        let mut namespaces: Vec<String> = items.iter().map(|i| namespace(i).to_string()).collect();
        namespaces.retain(|n| self.access.may_read_namespace(n));
        namespaces.sort();
        namespaces.dedup();
        let groups = self.stores.group(&namespaces).await.map_err(port(backend))?;
        Ok(groups
            .into_iter()
            .map(|(db, nss)| {
                let mine: Vec<&T> = items.iter().filter(|i| nss.iter().any(|n| n == namespace(i))).collect();
                (db, mine)
            })
            .collect())
    }
}

fn port(backend: &str) -> impl Fn(StoreError) -> PortError + '_ {
    move |e| PortError::new(backend, e.to_string())
}

#[derive(Deserialize)]
struct Hit {
    namespace: String,
    id: String,
    score: f64,
}

#[async_trait::async_trait(?Send)]
impl KeywordIndex for D1Search {
    async fn search(&self, q: &KeywordQuery) -> Result<Vec<ScoredKey>, PortError> {
        let Some(expr) = fts5_expression(&q.terms) else { return Ok(Vec::new()) };
        if q.namespaces.is_empty() || q.limit == 0 {
            return Ok(Vec::new());
        }
        let languages: Vec<&str> = q.filters.languages.iter().take(20).map(|l| l.as_str()).collect();
        let globs: Vec<String> = q.filters.sql_globs().into_iter().take(30).collect();
        // Any of the tags (the request allows at most 20), matched as whole tags in the stored form.
        let tags: Vec<String> =
            q.filters.tags.iter().take(20).map(|t| edgerag_core::tags::column_needle(t)).collect();
        let [w0, w1, w2] = BM25_WEIGHTS;
        let mut hits: Vec<ScoredKey> = Vec::new();
        for (db, namespaces) in self.by_database(&q.namespaces, |n| n.as_str(), "keyword-index").await? {
            let mut statements = Vec::new();
            // CROSS JOIN pins the plan to "FTS5 drives, chunks looked up by rowid". Left free,
            // SQLite may walk the namespace's rows through the (namespace, id) index and probe
            // the full-text query once per row instead: at 5,000 rows a namespace that is ~2,000×
            // slower (minutes, not milliseconds), and which plan it picks depends on statistics.
            // Namespaces per statement: what the query, filters and limit leave of the 100 parameters.
            let per_statement = MAX_PARAMS - 2 - languages.len() - globs.len() - tags.len();
            for group in namespaces.chunks(per_statement) {
                let mut sql = format!(
                "SELECT c.namespace AS namespace, c.id AS id, bm25(chunks_fts, {w0:.1}, {w1:.1}, {w2:.1}) AS score \
                 FROM chunks_fts CROSS JOIN chunks c ON c.rowid = chunks_fts.rowid \
                 WHERE chunks_fts MATCH ? AND c.namespace IN ({})",
                placeholders(group.len())
            );
                let mut params: Vec<Arg> = vec![Arg::Text(&expr)];
                params.extend(group.iter().map(|n| Arg::Text(n.as_str())));
                if !languages.is_empty() {
                    sql.push_str(&format!(" AND c.language IN ({})", placeholders(languages.len())));
                    params.extend(languages.iter().map(|l| Arg::Text(l)));
                }
                if !globs.is_empty() {
                    let ors = vec!["c.path GLOB ?"; globs.len()].join(" OR ");
                    sql.push_str(&format!(" AND ({ors})"));
                    params.extend(globs.iter().map(|g| Arg::Text(g)));
                }
                if !tags.is_empty() {
                    let ors = vec!["instr(c.tags, ?) > 0"; tags.len()].join(" OR ");
                    sql.push_str(&format!(" AND ({ors})"));
                    params.extend(tags.iter().map(|t| Arg::Text(t)));
                }
                // Over-fetch a little when the exact glob check (done by the pipeline) may drop rows.
                let limit = if globs.is_empty() { q.limit } else { q.limit * 2 };
                sql.push_str(" ORDER BY score, c.id LIMIT ?");
                params.push(Arg::Int(limit as i64));
                debug_assert!(params.len() <= MAX_PARAMS);
                statements.push(db.stmt(&sql, &params).map_err(port("keyword-index"))?);
            }
            let groups: Vec<Vec<Hit>> = db.batch_rows(statements).await.map_err(port("keyword-index"))?;
            hits.extend(
                groups
                    .into_iter()
                    .flatten()
                    .map(|h| ScoredKey { key: ChunkKey::new(h.namespace, h.id), score: -h.score as f32 }),
            );
        }
        // FTS5's bm25() is "lower is better"; the port reports higher-is-better.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)));
        hits.truncate(q.limit);
        Ok(hits)
    }
}

/// The columns a chunk is rebuilt from (not `search_text`, which is only for FTS).
const CHUNK_SELECT: &str =
    "SELECT namespace, id, path, chunk_index, language, type, text, text_hash, start_line, \
     end_line, start_byte, end_byte, token_count, keywords, metadata, updated_at, version, tags FROM chunks";

#[derive(Deserialize)]
struct Row {
    namespace: String,
    id: String,
    path: String,
    chunk_index: i64,
    language: String,
    #[serde(rename = "type")]
    chunk_type: String,
    text: String,
    text_hash: String,
    start_line: i64,
    end_line: i64,
    start_byte: i64,
    end_byte: i64,
    token_count: i64,
    keywords: String,
    metadata: String,
    updated_at: Option<String>,
    version: i64,
    tags: String,
}

impl Row {
    fn record(self) -> ChunkRecord {
        let chunk_type: ChunkType = serde_json::from_value(serde_json::Value::String(self.chunk_type))
            .unwrap_or(ChunkType::TextBlock);
        let metadata: ChunkMetadata = serde_json::from_str(&self.metadata).unwrap_or_default();
        ChunkRecord {
            namespace: self.namespace,
            chunk: Chunk {
                id: self.id,
                text_hash: self.text_hash,
                path: self.path,
                language: Language::from_name(&self.language).unwrap_or(Language::Text),
                chunk_type,
                text: self.text,
                start_line: self.start_line.max(0) as u32,
                end_line: self.end_line.max(0) as u32,
                start_byte: self.start_byte.max(0) as usize,
                end_byte: self.end_byte.max(0) as usize,
                chunk_index: self.chunk_index.max(0) as u32,
                token_count: self.token_count.max(0) as u32,
                keywords: serde_json::from_str(&self.keywords).unwrap_or_default(),
                metadata,
                updated_at: self.updated_at,
                version: self.version.max(0) as u32,
            },
            tags: edgerag_core::tags::from_column(&self.tags),
        }
    }
}

impl D1Search {
    async fn rows(
        db: &Db,
        statements: Vec<worker::D1PreparedStatement>,
    ) -> Result<Vec<ChunkRecord>, PortError> {
        let groups: Vec<Vec<Row>> = db.batch_rows(statements).await.map_err(port("chunk-store"))?;
        Ok(groups.into_iter().flatten().map(Row::record).collect())
    }
}

#[async_trait::async_trait(?Send)]
impl ChunkStore for D1Search {
    async fn get(&self, keys: &[ChunkKey]) -> Result<Vec<ChunkRecord>, PortError> {
        let mut out = Vec::new();
        for (db, keys) in self.by_database(keys, |k| k.namespace.as_str(), "chunk-store").await? {
            let mut by_ns: std::collections::BTreeMap<&str, Vec<&str>> = std::collections::BTreeMap::new();
            for k in keys {
                by_ns.entry(k.namespace.as_str()).or_default().push(k.id.as_str());
            }
            let mut statements = Vec::new();
            for (ns, ids) in by_ns {
                for group in ids.chunks(MAX_PARAMS - 1) {
                    let mut params: Vec<Arg> = vec![Arg::Text(ns)];
                    params.extend(group.iter().map(|id| Arg::Text(id)));
                    let sql = format!(
                        "{CHUNK_SELECT} WHERE namespace = ? AND id IN ({})",
                        placeholders(group.len())
                    );
                    statements.push(db.stmt(&sql, &params).map_err(port("chunk-store"))?);
                }
            }
            out.extend(Self::rows(&db, statements).await?);
        }
        Ok(out)
    }

    async fn neighbors(&self, ranges: &[NeighborRange]) -> Result<Vec<ChunkRecord>, PortError> {
        let mut out = Vec::new();
        for (db, ranges) in self.by_database(ranges, |r| r.namespace.as_str(), "chunk-store").await? {
            let mut statements = Vec::new();
            for group in ranges.chunks(MAX_PARAMS / 4) {
                let clause =
                    vec!["(namespace = ? AND path = ? AND chunk_index BETWEEN ? AND ?)"; group.len()]
                        .join(" OR ");
                let mut params: Vec<Arg> = Vec::with_capacity(group.len() * 4);
                for r in group {
                    params.extend([
                        Arg::Text(&r.namespace),
                        Arg::Text(&r.path),
                        Arg::Int(i64::from(r.from_index)),
                        Arg::Int(i64::from(r.to_index)),
                    ]);
                }
                let sql = format!("{CHUNK_SELECT} WHERE {clause} ORDER BY namespace, path, chunk_index");
                statements.push(db.stmt(&sql, &params).map_err(port("chunk-store"))?);
            }
            out.extend(Self::rows(&db, statements).await?);
        }
        Ok(out)
    }

    async fn families(&self, families: &[SymbolFamily], limit: usize) -> Result<Vec<ChunkRecord>, PortError> {
        let mut out = Vec::new();
        for (db, families) in self.by_database(families, |f| f.namespace.as_str(), "chunk-store").await? {
            let mut statements = Vec::new();
            for f in families {
                let sql = format!(
                "{CHUNK_SELECT} WHERE namespace = ? AND path = ? AND (parent_symbol = ? OR symbol_name = ?) \
                 ORDER BY chunk_index LIMIT ?"
            );
                let params = [
                    Arg::Text(&f.namespace),
                    Arg::Text(&f.path),
                    Arg::Text(&f.symbol),
                    Arg::Text(&f.symbol),
                    Arg::Int(limit as i64),
                ];
                statements.push(db.stmt(&sql, &params).map_err(port("chunk-store"))?);
            }
            out.extend(Self::rows(&db, statements).await?);
        }
        Ok(out)
    }
}

#[derive(Deserialize)]
struct NamespaceRow {
    owner: String,
    name: String,
    status: String,
    ready_at: Option<String>,
    chunk_count: i64,
}

#[async_trait::async_trait(?Send)]
impl NamespaceCatalog for D1Search {
    async fn list(&self) -> Result<Vec<NamespaceInfo>, PortError> {
        let mut rows: Vec<NamespaceRow> = Vec::new();
        for db in self.stores.databases() {
            rows.extend(
                db.all::<NamespaceRow>(
                    "SELECT owner, name, status, ready_at, chunk_count FROM namespaces",
                    &[],
                )
                .await
                .map_err(port("namespaces"))?,
            );
        }
        Ok(rows
            .into_iter()
            .filter(|r| self.access.may_read(&r.owner, &r.name))
            .map(|r| NamespaceInfo {
                owner: r.owner,
                name: r.name,
                status: NamespaceStatus::parse(&r.status).unwrap_or(NamespaceStatus::Empty),
                ready_at: r.ready_at,
                chunk_count: r.chunk_count.max(0) as u64,
            })
            .collect())
    }
}
