//! Code navigation — `repo.find_symbol`, `repo.symbol_references`, `repo.read_file_range`, and
//! one symbol by id: symbols from the code graph, the edges between them, and exact line ranges
//! of indexed files rebuilt from their chunks, over the [`RepoStore`] port.
use std::collections::{BTreeMap, HashSet};

use super::store::{ChunkText, EdgeEnd, RepoStore, RepoSymbol, SymbolEdge, ToolError, ToolResult};
use super::{Direction, LinesQuery, ReferencesQuery, SymbolQuery};
use edgerag_api::routes::{
    FileLinesResponse, ReferenceView, ReferencesResponse, SymbolView, SymbolsResponse,
};

/// Symbols `repo.find_symbol` returns when the caller gives no `limit`.
pub const DEFAULT_SYMBOLS: u32 = 20;
/// Largest `limit` of `repo.find_symbol`.
pub const MAX_SYMBOLS: u32 = 200;
/// References per page when the caller gives no `limit`.
pub const DEFAULT_REFERENCES: u32 = 50;
/// Largest `limit` of `repo.symbol_references`.
pub const MAX_REFERENCES: u32 = 500;
/// Symbols whose edges are read together at depth 2: each group's edges come ordered by symbol,
/// path and line, so this is the order a depth-2 answer pages through.
pub const IDS_PER_READ: usize = 90;
/// Lines returned by one range read at most.
pub const MAX_LINES: u32 = 5_000;

/// A stored symbol as the API shows it (empty optional texts are absent).
pub fn view(s: RepoSymbol) -> SymbolView {
    SymbolView {
        id: s.id,
        kind: s.kind,
        name: s.name,
        fqn: s.fqn,
        path: s.path,
        language: s.language,
        start_line: s.start_line,
        end_line: s.end_line,
        signature: s.signature.filter(|s| !s.is_empty()),
        doc: s.doc.filter(|s| !s.is_empty()),
        parent: s.parent.filter(|s| !s.is_empty()),
        route: s.route.filter(|s| !s.is_empty()),
        http_method: s.http_method.filter(|s| !s.is_empty()),
    }
}

fn unknown_symbol(id: &str) -> ToolError {
    ToolError::not_found("UNKNOWN_SYMBOL", format!("no symbol with id {id:?} in this repository"))
}

/// Definitions whose name or fully qualified name is `query.name`, of `query.kind` (any case),
/// at `query.path` (exact, or a glob), in path and line order.
pub async fn find_symbols(
    store: &dyn RepoStore,
    namespace: &str,
    query: &SymbolQuery,
) -> ToolResult<SymbolsResponse> {
    let name = query.name.trim();
    if name.is_empty() {
        return Err(ToolError::invalid("give the symbol's name (or fully qualified name)"));
    }
    let limit = super::page_size(query.limit, DEFAULT_SYMBOLS, MAX_SYMBOLS)?;
    let path = query.path.as_deref().filter(|p| !p.is_empty());
    let glob = match path {
        Some(p) => Some(
            globset::Glob::new(p)
                .map_err(|e| ToolError::invalid(format!("path glob {p:?}: {e}")))?
                .compile_matcher(),
        ),
        None => None,
    };
    let kind = query.kind.as_deref().map(str::to_ascii_uppercase);
    let rows = store.symbols_by_name(namespace, name, kind.as_deref()).await?;
    let symbols = rows
        .into_iter()
        .filter(|r| match (&glob, path) {
            (Some(g), Some(p)) => r.path == p || g.is_match(&r.path),
            _ => true,
        })
        .take(limit as usize)
        .map(view)
        .collect();
    Ok(SymbolsResponse { symbols })
}

/// One symbol by id; 404 `UNKNOWN_SYMBOL`.
pub async fn symbol(store: &dyn RepoStore, namespace: &str, id: &str) -> ToolResult<SymbolView> {
    let found = store.symbols_by_id(namespace, &[id.to_string()]).await?;
    found.into_iter().find(|s| s.id == id).map(view).ok_or_else(|| unknown_symbol(id))
}

/// Edge kinds followed in a direction, and which end of them the symbol is.
fn edges_of(direction: Direction) -> (&'static [&'static str], EdgeEnd) {
    match direction {
        Direction::Callers => (&["CALLS"], EdgeEnd::Target),
        Direction::Callees => (&["CALLS"], EdgeEnd::Source),
        Direction::Implementers => (&["EXTENDS", "IMPLEMENTS"], EdgeEnd::Target),
        Direction::Importers => (&["IMPORTS"], EdgeEnd::Target),
        Direction::Referencers => (&["REFERENCES"], EdgeEnd::Target),
        Direction::Referenced => (&["REFERENCES"], EdgeEnd::Source),
    }
}

/// The symbol's callers, callees, implementers, importers, referencers or referenced types, one
/// or two steps away; a symbol reached at depth 1 is not repeated at depth 2, and the symbol
/// itself is never listed.
pub async fn references(
    store: &dyn RepoStore,
    namespace: &str,
    id: &str,
    query: &ReferencesQuery,
) -> ToolResult<ReferencesResponse> {
    let direction = query.direction.unwrap_or(Direction::Callers);
    let depth = query.depth.unwrap_or(1);
    if !(1..=2).contains(&depth) {
        return Err(ToolError::invalid("depth must be 1 or 2"));
    }
    let limit = super::page_size(query.limit, DEFAULT_REFERENCES, MAX_REFERENCES)?;
    let offset = query.offset.unwrap_or(0);
    let symbol = symbol(store, namespace, id).await?;
    let (kinds, end) = edges_of(direction);
    let mut seen: HashSet<String> = HashSet::from([symbol.id.clone()]);
    let mut found: Vec<(SymbolEdge, u32)> = Vec::new();
    let mut frontier = vec![symbol.id.clone()];
    for level in 1..=depth {
        let mut edges = Vec::new();
        for group in frontier.chunks(IDS_PER_READ) {
            edges.extend(store.edges_at(namespace, group, end, kinds).await?);
        }
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
    let page: Vec<(SymbolEdge, u32)> = found.into_iter().skip(offset as usize).take(limit as usize).collect();
    let ids: Vec<String> = page.iter().filter_map(|(e, _)| e.other.clone()).collect();
    let nodes: BTreeMap<String, SymbolView> = if ids.is_empty() {
        BTreeMap::new()
    } else {
        store.symbols_by_id(namespace, &ids).await?.into_iter().map(|s| (s.id.clone(), view(s))).collect()
    };
    let references = page
        .into_iter()
        .map(|(e, level)| {
            let node = e.other.as_ref().and_then(|o| nodes.get(o).cloned());
            ReferenceView {
                dst_name: if node.is_none() { Some(e.dst_name) } else { None },
                symbol: node,
                kind: e.kind,
                path: e.path,
                line: e.line,
                confidence: e.confidence,
                depth: level,
            }
        })
        .collect();
    let end = offset as usize + limit as usize;
    let next_offset = (end < total).then_some(end as u32);
    Ok(ReferencesResponse { symbol, references, next_offset })
}

fn bad_range(message: impl Into<String>) -> ToolError {
    ToolError::bad_request("BAD_RANGE", message)
}

/// Lines `start..=end` of an indexed file, exactly as indexed, rebuilt from the chunks covering
/// them. Chunks may overlap and a chunk cut inside a line holds only part of it, so each line is
/// taken once, from the chunk holding the most of it.
pub async fn read_lines(
    store: &dyn RepoStore,
    namespace: &str,
    path: &str,
    query: &LinesQuery,
) -> ToolResult<FileLinesResponse> {
    let (start, end) = (query.start, query.end);
    if start < 1 || end < start {
        return Err(bad_range(format!("lines {start}..{end}: start must be >= 1 and end >= start")));
    }
    if end - start + 1 > i64::from(MAX_LINES) {
        return Err(bad_range(format!("at most {MAX_LINES} lines per read")));
    }
    let (start, end) = (start as u32, end as u32);
    let Some(last) = store.last_line(namespace, path).await? else {
        return Err(ToolError::not_found("FILE_NOT_FOUND", format!("{path} is not an indexed file")));
    };
    if end > last {
        return Err(bad_range(format!("{path} has {last} lines; lines {start}..{end} are past its end")));
    }
    let chunks = store.chunks_between(namespace, path, start, end).await?;
    let text = rebuild(&chunks, start, end);
    Ok(FileLinesResponse { path: path.to_string(), start, end, text })
}

/// Lines `start..=end` from `chunks`, each from the chunk holding the most of it; a line no chunk
/// covers is blank (chunkers skip whitespace between pieces).
fn rebuild(chunks: &[ChunkText], start: u32, end: u32) -> String {
    let mut lines: BTreeMap<u64, &str> = BTreeMap::new();
    for chunk in chunks {
        for (i, line) in chunk.text.split('\n').enumerate() {
            let n = u64::from(chunk.start_line) + i as u64;
            if n < u64::from(start) || n > u64::from(end) {
                continue;
            }
            let slot = lines.entry(n).or_insert(line);
            if line.len() > slot.len() {
                *slot = line;
            }
        }
    }
    (u64::from(start)..=u64::from(end))
        .map(|n| lines.get(&n).copied().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(start_line: u32, text: &str) -> ChunkText {
        ChunkText { path: "a.rs".into(), start_line, text: text.into() }
    }

    #[test]
    fn each_line_comes_from_the_chunk_holding_most_of_it_and_gaps_are_blank() {
        let chunks =
            [chunk(1, "fn a() {\n    let x = 1;\n    let y"), chunk(3, "    let y = 2;\n}"), chunk(7, "z")];
        assert_eq!(rebuild(&chunks, 2, 7), "    let x = 1;\n    let y = 2;\n}\n\n\nz");
        assert_eq!(rebuild(&chunks, 1, 1), "fn a() {");
    }
}
