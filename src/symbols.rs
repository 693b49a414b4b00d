//! Code navigation over one repository's index: symbols from the code graph, the edges between
//! them, and exact line ranges of indexed files rebuilt from their chunks. One function per
//! operation, called by the HTTP routes (`/v1/repos/{owner}/{name}/symbols…`, `…/files/…/lines`)
//! and the MCP tools (`repo.find_symbol`, `repo.symbol_references`, `repo.read_file_range`) alike.
//! [`tools`] holds the tools an agent uses beside them (file lists, outlines, grep).
use std::collections::{BTreeMap, HashSet};

use serde::Deserialize;

use crate::api::{
    Direction, FileLinesResponse, LinesQuery, ReferenceView, ReferencesQuery, ReferencesResponse,
    SymbolQuery, SymbolView, SymbolsResponse,
};
use crate::error::ApiError;
use crate::http::{check_repo_part, ApiResult};
use crate::store::args;
use crate::store::graph::{self, NODE_COLUMNS};
use crate::store::namespaces::{self, namespace_id};
use crate::store::{numbered_placeholders, Arg, Db, Stores};

pub mod tools;

const DEFAULT_SYMBOLS: u32 = 20;
const MAX_SYMBOLS: u32 = 200;
const DEFAULT_REFERENCES: u32 = 50;
const MAX_REFERENCES: u32 = 500;
/// Symbols expanded per query at depth 2 (under D1's 100-parameter limit).
const IDS_PER_QUERY: usize = 90;
/// Lines returned by one range read at most.
pub const MAX_LINES: u32 = 5_000;

#[derive(Deserialize)]
struct NodeRow {
    id: String,
    kind: String,
    name: String,
    fqn: String,
    path: String,
    language: String,
    start_line: i64,
    end_line: i64,
    signature: Option<String>,
    doc: Option<String>,
    parent: Option<String>,
    route: Option<String>,
    http_method: Option<String>,
}

impl NodeRow {
    fn view(self) -> SymbolView {
        SymbolView {
            id: self.id,
            kind: self.kind,
            name: self.name,
            fqn: self.fqn,
            path: self.path,
            language: self.language,
            start_line: self.start_line.max(0) as u32,
            end_line: self.end_line.max(0) as u32,
            signature: self.signature.filter(|s| !s.is_empty()),
            doc: self.doc.filter(|s| !s.is_empty()),
            parent: self.parent.filter(|s| !s.is_empty()),
            route: self.route.filter(|s| !s.is_empty()),
            http_method: self.http_method.filter(|s| !s.is_empty()),
        }
    }
}

/// Arguments (a query string's or an MCP call's) as a request type: 400 `INVALID_REQUEST` on a
/// missing, unknown or mistyped field.
pub fn parse_args<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> ApiResult<T> {
    serde_json::from_value(value).map_err(|e| crate::error::from_json_error(&e))
}

/// A checked repository and its database.
pub struct RepoDb {
    pub namespace: String,
    pub db: Db,
}

/// The repository's database; 404 `REPO_NOT_FOUND` when it was never indexed.
pub async fn open(stores: &Stores, owner: &str, name: &str) -> ApiResult<RepoDb> {
    check_repo_part("owner", owner)?;
    check_repo_part("name", name)?;
    let namespace = namespace_id(owner, name);
    let db = stores.for_namespace(&namespace).await?;
    if namespaces::get(&db, &namespace).await?.is_none() {
        // The same answer as the status route's for a repository never indexed.
        return Err(ApiError::not_found(
            "REPO_NOT_FOUND",
            format!("repository {owner}/{name} is not indexed"),
        ));
    }
    Ok(RepoDb { namespace, db })
}

fn unknown_symbol(id: &str) -> ApiError {
    ApiError::not_found("UNKNOWN_SYMBOL", format!("no symbol with id {id:?} in this repository"))
}

/// Definitions whose name or fully qualified name is `query.name`.
pub async fn find_symbols(repo: &RepoDb, query: &SymbolQuery) -> ApiResult<SymbolsResponse> {
    let name = query.name.trim();
    if name.is_empty() {
        return Err(ApiError::bad_request(
            "INVALID_REQUEST",
            "give the symbol's name (or fully qualified name)",
        ));
    }
    let limit = query.limit.unwrap_or(DEFAULT_SYMBOLS);
    if limit == 0 || limit > MAX_SYMBOLS {
        return Err(ApiError::bad_request("INVALID_REQUEST", format!("limit must be 1..={MAX_SYMBOLS}")));
    }
    let glob = match query.path.as_deref().filter(|p| !p.is_empty()) {
        Some(p) => Some(
            globset::Glob::new(p)
                .map_err(|e| ApiError::bad_request("INVALID_REQUEST", format!("path glob {p:?}: {e}")))?
                .compile_matcher(),
        ),
        None => None,
    };
    let kind = query.kind.as_deref().map(str::to_ascii_uppercase);
    let rows: Vec<NodeRow> = repo
        .db
        .all(&graph::nodes_by_name_sql(), &args![repo.namespace.as_str(), name, kind.as_deref()])
        .await?;
    let path = query.path.as_deref();
    let symbols = rows
        .into_iter()
        .filter(|r| match (&glob, path) {
            (Some(g), Some(p)) => r.path == p || g.is_match(&r.path),
            _ => true,
        })
        .take(limit as usize)
        .map(NodeRow::view)
        .collect();
    Ok(SymbolsResponse { symbols })
}

/// One symbol by id; 404 `UNKNOWN_SYMBOL`.
pub async fn get_symbol(repo: &RepoDb, id: &str) -> ApiResult<SymbolView> {
    let row: Option<NodeRow> = repo
        .db
        .first(
            &format!("SELECT {NODE_COLUMNS} FROM graph_nodes WHERE namespace = ? AND id = ?"),
            &args![repo.namespace.as_str(), id],
        )
        .await?;
    row.map(NodeRow::view).ok_or_else(|| unknown_symbol(id))
}

#[derive(Deserialize)]
struct EdgeRow {
    other: Option<String>,
    dst_name: String,
    kind: String,
    path: String,
    line: i64,
    confidence: f64,
}

/// Edge kinds followed in a direction, and whether the symbol is the edge's source.
fn edges_of(direction: Direction) -> (&'static [&'static str], bool) {
    match direction {
        Direction::Callers => (&["CALLS"], false),
        Direction::Callees => (&["CALLS"], true),
        Direction::Implementers => (&["EXTENDS", "IMPLEMENTS"], false),
        Direction::Importers => (&["IMPORTS"], false),
        Direction::Referencers => (&["REFERENCES"], false),
        Direction::Referenced => (&["REFERENCES"], true),
    }
}

/// Edges touching `ids` in `direction`, ordered by the starting symbol, path and line.
async fn edges_from(repo: &RepoDb, ids: &[String], direction: Direction) -> ApiResult<Vec<EdgeRow>> {
    let (kinds, outgoing) = edges_of(direction);
    let (near, far) = if outgoing { ("src", "dst") } else { ("dst", "src") };
    let kinds_sql = kinds.iter().map(|k| format!("'{k}'")).collect::<Vec<_>>().join(", ");
    let mut out = Vec::new();
    for group in ids.chunks(IDS_PER_QUERY) {
        let mut params: Vec<Arg> = vec![Arg::from(repo.namespace.as_str())];
        params.extend(group.iter().map(Arg::from));
        let sql = format!(
            "SELECT {far} AS other, dst_name, kind, path, line, confidence FROM graph_edges \
             WHERE namespace = ?1 AND {near} IN ({}) AND kind IN ({kinds_sql}) \
             ORDER BY {near}, path, line, dst_name",
            numbered_placeholders(2, group.len())
        );
        out.extend(repo.db.all::<EdgeRow>(&sql, &params).await?);
    }
    Ok(out)
}

async fn nodes_by_id(repo: &RepoDb, ids: &[String]) -> ApiResult<BTreeMap<String, SymbolView>> {
    let mut out = BTreeMap::new();
    for group in ids.chunks(IDS_PER_QUERY) {
        let mut params: Vec<Arg> = vec![Arg::from(repo.namespace.as_str())];
        params.extend(group.iter().map(Arg::from));
        let sql = format!(
            "SELECT {NODE_COLUMNS} FROM graph_nodes WHERE namespace = ?1 AND id IN ({})",
            numbered_placeholders(2, group.len())
        );
        for row in repo.db.all::<NodeRow>(&sql, &params).await? {
            out.insert(row.id.clone(), row.view());
        }
    }
    Ok(out)
}

/// The symbol's callers, callees, implementers, importers, referencers or referenced types, one or two steps away; a symbol
/// reached at depth 1 is not repeated at depth 2, and the symbol itself is never listed.
pub async fn references(repo: &RepoDb, id: &str, query: &ReferencesQuery) -> ApiResult<ReferencesResponse> {
    let direction = query.direction.unwrap_or(Direction::Callers);
    let depth = query.depth.unwrap_or(1);
    if !(1..=2).contains(&depth) {
        return Err(ApiError::bad_request("INVALID_REQUEST", "depth must be 1 or 2"));
    }
    let limit = query.limit.unwrap_or(DEFAULT_REFERENCES);
    if limit == 0 || limit > MAX_REFERENCES {
        return Err(ApiError::bad_request("INVALID_REQUEST", format!("limit must be 1..={MAX_REFERENCES}")));
    }
    let offset = query.offset.unwrap_or(0);
    let symbol = get_symbol(repo, id).await?;
    let mut seen: HashSet<String> = HashSet::from([symbol.id.clone()]);
    let mut found: Vec<(EdgeRow, u32)> = Vec::new();
    let mut frontier = vec![symbol.id.clone()];
    for level in 1..=depth {
        let edges = edges_from(repo, &frontier, direction).await?;
        let mut next = Vec::new();
        for edge in edges {
            if let Some(other) = &edge.other {
                // The symbol itself and anything already listed at a shallower depth.
                if seen.contains(other) {
                    continue;
                }
                if !next.contains(other) {
                    next.push(other.clone());
                }
            }
            found.push((edge, level));
        }
        seen.extend(next.iter().cloned());
        frontier = next;
        if frontier.is_empty() {
            break;
        }
    }
    let total = found.len();
    let page: Vec<(EdgeRow, u32)> = found.into_iter().skip(offset as usize).take(limit as usize).collect();
    let ids: Vec<String> = page.iter().filter_map(|(e, _)| e.other.clone()).collect();
    let nodes = nodes_by_id(repo, &ids).await?;
    let references = page
        .into_iter()
        .map(|(e, level)| {
            let node = e.other.as_ref().and_then(|o| nodes.get(o)).cloned();
            ReferenceView {
                dst_name: if node.is_none() { Some(e.dst_name.clone()) } else { None },
                symbol: node,
                kind: e.kind,
                path: e.path,
                line: e.line.max(0) as u32,
                confidence: e.confidence,
                depth: level,
            }
        })
        .collect();
    let end = offset as usize + limit as usize;
    let next_offset = (end < total).then_some(end as u32);
    Ok(ReferencesResponse { symbol, references, next_offset })
}

#[derive(Deserialize)]
struct ChunkLines {
    start_line: i64,
    text: String,
}

fn bad_range(message: impl Into<String>) -> ApiError {
    ApiError::bad_request("BAD_RANGE", message)
}

/// Lines `start..=end` of an indexed file, exactly as indexed, rebuilt from the chunks covering
/// them. Chunks may overlap and a chunk cut inside a line holds only part of it, so each line is
/// taken once, from the chunk holding the most of it.
pub async fn read_lines(repo: &RepoDb, path: &str, query: &LinesQuery) -> ApiResult<FileLinesResponse> {
    let (start, end) = (query.start, query.end);
    if start < 1 || end < start {
        return Err(bad_range(format!("lines {start}..{end}: start must be >= 1 and end >= start")));
    }
    if end - start + 1 > i64::from(MAX_LINES) {
        return Err(bad_range(format!("at most {MAX_LINES} lines per read")));
    }
    let (start, end) = (start as u32, end as u32);
    let ns = repo.namespace.as_str();
    #[derive(Deserialize)]
    struct Last {
        last: Option<i64>,
    }
    let last: Option<Last> = repo
        .db
        .first(
            "SELECT MAX(end_line) AS last FROM chunks WHERE namespace = ? AND path = ? AND type <> 'symbol-plan'",
            &args![ns, path],
        )
        .await?;
    let Some(last) = last.and_then(|l| l.last) else {
        return Err(ApiError::not_found("FILE_NOT_FOUND", format!("{path} is not an indexed file")));
    };
    if i64::from(end) > last {
        return Err(bad_range(format!("{path} has {last} lines; lines {start}..{end} are past its end")));
    }
    let chunks: Vec<ChunkLines> = repo
        .db
        .all(
            "SELECT start_line, text FROM chunks WHERE namespace = ? AND path = ? AND type <> 'symbol-plan' \
             AND start_line <= ? \
             AND end_line >= ? ORDER BY start_line, chunk_index",
            &args![ns, path, end, start],
        )
        .await?;
    let mut lines: BTreeMap<u32, &str> = BTreeMap::new();
    for chunk in &chunks {
        for (i, line) in chunk.text.split('\n').enumerate() {
            let n = chunk.start_line + i as i64;
            if n < i64::from(start) || n > i64::from(end) {
                continue;
            }
            let slot = lines.entry(n as u32).or_insert(line);
            if line.len() > slot.len() {
                *slot = line;
            }
        }
    }
    // A line no chunk covers is blank (chunkers skip whitespace between pieces).
    let text = (start..=end).map(|n| lines.get(&n).copied().unwrap_or("")).collect::<Vec<_>>().join("\n");
    Ok(FileLinesResponse { path: path.to_string(), start, end, text })
}
