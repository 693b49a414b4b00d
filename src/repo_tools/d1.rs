//! The repository tools' store ([`RepoStore`]) over a namespace's D1 database: `files`,
//! `chunks` (and their trigram index `chunk_trigrams`, migration 0100), `graph_nodes` (read as
//! [`graph::NodeRow`]), `graph_edges` and `graph_files` (ranks, migration 0101). Lists of keys go as JSON arrays read
//! with `json_each` (one query per 512 KB of keys, not one per 90 parameters).
use edgerag_search::repo_tools::store::{
    ChunkText, EdgeEnd, FileFilter, FileLink, FileRank, RepoEdge, RepoFile, RepoStore, RepoSymbol,
    SymbolEdge, VOTING_KINDS,
};
use edgerag_search::PortError;
use serde::Deserialize;

use crate::store::args;
use crate::store::graph::{self, line_of as line, NodeRow, NODE_COLUMNS};
use crate::store::{json_batches, Db, StoreError, JSON_BATCH_BYTES};

/// Namespaces whose files' graph this isolate keeps at most.
const MAX_CACHED_GRAPHS: usize = 8;
/// Links (pairs of files) this isolate keeps at most, all namespaces together (~100 bytes each):
/// a graph over this is read again by every personalized map.
const MAX_CACHED_LINKS: usize = 250_000;

type GraphKey = (i64, i64, u64);

/// Namespace → the fingerprint its files' graph was read at, and that graph.
type GraphCopies = std::collections::HashMap<String, (GraphKey, std::rc::Rc<Vec<FileLink>>)>;

thread_local! {
    /// The files' graph of recently mapped namespaces ([`RepoStore::file_links`]), each trusted
    /// only while the fingerprint of its `graph_files` rows is the one it was read at.
    static FILE_LINKS: std::cell::RefCell<GraphCopies> = Default::default();
}

/// One namespace's database as the tools' store.
pub struct D1Repo {
    pub db: Db,
}

fn port(e: StoreError) -> PortError {
    PortError::new("d1", e.0)
}

fn voting_sql() -> String {
    kinds_sql(&VOTING_KINDS)
}

#[derive(Deserialize)]
struct FileRow {
    path: String,
    language: String,
    size: i64,
    lines: Option<i64>,
}

impl FileRow {
    fn into_file(self) -> RepoFile {
        RepoFile {
            path: self.path,
            language: self.language,
            size: self.size.max(0) as u64,
            lines: self.lines.unwrap_or(0).clamp(0, i64::from(u32::MAX)) as u32,
        }
    }
}

/// `kinds` as an SQL list of literals.
fn kinds_sql(kinds: &[&str]) -> String {
    kinds.iter().map(|k| format!("'{}'", k.replace('\'', "''"))).collect::<Vec<_>>().join(", ")
}

fn sorted(mut symbols: Vec<RepoSymbol>) -> Vec<RepoSymbol> {
    symbols.sort_by(|a, b| {
        (&a.path, a.start_line, std::cmp::Reverse(a.end_line), &a.id).cmp(&(
            &b.path,
            b.start_line,
            std::cmp::Reverse(b.end_line),
            &b.id,
        ))
    });
    symbols
}

#[derive(Deserialize)]
struct EdgeRow {
    src: String,
    dst: String,
    kind: String,
    path: String,
    line: i64,
}

impl D1Repo {
    /// Nodes whose `column` is one of `keys` (`extra`: more SQL conditions), in the port's order.
    async fn nodes_where(
        &self,
        ns: &str,
        column: &str,
        keys: &[String],
        extra: &str,
    ) -> Result<Vec<RepoSymbol>, PortError> {
        let mut out = Vec::new();
        for batch in json_batches(keys.iter(), JSON_BATCH_BYTES) {
            let sql = format!(
                "SELECT {NODE_COLUMNS} FROM graph_nodes WHERE namespace = ?1 \
                 AND {column} IN (SELECT value FROM json_each(?2)){extra}"
            );
            let rows: Vec<NodeRow> = self.db.all(&sql, &args![ns, batch.as_str()]).await.map_err(port)?;
            out.extend(rows.into_iter().map(NodeRow::into_symbol));
        }
        Ok(sorted(out))
    }
}

#[async_trait::async_trait(?Send)]
impl RepoStore for D1Repo {
    async fn files(&self, ns: &str, filter: &FileFilter<'_>) -> Result<Vec<RepoFile>, PortError> {
        // `[folder/, folder0)`: `0` follows `/` in byte order.
        let (low, high) = (!filter.folder.is_empty())
            .then(|| (format!("{}/", filter.folder), format!("{}0", filter.folder)))
            .unzip();
        let lines = if filter.lines {
            "(SELECT MAX(c.end_line) FROM chunks c \
               WHERE c.namespace = f.namespace AND c.path = f.path AND c.type <> 'symbol-plan')"
        } else {
            "0"
        };
        let sql = format!(
            "SELECT f.path, f.language, f.size, {lines} AS lines FROM files f WHERE f.namespace = ?1 \
               AND (?2 IS NULL OR (f.path >= ?2 AND f.path < ?3)) AND (?4 IS NULL OR f.language = ?4) \
               AND f.path >= ?5 ORDER BY f.path"
        );
        let rows: Vec<FileRow> = self
            .db
            .all(&sql, &args![ns, low.as_deref(), high.as_deref(), filter.language, filter.from])
            .await
            .map_err(port)?;
        Ok(rows.into_iter().map(FileRow::into_file).collect())
    }

    async fn file(&self, ns: &str, path: &str) -> Result<Option<RepoFile>, PortError> {
        let row: Option<FileRow> = self
            .db
            .first(
                "SELECT f.path, f.language, f.size, \
                   (SELECT MAX(c.end_line) FROM chunks c \
                     WHERE c.namespace = f.namespace AND c.path = f.path AND c.type <> 'symbol-plan') AS lines \
                 FROM files f WHERE f.namespace = ?1 AND f.path = ?2",
                &args![ns, path],
            )
            .await
            .map_err(port)?;
        Ok(row.map(FileRow::into_file))
    }

    async fn chunk_texts(&self, ns: &str, paths: &[String]) -> Result<Vec<ChunkText>, PortError> {
        #[derive(Deserialize)]
        struct Row {
            path: String,
            start_line: i64,
            text: String,
        }
        let mut out = Vec::new();
        for batch in json_batches(paths.iter(), JSON_BATCH_BYTES) {
            let rows: Vec<Row> = self
                .db
                .all(
                    "SELECT path, start_line, text FROM chunks WHERE namespace = ?1 \
                     AND path IN (SELECT value FROM json_each(?2)) AND type <> 'symbol-plan' \
                     ORDER BY path, start_line, chunk_index",
                    &args![ns, batch.as_str()],
                )
                .await
                .map_err(port)?;
            out.extend(rows.into_iter().map(|r| ChunkText {
                path: r.path,
                start_line: line(r.start_line),
                text: r.text,
            }));
        }
        Ok(out)
    }

    async fn paths_containing(&self, ns: &str, literals: &[String]) -> Result<Vec<String>, PortError> {
        #[derive(Deserialize)]
        struct Row {
            path: String,
        }
        // Each literal a quoted phrase: with the trigram tokenizer, a substring (case ignored).
        let query = literals
            .iter()
            .map(|l| format!("\"{}\"", l.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" OR ");
        let rows: Vec<Row> = self
            .db
            .all(
                "SELECT DISTINCT c.path FROM chunk_trigrams JOIN chunks c ON c.rowid = chunk_trigrams.rowid \
                 WHERE chunk_trigrams MATCH ?2 AND c.namespace = ?1",
                &args![ns, query.as_str()],
            )
            .await
            .map_err(port)?;
        Ok(rows.into_iter().map(|r| r.path).collect())
    }

    async fn symbols_in(&self, ns: &str, paths: &[String]) -> Result<Vec<RepoSymbol>, PortError> {
        self.nodes_where(ns, "path", paths, "").await
    }

    async fn definitions(&self, ns: &str, paths: &[String]) -> Result<Vec<RepoSymbol>, PortError> {
        let mut out = Vec::new();
        for batch in json_batches(paths.iter(), JSON_BATCH_BYTES) {
            let rows: Vec<NodeRow> = self
                .db
                .all(
                    "SELECT id, kind, name, fqn, path, language, start_line, end_line, signature, NULL AS doc, \
                       parent, route, http_method, rank FROM graph_nodes WHERE namespace = ?1 \
                     AND path IN (SELECT value FROM json_each(?2)) AND kind NOT IN ('MODULE', 'FIELD')",
                    &args![ns, batch.as_str()],
                )
                .await
                .map_err(port)?;
            out.extend(rows.into_iter().map(NodeRow::into_symbol));
        }
        Ok(sorted(out))
    }

    async fn symbols_by_id(&self, ns: &str, ids: &[String]) -> Result<Vec<RepoSymbol>, PortError> {
        self.nodes_where(ns, "id", ids, "").await
    }

    async fn symbols_named(
        &self,
        ns: &str,
        names: &[String],
        lowercase: &[String],
    ) -> Result<Vec<RepoSymbol>, PortError> {
        let sql = format!(
            "SELECT {NODE_COLUMNS} FROM graph_nodes WHERE namespace = ?1 AND kind <> 'MODULE' AND \
             (name IN (SELECT value FROM json_each(?2)) OR lower(name) IN (SELECT value FROM json_each(?3)))"
        );
        let json = |v: &[String]| serde_json::to_string(v).unwrap_or_else(|_| "[]".into());
        let rows: Vec<NodeRow> = self
            .db
            .all(&sql, &args![ns, json(names).as_str(), json(lowercase).as_str()])
            .await
            .map_err(port)?;
        Ok(sorted(rows.into_iter().map(NodeRow::into_symbol).collect()))
    }

    async fn symbols_by_name(
        &self,
        ns: &str,
        name: &str,
        kind: Option<&str>,
    ) -> Result<Vec<RepoSymbol>, PortError> {
        let rows: Vec<NodeRow> =
            self.db.all(&graph::nodes_by_name_sql(), &args![ns, name, kind]).await.map_err(port)?;
        Ok(rows.into_iter().map(NodeRow::into_symbol).collect())
    }

    async fn edges_at(
        &self,
        ns: &str,
        ids: &[String],
        end: EdgeEnd,
        kinds: &[&str],
    ) -> Result<Vec<SymbolEdge>, PortError> {
        #[derive(Deserialize)]
        struct Row {
            near: String,
            other: Option<String>,
            dst_name: String,
            kind: String,
            path: String,
            line: i64,
            confidence: f64,
        }
        let (near, far) = match end {
            EdgeEnd::Source => ("src", "dst"),
            EdgeEnd::Target => ("dst", "src"),
        };
        let sql = format!(
            "SELECT {near} AS near, {far} AS other, dst_name, kind, path, line, confidence FROM graph_edges \
             WHERE namespace = ?1 AND {near} IN (SELECT value FROM json_each(?2)) AND kind IN ({}) \
             ORDER BY {near}, path, line, dst_name",
            kinds_sql(kinds)
        );
        let mut out = Vec::new();
        for batch in json_batches(ids.iter(), JSON_BATCH_BYTES) {
            let rows: Vec<Row> = self.db.all(&sql, &args![ns, batch.as_str()]).await.map_err(port)?;
            out.extend(rows.into_iter().map(|r| SymbolEdge {
                near: r.near,
                other: r.other,
                dst_name: r.dst_name,
                kind: r.kind,
                path: r.path,
                line: line(r.line),
                confidence: r.confidence,
            }));
        }
        // One batch comes ordered; more are merged in the same order.
        out.sort_by(|a, b| {
            (&a.near, &a.path, a.line, &a.dst_name).cmp(&(&b.near, &b.path, b.line, &b.dst_name))
        });
        Ok(out)
    }

    async fn last_line(&self, ns: &str, path: &str) -> Result<Option<u32>, PortError> {
        #[derive(Deserialize)]
        struct Last {
            last: Option<i64>,
        }
        let last: Option<Last> = self
            .db
            .first(
                "SELECT MAX(end_line) AS last FROM chunks WHERE namespace = ? AND path = ? AND type <> 'symbol-plan'",
                &args![ns, path],
            )
            .await
            .map_err(port)?;
        Ok(last.and_then(|l| l.last).map(line))
    }

    async fn chunks_between(
        &self,
        ns: &str,
        path: &str,
        start: u32,
        end: u32,
    ) -> Result<Vec<ChunkText>, PortError> {
        #[derive(Deserialize)]
        struct Row {
            start_line: i64,
            text: String,
        }
        let rows: Vec<Row> = self
            .db
            .all(
                "SELECT start_line, text FROM chunks WHERE namespace = ? AND path = ? AND type <> 'symbol-plan' \
                 AND start_line <= ? AND end_line >= ? ORDER BY start_line, chunk_index",
                &args![ns, path, end, start],
            )
            .await
            .map_err(port)?;
        Ok(rows
            .into_iter()
            .map(|r| ChunkText { path: path.to_string(), start_line: line(r.start_line), text: r.text })
            .collect())
    }

    async fn file_ranks(&self, ns: &str) -> Result<Vec<FileRank>, PortError> {
        #[derive(Deserialize)]
        struct Row {
            path: String,
            rank: Option<f64>,
        }
        // From the covering index `graph_files_by_rank`: the table's rows hold each file's graph
        // JSON before the rank, so reading them costs the whole graph.
        let rows: Vec<Row> = self
            .db
            .all(
                "SELECT path, rank FROM graph_files INDEXED BY graph_files_by_rank WHERE namespace = ?1 \
                 ORDER BY rank DESC, path",
                &args![ns],
            )
            .await
            .map_err(port)?;
        let mut files: Vec<FileRank> =
            rows.into_iter().map(|r| FileRank { path: r.path, rank: r.rank.unwrap_or(0.0) }).collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(files)
    }

    async fn edges_into(&self, ns: &str, targets: &[String]) -> Result<Vec<RepoEdge>, PortError> {
        let mut out = Vec::new();
        for batch in json_batches(targets.iter(), JSON_BATCH_BYTES) {
            let sql = format!(
                "SELECT src, dst, kind, path, line FROM graph_edges WHERE namespace = ?1 \
                 AND dst IN (SELECT value FROM json_each(?2)) AND kind IN ({})",
                voting_sql()
            );
            let rows: Vec<EdgeRow> = self.db.all(&sql, &args![ns, batch.as_str()]).await.map_err(port)?;
            out.extend(rows.into_iter().map(|e| RepoEdge {
                src: e.src,
                dst: e.dst,
                kind: e.kind,
                path: e.path,
                line: line(e.line),
            }));
        }
        out.sort_by(|a, b| (&a.dst, &a.path, a.line, &a.src).cmp(&(&b.dst, &b.path, b.line, &b.src)));
        Ok(out)
    }

    async fn file_links(&self, ns: &str) -> Result<Vec<FileLink>, PortError> {
        #[derive(Deserialize, PartialEq, Clone, Copy)]
        struct Fingerprint {
            n: i64,
            m: Option<i64>,
            c: f64,
        }
        // The graph's files, their newest row and a checksum of their ranks, from the covering
        // index `graph_files_by_rank`: a file re-indexed gets a new row, a job's finish new ranks.
        let fingerprint: Option<Fingerprint> = self
            .db
            .first(
                "SELECT COUNT(*) AS n, MAX(rowid) AS m, TOTAL(rank * (rowid % 1000003)) AS c \
                 FROM graph_files INDEXED BY graph_files_by_rank WHERE namespace = ?1",
                &args![ns],
            )
            .await
            .map_err(port)?;
        let key = fingerprint.map(|f| (f.n, f.m.unwrap_or(0), f.c.to_bits()));
        if let Some(links) =
            FILE_LINKS.with(|c| c.borrow().get(ns).filter(|(k, _)| Some(*k) == key).map(|(_, l)| l.clone()))
        {
            return Ok(links.as_ref().clone());
        }
        #[derive(Deserialize)]
        struct Row {
            src: String,
            dst: String,
            edges: i64,
        }
        let sql = format!(
            "SELECT e.path AS src, n.path AS dst, COUNT(*) AS edges FROM graph_edges e \
             JOIN graph_nodes n ON n.namespace = e.namespace AND n.id = e.dst \
             WHERE e.namespace = ?1 AND e.kind IN ({}) AND n.path <> e.path \
             GROUP BY e.path, n.path ORDER BY e.path, n.path",
            voting_sql()
        );
        let rows: Vec<Row> = self.db.all(&sql, &args![ns]).await.map_err(port)?;
        let links: Vec<FileLink> = rows
            .into_iter()
            .map(|r| FileLink { src: r.src, dst: r.dst, edges: r.edges.clamp(0, i64::from(u32::MAX)) as u32 })
            .collect();
        if let Some(key) = key {
            FILE_LINKS.with(|c| {
                let mut cache = c.borrow_mut();
                cache.remove(ns);
                let held: usize = cache.values().map(|(_, l)| l.len()).sum();
                if cache.len() >= MAX_CACHED_GRAPHS || held + links.len() > MAX_CACHED_LINKS {
                    cache.clear();
                }
                if links.len() <= MAX_CACHED_LINKS {
                    cache.insert(ns.to_string(), (key, std::rc::Rc::new(links.clone())));
                }
            });
        }
        Ok(links)
    }
}
