//! What resolution looks up, node by node, in compact columns: names and fqns interned, ids
//! computed again from path, kind, fqn and ordinal, lookups by fqn and by name built when sealed.

/// alone (`NONE`) or a string of its own (`WHOLE` | the string).
pub(super) const NONE: u32 = u32::MAX;
pub(super) const WHOLE: u32 = 1 << 31;
/// A node without a declared type.
pub(super) const NO_TYPE: u32 = u32::MAX;

/// What resolution looks up, node by node (positions numbered across files, [`At`]).
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::super::compact::{fnv32, fnv32_joined, order_key, Column, Lookups, Strings};
use super::super::modules::{keys, package_key};
use super::super::types::{FileGraph, NodeKind, Resolution};
use super::At;

#[derive(Default)]
pub(super) struct Index {
    pub(super) by_key: HashMap<String, Vec<usize>>,
    pub(super) by_package: HashMap<String, Vec<usize>>,
    pub(super) packages: Vec<Option<String>>,
    pub(super) bases: HashMap<At, Vec<At>>,
    /// Every part of every file's package / module path (`api`, `handlers` of `api.handlers`).
    pub(super) modules: HashSet<String>,
    pub(super) paths: Vec<String>,
    /// Each file's first node.
    pub(super) starts: Vec<u32>,
    pub(super) kinds: Column<NodeKind>,
    /// Whether the node is a child of its file's module node.
    pub(super) top: Column<bool>,
    /// Names, scopes and declared types, numbered in `strings`.
    pub(super) names: Column<u32>,
    pub(super) scopes: Column<u32>,
    pub(super) strings: Strings,
    /// Nodes by fqn and by name (each file's module node left out), built when sealed.
    pub(super) lookups: Lookups,
    /// (node, ordinal) of the nodes whose ordinal is not 0, in node order.
    pub(super) ordinals: Vec<(u32, u32)>,
    /// (node, id) of the nodes whose id is not [`node_id`](crate::graph::node_id) of theirs, in node order.
    pub(super) odd_ids: Vec<(u32, Arc<str>)>,
    /// Each node's [`order_key`] of its id (the high 32 bits) and its declared type (numbered in
    /// `strings`, [`NO_TYPE`] for none), and the nodes in id order (after [`Index::seal_ids`]).
    pub(super) ids_types: Column<u64>,
    pub(super) by_id: Vec<u32>,
    /// The symbol (distinct id, numbered in id order) at each place of `by_id`, when some id
    /// repeats; otherwise the place is the symbol.
    pub(super) repeats: Option<Vec<u32>>,
    pub(super) symbols: usize,
}

impl Index {
    pub(super) fn build(files: &[FileGraph]) -> Index {
        let mut index = Index::default();
        for file in files {
            index.add(file);
        }
        index.seal();
        index
    }

    /// Adds the next file's definitions (file `self.paths.len()`).
    pub(super) fn add(&mut self, file: &FileGraph) {
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
            if *crate::graph::node_id(&file.path, node.kind, &node.fqn, ordinal) != *node.id {
                self.odd_ids.push((at, node.id.clone()));
            }
            self.ids_types.push(u64::from(order_key(&node.id)) << 32 | u64::from(declared));
        }
    }

    /// Builds the lookups: after the last [`Index::add`], before any lookup.
    pub(super) fn seal(&mut self) {
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
    pub(super) fn seal_ids(&mut self) {
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
    pub(super) fn symbol_at(&self, p: usize) -> u32 {
        self.repeats.as_ref().map_or(p as u32, |r| r[p])
    }

    /// The last node whose id is `id`, and its symbol (after [`Index::seal_ids`]).
    pub(super) fn at_of_id(&self, id: &str) -> Option<(At, u32)> {
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
    pub(super) fn nodes_of(&self, fi: usize) -> std::ops::Range<At> {
        let end = self.starts.get(fi + 1).map_or(self.kinds.len(), |&s| s as usize);
        self.starts[fi] as usize..end
    }

    /// The file of node `at`.
    pub(super) fn file_of(&self, at: At) -> usize {
        self.starts.partition_point(|&s| s as usize <= at) - 1
    }

    pub(super) fn name(&self, at: At) -> &str {
        self.strings.get(self.names.get(at))
    }

    pub(super) fn fqn(&self, at: At) -> std::borrow::Cow<'_, str> {
        let name = self.name(at);
        match self.scopes.get(at) {
            NONE => name.into(),
            scope if scope & WHOLE != 0 => self.strings.get(scope & !WHOLE).into(),
            scope => format!("{}.{name}", self.strings.get(scope)).into(),
        }
    }

    /// Whether node `at`'s fqn is `fqn`.
    pub(super) fn fqn_equals(&self, at: At, fqn: &str) -> bool {
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

    pub(super) fn declared(&self, at: At) -> Option<&str> {
        let declared = self.ids_types.get(at) as u32;
        (declared != NO_TYPE).then(|| self.strings.get(declared))
    }

    /// The [`order_key`] of node `at`'s id.
    pub(super) fn id_key(&self, at: At) -> u32 {
        (self.ids_types.get(at) >> 32) as u32
    }

    pub(super) fn id(&self, at: At) -> Arc<str> {
        let key = at as u32;
        if let Ok(i) = self.odd_ids.binary_search_by_key(&key, |o| o.0) {
            return self.odd_ids[i].1.clone();
        }
        let ordinal = self.ordinals.binary_search_by_key(&key, |o| o.0).map_or(0, |i| self.ordinals[i].1);
        crate::graph::node_id(&self.paths[self.file_of(at)], self.kinds.get(at), &self.fqn(at), ordinal)
    }

    /// Nodes whose fqn is `fqn`, in order.
    pub(super) fn fqn_is<'a>(&'a self, fqn: &'a str) -> impl Iterator<Item = At> + 'a {
        self.lookups
            .all(Lookups::FQN, fnv32(&[fqn.as_bytes()]))
            .map(|at| at as At)
            .filter(move |&at| self.fqn_equals(at, fqn))
    }

    /// Nodes named `name`, in order.
    pub(super) fn name_is<'a>(&'a self, name: &'a str) -> impl Iterator<Item = At> + 'a {
        self.lookups
            .all(Lookups::NAME, fnv32(&[name.as_bytes()]))
            .map(|at| at as At)
            .filter(move |&at| self.name(at) == name)
    }

    /// A top-level node named `name` in file `fi` that `want` accepts.
    pub(super) fn top_in(&self, fi: usize, name: &str, want: &dyn Fn(NodeKind) -> bool) -> Option<At> {
        let nodes = self.nodes_of(fi);
        let mut found = self
            .lookups
            .get(Lookups::NAME, fnv32(&[name.as_bytes()]), nodes.start as u32, nodes.end as u32)
            .map(|at| at as At)
            .filter(|&at| self.top.get(at) && self.name(at) == name);
        found.find(|&at| want(self.kinds.get(at)))
    }

    /// The member `name` of the type at `ty`, or of its base types (nearest first).
    pub(super) fn member(&self, ty: At, name: &str, want: &dyn Fn(NodeKind) -> bool) -> Option<At> {
        self.member_of(ty, name, want, 0)
    }

    pub(super) fn member_of(
        &self,
        ty: At,
        name: &str,
        want: &dyn Fn(NodeKind) -> bool,
        depth: usize,
    ) -> Option<At> {
        let fqn = format!("{}.{}", self.fqn(ty), name);
        let own = self.fqn_is(&fqn).find(|&at| want(self.kinds.get(at)));
        if own.is_some() || depth > 8 {
            return own;
        }
        self.inherited(ty, name, want, depth)
    }

    pub(super) fn inherited(
        &self,
        ty: At,
        name: &str,
        want: &dyn Fn(NodeKind) -> bool,
        depth: usize,
    ) -> Option<At> {
        let bases = self.bases.get(&ty)?;
        bases.iter().find_map(|&b| self.member_of(b, name, want, depth + 1))
    }

    /// Types whose fqn is `fqn` (a `self` call's owner).
    pub(super) fn types_named_fqn(&self, fqn: &str) -> Vec<At> {
        self.fqn_is(fqn).filter(|&at| self.kinds.get(at).is_type()).collect()
    }

    pub(super) fn by_fqn_unique(
        &self,
        fqn: &str,
        want: &dyn Fn(NodeKind) -> bool,
    ) -> Option<(At, Resolution)> {
        let mut found = self.fqn_is(fqn).filter(|&at| want(self.kinds.get(at)));
        let first = found.next()?;
        found.next().is_none().then_some((first, Resolution::UniqueName))
    }

    pub(super) fn unique(&self, name: &str, want: &dyn Fn(NodeKind) -> bool) -> Option<At> {
        let mut found = self.name_is(name).filter(|&at| want(self.kinds.get(at)));
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }

    pub(super) fn files_of(&self, key: &str) -> &[usize] {
        self.by_key.get(key).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Files of `fi`'s package other than `fi`.
    pub(super) fn siblings(&self, fi: usize) -> impl Iterator<Item = usize> + '_ {
        let files = self.packages[fi].as_ref().and_then(|p| self.by_package.get(p));
        files.into_iter().flatten().copied().filter(move |&f| f != fi)
    }
}
