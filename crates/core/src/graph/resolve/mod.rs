//! Cross-file resolution: a pure function over every file's extracted graph.
//!
//! Every edge that still carries a [`Hint`] (it was not resolved inside its file) is resolved
//! again from scratch, so the result depends only on the input files: running it twice, or after
//! some files were replaced, gives the same edges as a fresh run.
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::compact::{fnv32, fnv32_joined, order_key, Column, Lookups, Strings};
use super::modules::{implicit_members, keys, package_key, style, targets, ModuleStyle};
use super::outside::{is_global, names_type};
use super::rank::{rounded, votes, Links};
use super::text::{split_path, strip_generics};
use super::types::{Edge, EdgeKind, FileGraph, Hint, Import, NodeKind, Resolution};

/// Resolves the edges of `files` that their own file could not resolve (see the module docs of
/// [`crate::graph`] for the order). Deterministic and idempotent.
pub fn resolve(files: &mut [FileGraph]) {
    let mut index = Index::build(files);
    // Types first, so that calls can find members through base types.
    pass(files, 0, &index, |k| k != EdgeKind::Calls);
    index.bases = bases(files, &index);
    pass(files, 0, &index, |k| k == EdgeKind::Calls);
}

/// [`resolve`] in pieces, for a namespace too large to hold every file's graph at once: the
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
pub struct SymbolTable {
    index: Index,
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
        // The edges as [`resolve`]'s first pass leaves them: without base types.
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
    /// order). Their edges come out as [`resolve`] over every file makes them.
    pub fn resolve_page(&mut self, first: usize, page: &mut [FileGraph]) {
        self.seal();
        debug_assert!(self.has_bases(), "a page resolved before every file's base types");
        debug_assert!(page.iter().enumerate().all(|(i, f)| self.index.paths.get(first + i) == Some(&f.path)));
        // The first pass runs without base types, as in [`resolve`].
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

/// Method names too common to guess a target for by name alone (collections, strings, I/O).
const COMMON: &[&str] = &[
    "len",
    "length",
    "size",
    "push",
    "pop",
    "get",
    "set",
    "insert",
    "remove",
    "clear",
    "clone",
    "iter",
    "map",
    "filter",
    "collect",
    "unwrap",
    "expect",
    "to_string",
    "toString",
    "into",
    "from",
    "append",
    "extend",
    "join",
    "split",
    "keys",
    "values",
    "items",
    "update",
    "contains",
    "includes",
    "equals",
    "hashCode",
    "close",
    "read",
    "write",
    "send",
    "json",
    "next",
    "then",
    "catch",
    "log",
    "error",
    "info",
    "debug",
    "warn",
    "format",
    "replace",
    "trim",
    "strip",
    "lower",
    "upper",
    "add",
    "put",
    "delete",
    "find",
    "apply",
    "call",
    "bind",
    "run",
    "start",
    "stop",
    "open",
    "print",
    "println",
    "Println",
    "Printf",
    "Error",
    "String",
    "Close",
    "Write",
    "Read",
];

/// A node's fqn is its scope, a dot and its name ([`Index::scopes`]), or, when not, its name
/// alone (`NONE`) or a string of its own (`WHOLE` | the string).
const NONE: u32 = u32::MAX;
const WHOLE: u32 = 1 << 31;
/// A node without a declared type.
const NO_TYPE: u32 = u32::MAX;

/// What resolution looks up, node by node (positions numbered across files, [`At`]).
#[derive(Default)]
struct Index {
    by_key: HashMap<String, Vec<usize>>,
    by_package: HashMap<String, Vec<usize>>,
    packages: Vec<Option<String>>,
    bases: HashMap<At, Vec<At>>,
    /// Every part of every file's package / module path (`api`, `handlers` of `api.handlers`).
    modules: HashSet<String>,
    paths: Vec<String>,
    /// Each file's first node.
    starts: Vec<u32>,
    kinds: Column<NodeKind>,
    /// Whether the node is a child of its file's module node.
    top: Column<bool>,
    /// Names, scopes and declared types, numbered in `strings`.
    names: Column<u32>,
    scopes: Column<u32>,
    strings: Strings,
    /// Nodes by fqn and by name (each file's module node left out), built when sealed.
    lookups: Lookups,
    /// (node, ordinal) of the nodes whose ordinal is not 0, in node order.
    ordinals: Vec<(u32, u32)>,
    /// (node, id) of the nodes whose id is not [`node_id`] of theirs, in node order.
    odd_ids: Vec<(u32, Arc<str>)>,
    /// Each node's [`order_key`] of its id (the high 32 bits) and its declared type (numbered in
    /// `strings`, [`NO_TYPE`] for none), and the nodes in id order (after [`Index::seal_ids`]).
    ids_types: Column<u64>,
    by_id: Vec<u32>,
    /// The symbol (distinct id, numbered in id order) at each place of `by_id`, when some id
    /// repeats; otherwise the place is the symbol.
    repeats: Option<Vec<u32>>,
    symbols: usize,
}

impl Index {
    fn build(files: &[FileGraph]) -> Index {
        let mut index = Index::default();
        for file in files {
            index.add(file);
        }
        index.seal();
        index
    }

    /// Adds the next file's definitions (file `self.paths.len()`).
    fn add(&mut self, file: &FileGraph) {
        let fi = self.paths.len();
        for key in keys(file) {
            self.by_key.entry(key).or_default().push(fi);
        }
        for part in file.package.iter().flat_map(|p| p.split('.')) {
            if !self.modules.contains(part) {
                self.modules.insert(part.to_string());
            }
        }
        let package = package_key(file);
        if let Some(p) = &package {
            self.by_package.entry(p.clone()).or_default().push(fi);
        }
        self.packages.push(package);
        self.paths.push(file.path.clone());
        let first = self.kinds.len();
        self.starts.push(first as u32);
        let module_id = file.nodes.first().map(|n| &*n.id);
        let mut seen: HashMap<(NodeKind, &str), u32> = HashMap::new();
        for (ni, node) in file.nodes.iter().enumerate() {
            let at = (first + ni) as u32;
            self.top.push(ni > 0 && node.parent.as_deref() == module_id);
            self.kinds.push(node.kind);
            let name = self.strings.intern(&node.name);
            self.names.push(name);
            let scope = match node.fqn.strip_suffix(node.name.as_str()) {
                Some("") => NONE,
                Some(scope) if scope.ends_with('.') => self.strings.intern(&scope[..scope.len() - 1]),
                _ => WHOLE | self.strings.intern(&node.fqn),
            };
            debug_assert!(self.strings.len() < WHOLE as usize);
            self.scopes.push(scope);
            let declared = node.declared_type.as_ref().map_or(NO_TYPE, |d| self.strings.intern(d));
            let seen = seen.entry((node.kind, node.fqn.as_str())).or_insert(0);
            let ordinal = *seen;
            *seen += 1;
            if ordinal > 0 {
                self.ordinals.push((at, ordinal));
            }
            if *super::node_id(&file.path, node.kind, &node.fqn, ordinal) != *node.id {
                self.odd_ids.push((at, node.id.clone()));
            }
            self.ids_types.push(u64::from(order_key(&node.id)) << 32 | u64::from(declared));
        }
    }

    /// Builds the lookups: after the last [`Index::add`], before any lookup.
    fn seal(&mut self) {
        // The table finding equal strings goes first, before the lookups are built.
        self.strings.seal();
        let mut lookups = std::mem::take(&mut self.lookups);
        let nodes = self.kinds.len();
        // Every node but each file's first (its module node).
        let positions = || {
            (0..self.starts.len()).flat_map(|fi| {
                let end = self.starts.get(fi + 1).map_or(nodes as u32, |&s| s);
                self.starts[fi] + 1..end.max(self.starts[fi] + 1)
            })
        };
        let hash = |lookup: usize, at: u32| {
            let at = at as usize;
            let name = self.name(at).as_bytes();
            match (lookup, self.scopes.get(at)) {
                (Lookups::NAME, _) | (_, NONE) => fnv32(&[name]),
                (_, scope) if scope & WHOLE != 0 => fnv32(&[self.strings.get(scope & !WHOLE).as_bytes()]),
                (_, scope) => fnv32_joined(&[self.strings.get(scope).as_bytes(), b".", name]),
            }
        };
        lookups.seal(nodes, positions, hash);
        self.lookups = lookups;
    }

    /// Orders the nodes by id (for [`Index::at_of_id`] and the ranks).
    fn seal_ids(&mut self) {
        // Into the room [`SymbolTable::with_capacity`] made, if any.
        let mut by_id = std::mem::take(&mut self.by_id);
        by_id.clear();
        by_id.extend(0..self.kinds.len() as u32);
        by_id.sort_unstable_by(|&a, &b| {
            let (a, b) = (a as usize, b as usize);
            self.id_key(a).cmp(&self.id_key(b)).then_with(|| self.id(a).cmp(&self.id(b))).then(a.cmp(&b))
        });
        let same = |p: usize| {
            let (a, b) = (by_id[p - 1] as usize, by_id[p] as usize);
            self.id_key(a) == self.id_key(b) && self.id(a) == self.id(b)
        };
        if (1..by_id.len()).any(same) {
            let mut symbol = 0;
            let repeats: Vec<u32> = (0..by_id.len())
                .map(|p| {
                    if p > 0 && !same(p) {
                        symbol += 1;
                    }
                    symbol
                })
                .collect();
            self.symbols = repeats.last().map_or(0, |&s| s as usize + 1);
            self.repeats = Some(repeats);
        } else {
            self.symbols = by_id.len();
        }
        self.by_id = by_id;
    }

    /// The symbol at place `p` of `by_id`.
    fn symbol_at(&self, p: usize) -> u32 {
        self.repeats.as_ref().map_or(p as u32, |r| r[p])
    }

    /// The last node whose id is `id`, and its symbol (after [`Index::seal_ids`]).
    fn at_of_id(&self, id: &str) -> Option<(At, u32)> {
        let key = order_key(id);
        let start = self.by_id.partition_point(|&at| self.id_key(at as usize) < key);
        let mut found = None;
        for (p, &at) in self.by_id.iter().enumerate().skip(start) {
            let at = at as usize;
            if self.id_key(at) != key {
                break;
            }
            if *self.id(at) == *id {
                found = Some((at, self.symbol_at(p)));
            }
        }
        found
    }

    /// The nodes of file `fi`.
    fn nodes_of(&self, fi: usize) -> std::ops::Range<At> {
        let end = self.starts.get(fi + 1).map_or(self.kinds.len(), |&s| s as usize);
        self.starts[fi] as usize..end
    }

    /// The file of node `at`.
    fn file_of(&self, at: At) -> usize {
        self.starts.partition_point(|&s| s as usize <= at) - 1
    }

    fn name(&self, at: At) -> &str {
        self.strings.get(self.names.get(at))
    }

    fn fqn(&self, at: At) -> std::borrow::Cow<'_, str> {
        let name = self.name(at);
        match self.scopes.get(at) {
            NONE => name.into(),
            scope if scope & WHOLE != 0 => self.strings.get(scope & !WHOLE).into(),
            scope => format!("{}.{name}", self.strings.get(scope)).into(),
        }
    }

    /// Whether node `at`'s fqn is `fqn`.
    fn fqn_equals(&self, at: At, fqn: &str) -> bool {
        let name = self.name(at);
        match self.scopes.get(at) {
            NONE => name == fqn,
            scope if scope & WHOLE != 0 => self.strings.get(scope & !WHOLE) == fqn,
            scope => {
                let scope = self.strings.get(scope);
                fqn.len() == scope.len() + 1 + name.len()
                    && fqn.starts_with(scope)
                    && fqn.as_bytes()[scope.len()] == b'.'
                    && fqn.ends_with(name)
            }
        }
    }

    fn declared(&self, at: At) -> Option<&str> {
        let declared = self.ids_types.get(at) as u32;
        (declared != NO_TYPE).then(|| self.strings.get(declared))
    }

    /// The [`order_key`] of node `at`'s id.
    fn id_key(&self, at: At) -> u32 {
        (self.ids_types.get(at) >> 32) as u32
    }

    fn id(&self, at: At) -> Arc<str> {
        let key = at as u32;
        if let Ok(i) = self.odd_ids.binary_search_by_key(&key, |o| o.0) {
            return self.odd_ids[i].1.clone();
        }
        let ordinal = self.ordinals.binary_search_by_key(&key, |o| o.0).map_or(0, |i| self.ordinals[i].1);
        super::node_id(&self.paths[self.file_of(at)], self.kinds.get(at), &self.fqn(at), ordinal)
    }

    /// Nodes whose fqn is `fqn`, in order.
    fn fqn_is<'a>(&'a self, fqn: &'a str) -> impl Iterator<Item = At> + 'a {
        self.lookups
            .all(Lookups::FQN, fnv32(&[fqn.as_bytes()]))
            .map(|at| at as At)
            .filter(move |&at| self.fqn_equals(at, fqn))
    }

    /// Nodes named `name`, in order.
    fn name_is<'a>(&'a self, name: &'a str) -> impl Iterator<Item = At> + 'a {
        self.lookups
            .all(Lookups::NAME, fnv32(&[name.as_bytes()]))
            .map(|at| at as At)
            .filter(move |&at| self.name(at) == name)
    }

    /// A top-level node named `name` in file `fi` that `want` accepts.
    fn top_in(&self, fi: usize, name: &str, want: &dyn Fn(NodeKind) -> bool) -> Option<At> {
        let nodes = self.nodes_of(fi);
        let mut found = self
            .lookups
            .get(Lookups::NAME, fnv32(&[name.as_bytes()]), nodes.start as u32, nodes.end as u32)
            .map(|at| at as At)
            .filter(|&at| self.top.get(at) && self.name(at) == name);
        found.find(|&at| want(self.kinds.get(at)))
    }

    /// The member `name` of the type at `ty`, or of its base types (nearest first).
    fn member(&self, ty: At, name: &str, want: &dyn Fn(NodeKind) -> bool) -> Option<At> {
        self.member_of(ty, name, want, 0)
    }

    fn member_of(&self, ty: At, name: &str, want: &dyn Fn(NodeKind) -> bool, depth: usize) -> Option<At> {
        let fqn = format!("{}.{}", self.fqn(ty), name);
        let own = self.fqn_is(&fqn).find(|&at| want(self.kinds.get(at)));
        if own.is_some() || depth > 8 {
            return own;
        }
        self.inherited(ty, name, want, depth)
    }

    fn inherited(&self, ty: At, name: &str, want: &dyn Fn(NodeKind) -> bool, depth: usize) -> Option<At> {
        let bases = self.bases.get(&ty)?;
        bases.iter().find_map(|&b| self.member_of(b, name, want, depth + 1))
    }

    /// Types whose fqn is `fqn` (a `self` call's owner).
    fn types_named_fqn(&self, fqn: &str) -> Vec<At> {
        self.fqn_is(fqn).filter(|&at| self.kinds.get(at).is_type()).collect()
    }

    /// The only method called `name` in the project, unless the name is too common to guess.
    fn unique_method(&self, name: &str) -> Option<(At, Resolution)> {
        if COMMON.contains(&name) {
            return None;
        }
        let methods = |k: NodeKind| matches!(k, NodeKind::Method | NodeKind::Endpoint);
        self.unique(name, &methods).map(|at| (at, Resolution::UniqueName))
    }

    fn by_fqn_unique(&self, fqn: &str, want: &dyn Fn(NodeKind) -> bool) -> Option<(At, Resolution)> {
        let mut found = self.fqn_is(fqn).filter(|&at| want(self.kinds.get(at)));
        let first = found.next()?;
        found.next().is_none().then_some((first, Resolution::UniqueName))
    }

    fn unique(&self, name: &str, want: &dyn Fn(NodeKind) -> bool) -> Option<At> {
        let mut found = self.name_is(name).filter(|&at| want(self.kinds.get(at)));
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }

    fn files_of(&self, key: &str) -> &[usize] {
        self.by_key.get(key).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Files of `fi`'s package other than `fi`.
    fn siblings(&self, fi: usize) -> impl Iterator<Item = usize> + '_ {
        let files = self.packages[fi].as_ref().and_then(|p| self.by_package.get(p));
        files.into_iter().flatten().copied().filter(move |&f| f != fi)
    }

    fn resolve_edge(
        &self,
        fi: usize,
        file: &FileGraph,
        edge: &Edge,
        hint: &Hint,
    ) -> Option<(Arc<str>, Resolution)> {
        if edge.kind == EdgeKind::Imports {
            return self.resolve_import(file, edge, hint);
        }
        let callable = |k: NodeKind| k.is_callable();
        let types = |k: NodeKind| k.is_type();
        let want: &dyn Fn(NodeKind) -> bool = match edge.kind {
            EdgeKind::Calls => &callable,
            _ => &types,
        };
        let name = hint.name.as_str();
        let found = match hint.qualifier.as_deref() {
            None => {
                // A member of the enclosing type or one of its bases, where bare calls reach them.
                let member =
                    hint.owner.as_deref().filter(|_| implicit_members(file.language)).and_then(|owner| {
                        let types = self.types_named_fqn(owner);
                        types
                            .into_iter()
                            .find_map(|ty| self.member(ty, name, want))
                            .map(|at| (at, Resolution::Scope))
                    });
                member.or_else(|| self.unqualified(fi, file, name, want))
            }
            Some("self") => {
                let owned = hint.owner.as_ref().and_then(|owner| {
                    let fqn = format!("{owner}.{name}");
                    // Prefer the same package (Go methods of one type across its files).
                    let pick = self
                        .fqn_is(&fqn)
                        .filter(|&at| want(self.kinds.get(at)))
                        .min_by_key(|&at| self.packages[self.file_of(at)] != self.packages[fi]);
                    pick.map(|at| (at, Resolution::Scope)).or_else(|| {
                        let types = self.types_named_fqn(owner);
                        types
                            .into_iter()
                            .find_map(|ty| self.inherited(ty, name, want, 0))
                            .map(|at| (at, Resolution::Scope))
                    })
                });
                owned.or_else(|| self.unique_method(name))
            }
            Some("super") => {
                let owner = hint.owner.as_deref().unwrap_or_default();
                let types = self.types_named_fqn(owner);
                let found = types.into_iter().find_map(|ty| self.inherited(ty, name, want, 0));
                found.map(|at| (at, Resolution::Scope)).or_else(|| self.unique_method(name))
            }
            Some("?") => self.unique_method(name),
            // `self.field.method()`: the field's declared type.
            Some(q) if q.starts_with("self.") && !q[5..].contains('.') => hint
                .owner
                .as_deref()
                .and_then(|owner| self.through_field(fi, file, owner, &q[5..], name, want))
                .or_else(|| self.unique_method(name)),
            Some(q) => {
                self.qualified(fi, file, q, &edge.dst_name, name, hint.owner.as_deref(), want).or_else(|| {
                    // A type written with its namespace (`Shop::Item`, `\\Shop\\Item`) and no import
                    // binding the head: the one type with that fqn.
                    (edge.kind != EdgeKind::Calls)
                        .then(|| self.by_fqn_unique(&format!("{q}.{name}"), want))
                        .flatten()
                })
            }
        };
        found.map(|(at, r)| (self.id(at), r))
    }

    fn unqualified(
        &self,
        fi: usize,
        file: &FileGraph,
        name: &str,
        want: &dyn Fn(NodeKind) -> bool,
    ) -> Option<(At, Resolution)> {
        let mut bound = false;
        for import in file.imports.iter().filter(|i| i.local() == Some(name)) {
            bound = true;
            for target in targets(import, file) {
                let Some(symbol) = &target.symbol else { continue };
                // `import x from "./m"`: the default export, usually named like the binding.
                let symbol = if symbol == "default" { name } else { symbol.as_str() };
                for &f in self.files_of(&target.key) {
                    if let Some(at) = self.top_in(f, symbol, want) {
                        return Some((at, Resolution::Import));
                    }
                }
            }
        }
        if bound {
            return None;
        }
        for import in file.imports.iter().filter(|i| i.wildcard) {
            for target in targets(import, file) {
                for &f in self.files_of(&target.key) {
                    if let Some(at) = self.top_in(f, name, want) {
                        return Some((at, Resolution::Import));
                    }
                }
            }
        }
        for f in self.siblings(fi) {
            if let Some(at) = self.top_in(f, name, want) {
                return Some((at, Resolution::SamePackage));
            }
        }
        self.unique(name, want).map(|at| (at, Resolution::UniqueName))
    }

    /// `name` reached through `qualifier` (`written`: the whole name as written, `Vec::new`).
    #[allow(clippy::too_many_arguments)]
    fn qualified(
        &self,
        fi: usize,
        file: &FileGraph,
        qualifier: &str,
        written: &str,
        name: &str,
        owner: Option<&str>,
        want: &dyn Fn(NodeKind) -> bool,
    ) -> Option<(At, Resolution)> {
        let head = qualifier.split('.').next().unwrap_or(qualifier);
        let last = qualifier.rsplit('.').next().unwrap_or(qualifier);
        // `field.method()` where bare names reach the enclosing type's fields.
        if qualifier == head && implicit_members(file.language) {
            if let Some(owner) = owner {
                if let Some(found) = self.through_field(fi, file, owner, head, name, want) {
                    return Some(found);
                }
            }
        }
        let types = |k: NodeKind| k.is_type();
        let mut bound = false;
        for import in file.imports.iter().filter(|i| i.local() == Some(head) || i.local() == Some(qualifier))
        {
            bound = true;
            for target in targets(import, file) {
                for &f in self.files_of(&target.key) {
                    match &target.symbol {
                        // `from m import Cls` … `Cls.make()`.
                        Some(symbol) => {
                            if let Some(ty) = self.top_in(f, symbol, &types) {
                                if let Some(at) = self.member(ty, name, want) {
                                    return Some((at, Resolution::Import));
                                }
                            }
                        }
                        // `import m` … `m.f()` / `m.Cls.make()`.
                        None => {
                            if qualifier == head
                                || import.local() == Some(qualifier)
                                || import.module == qualifier
                            {
                                if let Some(at) = self.top_in(f, name, want) {
                                    return Some((at, Resolution::Import));
                                }
                            }
                            if let Some(ty) = self.top_in(f, last, &types) {
                                if let Some(at) = self.member(ty, name, want) {
                                    return Some((at, Resolution::Import));
                                }
                            }
                        }
                    }
                }
            }
        }
        if bound {
            return None;
        }
        // Rust paths name modules directly: `handlers::create()`, `crate::util::slug()`.
        if style(file.language) == ModuleStyle::Rust {
            let path = qualifier.replace('.', "::");
            for module in [format!("self::{path}"), format!("crate::{path}")] {
                let import = Import { module, name: None, alias: None, wildcard: true, line: 0 };
                for target in targets(&import, file) {
                    for &f in self.files_of(&target.key) {
                        if let Some(at) = self.top_in(f, name, want) {
                            return Some((at, Resolution::Import));
                        }
                    }
                }
            }
        }
        // A type visible without an import binding: wildcard imports, the same package.
        for import in file.imports.iter().filter(|i| i.wildcard) {
            for target in targets(import, file) {
                for &f in self.files_of(&target.key) {
                    if let Some(at) = self.top_in(f, last, &types).and_then(|ty| self.member(ty, name, want))
                    {
                        return Some((at, Resolution::Import));
                    }
                }
            }
        }
        for f in self.siblings(fi) {
            if let Some(at) = self.top_in(f, last, &types).and_then(|ty| self.member(ty, name, want)) {
                return Some((at, Resolution::SamePackage));
            }
        }
        // Not a guess by name alone for a library's type or a global (`Vec::new`, `Math.max`).
        if self.outside(file, qualifier, written, owner) {
            return None;
        }
        if let Some(ty) = self.unique(last, &types) {
            if let Some(at) = self.member(ty, name, want) {
                return Some((at, Resolution::UniqueName));
            }
        }
        self.unique_method(name)
    }

    /// Whether `qualifier` (of the call written `written` in a member of `owner`) names
    /// something outside the project: a global of the language (`console`, `str`, `std`) or a
    /// type / module as spelled ([`names_type`]: `Vec::new`, `String.valueOf`) whose first part
    /// the project does not define and whose last part is not a project type (a path through a
    /// crate's name: `other_crate::Config::load()`). A field of `owner` reached as a bare name (a
    /// C# property: `Items.Add()`) is a value, not a type.
    fn outside(&self, file: &FileGraph, qualifier: &str, written: &str, owner: Option<&str>) -> bool {
        let head = qualifier.split('.').next().unwrap_or(qualifier);
        let last = qualifier.rsplit('.').next().unwrap_or(qualifier);
        if matches!(head, "crate" | "self" | "super") || self.defines(head) {
            return false;
        }
        if is_global(file.language, head) {
            return true;
        }
        if !names_type(file.language, written, head) || self.names(last, &|k| k.is_type()) {
            return false;
        }
        let fields = |k: NodeKind| k == NodeKind::Field;
        let field = owner.filter(|_| implicit_members(file.language)).is_some_and(|owner| {
            self.types_named_fqn(owner).into_iter().any(|ty| self.member(ty, head, &fields).is_some())
        });
        !field
    }

    /// Whether the project defines `name` as something a qualifier may name: a type, a module,
    /// namespace or package (a node, or a part of a file's module path), a constant.
    fn defines(&self, name: &str) -> bool {
        let qualifiers = |k: NodeKind| {
            k.is_type() || matches!(k, NodeKind::Module | NodeKind::Package | NodeKind::Constant)
        };
        self.modules.contains(name) || self.names(name, &qualifiers)
    }

    /// Whether some node called `name` is of a kind `want` accepts.
    fn names(&self, name: &str, want: &dyn Fn(NodeKind) -> bool) -> bool {
        self.name_is(name).any(|at| want(self.kinds.get(at)))
    }

    /// `name` on the declared type of `owner`'s field `field` (own or inherited).
    fn through_field(
        &self,
        fi: usize,
        file: &FileGraph,
        owner: &str,
        field: &str,
        name: &str,
        want: &dyn Fn(NodeKind) -> bool,
    ) -> Option<(At, Resolution)> {
        let fields = |k: NodeKind| k == NodeKind::Field;
        let field_at =
            self.types_named_fqn(owner).into_iter().find_map(|ty| self.member(ty, field, &fields))?;
        let written = self.declared(field_at)?;
        let ty = self.resolve_type(fi, file, written, 0)?;
        self.member(ty, name, want).map(|at| (at, Resolution::Scope))
    }

    /// A type as written in a declaration (`*store.Store`, `List<Item>`, `Post[]`, `&mut Db`),
    /// resolved from `file`; a generic type that is not the project's resolves to its last type
    /// argument (`List<Item>` → `Item`).
    fn resolve_type(&self, fi: usize, file: &FileGraph, written: &str, depth: usize) -> Option<At> {
        let types = |k: NodeKind| k.is_type();
        let cleaned = written
            .trim()
            .trim_start_matches(['*', '&', '?'])
            .trim_start_matches("mut ")
            .trim_end_matches("[]")
            .trim_end_matches('?');
        let (name, qualifier) = split_path(&strip_generics(cleaned));
        if !name.is_empty() {
            let found = match qualifier.as_deref() {
                None => self.unqualified(fi, file, &name, &types),
                Some(q) => self.qualified(fi, file, q, cleaned, &name, None, &types),
            };
            if let Some((at, _)) = found {
                return Some(at);
            }
        }
        let inner = cleaned.split_once('<')?.1.rsplit_once('>')?.0;
        let last = inner.rsplit(',').next()?.trim();
        if last.is_empty() || depth > 4 {
            return None;
        }
        self.resolve_type(fi, file, last, depth + 1)
    }

    fn resolve_import(&self, file: &FileGraph, edge: &Edge, hint: &Hint) -> Option<(Arc<str>, Resolution)> {
        let any = |_: NodeKind| true;
        let import = file.imports.iter().find(|i| {
            i.line == edge.line
                && i.name.as_deref().unwrap_or("") == hint.name
                && (edge.dst_name == i.module || edge.dst_name.starts_with(i.module.as_str()))
        })?;
        for target in targets(import, file) {
            for &f in self.files_of(&target.key) {
                let at = match &target.symbol {
                    Some(symbol) if symbol != "default" => match self.top_in(f, symbol, &any) {
                        Some(at) => at,
                        None => continue,
                    },
                    _ => match self.nodes_of(f) {
                        nodes if !nodes.is_empty() => nodes.start,
                        _ => continue,
                    },
                };
                return Some((self.id(at), Resolution::Import));
            }
        }
        None
    }
}

#[cfg(all(test, feature = "all-languages"))]
mod tests {
    use super::*;
    use crate::graph::extract_graph;
    use crate::lang::Language;

    /// A resolved project's CALLS edges as (caller fqn, callee as written, target fqn).
    fn calls(files: &[(&str, &str)]) -> Vec<(String, String, Option<String>)> {
        let mut graphs: Vec<FileGraph> = files
            .iter()
            .map(|(path, text)| extract_graph(path, text, Language::detect(path)).expect(path))
            .collect();
        resolve(&mut graphs);
        let fqn: HashMap<&str, &str> =
            graphs.iter().flat_map(|g| &g.nodes).map(|n| (&*n.id, n.fqn.as_str())).collect();
        let edges = graphs.iter().flat_map(|g| &g.edges).filter(|e| e.kind == EdgeKind::Calls);
        edges
            .map(|e| {
                let dst = e.dst.as_deref().map(|d| fqn[d].to_string());
                (fqn[&*e.src].to_string(), e.dst_name.clone(), dst)
            })
            .collect()
    }

    /// The target of the call written `written` in `caller` (`None`: external).
    fn target<'a>(
        edges: &'a [(String, String, Option<String>)],
        caller: &str,
        written: &str,
    ) -> Option<&'a str> {
        let edge = edges.iter().find(|(src, name, _)| src == caller && name == written);
        let (_, _, dst) = edge.unwrap_or_else(|| panic!("no call {written} in {caller}: {edges:#?}"));
        dst.as_deref()
    }

    #[test]
    fn rust_paths_to_outside_types_stay_external() {
        let store = r#"pub struct Store {
    items: Vec<u32>,
}

impl Store {
    pub fn new() -> Self {
        let mut items = Vec::new();
        let _name = String::from("store");
        let _old = std::mem::take(&mut items);
        let _map = std::collections::HashMap::<u32, u32>::with_capacity(4);
        Self::helper();
        Store::other();
        Self { items }
    }

    fn helper() {}

    pub fn other() {}

    pub fn with_capacity(n: usize) -> Self {
        Self::new()
    }
}

pub struct Queue;

impl Queue {
    pub fn take(&mut self) {}
}

pub struct Error;

impl Error {
    pub fn other(_: &str) -> Self {
        Error
    }
}
"#;
        let app = r#"use crate::store::Store;

pub fn build() -> Store {
    let _v: Vec<u8> = Vec::new();
    let mut q = 0;
    let _t = std::mem::take(&mut q);
    let _e = std::io::Error::other("x");
    Store::other();
    app_store::store::Store::other();
    Store::new()
}
"#;
        let edges = calls(&[("src/store.rs", store), ("src/app.rs", app)]);
        for (caller, written) in [
            ("store.Store.new", "Vec::new"),
            ("store.Store.new", "String::from"),
            ("store.Store.new", "std::mem::take"),
            ("store.Store.new", "std::collections::HashMap::::with_capacity"),
            ("app.build", "Vec::new"),
            ("app.build", "std::mem::take"),
            ("app.build", "std::io::Error::other"),
        ] {
            assert_eq!(target(&edges, caller, written), None, "{caller}: {written}");
        }
        assert_eq!(target(&edges, "store.Store.new", "Self::helper"), Some("store.Store.helper"));
        assert_eq!(target(&edges, "store.Store.new", "Store::other"), Some("store.Store.other"));
        assert_eq!(target(&edges, "store.Store.with_capacity", "Self::new"), Some("store.Store.new"));
        assert_eq!(target(&edges, "app.build", "Store::other"), Some("store.Store.other"));
        assert_eq!(target(&edges, "app.build", "Store::new"), Some("store.Store.new"));
        // Through the crate's name from another crate of the workspace: a project type.
        assert_eq!(target(&edges, "app.build", "app_store::store::Store::other"), Some("store.Store.other"));
    }

    #[test]
    fn go_standard_packages_stay_external() {
        let store = r#"package store

import (
	"errors"
	"fmt"
	"strings"
)

type Store struct{}

func (s *Store) Split(key string) []string {
	fmt.Println(key)
	return strings.Split(key, "/")
}

func (s *Store) Check() error {
	s.Split("a")
	return errors.New("bad")
}
"#;
        let errs = r#"package errors

func New(msg string) error {
	return nil
}
"#;
        let api = r#"package api

import (
	"example.com/app/errors"
	"example.com/app/store"
)

func Handle(s *store.Store) error {
	s.Check()
	return errors.New("x")
}
"#;
        let edges = calls(&[("store/store.go", store), ("errors/errors.go", errs), ("api/api.go", api)]);
        assert_eq!(target(&edges, "store.Store.Split", "fmt.Println"), None);
        assert_eq!(target(&edges, "store.Store.Split", "strings.Split"), None);
        assert_eq!(target(&edges, "store.Store.Check", "errors.New"), None);
        assert_eq!(target(&edges, "store.Store.Check", "s.Split"), Some("store.Store.Split"));
        assert_eq!(target(&edges, "api.Handle", "errors.New"), Some("errors.New"));
        assert_eq!(target(&edges, "api.Handle", "s.Check"), Some("store.Store.Check"));
    }

    #[test]
    fn ecmascript_builtin_globals_stay_external() {
        let codec = r#"export class Codec {
  parse(text: string) {
    console.table(text);
    return JSON.parse(text);
  }

  max(a: number, b: number) {
    return Math.max(a, b);
  }

  all() {
    return Promise.all([]);
  }

  table() {
    return Object.entries(Array.from([]));
  }

  run() {
    this.max(1, 2);
    return Codec.make();
  }

  static make() {
    return new Codec();
  }
}
"#;
        let main =
            "import { Codec } from \"./codec\";\n\nexport function main(codec: Codec) {\n  codec.all();\n  \
                    Codec.make();\n  return Math.max(1, 2);\n}\n";
        let edges = calls(&[("src/codec.ts", codec), ("src/main.js", main)]);
        for (caller, written) in [
            ("src.codec.Codec.parse", "console.table"),
            ("src.codec.Codec.parse", "JSON.parse"),
            ("src.codec.Codec.max", "Math.max"),
            ("src.codec.Codec.all", "Promise.all"),
            ("src.codec.Codec.table", "Object.entries"),
            ("src.main.main", "Math.max"),
        ] {
            assert_eq!(target(&edges, caller, written), None, "{caller}: {written}");
        }
        assert_eq!(target(&edges, "src.codec.Codec.run", "this.max"), Some("src.codec.Codec.max"));
        assert_eq!(target(&edges, "src.codec.Codec.run", "Codec.make"), Some("src.codec.Codec.make"));
        assert_eq!(target(&edges, "src.main.main", "Codec.make"), Some("src.codec.Codec.make"));
        // A receiver of unknown type: the one method of that name, as before.
        assert_eq!(target(&edges, "src.main.main", "codec.all"), Some("src.codec.Codec.all"));
    }

    #[test]
    fn python_builtin_types_and_library_modules_stay_external() {
        let codec = r#"import json
import os.path


class Codec:
    def loads(self, text):
        return json.loads(text)

    def join(self, *parts):
        return os.path.join(*parts)

    def splitext(self, path):
        return os.path.splitext(path)

    def getcwd(self):
        return os.getcwd()

    def encode(self, s):
        return str.encode(s)

    def fromkeys(self, keys):
        return dict.fromkeys(keys)

    def run(self):
        self.encode("x")
        return Codec.make()

    def cdf(self, x):
        return x

    def overlap(self, other):
        X = other
        return X.cdf(1)

    @staticmethod
    def make():
        return Codec()
"#;
        let main = r#"import app.codec
from app.codec import Codec


def main(codec):
    codec.fromkeys([])
    Codec.make()
    app.codec.Codec.make()
    return str.encode("x")
"#;
        let edges = calls(&[("app/codec.py", codec), ("app/main.py", main)]);
        for (caller, written) in [
            ("app.codec.Codec.loads", "json.loads"),
            ("app.codec.Codec.join", "os.path.join"),
            ("app.codec.Codec.splitext", "os.path.splitext"),
            ("app.codec.Codec.getcwd", "os.getcwd"),
            ("app.codec.Codec.encode", "str.encode"),
            ("app.codec.Codec.fromkeys", "dict.fromkeys"),
            ("app.main.main", "str.encode"),
        ] {
            assert_eq!(target(&edges, caller, written), None, "{caller}: {written}");
        }
        assert_eq!(target(&edges, "app.codec.Codec.run", "self.encode"), Some("app.codec.Codec.encode"));
        assert_eq!(target(&edges, "app.codec.Codec.run", "Codec.make"), Some("app.codec.Codec.make"));
        // One capital letter is a local, not a class: the one method of that name, as before.
        assert_eq!(target(&edges, "app.codec.Codec.overlap", "X.cdf"), Some("app.codec.Codec.cdf"));
        assert_eq!(target(&edges, "app.main.main", "Codec.make"), Some("app.codec.Codec.make"));
        assert_eq!(target(&edges, "app.main.main", "app.codec.Codec.make"), Some("app.codec.Codec.make"));
        assert_eq!(target(&edges, "app.main.main", "codec.fromkeys"), Some("app.codec.Codec.fromkeys"));
    }

    #[test]
    fn java_library_classes_stay_external() {
        let util = r#"package com.shop;

import java.util.*;

public class Util {
    public static String valueOf(int x) {
        return String.valueOf(x);
    }

    public static int max(int a, int b) {
        return Math.max(a, b);
    }

    public void sortAll(List<String> xs) {
        Collections.sort(xs);
        System.out.printf("%s", xs);
    }

    public void printf(String f) {}

    void run() {
        this.max(1, 2);
        max(1, 2);
        Util.valueOf(1);
    }
}
"#;
        let app = r#"package com.shop.app;

import com.shop.Util;

public class App {
    private Util util;

    void main() {
        Util.valueOf(2);
        util.printf("x");
        Integer.valueOf(3);
    }
}
"#;
        let edges = calls(&[
            ("src/main/java/com/shop/Util.java", util),
            ("src/main/java/com/shop/app/App.java", app),
        ]);
        for (caller, written) in [
            ("com.shop.Util.valueOf", "String.valueOf"),
            ("com.shop.Util.max", "Math.max"),
            ("com.shop.Util.sortAll", "System.out.printf"),
            ("com.shop.app.App.main", "Integer.valueOf"),
        ] {
            assert_eq!(target(&edges, caller, written), None, "{caller}: {written}");
        }
        assert_eq!(target(&edges, "com.shop.Util.run", "this.max"), Some("com.shop.Util.max"));
        assert_eq!(target(&edges, "com.shop.Util.run", "max"), Some("com.shop.Util.max"));
        assert_eq!(target(&edges, "com.shop.Util.run", "Util.valueOf"), Some("com.shop.Util.valueOf"));
        assert_eq!(target(&edges, "com.shop.app.App.main", "Util.valueOf"), Some("com.shop.Util.valueOf"));
        assert_eq!(target(&edges, "com.shop.app.App.main", "util.printf"), Some("com.shop.Util.printf"));
    }

    #[test]
    fn kotlin_library_classes_stay_external() {
        let util = r#"package shop

class Util {
    fun parseInt(s: String): Int = Integer.parseInt(s)

    fun max(a: Int, b: Int): Int = Math.max(a, b)

    fun run() {
        this.max(1, 2)
        max(1, 2)
        Util.make()
    }

    companion object {
        fun make(): Util = Util()
    }
}
"#;
        let app = r#"package shop.app

import shop.Util

fun main(util: Util) {
    util.parseInt("1")
    Math.max(1, 2)
}
"#;
        let edges = calls(&[("shop/Util.kt", util), ("shop/app/App.kt", app)]);
        assert_eq!(target(&edges, "shop.Util.parseInt", "Integer.parseInt"), None, "{edges:#?}");
        assert_eq!(target(&edges, "shop.Util.max", "Math.max"), None);
        assert_eq!(target(&edges, "shop.app.main", "Math.max"), None);
        assert_eq!(target(&edges, "shop.Util.run", "this.max"), Some("shop.Util.max"));
        assert_eq!(target(&edges, "shop.Util.run", "max"), Some("shop.Util.max"));
        assert_eq!(target(&edges, "shop.app.main", "util.parseInt"), Some("shop.Util.parseInt"));
    }

    #[test]
    fn csharp_library_classes_stay_external() {
        let util = r#"namespace Shop;

public class Util {
    public int Max(int a, int b) {
        return Math.Max(a, b);
    }

    public void WriteLine(string s) {
        Console.WriteLine(s);
    }

    public void Run() {
        this.Max(1, 2);
        Max(1, 2);
        Util.Make();
    }

    public static Util Make() {
        return new Util();
    }
}
"#;
        let app = r#"namespace Shop.App;

using Shop;

public class App {
    private Util Helper { get; set; }

    public void Main(Util util) {
        util.WriteLine("x");
        Helper.WriteLine("y");
        Util.Make();
        Math.Max(1, 2);
    }
}
"#;
        let edges = calls(&[("Shop/Util.cs", util), ("Shop/App/App.cs", app)]);
        assert_eq!(target(&edges, "Shop.Util.Max", "Math.Max"), None, "{edges:#?}");
        assert_eq!(target(&edges, "Shop.Util.WriteLine", "Console.WriteLine"), None);
        assert_eq!(target(&edges, "Shop.App.App.Main", "Math.Max"), None);
        assert_eq!(target(&edges, "Shop.Util.Run", "this.Max"), Some("Shop.Util.Max"));
        assert_eq!(target(&edges, "Shop.Util.Run", "Max"), Some("Shop.Util.Max"));
        assert_eq!(target(&edges, "Shop.Util.Run", "Util.Make"), Some("Shop.Util.Make"));
        assert_eq!(target(&edges, "Shop.App.App.Main", "util.WriteLine"), Some("Shop.Util.WriteLine"));
        assert_eq!(target(&edges, "Shop.App.App.Main", "Helper.WriteLine"), Some("Shop.Util.WriteLine"));
        assert_eq!(target(&edges, "Shop.App.App.Main", "Util.Make"), Some("Shop.Util.Make"));
    }

    #[test]
    fn php_static_calls_on_library_classes_stay_external() {
        let clock = r#"<?php
namespace App;

class Clock {
    public function now() {
        return Carbon::now();
    }

    public function createFromFormat($f) {
        return \DateTime::createFromFormat($f, 'x');
    }

    public function run() {
        $this->now();
        self::make();
        Clock::make();
    }

    public static function make() {
        return new Clock();
    }
}
"#;
        let app = r#"<?php
namespace App\Web;

use App\Clock;

function main($clock) {
    $clock->now();
    Clock::make();
    return Carbon::now();
}
"#;
        let edges = calls(&[("src/Clock.php", clock), ("src/Web/app.php", app)]);
        assert_eq!(target(&edges, "App.Clock.now", "Carbon.now"), None, "{edges:#?}");
        assert_eq!(target(&edges, "App.Clock.createFromFormat", "\\DateTime.createFromFormat"), None);
        assert_eq!(target(&edges, "App.Web.main", "Carbon.now"), None);
        assert_eq!(target(&edges, "App.Clock.run", "$this.now"), Some("App.Clock.now"));
        assert_eq!(target(&edges, "App.Clock.run", "self.make"), Some("App.Clock.make"));
        assert_eq!(target(&edges, "App.Clock.run", "Clock.make"), Some("App.Clock.make"));
        assert_eq!(target(&edges, "App.Web.main", "$clock.now"), Some("App.Clock.now"));
        assert_eq!(target(&edges, "App.Web.main", "Clock.make"), Some("App.Clock.make"));
    }

    #[test]
    fn ruby_library_constants_stay_external() {
        let clock = r#"class Clock
  def now
    Time.now
  end

  def parse(text)
    JSON.parse(text)
  end

  def read(path)
    File.read(path)
  end

  def run
    self.now
    now()
    Clock.make
  end

  def self.make
    Clock.new
  end
end
"#;
        let app = r#"require_relative "clock"

def main(clock)
  clock.parse("x")
  Clock.make
  Time.now
end
"#;
        let edges = calls(&[("lib/clock.rb", clock), ("lib/app.rb", app)]);
        assert_eq!(target(&edges, "Clock.now", "Time.now"), None, "{edges:#?}");
        assert_eq!(target(&edges, "Clock.parse", "JSON.parse"), None);
        assert_eq!(target(&edges, "main", "Time.now"), None);
        assert_eq!(target(&edges, "Clock.run", "self.now"), Some("Clock.now"));
        assert_eq!(target(&edges, "Clock.run", "now"), Some("Clock.now"), "{edges:#?}");
        assert_eq!(target(&edges, "Clock.run", "Clock.make"), Some("Clock.make"));
        assert_eq!(target(&edges, "main", "clock.parse"), Some("Clock.parse"));
        assert_eq!(target(&edges, "main", "Clock.make"), Some("Clock.make"));
    }

    #[test]
    fn cpp_std_calls_stay_external() {
        let util = r#"#include <algorithm>

namespace shop {

class Util {
public:
    int max(int a, int b) {
        return std::max(a, b);
    }
    static Util make() {
        return Util();
    }
    void run() {
        this->max(1, 2);
        max(1, 2);
        Util::make();
    }
};

}
"#;
        let app = r#"#include "util.hpp"

int main() {
    shop::Util u = shop::Util::make();
    u.max(1, 2);
    return std::max(1, 2);
}
"#;
        let edges = calls(&[("src/util.hpp", util), ("src/main.cpp", app)]);
        assert_eq!(target(&edges, "shop.Util.max", "std::max"), None, "{edges:#?}");
        assert_eq!(target(&edges, "main", "std::max"), None);
        assert_eq!(target(&edges, "shop.Util.run", "this->max"), Some("shop.Util.max"));
        assert_eq!(target(&edges, "shop.Util.run", "max"), Some("shop.Util.max"));
        assert_eq!(target(&edges, "shop.Util.run", "Util::make"), Some("shop.Util.make"));
        assert_eq!(target(&edges, "main", "shop::Util::make"), Some("shop.Util.make"));
        assert_eq!(target(&edges, "main", "u.max"), Some("shop.Util.max"));
    }
}

/// [`SymbolTable`] against [`resolve`]: the same edges and ranks whatever the pages.
#[cfg(all(test, feature = "all-languages"))]
mod paged_tests {
    use super::*;
    use crate::graph::rank::stored_ranks;
    use crate::graph::{extract_graph, Definitions};
    use crate::lang::Language;
    use proptest::prelude::*;
    use std::path::Path;

    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }

    /// Real inputs: the graph fixtures (projects in six languages, each under its own folder)
    /// and this crate's own Rust sources, in path order as the worker reads them.
    fn project() -> Vec<FileGraph> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut paths = Vec::new();
        walk(&root.join("../../tests/fixtures/graph"), &mut paths);
        walk(&root.join("src"), &mut paths);
        let mut files: Vec<FileGraph> = paths
            .iter()
            .filter_map(|p| {
                let text = std::fs::read_to_string(p).ok()?;
                let rel = p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace("../", "");
                extract_graph(&rel, &text, Language::detect(&rel))
            })
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        assert!(files.len() > 60, "{} files", files.len());
        files
    }

    fn whole(files: &[FileGraph]) -> Vec<FileGraph> {
        let mut out = files.to_vec();
        resolve(&mut out);
        out
    }

    /// Resolved in pages cut at `cuts` (file counts, cycled), as the worker does: every file
    /// added, then each page resolved alone.
    fn paged(files: &[FileGraph], cuts: &[usize]) -> (Vec<FileGraph>, SymbolTable) {
        let mut table = SymbolTable::new();
        for f in files {
            table.add(f);
        }
        paged_with(table, files, files, cuts)
    }

    /// Each file's stored definitions (their JSON, as a store keeps them, parsed back) added to a
    /// table, as a job's end reads the table, and the graphs they give back.
    fn table_of_definitions(files: &[FileGraph]) -> (SymbolTable, Vec<FileGraph>) {
        let mut table = SymbolTable::new();
        let mut graphs = Vec::new();
        for f in files {
            let json = serde_json::to_string(&Definitions::of(f)).expect("definitions as JSON");
            let stored: Definitions = serde_json::from_str(&json).expect("definitions parsed");
            table.add(&stored.graph());
            graphs.push(stored.graph());
        }
        (table, graphs)
    }

    /// [`paged`] with a table of every file already added, its base types read from `bases`
    /// (the graphs it was given).
    fn paged_with(
        mut table: SymbolTable,
        bases: &[FileGraph],
        files: &[FileGraph],
        cuts: &[usize],
    ) -> (Vec<FileGraph>, SymbolTable) {
        table.seal();
        let typed: Vec<usize> = table.base_files().collect();
        assert!(!typed.is_empty(), "no file with base types: the input proves little");
        for fi in typed {
            table.add_bases(fi, &bases[fi]);
        }
        let mut out = Vec::with_capacity(files.len());
        let (mut first, mut cut) = (0, 0);
        while first < files.len() {
            let size = cuts[cut % cuts.len()].max(1);
            cut += 1;
            let mut page = files[first..(first + size).min(files.len())].to_vec();
            table.resolve_page(first, &mut page);
            first += page.len();
            out.extend(page);
        }
        (out, table)
    }

    #[test]
    fn a_project_resolved_page_by_page_has_the_edges_of_one_resolution() {
        let files = project();
        let expected = whole(&files);
        let cross: usize =
            expected.iter().flat_map(|f| &f.edges).filter(|e| e.hint.is_some() && e.dst.is_some()).count();
        assert!(cross > 200, "only {cross} edges resolved across files: the input proves little");
        for size in [1, 2, 3, 7, 50, files.len()] {
            let (got, _) = paged(&files, &[size]);
            assert_eq!(got, expected, "pages of {size}");
        }
    }

    #[test]
    fn ranks_from_votes_fed_page_by_page_equal_the_whole_graph_s() {
        let files = project();
        let (nodes, by_file) = stored_ranks(&whole(&files));
        let (resolved, mut table) = paged(&files, &[5]);
        let mut links = table.votes();
        for f in &resolved {
            table.vote(&mut links, f);
        }
        let ranked = table.rank(links);
        let got: Vec<(String, f64)> = ranked.symbols().map(|(id, r)| (id.to_string(), r)).collect();
        assert_eq!(got, nodes.into_iter().collect::<Vec<_>>());
        let files_got: Vec<(String, f64)> =
            ranked.files().into_iter().map(|(p, r)| (p.to_string(), r)).collect();
        assert_eq!(files_got, by_file.into_iter().collect::<Vec<_>>());
        assert!(got.len() > 1_000, "{} symbols", got.len());
    }

    #[test]
    fn a_table_read_from_stored_definitions_gives_the_edges_and_ranks_of_the_graphs() {
        let files = project();
        let expected = whole(&files);
        for size in [1, 7, files.len()] {
            let (table, bases) = table_of_definitions(&files);
            let (got, _) = paged_with(table, &bases, &files, &[size]);
            assert_eq!(got, expected, "pages of {size}");
        }
        let (table, bases) = table_of_definitions(&files);
        let (resolved, mut table) = paged_with(table, &bases, &files, &[5]);
        let mut links = table.votes();
        for f in &resolved {
            table.vote(&mut links, f);
        }
        let ranked = table.rank(links);
        let (nodes, by_file) = stored_ranks(&expected);
        let got: Vec<(String, f64)> = ranked.symbols().map(|(id, r)| (id.to_string(), r)).collect();
        assert_eq!(got, nodes.into_iter().collect::<Vec<_>>());
        let files_got: Vec<(String, f64)> =
            ranked.files().into_iter().map(|(p, r)| (p.to_string(), r)).collect();
        assert_eq!(files_got, by_file.into_iter().collect::<Vec<_>>());
        // What makes the job's end read fewer statements: the definitions are a small part of
        // the graphs' JSON.
        let bytes = |json: Vec<String>| json.iter().map(String::len).sum::<usize>();
        let graphs = bytes(files.iter().map(|f| serde_json::to_string(f).expect("json")).collect());
        let definitions =
            bytes(files.iter().map(|f| serde_json::to_string(&Definitions::of(f)).expect("json")).collect());
        eprintln!("definitions: {definitions} B of {graphs} B of graphs");
        assert!(definitions * 5 < graphs, "{definitions} B of definitions, {graphs} B of graphs");
    }

    #[test]
    fn ids_are_computed_again_from_path_kind_fqn_and_ordinal_and_others_kept() {
        let mut files = project();
        // A node id from elsewhere (an older build) is kept as it is, and still found.
        let odd: Arc<str> = Arc::from("0000-an-id-not-made-here");
        let old = files[3].nodes[1].id.clone();
        files[3].nodes[1].id = odd.clone();
        for f in &mut files {
            for e in &mut f.edges {
                if e.src == old {
                    e.src = odd.clone();
                }
                if e.dst.as_ref() == Some(&old) {
                    e.dst = Some(odd.clone());
                }
            }
        }
        let mut table = SymbolTable::new();
        for f in &files {
            table.add(f);
        }
        table.seal();
        assert_eq!(table.index.odd_ids.len(), 1, "every other id is node_id of the node");
        assert!(!table.index.ordinals.is_empty(), "the input has same-named overloads");
        for (fi, f) in files.iter().enumerate() {
            for (at, node) in table.index.nodes_of(fi).zip(&f.nodes) {
                assert_eq!(table.index.id(at), node.id);
                assert_eq!(table.index.at_of_id(&node.id).map(|(at, _)| at), Some(at));
                assert_eq!(table.index.fqn(at), node.fqn.as_str());
            }
        }
        assert_eq!(table.index.at_of_id("ffff"), None);
        // The resolution with that id is still the one of every file at once, the table read
        // from the graphs or from their stored definitions.
        let (got, _) = paged(&files, &[9]);
        assert_eq!(got, whole(&files));
        let (mut stored, bases) = table_of_definitions(&files);
        stored.seal();
        assert_eq!(stored.index.odd_ids.len(), 1, "the odd id is stored with the definitions");
        let (got, _) = paged_with(stored, &bases, &files, &[9]);
        assert_eq!(got, whole(&files));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        #[test]
        fn any_split_into_pages_gives_the_same_edges(cuts in proptest::collection::vec(1usize..40, 1..8)) {
            thread_local! {
                static CASE: (Vec<FileGraph>, Vec<FileGraph>) = {
                    let files = project();
                    let expected = whole(&files);
                    (files, expected)
                };
            }
            CASE.with(|(files, expected)| {
                let (got, _) = paged(files, &cuts);
                prop_assert_eq!(&got, expected);
                Ok(())
            })?;
        }
    }
}
