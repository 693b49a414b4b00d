//! Cross-file resolution: a pure function over every file's extracted graph.
//!
//! Every edge that still carries a [`Hint`] (it was not resolved inside its file) is resolved
//! again from scratch, so the result depends only on the input files: running it twice, or after
//! some files were replaced, gives the same edges as a fresh run.
use std::collections::HashMap;
use std::sync::Arc;

use super::modules::{implicit_members, keys, package_key, style, targets, ModuleStyle};
use super::text::{split_path, strip_generics};
use super::types::{Edge, EdgeKind, FileGraph, Hint, Import, NodeKind, Resolution};

/// Resolves the edges of `files` that their own file could not resolve (see the module docs of
/// [`crate::graph`] for the order). Deterministic and idempotent.
pub fn resolve(files: &mut [FileGraph]) {
    let mut index = Index::build(files);
    // Types first, so that calls can find members through base types.
    pass(files, &index, |k| k != EdgeKind::Calls);
    index.bases = bases(files, &index);
    pass(files, &index, |k| k == EdgeKind::Calls);
}

fn pass(files: &mut [FileGraph], index: &Index, kinds: impl Fn(EdgeKind) -> bool) {
    let mut updates: Vec<(usize, usize, Found)> = Vec::new();
    for (fi, file) in files.iter().enumerate() {
        for (ei, edge) in file.edges.iter().enumerate() {
            if let Some(hint) = edge.hint.as_ref().filter(|_| kinds(edge.kind)) {
                updates.push((fi, ei, index.resolve_edge(fi, file, edge, hint)));
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
    let mut by_id: HashMap<&str, At> = HashMap::new();
    for (fi, file) in files.iter().enumerate() {
        for (ni, node) in file.nodes.iter().enumerate() {
            by_id.insert(&*node.id, (fi, ni));
        }
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
    let _ = index;
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

struct Index {
    by_key: HashMap<String, Vec<usize>>,
    by_package: HashMap<String, Vec<usize>>,
    /// (file, name) → its top-level nodes (children of the file's module node).
    top: HashMap<(usize, String), Vec<usize>>,
    by_fqn: HashMap<String, Vec<At>>,
    by_name: HashMap<String, Vec<At>>,
    kinds: Vec<Vec<NodeKind>>,
    ids: Vec<Vec<Arc<str>>>,
    fqns: Vec<Vec<String>>,
    packages: Vec<Option<String>>,
    bases: HashMap<At, Vec<At>>,
    declared: Vec<Vec<Option<String>>>,
}

impl Index {
    fn build(files: &[FileGraph]) -> Index {
        let mut index = Index {
            by_key: HashMap::new(),
            by_package: HashMap::new(),
            top: HashMap::new(),
            by_fqn: HashMap::new(),
            by_name: HashMap::new(),
            kinds: Vec::with_capacity(files.len()),
            ids: Vec::with_capacity(files.len()),
            fqns: Vec::with_capacity(files.len()),
            packages: Vec::with_capacity(files.len()),
            bases: HashMap::new(),
            declared: Vec::with_capacity(files.len()),
        };
        for (fi, file) in files.iter().enumerate() {
            for key in keys(file) {
                index.by_key.entry(key).or_default().push(fi);
            }
            let package = package_key(file);
            if let Some(p) = &package {
                index.by_package.entry(p.clone()).or_default().push(fi);
            }
            index.packages.push(package);
            let module_id = file.nodes.first().map(|n| &*n.id);
            for (ni, node) in file.nodes.iter().enumerate().skip(1) {
                if node.parent.as_deref() == module_id {
                    index.top.entry((fi, node.name.clone())).or_default().push(ni);
                }
                index.by_fqn.entry(node.fqn.clone()).or_default().push((fi, ni));
                index.by_name.entry(node.name.clone()).or_default().push((fi, ni));
            }
            index.kinds.push(file.nodes.iter().map(|n| n.kind).collect());
            index.ids.push(file.nodes.iter().map(|n| n.id.clone()).collect());
            index.fqns.push(file.nodes.iter().map(|n| n.fqn.clone()).collect());
            index.declared.push(file.nodes.iter().map(|n| n.declared_type.clone()).collect());
        }
        index
    }

    fn id(&self, at: At) -> Arc<str> {
        self.ids[at.0][at.1].clone()
    }

    /// A top-level node named `name` in file `fi` that `want` accepts.
    fn top_in(&self, fi: usize, name: &str, want: &dyn Fn(NodeKind) -> bool) -> Option<At> {
        let nodes = self.top.get(&(fi, name.to_string()))?;
        nodes.iter().find(|&&ni| want(self.kinds[fi][ni])).map(|&ni| (fi, ni))
    }

    /// The member `name` of the type at `ty`, or of its base types (nearest first).
    fn member(&self, ty: At, name: &str, want: &dyn Fn(NodeKind) -> bool) -> Option<At> {
        self.member_of(ty, name, want, 0)
    }

    fn member_of(&self, ty: At, name: &str, want: &dyn Fn(NodeKind) -> bool, depth: usize) -> Option<At> {
        let fqn = format!("{}.{}", self.fqns[ty.0][ty.1], name);
        let own =
            self.by_fqn.get(&fqn).and_then(|all| all.iter().copied().find(|&(f, n)| want(self.kinds[f][n])));
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
        let all = self.by_fqn.get(fqn).map(Vec::as_slice).unwrap_or(&[]);
        all.iter().copied().filter(|&(f, n)| self.kinds[f][n].is_type()).collect()
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
        let mut found = self.by_fqn.get(fqn)?.iter().copied().filter(|&(f, n)| want(self.kinds[f][n]));
        let first = found.next()?;
        found.next().is_none().then_some((first, Resolution::UniqueName))
    }

    fn unique(&self, name: &str, want: &dyn Fn(NodeKind) -> bool) -> Option<At> {
        let all = self.by_name.get(name)?;
        let mut found = all.iter().copied().filter(|&(f, n)| want(self.kinds[f][n]));
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
                    let all = self.by_fqn.get(&fqn);
                    // Prefer the same package (Go methods of one type across its files).
                    let pick = all
                        .into_iter()
                        .flatten()
                        .copied()
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
            Some(q) => self.qualified(fi, file, q, name, hint.owner.as_deref(), want).or_else(|| {
                // A type written with its namespace (`Shop::Item`, `\\Shop\\Item`) and no import
                // binding the head: the one type with that fqn.
                (edge.kind != EdgeKind::Calls)
                    .then(|| self.by_fqn_unique(&format!("{q}.{name}"), want))
                    .flatten()
            }),
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

    fn qualified(
        &self,
        fi: usize,
        file: &FileGraph,
        qualifier: &str,
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
        if let Some(ty) = self.unique(last, &types) {
            if let Some(at) = self.member(ty, name, want) {
                return Some((at, Resolution::UniqueName));
            }
        }
        self.unique_method(name)
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
                Some(q) => self.qualified(fi, file, q, &name, None, &types),
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
