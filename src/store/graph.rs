//! `graph_nodes` / `graph_edges` / `graph_files`: the code graph of a namespace (see
//! `migrations/0020_code_graph.sql`). A file's rows are replaced with the file; when a job
//! completes, the edges across files are resolved again from the stored per-file graphs and
//! rewritten where they changed (`migrations/0080_graph_edges_hash.sql`). Beside each graph its
//! definitions (`migrations/0140_graph_files_definitions.sql`): what the resolution's symbol
//! table reads of it, a small part of its bytes.
use edgerag_core::graph::{Definitions, Edge, FileGraph, Node};
use edgerag_core::pages::pages_of;
use edgerag_search::repo_tools::store::RepoSymbol;
use serde::Deserialize;
use worker::D1PreparedStatement;

use super::{json_batches, Db, StoreError, StoreResult, JSON_BATCH_BYTES};
use crate::ledger::{Budget, Unbounded};
use crate::store::args;

/// `graph_nodes` rows (after the namespace) as JSON arrays, in column order.
fn node_batches(nodes: &[Node], max_bytes: usize) -> Vec<String> {
    json_batches(
        nodes.iter().map(|n| {
            serde_json::json!([
                n.id,
                n.path,
                n.kind.as_str(),
                n.name,
                n.fqn,
                n.package,
                n.signature,
                n.doc,
                n.language.as_str(),
                n.start_line,
                n.end_line,
                n.parent,
                n.route,
                n.http_method
            ])
        }),
        max_bytes,
    )
}

/// One `graph_edges` row (after the namespace), serialized as a JSON array in column order.
fn edge_row(e: &Edge) -> impl serde::Serialize + '_ {
    (&e.src, &e.dst, &e.dst_name, e.kind.as_str(), f64::from(e.confidence), &e.path, e.line, e.resolution)
}

/// `graph_edges` rows (after the namespace) as JSON arrays, in column order.
fn edge_batches(edges: &[&Edge], max_bytes: usize) -> Vec<String> {
    json_batches(edges.iter().map(|e| edge_row(e)), max_bytes)
}

/// The edges cross-file resolution owns: those their own file could not resolve (a hint).
fn cross_file(file: &FileGraph) -> impl Iterator<Item = &Edge> {
    file.edges.iter().filter(|e| e.hint.is_some())
}

/// BLAKE3 (hex) of the rows `edges` are written as: equal hashes, equal rows.
fn edges_hash<'e>(edges: impl Iterator<Item = &'e Edge>) -> String {
    let mut hash = blake3::Hasher::new();
    for e in edges {
        hash.update(serde_json::to_string(&edge_row(e)).unwrap_or_default().as_bytes());
        hash.update(b"\n");
    }
    hash.finalize().to_hex().to_string()
}

/// A file whose cross-file edges resolution writes again.
struct Rewrite<'f> {
    file: &'f FileGraph,
    /// Hash of its resolved cross-file edges.
    hash: String,
    stored: Stored,
}

/// What is stored of a file's edges before resolution rewrites them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    /// Just written by the chunk stage (`edges_hash` `''`): its own edges, no cross-file one (the
    /// same transaction deleted them), so there is nothing to delete.
    Fresh,
    /// Cross-file edges written by an earlier resolution: they are replaced.
    Resolved,
    /// Written before resolution owned only the cross-file edges (`edges_hash` NULL): every edge
    /// of the file is replaced.
    Legacy,
}

/// The files whose resolved cross-file edges differ from the rows stored for them. `stored[i]`
/// is file `i`'s `edges_hash`: the hash resolution last wrote, `""` when the chunk stage has
/// just written the file, `None` for a file stored before the hash existed.
#[cfg(test)]
fn changed_edges<'f>(stored: &[Option<&str>], files: &'f [FileGraph]) -> Vec<Rewrite<'f>> {
    files
        .iter()
        .zip(stored)
        .filter_map(|(file, old)| {
            let (hash, stored) = rewrite_of(file, *old)?;
            Some(Rewrite { file, hash, stored })
        })
        .collect()
}

/// The hash of `file`'s resolved cross-file edges and what is stored of them, when they differ
/// from the rows stored for it (`old`: its `edges_hash`: the hash resolution last wrote, `""`
/// when the chunk stage has just written the file, `None` for a file stored before the hash
/// existed).
fn rewrite_of(file: &FileGraph, old: Option<&str>) -> Option<(String, Stored)> {
    let hash = edges_hash(cross_file(file));
    let stored = match old {
        None => Stored::Legacy,
        Some("") => Stored::Fresh,
        Some(_) => Stored::Resolved,
    };
    (old != Some(hash.as_str())).then_some((hash, stored))
}

fn node_statements(db: &Db, namespace: &str, nodes: &[Node]) -> StoreResult<Vec<D1PreparedStatement>> {
    let sql = format!(
        "INSERT OR REPLACE INTO graph_nodes (namespace, id, path, kind, name, fqn, package, signature, doc, \
           language, start_line, end_line, parent, route, http_method) {}",
        super::from_json(14)
    );
    node_batches(nodes, JSON_BATCH_BYTES)
        .iter()
        .map(|rows| db.stmt(&sql, &args![namespace, rows.as_str()]))
        .collect()
}

/// Whether edges are written by cross-file resolution (`graph_edges.cross_file`): those its own
/// file could not resolve (they carry a hint), resolved again whenever a job ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    File,
    Resolution,
}

fn edge_rows(edges: &[&Edge], owner: Owner) -> Vec<Write> {
    let sql = format!(
        "INSERT INTO graph_edges (namespace, src, dst, dst_name, kind, confidence, path, line, resolution, \
           cross_file) {}",
        super::from_json_then(8, if owner == Owner::Resolution { ", 1" } else { ", 0" })
    );
    edge_batches(edges, JSON_BATCH_BYTES).into_iter().map(|rows| (sql.clone(), rows)).collect()
}

fn edge_statements(
    db: &Db,
    namespace: &str,
    edges: &[&Edge],
    owner: Owner,
) -> StoreResult<Vec<D1PreparedStatement>> {
    prepared(db, namespace, &edge_rows(edges, owner))
}

/// Statements removing every graph row of deleted files, a few for all of them.
pub fn delete_files_statements(
    db: &Db,
    namespace: &str,
    paths: &[&str],
) -> StoreResult<Vec<D1PreparedStatement>> {
    let mut out = Vec::new();
    for t in ["graph_nodes", "graph_edges", "graph_files"] {
        out.extend(super::delete_paths_statements(db, t, namespace, paths)?);
    }
    Ok(out)
}

/// Statements removing every graph row of one file (changed, deleted, or no longer code).
pub fn delete_file_statements(db: &Db, namespace: &str, path: &str) -> StoreResult<Vec<D1PreparedStatement>> {
    ["graph_nodes", "graph_edges", "graph_files"]
        .iter()
        .map(|t| {
            db.stmt(&format!("DELETE FROM {t} WHERE namespace = ? AND path = ?"), &args![namespace, path])
        })
        .collect()
}

/// Statements replacing one file's graph: its nodes, the edges its own file resolved (or left
/// external without a hint), and the unresolved graph kept for cross-file resolution. A file
/// without a graph (not code, or no grammar) only loses its old rows.
pub fn replace_file_statements(
    db: &Db,
    namespace: &str,
    path: &str,
    graph: Option<&FileGraph>,
) -> StoreResult<Vec<D1PreparedStatement>> {
    let mut out = delete_file_statements(db, namespace, path)?;
    let Some(graph) = graph else { return Ok(out) };
    let json = serde_json::to_string(graph).map_err(|e| StoreError(format!("{path}: {e}")))?;
    let definitions = definitions_json(path, graph)?;
    out.push(db.stmt(
        "INSERT INTO graph_files (namespace, path, graph, definitions, edges_hash) VALUES (?, ?, ?, ?, '')",
        &args![namespace, path, json.as_str(), definitions.as_str()],
    )?);
    out.extend(node_statements(db, namespace, &graph.nodes)?);
    let local: Vec<&Edge> = graph.edges.iter().filter(|e| e.hint.is_none()).collect();
    out.extend(edge_statements(db, namespace, &local, Owner::File)?);
    Ok(out)
}

/// `graph`'s [`Definitions`] as JSON (`graph_files.definitions`, stored beside the graph).
fn definitions_json(path: &str, graph: &FileGraph) -> StoreResult<String> {
    serde_json::to_string(&Definitions::of(graph)).map_err(|e| StoreError(format!("{path}: {e}")))
}

/// The largest file graph stored (its JSON, bytes): the budget of one D1 value in
/// `src/limits.json` (`d1ValueBytes`, half of D1's 2 MB; a graph over [`JSON_BATCH_BYTES`] travels
/// in a row array of its own). A file graph grows about 25 times faster than its source: 3,000
/// small functions in one file make about 3 MB.
pub const MAX_FILE_GRAPH_BYTES: usize = 1_000_000;

/// A file whose graph was not stored: its path and the size of its graph's JSON.
pub type Refused = (String, usize);

/// [`replace_file_statements`] for many files at once: the old rows of every path go in one
/// statement per table and the new rows travel as JSON arrays, so a message's files cost a few
/// statements instead of a few per file. A file whose graph is over [`MAX_FILE_GRAPH_BYTES`] keeps
/// no graph (its old rows still go; its chunks are indexed as usual): its path and graph size come
/// back beside the statements, for the caller to report.
pub fn replace_files_statements(
    db: &Db,
    namespace: &str,
    files: &[(&str, Option<&FileGraph>)],
) -> StoreResult<(Vec<D1PreparedStatement>, Vec<Refused>)> {
    if files.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let paths = super::json_array(&files.iter().map(|(p, _)| *p).collect::<Vec<_>>())?;
    let mut out = ["graph_nodes", "graph_edges", "graph_files"]
        .iter()
        .map(|t| {
            db.stmt(
                &format!(
                    "DELETE FROM {t} WHERE namespace = ?1 AND path IN (SELECT value FROM json_each(?2))"
                ),
                &args![namespace, paths.as_str()],
            )
        })
        .collect::<StoreResult<Vec<_>>>()?;
    let mut graphs: Vec<(&str, &FileGraph)> = Vec::new();
    let mut refused = Vec::new();
    let mut stored = Vec::new();
    for (path, graph) in files.iter().filter_map(|(p, g)| g.map(|g| (*p, g))) {
        let json = serde_json::to_string(graph).map_err(|e| StoreError(format!("{path}: {e}")))?;
        if json.len() > MAX_FILE_GRAPH_BYTES {
            refused.push((path.to_string(), json.len()));
            continue;
        }
        graphs.push((path, graph));
        // The definitions are smaller than the graph: within the value budget too.
        let definitions = definitions_json(path, graph)?;
        let row = serde_json::json!([path, json, definitions]);
        // A graph escaped inside a row array grows (every quote is escaped): one that would make
        // a row over the batch size goes as its own value, so no bound value passes the budget.
        if serde_json::to_string(&row).map_or(usize::MAX, |r| r.len()) > JSON_BATCH_BYTES {
            out.push(db.stmt(
                "INSERT INTO graph_files (namespace, path, graph, definitions, edges_hash) \
                 VALUES (?1, ?2, ?3, ?4, '')",
                &args![namespace, path, json.as_str(), definitions.as_str()],
            )?);
        } else {
            stored.push(row);
        }
    }
    for rows in json_batches(stored, JSON_BATCH_BYTES) {
        out.push(db.stmt(
            "INSERT INTO graph_files (namespace, path, graph, definitions, edges_hash) \
             SELECT ?1, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), '' \
             FROM json_each(?2)",
            &args![namespace, rows.as_str()],
        )?);
    }
    let nodes: Vec<Node> = graphs.iter().flat_map(|(_, g)| g.nodes.iter().cloned()).collect();
    out.extend(node_statements(db, namespace, &nodes)?);
    let local: Vec<&Edge> =
        graphs.iter().flat_map(|(_, g)| g.edges.iter().filter(|e| e.hint.is_none())).collect();
    out.extend(edge_statements(db, namespace, &local, Owner::File)?);
    Ok((out, refused))
}

/// Stored file graphs listed per query by [`resolve_namespace`] (path, size and hash only).
const LIST_PAGE_FILES: usize = 5_000;

#[derive(Deserialize)]
struct Listed {
    path: String,
    bytes: f64,
    /// Of its stored definitions, or of its graph when it has none ([`DEFINITIONS_OR_GRAPH`]).
    definition_bytes: f64,
    /// 1 when its stored definitions are of the format this build reads (else its graph is read).
    current: Option<f64>,
    edges_hash: Option<String>,
}

/// Whether a row's stored definitions are of the format this build reads (`?4` is
/// [`Definitions::JSON_PREFIX`]); a row without them (stored before they were) has its graph read
/// instead.
const HAS_DEFINITIONS: &str = "substr(definitions, 1, length(?4)) = ?4";

/// The text a row's definitions are read from: its stored definitions, else its graph.
const DEFINITIONS_OR_GRAPH: &str =
    "CASE WHEN substr(definitions, 1, length(?4)) = ?4 THEN definitions ELSE graph END";

/// What a namespace's cross-file resolution did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved {
    /// Files with a stored graph.
    pub files: usize,
    /// Edges of the namespace after resolution.
    pub edges: usize,
    /// Files whose cross-file edges were rewritten (their resolution changed), and the edges
    /// written.
    pub rewritten_files: usize,
    pub rewritten_edges: usize,
    /// Symbol and file ranks written (those that changed).
    pub ranks_written: usize,
    /// Pages the stored graphs are resolved in (each page read once, by the call that resolves
    /// it).
    pub pages: usize,
    /// Pages the namespace's definitions were read in, by this call (every call reads them all).
    pub definition_pages: usize,
}

/// What [`read_page`] reads of each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    /// Its graph, whole.
    Graphs,
    /// Its stored definitions, given as [`Definitions::graph`] (what the symbol table reads of
    /// the graph), or its graph when it has none.
    Definitions,
    /// What [`edgerag_core::graph::SymbolTable::add_bases`] reads of its stored definitions: its
    /// path, language, package, `EXTENDS` / `IMPLEMENTS` edges and their imports, without its
    /// nodes (picked out by D1), or its graph when it has none.
    Bases,
}

/// Which files of the listing [`read_page`] reads.
#[derive(Debug, Clone, Copy)]
enum Rows<'a> {
    /// `listed[first..first + count]`.
    Range(usize, usize),
    /// These files (their places in the listing, in order).
    Of(&'a [usize]),
}

/// One page of stored graphs (or of their definitions), parsed one at a time: `each` is called
/// with each file of `which` (its place in the listing and its graph) in order, checked to be
/// those (a job writing the namespace meanwhile makes resolution fail, to run again at its end).
/// The page's rows stay in JS until each is read: only one row's text and its graph are in wasm
/// memory at a time.
async fn read_page(
    db: &Db,
    namespace: &str,
    listed: &[Listed],
    which: Rows<'_>,
    read: Read,
    mut each: impl FnMut(usize, FileGraph) -> StoreResult<()>,
) -> StoreResult<()> {
    let columns = match read {
        Read::Graphs => "NULL AS definitions, graph".to_string(),
        Read::Definitions => format!(
            "CASE WHEN {HAS_DEFINITIONS} THEN definitions END AS definitions, \
             CASE WHEN {HAS_DEFINITIONS} THEN NULL ELSE graph END AS graph"
        ),
        Read::Bases => format!(
            "CASE WHEN {HAS_DEFINITIONS} THEN json_object('v', {version}, \
               'p', json_extract(definitions, '$.p'), 'l', json_extract(definitions, '$.l'), \
               'k', json_extract(definitions, '$.k'), 'n', json('[]'), \
               't', json(coalesce(json_extract(definitions, '$.t'), '[]')), \
               'i', json(coalesce(json_extract(definitions, '$.i'), '[]'))) END AS definitions, \
             CASE WHEN {HAS_DEFINITIONS} THEN NULL ELSE graph END AS graph",
            version = Definitions::VERSION
        ),
    };
    // `?2`: the path the range starts after, or a JSON array of the paths.
    let (filter, key, places): (&str, String, Vec<usize>) = match which {
        Rows::Range(first, count) => {
            let after = if first == 0 { "" } else { listed[first - 1].path.as_str() };
            ("path > ?2", after.to_string(), (first..first + count).collect())
        }
        Rows::Of(places) => {
            let paths: Vec<&str> = places.iter().map(|&i| listed[i].path.as_str()).collect();
            ("path IN (SELECT value FROM json_each(?2))", super::json_array(&paths)?, places.to_vec())
        }
    };
    let count = places.len();
    let sql = format!(
        "SELECT path, {columns} FROM graph_files WHERE namespace = ?1 AND {filter} ORDER BY path LIMIT ?3"
    );
    let key = key.as_str();
    let mut rows = match read {
        Read::Graphs => db.rows(&sql, &args![namespace, key, count]).await?,
        Read::Definitions | Read::Bases => {
            db.rows(&sql, &args![namespace, key, count, Definitions::JSON_PREFIX]).await?
        }
    };
    let changed = || StoreError("the stored file graphs changed during resolution".into());
    if rows.len() != count {
        return Err(changed());
    }
    for place in places {
        let Some([Some(path), definitions, graph]) = rows.next_text(["path", "definitions", "graph"]) else {
            return Err(changed());
        };
        if path != listed[place].path {
            return Err(changed());
        }
        let file = match (definitions, graph) {
            (Some(definitions), _) => serde_json::from_str::<Definitions>(&definitions)
                .map_err(|e| StoreError(format!("stored definitions {path}: {e}")))?
                .graph(),
            (None, Some(graph)) => serde_json::from_str::<FileGraph>(&graph)
                .map_err(|e| StoreError(format!("stored file graph {path}: {e}")))?,
            (None, None) => return Err(changed()),
        };
        each(place, file)?;
    }
    Ok(())
}

/// Where a namespace's cross-file resolution stopped ([`resolve_namespace_from`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// Every file resolved and written, the ranks too.
    Done(Resolved),
    /// The files up to `after` (a path, in path order; `""`: none yet) are resolved and written;
    /// the rest, then the ranks, are left for another call starting after it.
    More { after: String, resolved: Resolved },
}

/// Cross-file resolution of a namespace in one call ([`resolve_namespace_from`] unbounded).
pub async fn resolve_namespace(db: &Db, namespace: &str, page_bytes: usize) -> StoreResult<Resolved> {
    match resolve_namespace_from(db, namespace, page_bytes, None, &Unbounded).await? {
        Progress::Done(r) | Progress::More { resolved: r, .. } => Ok(r),
    }
}

/// Cross-file resolution of a namespace: drops the graphs of files no longer indexed, resolves
/// every stored file graph together (a changed file can change where any other file's calls and
/// type names go), then rewrites the cross-file edges (those their own file could not resolve;
/// the chunk stage writes the rest) of only the files whose resolved edges differ from the stored
/// ones, and the ranks that changed. Deterministic and idempotent (a rerun finds nothing to
/// rewrite), so it is safe to repeat.
///
/// Memory is bounded by the namespace's definitions, not its edges: the files are listed first
/// (with the sizes of their graphs and of their stored definitions), then read in pages of at
/// most `page_bytes` of JSON, each page's rows left in JS and taken into wasm one at a time
/// ([`read_page`]) — first every file's stored [`Definitions`] (a row without them, stored before
/// they were, has its graph read instead), into the [`edgerag_core::graph::SymbolTable`] (made
/// for the namespace's stored node count so that it is allocated once; each file parsed, added
/// and dropped in turn), then the files with `EXTENDS` / `IMPLEMENTS` edges again, those edges
/// and their imports alone, a statement per 500 files or 8 pages of their definitions (their
/// base types, resolved against the sealed table one
/// file at a time: no edge is held while the table grows), then each page of graphs, each graph
/// resolved against the table as it is read, its votes kept for the ranks (8 bytes a vote) and
/// the graph dropped unless its cross-file edges changed; the page's changed files are written
/// in one transaction (edges and hash together, so a rerun after a failure redoes only what was
/// not written). The ranks are then
/// compared with the stored ones in pages, in id order, without a map of every id. The edges and
/// ranks are those of one resolution over every file at once (the core's tests check this at any
/// page split, and with the table read from definitions).
///
/// Across calls (queue messages): with `after`, the files up to that path were resolved and
/// written by an earlier call, so only the later ones are. Every call builds the table again: one
/// statement per page of definitions, which are a small part of the graphs' bytes (4–7 % on
/// real code), so that a call has statements left for pages of graphs on a namespace whose
/// graphs are many times the statement budget in pages. `budget` is asked before each page's
/// reads and writes and before the ranks (a call always does at least one page, or the ranks, to
/// make progress); what does not fit is left ([`Progress::More`]). The ranks of a call that did
/// not resolve every file itself are computed from the stored edges, which then are the resolved
/// ones ([`votes_from_stored_edges`]).
pub async fn resolve_namespace_from(
    db: &Db,
    namespace: &str,
    page_bytes: usize,
    after: Option<&str>,
    budget: &dyn Budget,
) -> StoreResult<Progress> {
    if after.is_none() {
        let orphans = "namespace = ?1 AND path NOT IN (SELECT path FROM files WHERE namespace = ?1)";
        db.batch(
            ["graph_files", "graph_nodes", "graph_edges"]
                .iter()
                .map(|t| db.stmt(&format!("DELETE FROM {t} WHERE {orphans}"), &args![namespace]))
                .collect::<StoreResult<Vec<_>>>()?,
        )
        .await?;
    }
    let mut listed: Vec<Listed> = Vec::new();
    loop {
        let after = listed.last().map_or("", |l| l.path.as_str()).to_string();
        let page: Vec<Listed> = db
            .all(
                &format!(
                    "SELECT path, length(CAST(graph AS BLOB)) AS bytes, \
                       length(CAST({DEFINITIONS_OR_GRAPH} AS BLOB)) AS definition_bytes, \
                       {HAS_DEFINITIONS} AS current, edges_hash \
                     FROM graph_files WHERE namespace = ?1 AND path > ?2 ORDER BY path LIMIT ?3"
                ),
                &args![namespace, after.as_str(), LIST_PAGE_FILES, Definitions::JSON_PREFIX],
            )
            .await?;
        let full = page.len() == LIST_PAGE_FILES;
        listed.extend(page);
        if !full {
            break;
        }
    }
    let sizes: Vec<usize> = listed.iter().map(|l| l.bytes.max(0.0) as usize).collect();
    let definition_sizes: Vec<usize> = listed.iter().map(|l| l.definition_bytes.max(0.0) as usize).collect();
    let definition_pages = pages_of(&definition_sizes, page_bytes.max(1));
    // 1: the definitions (each file's stored definitions, or its graph, parsed, added and
    // dropped in turn), into a table made for the namespace's stored nodes (one row per node of
    // these graphs), so that it is allocated once, before the pages (wasm memory never shrinks;
    // see `SymbolTable::with_capacity`).
    let json_bytes: usize = sizes.iter().sum();
    let stored_nodes: Option<NodeCount> =
        db.first("SELECT count(*) AS n FROM graph_nodes WHERE namespace = ?1", &args![namespace]).await?;
    let mut table = edgerag_core::graph::SymbolTable::with_capacity(table_capacity(
        stored_nodes.map_or(0.0, |c| c.n),
        json_bytes,
    ));
    for &(first, count) in &definition_pages {
        read_page(db, namespace, &listed, Rows::Range(first, count), Read::Definitions, |_, file| {
            table.add(&file);
            Ok(())
        })
        .await?;
    }
    // The base types: the files with `EXTENDS` / `IMPLEMENTS` edges read again (those edges and
    // their imports alone), resolved against the sealed table one at a time, instead of their
    // edges held while the table grows.
    table.seal();
    let typed: Vec<usize> = table.base_files().collect();
    // A file read from its graph (no current definitions) counts whole: at most a page of them.
    let typed_sizes: Vec<usize> = listed
        .iter()
        .zip(&definition_sizes)
        .map(|(l, &size)| if l.current == Some(1.0) { size } else { size.saturating_mul(TYPED_READ_PAGES) })
        .collect();
    let group_bytes = page_bytes.max(1).saturating_mul(TYPED_READ_PAGES);
    for group in typed_groups(&typed, &typed_sizes, group_bytes) {
        read_page(db, namespace, &listed, Rows::Of(group), Read::Bases, |fi, file| {
            table.add_bases(fi, &file);
            Ok(())
        })
        .await?;
    }
    // 2: each page after `after` resolved, written where it changed, its votes kept when this
    // call resolves every file.
    let start = after.map_or(0, |a| listed.partition_point(|l| l.path.as_str() <= a));
    let mut votes = (start == 0).then(|| table.votes());
    let mut resolved = Resolved {
        files: listed.len(),
        edges: 0,
        rewritten_files: 0,
        rewritten_edges: 0,
        ranks_written: 0,
        pages: pages_of(&sizes, page_bytes.max(1)).len(),
        definition_pages: definition_pages.len(),
    };
    let left = |files: usize, resolved: Resolved| Progress::More {
        after: if files == 0 { after.unwrap_or("").to_string() } else { listed[files - 1].path.clone() },
        resolved,
    };
    let mut done = start;
    for (first, count) in pages_of(&sizes[start..], page_bytes.max(1)) {
        let first = start + first;
        let progressed = done > start;
        if progressed && !budget.fits(1) {
            return Ok(left(done, resolved));
        }
        // Each row's text is dropped once it is parsed, and each graph once it is resolved and
        // voted, unless its cross-file edges changed (it is then kept for the page's writes): a
        // file's edges depend only on the table and the file (the same as the page's resolved
        // together).
        let mut page_edges = 0;
        let mut kept: Vec<(FileGraph, String, Stored)> = Vec::new();
        read_page(db, namespace, &listed, Rows::Range(first, count), Read::Graphs, |fi, mut file| {
            table.resolve_page(fi, std::slice::from_mut(&mut file));
            page_edges += file.edges.len();
            if let Some(votes) = &mut votes {
                table.vote(votes, &file);
            }
            if let Some((hash, stored)) = rewrite_of(&file, listed[fi].edges_hash.as_deref()) {
                kept.push((file, hash, stored));
            }
            Ok(())
        })
        .await?;
        let changed: Vec<Rewrite<'_>> = kept
            .iter()
            .map(|(file, hash, stored)| Rewrite { file, hash: hash.clone(), stored: *stored })
            .collect();
        if !changed.is_empty() {
            let writes = rewrite_edges_rows(&changed);
            if progressed && !budget.fits(writes.len()) {
                return Ok(left(done, resolved));
            }
            db.batch(prepared(db, namespace, &writes)?).await?;
        }
        resolved.edges += page_edges;
        resolved.rewritten_files += changed.len();
        resolved.rewritten_edges += changed
            .iter()
            .map(|r| if r.stored == Stored::Legacy { r.file.edges.len() } else { cross_file(r.file).count() })
            .sum::<usize>();
        done = first + count;
    }
    // 3: the repository map's importance: PageRank over the graph just resolved.
    let file_rows = listed.iter().map(|l| rank_row_bytes(&l.path));
    let ranks = ranks_statements(table.nodes(), file_rows, votes.is_some());
    if done > start && !budget.fits(ranks) {
        return Ok(left(done, resolved));
    }
    drop(listed);
    let votes = match votes {
        Some(votes) => votes,
        None => votes_from_stored_edges(db, namespace, &mut table).await?,
    };
    // The stored ranks compared in id (and path) order, page by page.
    let ranked = table.rank(votes);
    resolved.ranks_written =
        super::ranks::write_ranks(db, namespace, ranked.symbols(), ranked.files().into_iter()).await?;
    Ok(Progress::Done(resolved))
}

/// Files read per statement for their base types (bounds the JSON array of their paths).
const TYPED_READ_FILES: usize = 500;
/// Pages of definitions (`page_bytes` each, by the definitions' whole size) whose base types one
/// statement reads: a file's `EXTENDS` / `IMPLEMENTS` edges and their imports are a small part
/// of its definitions, most of which are its nodes.
const TYPED_READ_PAGES: usize = 8;

/// `typed` (places in the listing, in order) in groups read one statement each: at most
/// `page_bytes` of definitions (`sizes`, by place; a larger one alone) and [`TYPED_READ_FILES`]
/// files.
fn typed_groups<'a>(typed: &'a [usize], sizes: &[usize], page_bytes: usize) -> Vec<&'a [usize]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, &fi) in typed.iter().enumerate() {
        let size = sizes.get(fi).copied().unwrap_or(0);
        if i > start && (bytes + size > page_bytes || i - start == TYPED_READ_FILES) {
            out.push(&typed[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += size;
    }
    if start < typed.len() {
        out.push(&typed[start..]);
    }
    out
}

#[derive(Deserialize)]
struct NodeCount {
    n: f64,
}

/// A stored node takes at least this many bytes of its graph's JSON (its 64-character id alone
/// takes 72).
const MIN_NODE_JSON_BYTES: usize = 100;

/// The room to make in the symbol table: the stored nodes, at most what `json_bytes` of stored
/// graphs can hold (a count gone stale cannot make a table larger than its graphs).
fn table_capacity(stored_nodes: f64, json_bytes: usize) -> usize {
    (stored_nodes.max(0.0) as usize).min(json_bytes / MIN_NODE_JSON_BYTES)
}

/// Voting edges read back per statement by [`votes_from_stored_edges`].
const VOTE_ROWS_PER_READ: usize = 50_000;

/// The most bytes a symbol's rank row takes in a written batch (`["<64-character id>",<rank>],`:
/// 70 bytes and a rank of at most 24 characters).
const SYMBOL_RANK_ROW_BYTES: usize = 100;

/// The bytes a file's rank row takes in a written batch (`["<path, escaped>",<rank>],`).
fn rank_row_bytes(path: &str) -> usize {
    serde_json::to_string(path).map_or(2 * path.len() + 2, |p| p.len()) + 28
}

/// At most how many statements the ranks take (when every rank changed): for the symbols (rows of
/// at most [`SYMBOL_RANK_ROW_BYTES`], one per stored node, repeats included) and then the files
/// (`file_rows`: each file's [`rank_row_bytes`]), the stored ranks read back in pages of
/// [`super::ranks::READ_PAGE_ROWS`], each page's changed ranks written in batches of
/// [`JSON_BATCH_BYTES`] (a batch that is not a page's last holds more than the batch size less its
/// largest row); and, unless the votes are held, the stored edges read back for them (at most a
/// few per symbol).
fn ranks_statements(symbols: usize, file_rows: impl Iterator<Item = usize>, votes_held: bool) -> usize {
    let page = super::ranks::READ_PAGE_ROWS;
    let table = |rows: usize, bytes: usize, largest: usize| {
        let pages = rows / page + 1;
        pages + bytes.div_ceil(JSON_BATCH_BYTES.saturating_sub(largest + 2).max(1)) + pages
    };
    let (files, file_bytes, largest) =
        file_rows.fold((0, 0, 0), |(n, bytes, largest), row| (n + 1, bytes + row, largest.max(row)));
    let votes = if votes_held { 0 } else { (4 * symbols).div_ceil(VOTE_ROWS_PER_READ) + 1 };
    table(symbols, symbols * SYMBOL_RANK_ROW_BYTES, SYMBOL_RANK_ROW_BYTES)
        + table(files, file_bytes, largest)
        + votes
}

/// The PageRank votes of the namespace's stored edges (once every file's cross-file edges are
/// written, the stored edges are the resolved ones, column for column), read in pages in rowid
/// order, each row taken into wasm and voted in turn: what the pages' resolution would have
/// voted, for a call that did not resolve them all.
async fn votes_from_stored_edges(
    db: &Db,
    namespace: &str,
    table: &mut edgerag_core::graph::SymbolTable,
) -> StoreResult<edgerag_core::graph::rank::Links> {
    use edgerag_core::graph::EdgeKind;
    let mut votes = table.votes();
    let kinds: Vec<&str> =
        EdgeKind::ALL.iter().filter(|k| edgerag_core::graph::rank::votes(**k)).map(|k| k.as_str()).collect();
    let kinds = super::json_array(&kinds)?;
    let mut after = -1.0;
    loop {
        let mut rows = db
            .rows(
                "SELECT rowid AS r, src, dst FROM graph_edges \
                 WHERE namespace = ?1 AND rowid > ?2 AND dst IS NOT NULL \
                   AND kind IN (SELECT value FROM json_each(?3)) ORDER BY rowid LIMIT ?4",
                &args![namespace, after, kinds.as_str(), VOTE_ROWS_PER_READ],
            )
            .await?;
        let full = rows.len() == VOTE_ROWS_PER_READ;
        while let Some(row) = rows.next_row() {
            after = row.number("r").unwrap_or(after);
            if let (Some(src), Some(dst)) = (row.text("src"), row.text("dst")) {
                table.vote_ids(&mut votes, &src, &dst);
            }
        }
        if !full {
            return Ok(votes);
        }
    }
}

/// One statement to prepare: its SQL and its second parameter (`?1` is the namespace).
type Write = (String, String);

/// The statements replacing the cross-file edges of `changed` files (every edge of a legacy one)
/// and recording their new hashes, not prepared yet (so they are counted before they are charged).
fn rewrite_edges_rows(changed: &[Rewrite<'_>]) -> Vec<Write> {
    let mut out = Vec::new();
    for (stored, only) in [(Stored::Resolved, " AND cross_file = 1"), (Stored::Legacy, "")] {
        let paths = changed
            .iter()
            .filter(|r| r.stored == stored)
            .map(|r| serde_json::Value::from(r.file.path.as_str()));
        for batch in json_batches(paths, JSON_BATCH_BYTES) {
            out.push((
                format!(
                    "DELETE FROM graph_edges WHERE namespace = ?1 AND path IN (SELECT value FROM json_each(?2)){only}"
                ),
                batch,
            ));
        }
    }
    let cross: Vec<&Edge> = changed.iter().flat_map(|r| cross_file(r.file)).collect();
    out.extend(edge_rows(&cross, Owner::Resolution));
    let local: Vec<&Edge> = changed
        .iter()
        .filter(|r| r.stored == Stored::Legacy)
        .flat_map(|r| r.file.edges.iter().filter(|e| e.hint.is_none()))
        .collect();
    out.extend(edge_rows(&local, Owner::File));
    let hashes = changed.iter().map(|r| serde_json::json!([r.file.path, r.hash]));
    for batch in json_batches(hashes, JSON_BATCH_BYTES) {
        out.push((
            // An upsert that only ever updates (the rows exist): the JSON drives, each file is
            // found by its key. `UPDATE … FROM json_each` scans the JSON once per file instead
            // (8.7 s natively for 3,000 files, against 25 ms).
            "INSERT INTO graph_files (namespace, path, graph, edges_hash) \
             SELECT ?1, j.p, '', j.h \
             FROM (SELECT json_extract(value, '$[0]') AS p, json_extract(value, '$[1]') AS h FROM json_each(?2)) AS j \
             WHERE EXISTS (SELECT 1 FROM graph_files g WHERE g.namespace = ?1 AND g.path = j.p) \
             ON CONFLICT (namespace, path) DO UPDATE SET edges_hash = excluded.edges_hash"
                .to_string(),
            batch,
        ));
    }
    out
}

/// `writes` prepared, each with the namespace as `?1`.
fn prepared(db: &Db, namespace: &str, writes: &[Write]) -> StoreResult<Vec<D1PreparedStatement>> {
    writes.iter().map(|(sql, rows)| db.stmt(sql, &args![namespace, rows.as_str()])).collect()
}

/// Statements replacing every edge of a namespace with `edges` (resolved ones).
pub fn replace_edges_statements(
    db: &Db,
    namespace: &str,
    edges: &[&Edge],
) -> StoreResult<Vec<D1PreparedStatement>> {
    let mut statements = vec![db.stmt("DELETE FROM graph_edges WHERE namespace = ?", &args![namespace])?];
    statements.extend(edge_statements(db, namespace, edges, Owner::File)?);
    Ok(statements)
}

/// Statements removing a namespace's whole graph.
pub fn delete_namespace_statements(db: &Db, namespace: &str) -> StoreResult<Vec<D1PreparedStatement>> {
    ["graph_nodes", "graph_edges", "graph_files"]
        .iter()
        .map(|t| db.stmt(&format!("DELETE FROM {t} WHERE namespace = ?"), &args![namespace]))
        .collect()
}

/// The columns of a node as the repository tools read it ([`NodeRow`]).
pub const NODE_COLUMNS: &str =
    "id, kind, name, fqn, path, language, start_line, end_line, signature, doc, parent, route, http_method, rank";

/// A `graph_nodes` row as the repository tools read it ([`NODE_COLUMNS`]).
#[derive(Deserialize)]
pub struct NodeRow {
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
    rank: Option<f64>,
}

/// A stored line number as the tools' `u32`.
pub fn line_of(n: i64) -> u32 {
    n.clamp(0, i64::from(u32::MAX)) as u32
}

impl NodeRow {
    /// The row as the tools' port gives it (a module's empty parent is none; rank 0 before the
    /// first job's finish).
    pub fn into_symbol(self) -> RepoSymbol {
        RepoSymbol {
            id: self.id,
            kind: self.kind,
            name: self.name,
            fqn: self.fqn,
            path: self.path,
            language: self.language,
            start_line: line_of(self.start_line),
            end_line: line_of(self.end_line),
            signature: self.signature,
            doc: self.doc,
            parent: self.parent.filter(|p| !p.is_empty()),
            route: self.route,
            http_method: self.http_method,
            rank: self.rank.unwrap_or(0.0),
        }
    }
}

/// The nodes named `?2` (simple or fully qualified name) in namespace `?1`, of kind `?3` when not
/// null, in path order. The two names are sought in their own indexes first (`MATERIALIZED`): with
/// `name = ?2 OR fqn = ?2` the planner walks every node of the namespace in path order instead.
pub fn nodes_by_name_sql() -> String {
    format!(
        "WITH m AS MATERIALIZED ( \
           SELECT rowid AS r FROM graph_nodes WHERE namespace = ?1 AND name = ?2 \
           UNION SELECT rowid FROM graph_nodes WHERE namespace = ?1 AND fqn = ?2) \
         SELECT {NODE_COLUMNS} FROM m CROSS JOIN graph_nodes ON graph_nodes.rowid = m.r \
         WHERE ?3 IS NULL OR kind = ?3 ORDER BY path, start_line, id"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use edgerag_core::graph::{node_id, EdgeKind, Hint, NodeKind, Resolution};
    use edgerag_core::Language;

    #[test]
    fn the_table_is_made_for_the_stored_nodes_but_never_more_than_the_graphs_can_hold() {
        assert_eq!(table_capacity(523_302.0, 728_000_000), 523_302);
        // A count gone stale (or wrong) is capped by the graphs' bytes; none makes no room.
        assert_eq!(table_capacity(1e9, 1_000_000), 1_000_000 / MIN_NODE_JSON_BYTES);
        assert_eq!(table_capacity(-3.0, 1_000_000), 0);
        assert_eq!(table_capacity(0.0, 0), 0);
        // Every node of a real stored graph takes more JSON than the cap assumes.
        let nodes = huge_file(50).nodes;
        let json = serde_json::to_string(&nodes).expect("nodes as JSON");
        assert!(json.len() / nodes.len() > MIN_NODE_JSON_BYTES, "{} B a node", json.len() / nodes.len());
    }

    /// The statements `super::super::ranks` takes to write `rows` changed ranks: each page of
    /// stored rows read, then its changed rows written in batches.
    fn rank_writes(rows: &[serde_json::Value]) -> usize {
        let page = crate::store::ranks::READ_PAGE_ROWS;
        let pages = rows.len() / page + 1;
        pages + rows.chunks(page).map(|p| json_batches(p.iter(), JSON_BATCH_BYTES).len()).sum::<usize>()
    }

    #[test]
    fn the_ranks_never_take_more_statements_than_the_job_end_sets_aside_for_them() {
        // Every rank changed, each as long as a rounded rank gets, across several pages: the
        // symbols' ids, and files with paths of every length (a few escaped).
        let symbols: Vec<serde_json::Value> = (0..2 * crate::store::ranks::READ_PAGE_ROWS + 777)
            .map(|i| {
                serde_json::json!([format!("{:064x}", i as u128 * 0x9e37_79b9_7f4a_7c15), 1.234_57e-300])
            })
            .collect();
        let paths: Vec<String> = (0..9_000)
            .map(|i| format!("crates/c{i}/{}\\\"{}.rs", "src/".repeat(i % 40), "n".repeat(i % 90)))
            .collect();
        let files: Vec<serde_json::Value> =
            paths.iter().map(|p| serde_json::json!([p, 0.000_123_457])).collect();
        let taken = rank_writes(&symbols) + rank_writes(&files);
        let set_aside = ranks_statements(symbols.len(), paths.iter().map(|p| rank_row_bytes(p)), true);
        assert!(taken <= set_aside, "{taken} statements taken, {set_aside} set aside");
        assert!(set_aside <= taken + 8, "{set_aside} set aside for {taken}: the estimate stays close");
        // Votes read back from the stored edges are counted only when they are not held.
        assert!(
            ranks_statements(symbols.len(), std::iter::empty(), false)
                > ranks_statements(symbols.len(), std::iter::empty(), true)
        );
        // On the 20,000-file benchmark's figures (537,495 ranks, 11,491 files): the old estimate
        // (60 bytes a row, one write per 512 KB overall) set aside 63 writes for what took more
        // than 100.
        let big = ranks_statements(537_495, std::iter::repeat_n(90, 11_491), true);
        assert!(big > 130, "{big}");
    }

    #[test]
    fn files_read_for_their_base_types_go_in_groups_of_a_page_s_bytes_and_a_bounded_count() {
        let sizes = vec![10; 2_000];
        let typed: Vec<usize> = (0..2_000).step_by(2).collect();
        let groups = typed_groups(&typed, &sizes, 35);
        assert_eq!(groups[0], [0, 2, 4]);
        assert!(groups.iter().all(|g| g.len() == 3 || g.len() == 1));
        assert_eq!(groups.concat(), typed, "every file once, in order");
        let groups = typed_groups(&typed, &sizes, usize::MAX / 2);
        assert_eq!(groups.iter().map(|g| g.len()).collect::<Vec<_>>(), [TYPED_READ_FILES, TYPED_READ_FILES]);
        // A file over the page's bytes goes alone; none makes no statement.
        assert_eq!(typed_groups(&[1, 3, 5], &[0, 50, 0, 5, 0, 50], 20), [&[1][..], &[3], &[5]]);
        assert!(typed_groups(&[], &sizes, 35).is_empty());
    }

    #[test]
    fn an_escaped_graph_row_over_the_batch_size_is_the_reason_it_goes_as_its_own_value() {
        // A graph just under the value budget grows past it once escaped inside a row array:
        // `replace_files_statements` binds such a graph alone (needs D1; checked here in bytes).
        let graph = huge_file(780);
        let json = serde_json::to_string(&graph).expect("json");
        assert!(json.len() <= MAX_FILE_GRAPH_BYTES, "{}", json.len());
        let row = serde_json::to_string(&serde_json::json!(["src/generated/huge.py", json])).expect("json");
        assert!(row.len() > JSON_BATCH_BYTES, "{}", row.len());
        assert!(
            row.len() > json.len() + json.len() / 20,
            "escaping grows it: {} → {}",
            json.len(),
            row.len()
        );
    }

    #[test]
    fn a_stored_file_graph_is_within_the_d1_value_budget() {
        let budget =
            crate::ledger::limits().into_iter().find(|l| l.id == "d1ValueBytes").expect("d1ValueBytes");
        assert_eq!(MAX_FILE_GRAPH_BYTES as f64, budget.budget);
    }

    /// A generated file as large as real ones get: `functions` functions calling each other.
    fn huge_file(functions: usize) -> FileGraph {
        let path = "src/generated/huge.py";
        let nodes: Vec<Node> = (0..functions)
            .map(|i| {
                let fqn = format!("generated.huge.function_number_{i}");
                Node {
                    id: node_id(path, NodeKind::Function, &fqn, 0),
                    kind: NodeKind::Function,
                    name: format!("function_number_{i}"),
                    fqn,
                    package: Some("generated".into()),
                    signature: Some(format!("def function_number_{i}(argument, other_argument):")),
                    doc: Some("Generated; the doc comment is kept with the node.".into()),
                    path: path.into(),
                    language: Language::Python,
                    start_line: 1 + 4 * i as u32,
                    end_line: 4 + 4 * i as u32,
                    parent: None,
                    route: None,
                    http_method: None,
                    declared_type: None,
                }
            })
            .collect();
        let edges = (0..functions * 3)
            .map(|i| Edge {
                kind: EdgeKind::Calls,
                src: nodes[i % functions].id.clone(),
                dst: Some(nodes[(i * 7 + 1) % functions].id.clone()),
                dst_name: "function_number".into(),
                confidence: Resolution::SameFile.confidence(),
                resolution: Resolution::SameFile,
                path: path.into(),
                line: 2 + i as u32,
                hint: None,
            })
            .collect();
        FileGraph {
            path: path.into(),
            language: Language::Python,
            package: None,
            nodes,
            edges,
            imports: Vec::new(),
        }
    }

    fn parsed(batches: &[String]) -> Vec<serde_json::Value> {
        batches
            .iter()
            .flat_map(|b| serde_json::from_str::<Vec<serde_json::Value>>(b).expect("a JSON array"))
            .collect()
    }

    #[test]
    fn a_very_large_file_is_written_in_a_handful_of_statements_far_under_the_query_limit() {
        let graph = huge_file(20_000);
        let edges: Vec<&Edge> = graph.edges.iter().collect();
        let nodes = node_batches(&graph.nodes, JSON_BATCH_BYTES);
        let edge_rows = edge_batches(&edges, JSON_BATCH_BYTES);
        // Three deletes and the stored graph, then the row batches (~18 MB of rows here). (Such a
        // file's graph value is over MAX_FILE_GRAPH_BYTES and is refused; the row batches serve
        // the many files of one message alike.)
        let statements = 4 + nodes.len() + edge_rows.len();
        assert!(statements <= 60, "{statements} statements for one file");
        // One INSERT per ~8 rows (the old way) would have been thousands.
        assert!(graph.nodes.len() / 8 + edges.len() / 12 > 1_000);
        assert!(nodes.iter().chain(&edge_rows).all(|b| b.len() <= JSON_BATCH_BYTES));
        assert_eq!(parsed(&nodes).len(), graph.nodes.len());
        assert_eq!(parsed(&edge_rows).len(), edges.len());
    }

    #[test]
    fn only_files_whose_resolved_cross_file_edges_changed_are_rewritten() {
        // Every other edge crosses files (it carries a hint); the rest are the file's own.
        let with_hints = |mut g: FileGraph, path: &str| {
            g.path = path.into();
            for (i, e) in g.edges.iter_mut().enumerate() {
                e.path = g.path.as_str().into();
                if i % 2 == 0 {
                    e.hint = Some(Hint { name: e.dst_name.clone(), qualifier: None, owner: None });
                }
            }
            g
        };
        let files = vec![with_hints(huge_file(4), "src/a.py"), with_hints(huge_file(3), "src/b.py")];
        let paths = |r: &[Rewrite<'_>]| r.iter().map(|r| (r.file.path.clone(), r.stored)).collect::<Vec<_>>();
        // Just written by the chunk stage: both; stored before the hash existed: both, all edges.
        let first = changed_edges(&[Some(""), None], &files);
        assert_eq!(
            paths(&first),
            [("src/a.py".to_string(), Stored::Fresh), ("src/b.py".to_string(), Stored::Legacy)]
        );
        // Stored as written: nothing to do, so a rerun writes nothing.
        let stored: Vec<Option<&str>> = first.iter().map(|r| Some(r.hash.as_str())).collect();
        assert!(changed_edges(&stored, &files).is_empty());
        // A cross-file edge of the second file now resolves elsewhere: only that file.
        let mut moved = files.clone();
        moved[1].edges[0].dst = None;
        moved[1].edges[0].resolution = Resolution::External;
        assert_eq!(paths(&changed_edges(&stored, &moved)), [("src/b.py".to_string(), Stored::Resolved)]);
        // Any column of a cross-file row counts (here the call-site line); the file's own edges
        // are not resolution's (the chunk stage rewrites them with the file).
        let mut line = files.clone();
        line[0].edges[2].line += 1;
        assert_eq!(changed_edges(&stored, &line).len(), 1);
        let mut own = files.clone();
        own[0].edges[1].line += 1;
        assert!(changed_edges(&stored, &own).is_empty());
    }

    #[test]
    fn batches_keep_every_row_in_order_with_its_columns() {
        let graph = huge_file(50);
        let nodes = parsed(&node_batches(&graph.nodes, 2_000));
        assert!(node_batches(&graph.nodes, 2_000).len() > 3, "small batches split");
        for (row, node) in nodes.iter().zip(&graph.nodes) {
            assert_eq!(row[0], &*node.id);
            assert_eq!(row[2], "FUNCTION");
            assert_eq!(row[8], "python");
            assert_eq!(row[9], node.start_line);
            assert_eq!(row[11], serde_json::Value::Null);
            assert_eq!(row[12], serde_json::Value::Null, "a function has no route");
        }
        let edges: Vec<&Edge> = graph.edges.iter().collect();
        let rows = parsed(&edge_batches(&edges, 1_000));
        assert_eq!(rows.len(), edges.len());
        assert_eq!(rows[0][3], "CALLS");
        assert_eq!(rows[0][7], "same-file");
        assert_eq!(rows[0][4].as_f64(), Some(f64::from(Resolution::SameFile.confidence())));
    }

    #[test]
    fn no_rows_make_no_statement_and_an_oversized_row_goes_alone() {
        assert!(json_batches(std::iter::empty::<serde_json::Value>(), 100).is_empty());
        let big = serde_json::json!(["x".repeat(300)]);
        let small = serde_json::json!([1]);
        let batches = json_batches([small.clone(), big, small], 100);
        assert_eq!(batches.len(), 3);
        assert_eq!(batches[0], "[[1]]");
    }
}
