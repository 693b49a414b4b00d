//! The rules that resolve one edge against the [`Index`]: an import, the enclosing scope, a
//! field's declared type, the same package, or a name unique in the project.

use std::sync::Arc;

use super::super::modules::{implicit_members, style, targets, ModuleStyle};
use super::super::outside::{is_global, names_type};
use super::super::text::{split_path, strip_generics};
use super::super::types::{Edge, EdgeKind, FileGraph, Hint, Import, NodeKind, Resolution};
use super::{At, Index};

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

impl Index {
    /// The only method called `name` in the project, unless the name is too common to guess.
    pub(super) fn unique_method(&self, name: &str) -> Option<(At, Resolution)> {
        if COMMON.contains(&name) {
            return None;
        }
        let methods = |k: NodeKind| matches!(k, NodeKind::Method | NodeKind::Endpoint);
        self.unique(name, &methods).map(|at| (at, Resolution::UniqueName))
    }

    pub(super) fn resolve_edge(
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
