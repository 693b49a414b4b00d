//! Cross-file resolution: a pure function over every file's extracted graph.
//!
//! Every edge that still carries a [`Hint`] (it was not resolved inside its file) is resolved
//! again from scratch, so the result depends only on the input files: running it twice, or after
//! some files were replaced, gives the same edges as a fresh run.
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::modules::{implicit_members, keys, package_key, style, targets, ModuleStyle};
use super::outside::{is_global, names_type};
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
///    dropped): the table keeps what resolution looks up — each node's id, name, fqn, kind,
///    parent link and declared type, each file's module keys and package — and, of the few files
///    with `EXTENDS` / `IMPLEMENTS` edges, those edges and the file's imports. No other edge.
/// 2. [`SymbolTable::seal`]: the base types, resolved from the kept edges.
/// 3. [`SymbolTable::resolve_page`] the files again, page by page in the same order (a page's
///    edges depend only on the table and its own files).
///
/// Memory: the table grows with the definitions of the namespace (not with its edges, which are
/// most of a graph); a page's graphs come and go.
pub struct SymbolTable {
    index: Index,
    paths: Vec<String>,
    /// Files with `EXTENDS` / `IMPLEMENTS` edges: (file, the file with only those edges).
    typed: Vec<(usize, FileGraph)>,
    sealed: bool,
}

impl Default for SymbolTable {
    fn default() -> Self {
        SymbolTable::new()
    }
}

impl SymbolTable {
    pub fn new() -> SymbolTable {
        SymbolTable { index: Index::empty(0), paths: Vec::new(), typed: Vec::new(), sealed: false }
    }

    /// Adds the next file (file `self.len()`). Every file goes in before [`SymbolTable::seal`].
    pub fn add(&mut self, file: &FileGraph) {
        debug_assert!(!self.sealed, "a file added after seal");
        let fi = self.paths.len();
        self.index.add(file);
        self.paths.push(file.path.clone());
        let typed: Vec<Edge> = file
            .edges
            .iter()
            .filter(|e| matches!(e.kind, EdgeKind::Extends | EdgeKind::Implements))
            .cloned()
            .collect();
        if !typed.is_empty() {
            let imports =
                if typed.iter().any(|e| e.hint.is_some()) { file.imports.clone() } else { Vec::new() };
            let kept = FileGraph {
                path: file.path.clone(),
                language: file.language,
                package: file.package.clone(),
                nodes: Vec::new(),
                edges: typed,
                imports,
            };
            self.typed.push((fi, kept));
        }
    }

    /// Files added.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The path of file `fi`.
    pub fn path(&self, fi: usize) -> &str {
        &self.paths[fi]
    }

    /// The node ids of file `fi`, in its order.
    pub fn node_ids(&self, fi: usize) -> &[Arc<str>] {
        &self.index.ids[fi]
    }

    /// Every node id, file by file.
    pub fn all_node_ids(&self) -> impl Iterator<Item = &Arc<str>> {
        self.index.ids.iter().flatten()
    }

    /// Resolves the base types (after the last [`SymbolTable::add`]).
    pub fn seal(&mut self) {
        if self.sealed {
            return;
        }
        self.index.seal();
        let mut typed = std::mem::take(&mut self.typed);
        // The `EXTENDS` / `IMPLEMENTS` edges as [`resolve`]'s first pass leaves them (no bases).
        for (fi, file) in &mut typed {
            pass(std::slice::from_mut(file), *fi, &self.index, |k| k != EdgeKind::Calls);
        }
        self.index.bases = bases_of(
            self.index
                .ids
                .iter()
                .enumerate()
                .flat_map(|(fi, ids)| ids.iter().enumerate().map(move |(ni, id)| (&**id, (fi, ni)))),
            typed.iter().map(|(_, f)| f),
        );
        self.sealed = true;
    }

    /// Resolves `page`: the files added as `first`, `first + 1`, … (the same graphs, in the same
    /// order). Their edges come out as [`resolve`] over every file makes them.
    pub fn resolve_page(&mut self, first: usize, page: &mut [FileGraph]) {
        self.seal();
        debug_assert!(page.iter().enumerate().all(|(i, f)| self.paths.get(first + i) == Some(&f.path)));
        // The first pass runs without base types, as in [`resolve`].
        let bases = std::mem::take(&mut self.index.bases);
        pass(page, first, &self.index, |k| k != EdgeKind::Calls);
        self.index.bases = bases;
        pass(page, first, &self.index, |k| k == EdgeKind::Calls);
    }
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

/// A node by position: (file, node).
type At = (usize, usize);

/// Each type's resolved `EXTENDS` / `IMPLEMENTS` targets.
fn bases(files: &[FileGraph], index: &Index) -> HashMap<At, Vec<At>> {
    let _ = index;
    let nodes = files
        .iter()
        .enumerate()
        .flat_map(|(fi, file)| file.nodes.iter().enumerate().map(move |(ni, node)| (&*node.id, (fi, ni))));
    bases_of(nodes, files.iter())
}

/// [`bases`] from every node's id and position and the files' resolved edges.
fn bases_of<'a>(
    nodes: impl Iterator<Item = (&'a str, At)>,
    files: impl Iterator<Item = &'a FileGraph>,
) -> HashMap<At, Vec<At>> {
    let mut by_id: HashMap<&str, At> = HashMap::new();
    for (id, at) in nodes {
        by_id.insert(id, at);
    }
    let mut out: HashMap<At, Vec<At>> = HashMap::new();
    for file in files {
        for edge in &file.edges {
            if !matches!(edge.kind, EdgeKind::Extends | EdgeKind::Implements) {
                continue;
            }
            let (Some(&src), Some(dst)) = (by_id.get(&*edge.src), edge.dst.as_deref()) else {
                continue;
            };
            if let Some(&dst) = by_id.get(dst) {
                out.entry(src).or_default().push(dst);
            }
        }
    }
    out
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

/// FNV-1a, 64 bits: the key of a string in [`Positions`] (collisions are told apart by the
/// string itself).
fn fnv(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Node positions by a string of theirs, compactly (16 bytes a node instead of a map entry with
/// an owned string and a vector): `(hash, file, node)` sorted once every node is in, each match
/// checked against the string itself. A string's positions come out in the order they were
/// added (file, then node), as a map of vectors gave them.
#[derive(Default)]
struct Positions {
    entries: Vec<(u64, u32, u32)>,
}

impl Positions {
    fn push(&mut self, hash: u64, at: At) {
        self.entries.push((hash, at.0 as u32, at.1 as u32));
    }

    fn seal(&mut self) {
        self.entries.sort_unstable();
        self.entries.shrink_to_fit();
    }

    /// The positions under `hash` that `is` accepts (the string check), in order.
    fn get<'a>(&'a self, hash: u64, is: impl Fn(At) -> bool + 'a) -> impl Iterator<Item = At> + 'a {
        let start = self.entries.partition_point(|e| e.0 < hash);
        self.entries[start..]
            .iter()
            .take_while(move |e| e.0 == hash)
            .map(|e| (e.1 as usize, e.2 as usize))
            .filter(move |&at| is(at))
    }
}

struct Index {
    by_key: HashMap<String, Vec<usize>>,
    by_package: HashMap<String, Vec<usize>>,
    /// (file, name) → its top-level nodes (children of the file's module node).
    top: Positions,
    by_fqn: Positions,
    by_name: Positions,
    kinds: Vec<Vec<NodeKind>>,
    ids: Vec<Vec<Arc<str>>>,
    names: Vec<Vec<Box<str>>>,
    fqns: Vec<Vec<Box<str>>>,
    packages: Vec<Option<String>>,
    bases: HashMap<At, Vec<At>>,
    declared: Vec<Vec<Option<Box<str>>>>,
    /// Every part of every file's package / module path (`api`, `handlers` of `api.handlers`).
    modules: HashSet<String>,
}

impl Index {
    fn build(files: &[FileGraph]) -> Index {
        let mut index = Index::empty(files.len());
        for file in files {
            index.add(file);
        }
        index.seal();
        index
    }

    fn empty(files: usize) -> Index {
        Index {
            by_key: HashMap::new(),
            by_package: HashMap::new(),
            top: Positions::default(),
            by_fqn: Positions::default(),
            by_name: Positions::default(),
            kinds: Vec::with_capacity(files),
            ids: Vec::with_capacity(files),
            names: Vec::with_capacity(files),
            fqns: Vec::with_capacity(files),
            packages: Vec::with_capacity(files),
            bases: HashMap::new(),
            declared: Vec::with_capacity(files),
            modules: HashSet::new(),
        }
    }

    /// Adds the next file's definitions (file `self.ids.len()`).
    fn add(&mut self, file: &FileGraph) {
        let index = self;
        let fi = index.ids.len();
        for key in keys(file) {
            index.by_key.entry(key).or_default().push(fi);
        }
        for part in file.package.iter().flat_map(|p| p.split('.')) {
            if !index.modules.contains(part) {
                index.modules.insert(part.to_string());
            }
        }
        let package = package_key(file);
        if let Some(p) = &package {
            index.by_package.entry(p.clone()).or_default().push(fi);
        }
        index.packages.push(package);
        let module_id = file.nodes.first().map(|n| &*n.id);
        for (ni, node) in file.nodes.iter().enumerate().skip(1) {
            if node.parent.as_deref() == module_id {
                index.top.push(Index::top_hash(fi, &node.name), (fi, ni));
            }
            index.by_fqn.push(fnv(&[node.fqn.as_bytes()]), (fi, ni));
            index.by_name.push(fnv(&[node.name.as_bytes()]), (fi, ni));
        }
        index.kinds.push(file.nodes.iter().map(|n| n.kind).collect());
        index.ids.push(file.nodes.iter().map(|n| n.id.clone()).collect());
        index.names.push(file.nodes.iter().map(|n| n.name.as_str().into()).collect());
        index.fqns.push(file.nodes.iter().map(|n| n.fqn.as_str().into()).collect());
        index.declared.push(file.nodes.iter().map(|n| n.declared_type.as_deref().map(Box::from)).collect());
    }

    /// Sorts the positions: after the last [`Index::add`], before any lookup.
    fn seal(&mut self) {
        self.top.seal();
        self.by_fqn.seal();
        self.by_name.seal();
    }

    fn top_hash(fi: usize, name: &str) -> u64 {
        fnv(&[&(fi as u64).to_le_bytes(), name.as_bytes()])
    }

    /// Nodes whose fqn is `fqn`, in order.
    fn fqn_is<'a>(&'a self, fqn: &'a str) -> impl Iterator<Item = At> + 'a {
        self.by_fqn.get(fnv(&[fqn.as_bytes()]), move |(f, n)| &*self.fqns[f][n] == fqn)
    }

    /// Nodes named `name`, in order.
    fn name_is<'a>(&'a self, name: &'a str) -> impl Iterator<Item = At> + 'a {
        self.by_name.get(fnv(&[name.as_bytes()]), move |(f, n)| &*self.names[f][n] == name)
    }

    fn id(&self, at: At) -> Arc<str> {
        self.ids[at.0][at.1].clone()
    }

    /// A top-level node named `name` in file `fi` that `want` accepts.
    fn top_in(&self, fi: usize, name: &str, want: &dyn Fn(NodeKind) -> bool) -> Option<At> {
        let mut nodes =
            self.top.get(Index::top_hash(fi, name), |(f, n)| f == fi && &*self.names[f][n] == name);
        nodes.find(|&(f, n)| want(self.kinds[f][n]))
    }

    /// The member `name` of the type at `ty`, or of its base types (nearest first).
    fn member(&self, ty: At, name: &str, want: &dyn Fn(NodeKind) -> bool) -> Option<At> {
        self.member_of(ty, name, want, 0)
    }

    fn member_of(&self, ty: At, name: &str, want: &dyn Fn(NodeKind) -> bool, depth: usize) -> Option<At> {
        let fqn = format!("{}.{}", self.fqns[ty.0][ty.1], name);
        let own = self.fqn_is(&fqn).find(|&(f, n)| want(self.kinds[f][n]));
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
        self.fqn_is(fqn).filter(|&(f, n)| self.kinds[f][n].is_type()).collect()
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
        let mut found = self.fqn_is(fqn).filter(|&(f, n)| want(self.kinds[f][n]));
        let first = found.next()?;
        found.next().is_none().then_some((first, Resolution::UniqueName))
    }

    fn unique(&self, name: &str, want: &dyn Fn(NodeKind) -> bool) -> Option<At> {
        let mut found = self.name_is(name).filter(|&(f, n)| want(self.kinds[f][n]));
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
                        .filter(|&(f, n)| want(self.kinds[f][n]))
                        .min_by_key(|&(f, _)| self.packages[f] != self.packages[fi]);
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
        self.name_is(name).any(|(f, n)| want(self.kinds[f][n]))
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
        let written = self.declared[field_at.0][field_at.1].as_deref()?;
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
                    _ => (f, 0),
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
    use crate::graph::extract_graph;
    use crate::graph::rank::{stored_ranks, stored_ranks_of, Votes};
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
        table.seal();
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
        let expected = stored_ranks(&whole(&files));
        let (resolved, table) = paged(&files, &[5]);
        let mut votes = Votes::new(table.all_node_ids());
        for f in &resolved {
            votes.add(f);
        }
        let got =
            stored_ranks_of(votes.ranks(), (0..table.len()).map(|fi| (table.path(fi), table.node_ids(fi))));
        assert_eq!(got, expected);
        assert!(expected.0.len() > 1_000, "{} symbols", expected.0.len());
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
