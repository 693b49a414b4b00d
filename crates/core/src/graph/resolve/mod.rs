//! Cross-file resolution: a pure function over every file's extracted graph.
//!
//! Every edge that still carries a [`Hint`] (it was not resolved inside its file) is resolved
//! again from scratch, so the result depends only on the input files: running it twice, or after
//! some files were replaced, gives the same edges as a fresh run.
//!
//! - [`index`]: what resolution looks up, node by node (names, fqns, ids, declared types, files
//!   by module key and package), stored in compact columns.
//! - [`edges`]: the rules that resolve one edge against the index (imports, scopes, fields, the
//!   same package, a unique name).
//! - [`resolve`] (here): the whole resolution, every file at once;
//!   [`SymbolTable`] (`paged.rs`): the same edges and ranks page by page, for a namespace too large
//!   to hold every graph at once.
use std::collections::HashMap;
use std::sync::Arc;

use super::types::{Edge, EdgeKind, FileGraph, Hint, Import, Resolution};
use index::Index;

mod edges;
mod index;
mod paged;

pub use paged::{Ranked, SymbolTable};

/// Resolves the edges of `files` that their own file could not resolve (see the module docs of
/// [`crate::graph`] for the order). Deterministic and idempotent.
pub fn resolve(files: &mut [FileGraph]) {
    let mut index = Index::build(files);
    // Types first, so that calls can find members through base types.
    pass(files, 0, &index, |k| k != EdgeKind::Calls);
    index.bases = bases(files, &index);
    pass(files, 0, &index, |k| k == EdgeKind::Calls);
}

/// The imports of `file` that resolving its `typed` edges can read: wildcard ones and those
/// binding a name a hint is written with (its name, its qualifier or the qualifier's first part);
/// every import when a hint goes through a field (`self.field`: the field's declared type may be
/// any imported name); none when no edge has a hint.
pub(super) fn type_imports(file: &FileGraph, typed: &[Edge]) -> Vec<Import> {
    let hints: Vec<&Hint> = typed.iter().filter_map(|e| e.hint.as_ref()).collect();
    if hints.is_empty() {
        return Vec::new();
    }
    if hints.iter().any(|h| h.qualifier.as_deref().is_some_and(|q| q.starts_with("self."))) {
        return file.imports.clone();
    }
    let binds = |local: &str| {
        hints.iter().any(|h| {
            h.name == local
                || h.qualifier.as_deref().is_some_and(|q| q == local || q.split('.').next() == Some(local))
        })
    };
    file.imports.iter().filter(|i| i.wildcard || i.local().is_some_and(binds)).cloned().collect()
}

/// Resolves the edges of `kinds` of `files`, the files numbered from `first` in the index.
fn pass(files: &mut [FileGraph], first: usize, index: &Index, kinds: impl Fn(EdgeKind) -> bool) {
    let mut updates: Vec<(usize, usize, Found)> = Vec::new();
    for (fi, file) in files.iter().enumerate() {
        for (ei, edge) in file.edges.iter().enumerate() {
            if let Some(hint) = edge.hint.as_ref().filter(|_| kinds(edge.kind)) {
                updates.push((fi, ei, index.resolve_edge(first + fi, file, edge, hint)));
            }
        }
    }
    for (fi, ei, found) in updates {
        let edge = &mut files[fi].edges[ei];
        let (dst, resolution) = match found {
            Some((id, r)) => (Some(id), r),
            None => (None, Resolution::External),
        };
        edge.dst = dst;
        edge.resolution = resolution;
        edge.confidence = resolution.confidence();
    }
}

/// A resolved target: its id and how it was found.
type Found = Option<(Arc<str>, Resolution)>;

/// A node by position: numbered across files, file by file in their order.
type At = usize;

/// Each type's resolved `EXTENDS` / `IMPLEMENTS` targets.
fn bases(files: &[FileGraph], index: &Index) -> HashMap<At, Vec<At>> {
    let mut by_id: HashMap<&str, At> = HashMap::new();
    for (fi, file) in files.iter().enumerate() {
        for (at, node) in index.nodes_of(fi).zip(&file.nodes) {
            by_id.insert(&node.id, at);
        }
    }
    let mut out = HashMap::new();
    add_bases_of(&mut out, |id| by_id.get(id).copied(), files.iter());
    out
}

/// Whether edges of `kind` name a base type (`EXTENDS` / `IMPLEMENTS`).
fn is_typed(kind: EdgeKind) -> bool {
    matches!(kind, EdgeKind::Extends | EdgeKind::Implements)
}

/// [`bases`] added to `out` from the position of each node id (the last node with that id) and
/// the files' resolved edges (each type's bases in file, then edge order).
fn add_bases_of<'a>(
    out: &mut HashMap<At, Vec<At>>,
    at_of: impl Fn(&str) -> Option<At>,
    files: impl Iterator<Item = &'a FileGraph>,
) {
    for file in files {
        for edge in &file.edges {
            if !is_typed(edge.kind) {
                continue;
            }
            let (Some(src), Some(dst)) = (at_of(&edge.src), edge.dst.as_deref()) else {
                continue;
            };
            if let Some(dst) = at_of(dst) {
                out.entry(src).or_default().push(dst);
            }
        }
    }
}

#[cfg(all(test, feature = "all-languages"))]
mod tests;

/// [`SymbolTable`] against [`resolve`]: the same edges and ranks whatever the pages.
#[cfg(all(test, feature = "all-languages"))]
mod paged_tests;
