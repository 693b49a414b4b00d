//! [`resolve`](super::resolve) in pieces: the table of every file's definitions, the pages resolved
//! against it, their PageRank votes and the ranks.

/// [`resolve`](super::resolve) in pieces, for a namespace too large to hold every file's graph at once: the
/// same edges, bit for bit, whatever the pieces.
///
/// 1. [`SymbolTable::add`] every file, in a fixed order (each page of files is read, added and
///    dropped): the table keeps what resolution looks up — each node's kind, name and fqn (each
///    distinct string once), whether it is top-level, its declared type, each file's path, module
///    keys and package — and which files have `EXTENDS` / `IMPLEMENTS` edges. No edge, and no
///    node id: an id is BLAKE3 of the node's path, kind, fqn and ordinal
///    ([`crate::graph::node_id`]) and is computed again when needed (an id that is not, from an
///    older build, is kept as it is).
/// 2. [`SymbolTable::add_bases`] each of those files again ([`SymbolTable::base_files`], in
///    order, read again and dropped): the base types, resolved from its `EXTENDS` /
///    `IMPLEMENTS` edges against the sealed table, so that no edge is held while the table
///    grows.
/// 3. [`SymbolTable::resolve_page`] the files again, page by page in the same order (a page's
///    edges depend only on the table and its own files), and [`SymbolTable::vote`] each resolved
///    file into the PageRank votes ([`SymbolTable::votes`]).
/// 4. [`SymbolTable::rank`]: the ranks [`crate::graph::rank::stored_ranks`] gives the whole graph.
///
/// Memory: the table grows with the definitions of the namespace (about 50 bytes each on real
/// code, names included), not with its edges, which are most of a graph; a page's graphs come and
/// go; the votes take 8 bytes an edge between two symbols.
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::super::compact::{Column, Lookups};
use super::super::rank::{rounded, votes, Links};
use super::super::types::{Edge, EdgeKind, FileGraph};
use super::{add_bases_of, is_typed, pass, type_imports, Index};

pub struct SymbolTable {
    pub(super) index: Index,
    /// Files with `EXTENDS` / `IMPLEMENTS` edges, in order, and how many of them
    /// [`SymbolTable::add_bases`] has resolved.
    typed: Vec<u32>,
    bases_added: usize,
    sealed: bool,
}

impl Default for SymbolTable {
    fn default() -> Self {
        SymbolTable::new()
    }
}

impl SymbolTable {
    pub fn new() -> SymbolTable {
        SymbolTable { index: Index::default(), typed: Vec::new(), bases_added: 0, sealed: false }
    }

    /// A table for about `nodes` nodes (every file's, as [`SymbolTable::nodes`] counts them):
    /// each per-node array is allocated once at that size, before any file is added, and sorted
    /// in place when sealed, so that in wasm32 (whose memory never shrinks) the table lies in one
    /// stretch, not in blocks between the pages of graphs read meanwhile, and sealing it copies
    /// nothing. More nodes than that still go in (in blocks, copied when sealed, as
    /// [`SymbolTable::new`] does); the edges and ranks are the same whatever the figure.
    pub fn with_capacity(nodes: usize) -> SymbolTable {
        let index = Index {
            kinds: Column::with_capacity(nodes),
            top: Column::with_capacity(nodes),
            names: Column::with_capacity(nodes),
            scopes: Column::with_capacity(nodes),
            ids_types: Column::with_capacity(nodes),
            lookups: Lookups::with_capacity(nodes),
            by_id: Vec::with_capacity(nodes),
            ..Index::default()
        };
        SymbolTable { index, typed: Vec::new(), bases_added: 0, sealed: false }
    }

    /// Adds the next file (file `self.len()`). Every file goes in before [`SymbolTable::seal`].
    pub fn add(&mut self, file: &FileGraph) {
        debug_assert!(!self.sealed, "a file added after seal");
        let fi = self.len();
        self.index.add(file);
        if file.edges.iter().any(|e| is_typed(e.kind)) {
            self.typed.push(fi as u32);
        }
    }

    /// The files whose base types [`SymbolTable::add_bases`] reads (those with `EXTENDS` /
    /// `IMPLEMENTS` edges), in order.
    pub fn base_files(&self) -> impl Iterator<Item = usize> + '_ {
        self.typed.iter().map(|&fi| fi as usize)
    }

    /// The base types of file `fi` (the same graph [`SymbolTable::add`] was given, or its
    /// [`crate::graph::Definitions::graph`]), from its `EXTENDS` / `IMPLEMENTS` edges resolved
    /// against the table: after the last [`SymbolTable::add`], for each of
    /// [`SymbolTable::base_files`] in order, before any page is resolved or voted (a file without
    /// such edges changes nothing). Seals the table.
    pub fn add_bases(&mut self, fi: usize, file: &FileGraph) {
        self.seal();
        debug_assert_eq!(self.index.paths.get(fi), Some(&file.path));
        if self.typed.get(self.bases_added).is_some_and(|&t| t as usize == fi) {
            self.bases_added += 1;
        }
        let edges: Vec<Edge> = file.edges.iter().filter(|e| is_typed(e.kind)).cloned().collect();
        if edges.is_empty() {
            return;
        }
        let imports = type_imports(file, &edges);
        let mut typed = FileGraph {
            path: file.path.clone(),
            language: file.language,
            package: file.package.clone(),
            nodes: Vec::new(),
            edges,
            imports,
        };
        // The edges as [`resolve`](super::resolve)'s first pass leaves them: without base types.
        let mut bases = std::mem::take(&mut self.index.bases);
        pass(std::slice::from_mut(&mut typed), fi, &self.index, |k| k != EdgeKind::Calls);
        let index = &self.index;
        add_bases_of(&mut bases, |id| index.at_of_id(id).map(|(last, _)| last), std::iter::once(&typed));
        self.index.bases = bases;
    }

    /// Whether every one of [`SymbolTable::base_files`] went through [`SymbolTable::add_bases`].
    fn has_bases(&self) -> bool {
        self.bases_added == self.typed.len()
    }

    /// Files added.
    pub fn len(&self) -> usize {
        self.index.paths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.paths.is_empty()
    }

    /// The path of file `fi`.
    pub fn path(&self, fi: usize) -> &str {
        &self.index.paths[fi]
    }

    /// Nodes added (every file's).
    pub fn nodes(&self) -> usize {
        self.index.kinds.len()
    }

    /// Builds the lookups and orders the ids (after the last [`SymbolTable::add`]; the first
    /// [`SymbolTable::add_bases`] does it too).
    pub fn seal(&mut self) {
        if self.sealed {
            return;
        }
        self.index.seal();
        self.index.seal_ids();
        self.sealed = true;
    }

    /// Resolves `page`: the files added as `first`, `first + 1`, … (the same graphs, in the same
    /// order). Their edges come out as [`resolve`](super::resolve) over every file makes them.
    pub fn resolve_page(&mut self, first: usize, page: &mut [FileGraph]) {
        self.seal();
        debug_assert!(self.has_bases(), "a page resolved before every file's base types");
        debug_assert!(page.iter().enumerate().all(|(i, f)| self.index.paths.get(first + i) == Some(&f.path)));
        // The first pass runs without base types, as in [`resolve`](super::resolve).
        let bases = std::mem::take(&mut self.index.bases);
        pass(page, first, &self.index, |k| k != EdgeKind::Calls);
        self.index.bases = bases;
        pass(page, first, &self.index, |k| k == EdgeKind::Calls);
    }

    /// No votes yet, over every symbol of the table (after the last [`SymbolTable::add`]).
    pub fn votes(&mut self) -> Links {
        self.seal();
        debug_assert!(self.has_bases(), "votes before every file's base types");
        Links::new(self.index.symbols)
    }

    /// The votes of one resolved file's edges (as [`crate::graph::rank::Votes::add`] counts them).
    pub fn vote(&self, links: &mut Links, file: &FileGraph) {
        for edge in file.edges.iter().filter(|e| votes(e.kind)) {
            if let Some(dst) = edge.dst.as_deref() {
                self.vote_ids(links, &edge.src, dst);
            }
        }
    }

    /// The vote of one voting edge ([`crate::graph::rank::votes`] of its kind), from `src` to
    /// `dst` (node ids; none when either is not a symbol of the table): as [`SymbolTable::vote`]
    /// counts it, for edges read back one by one.
    pub fn vote_ids(&self, links: &mut Links, src: &str, dst: &str) {
        if let (Some((_, s)), Some((_, d))) = (self.index.at_of_id(src), self.index.at_of_id(dst)) {
            links.push(s, d);
        }
    }

    /// PageRank over the votes: what [`crate::graph::rank::stored_ranks`] gives the whole graph,
    /// the symbols in id order and the files in path order. The lookups the resolution needed
    /// are dropped first.
    pub fn rank(mut self, links: Links) -> Ranked {
        self.seal();
        let index = &mut self.index;
        let lookups = [
            std::mem::take(&mut index.lookups).into_buffer(),
            std::mem::take(&mut index.ids_types).into_buffer(),
        ];
        index.by_key = HashMap::new();
        index.by_package = HashMap::new();
        index.packages = Vec::new();
        index.modules = HashSet::new();
        index.bases = HashMap::new();
        index.top = Column::default();
        // The lookups' buffer and the id keys' and declared types' (8 bytes a node each) hold the
        // ranks' two rounds (8 bytes a symbol), turned into `f64` buffers in place (same size and
        // alignment, so collecting reuses each allocation), so that the ranks take no new
        // memory; a buffer with no room for every symbol (a table grown past its capacity) is
        // freed instead of grown.
        let symbols = index.symbols;
        let mut buffers = lookups.into_iter().filter(|b| b.capacity() >= symbols).map(|b| {
            let mut f: Vec<f64> = b.into_iter().map(|_| 0.0).collect();
            f.clear();
            f
        });
        let (rank, next) = (buffers.next().unwrap_or_default(), buffers.next().unwrap_or_default());
        Ranked { index: self.index, ranks: links.ranks_in(rank, next) }
    }
}

/// The ranks of a namespace ([`SymbolTable::rank`]), read without holding every id.
pub struct Ranked {
    index: Index,
    /// By symbol (ids in order, repeats once).
    ranks: Vec<f64>,
}

impl Ranked {
    /// Every symbol's id and rank (rounded), in id order.
    pub fn symbols(&self) -> impl Iterator<Item = (Arc<str>, f64)> + '_ {
        let index = &self.index;
        let mut last = None;
        index.by_id.iter().enumerate().filter_map(move |(p, &at)| {
            let symbol = index.symbol_at(p);
            (last.replace(symbol) != Some(symbol))
                .then(|| (index.id(at as usize), rounded(self.ranks[symbol as usize])))
        })
    }

    /// Every file's path and rank (the sum of its symbols', in its node order, rounded), in path
    /// order.
    pub fn files(&self) -> Vec<(&str, f64)> {
        let index = &self.index;
        let mut symbol = vec![0u32; index.kinds.len()];
        for (p, &at) in index.by_id.iter().enumerate() {
            symbol[at as usize] = index.symbol_at(p);
        }
        let mut out: Vec<(&str, f64)> = (0..index.paths.len())
            .map(|fi| {
                let total: f64 = index.nodes_of(fi).map(|at| self.ranks[symbol[at] as usize]).sum();
                (index.paths[fi].as_str(), rounded(total))
            })
            .collect();
        // Stable: of two files with one path, the later one's rank (as a map keyed by path keeps).
        out.sort_by(|a, b| a.0.cmp(b.0));
        out.reverse();
        out.dedup_by(|later, earlier| later.0 == earlier.0);
        out.reverse();
        out
    }
}
