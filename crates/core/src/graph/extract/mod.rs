//! Per-file extraction: one iterative walk over the parse tree the chunker already made.
//!
//! Definitions become nodes (fqn = package parts + enclosing definitions + name), calls become
//! `CALLS` edges from the innermost enclosing function (else the type, else the file), imports
//! become `IMPORTS` edges from the file's module node. Calls are resolved here as far as the file
//! alone allows — an enclosing scope, a `self`/`this`/receiver member, a type of the same file —
//! and the rest keep a [`Hint`] for [`super::resolve`].
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::collections::hash_map::Entry;
use std::hash::BuildHasher;
use std::num::NonZeroU16 as FieldId;
use std::sync::Arc;

use tree_sitter::{Node as TsNode, Tree};

use super::endpoint::{annotation_route, call_route, next_route};
use super::lang::{GraphLang, ModuleStyle};
use super::text::{is_plain_identifier, split_path, strip_generics};
use super::types::{Edge, EdgeKind, FileGraph, Hint, Import, Node, NodeKind, Resolution};
use super::{module_path, node_id};
use crate::chunk::code::grammar::text;
use crate::lang::Language;
use doc::{collapse, doc_of, first_line, line_of, signature, MAX_SIGNATURE};
use grammar::{callee, flags_of, grammar, Grammar, KindFlags};
use std::borrow::Cow;

mod doc;
mod grammar;

struct Scope {
    /// tree-sitter id of the node whose subtree this scope covers.
    ts_id: usize,
    /// Index of the graph node calls and children are attributed to.
    node: usize,
    /// fqn of the type whose members `self`/`this` reach here (shared: every call and type
    /// name under the scope records it).
    owner: Option<Arc<str>>,
    receiver: Option<Arc<str>>,
    /// Whether this scope pushed a part onto the fqn.
    pushed: bool,
}

struct PendingCall {
    src: usize,
    /// The callee's simple name, when it differs from `dst_name` (`helper()` needs one string).
    name: Option<String>,
    qualifier: Option<String>,
    owner: Option<Arc<str>>,
    receiver: Option<Arc<str>>,
    dst_name: String,
    line: u32,
}

/// A type name written in a declaration or expression (a `REFERENCES` edge once resolved).
struct PendingRef {
    src: usize,
    /// The simple name, when it differs from `dst_name` (a qualified or generic type).
    name: Option<String>,
    qualifier: Option<String>,
    owner: Option<Arc<str>>,
    dst_name: String,
    line: u32,
}

struct Extractor<'a> {
    path: &'a str,
    src: &'a str,
    language: Language,
    lang: &'a GraphLang,
    /// `path`, shared by the file's nodes and edges.
    file: Arc<str>,
    package: Option<Arc<str>>,
    nodes: Vec<Node>,
    /// Each node's children in order as linked lists (first child, next sibling): one vector
    /// per parent cost a reallocation every few members of a class or interface.
    first_child: Vec<Option<usize>>,
    last_child: Vec<Option<usize>>,
    next_sibling: Vec<Option<usize>>,
    edges: Vec<Edge>,
    imports: Vec<Import>,
    calls: Vec<PendingCall>,
    refs: Vec<PendingRef>,
    scopes: Vec<Scope>,
    parts: Parts,
    /// Per kind and hash of the fqn, the first node with that key. Most (kind, fqn) pairs occur
    /// once: only a key seen before (a repeat, or a hash collision) is looked up by its whole
    /// fqn in `ordinals`, so the fqn is not copied into a key per node.
    first_by_key: HashMap<(NodeKind, u64), usize>,
    ordinals: HashMap<(NodeKind, String), u32>,
    /// Route prefix of enclosing controllers (Spring `@RequestMapping` on the class).
    route_prefix: Vec<(usize, String)>,
    /// The nodes from the root down to the visited node's parent. tree-sitter's `parent()` walks
    /// down from the root on every call; at one call per call site it cost more than the rest
    /// of the extraction.
    ancestors: Vec<TsNode<'a>>,
    /// Per ancestor: the comments and annotations among its children seen since the last other
    /// named child (the doc and decorators of the next definition). `prev_named_sibling()`
    /// rescans the parent's children on every call: quadratic in a class or `.d.ts` of
    /// thousands of members.
    runs: Vec<Vec<TsNode<'a>>>,
    /// The grammar's kind flags and field ids, made once per language.
    grammar: Arc<Grammar>,
    /// Each node's parent index (`Node::parent` holds its id).
    parents: Vec<Option<usize>>,
}

/// Extracts `path`'s graph from its parse `tree`.
pub(crate) fn extract(path: &str, src: &str, language: Language, tree: &Tree, lang: &GraphLang) -> FileGraph {
    let root = tree.root_node();
    let package = {
        let mut cursor = root.walk();
        let found = root.named_children(&mut cursor).find_map(|c| (lang.package)(c, src));
        found.or_else(|| match lang.modules {
            ModuleStyle::Python | ModuleStyle::EcmaScript | ModuleStyle::Rust => {
                module_path(path, lang.modules)
            }
            _ => None,
        })
    };
    // About one definition per 128 bytes of source (declaration files are denser): reserving
    // spares most of the reallocations of the node and edge vectors (large elements).
    let estimate = src.len() / 128 + 4;
    let mut ex = Extractor {
        path,
        src,
        language,
        lang,
        file: path.into(),
        package: package.as_deref().map(Arc::from),
        nodes: Vec::with_capacity(estimate),
        first_child: Vec::with_capacity(estimate),
        last_child: Vec::with_capacity(estimate),
        next_sibling: Vec::with_capacity(estimate),
        edges: Vec::with_capacity(estimate),
        imports: Vec::new(),
        calls: Vec::new(),
        refs: Vec::new(),
        scopes: Vec::new(),
        parts: Parts::default(),
        first_by_key: HashMap::with_capacity(estimate),
        ordinals: HashMap::new(),
        route_prefix: Vec::new(),
        ancestors: Vec::new(),
        runs: Vec::new(),
        grammar: grammar(language, &tree.language(), lang),
        parents: Vec::with_capacity(estimate),
    };
    for part in package.iter().flat_map(|p| p.split('.')).filter(|s| !s.is_empty()) {
        ex.parts.push(part);
    }
    let file_name = path.rsplit('/').next().unwrap_or(path).to_string();
    let last_line = line_count(src).max(1) as u32;
    let module =
        ex.push_node(NodeKind::Module, file_name, path.to_string(), None, 1, last_line, None, None, None);
    ex.scopes.push(Scope { ts_id: root.id(), node: module, owner: None, receiver: None, pushed: false });
    ex.walk(root);
    ex.finish()
}

impl<'a> Extractor<'a> {
    #[allow(clippy::too_many_arguments)]
    fn push_node(
        &mut self,
        kind: NodeKind,
        name: String,
        fqn: String,
        parent: Option<usize>,
        start_line: u32,
        end_line: u32,
        signature: Option<String>,
        doc: Option<String>,
        route: Option<(String, String)>,
    ) -> usize {
        let index = self.nodes.len();
        let key = (kind, self.first_by_key.hasher().hash_one(fqn.as_str()));
        let ordinal = match self.first_by_key.entry(key) {
            Entry::Vacant(slot) => {
                slot.insert(index);
                0
            }
            Entry::Occupied(first) => {
                let first = &self.nodes[*first.get()];
                // The first node with this key (same kind) counts as one when it has the same fqn.
                let seen = u32::from(first.fqn == fqn);
                let slot = self.ordinals.entry((kind, fqn.clone())).or_insert(seen);
                let o = *slot;
                *slot += 1;
                o
            }
        };
        let id = node_id(self.path, kind, &fqn, ordinal);
        let parent_id = parent.map(|p| self.nodes[p].id.clone());
        self.parents.push(parent);
        self.first_child.push(None);
        self.last_child.push(None);
        self.next_sibling.push(None);
        if let Some(p) = parent {
            match self.last_child[p] {
                Some(last) => self.next_sibling[last] = Some(index),
                None => self.first_child[p] = Some(index),
            }
            self.last_child[p] = Some(index);
            self.edges.push(Edge {
                kind: EdgeKind::Contains,
                src: self.nodes[p].id.clone(),
                dst: Some(id.clone()),
                dst_name: fqn.clone(),
                confidence: 1.0,
                resolution: Resolution::Syntax,
                path: self.file.clone(),
                line: start_line,
                hint: None,
            });
        }
        let (http_method, route) = match route {
            Some((m, r)) => (Some(m), Some(r)),
            None => (None, None),
        };
        self.nodes.push(Node {
            id,
            kind,
            name,
            fqn,
            package: self.package.clone(),
            signature,
            doc,
            path: self.file.clone(),
            language: self.language,
            start_line,
            end_line,
            parent: parent_id,
            route,
            http_method,
            declared_type: None,
        });
        index
    }

    fn fqn_of(&self, name: &str) -> String {
        self.parts.fqn_of(name)
    }

    /// `scope`'s children in order.
    fn children_of(&self, scope: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.first_child[scope], |&i| self.next_sibling[i])
    }

    fn walk(&mut self, root: TsNode<'a>) {
        // One frame per node being walked into: its children not visited yet.
        let mut frames = vec![Frame::new(root, root.named_child_count())];
        self.ancestors.push(root);
        self.runs.push(Vec::new());
        while let Some(frame) = frames.last_mut() {
            let Some((node, flags)) = frame.next(&self.grammar.flags, self.lang) else {
                // Every named child is done: the node itself is.
                frames.pop();
                self.runs.pop();
                let Some(done) = self.ancestors.pop() else { return };
                if frames.is_empty() {
                    return;
                }
                self.done(done, self.flags(done));
                continue;
            };
            let descend = (flags & KindFlags::NAMED == 0 || self.visit(node, flags, frame.at()))
                && flags & KindFlags::OPAQUE == 0;
            // A node whose children are all tokens has nothing to visit.
            let named = if descend { node.named_child_count() } else { 0 };
            if named > 0 {
                self.ancestors.push(node);
                self.runs.push(Vec::new());
                frames.push(Frame::new(node, named));
            } else {
                self.done(node, flags);
            }
        }
    }

    /// After `node` and everything in it was visited.
    fn done(&mut self, node: TsNode<'a>, flags: u16) {
        self.leave(node.id());
        if flags & KindFlags::NAMED != 0 {
            let doc = flags & KindFlags::DOC_OR_ANNOTATION != 0;
            if let Some(run) = self.runs.last_mut() {
                if doc {
                    run.push(node);
                } else {
                    run.clear();
                }
            }
        }
    }

    fn leave(&mut self, ts_id: usize) {
        while self.scopes.last().is_some_and(|s| s.ts_id == ts_id) {
            if let Some(scope) = self.scopes.pop() {
                if scope.pushed {
                    self.parts.pop();
                }
            }
            if self.route_prefix.last().is_some_and(|(id, _)| *id == ts_id) {
                self.route_prefix.pop();
            }
        }
    }

    fn flags(&self, node: TsNode<'_>) -> u16 {
        flags_of(&self.grammar.flags, node, self.lang)
    }

    /// Handles one named node; returns whether to walk into it.
    fn visit(&mut self, node: TsNode<'a>, flags: u16, at: At<'_, 'a>) -> bool {
        if flags & KindFlags::COMMENT != 0 {
            return false;
        }
        if flags & (KindFlags::TYPE_NAME | KindFlags::TYPE_CANDIDATE) != 0 {
            if let Some(descend) = self.type_ref(node, flags, at) {
                return descend;
            }
        }
        #[cfg(debug_assertions)]
        self.check_dispatch(node, flags);
        if flags & KindFlags::IMPORT != 0 {
            let line = node.start_position().row as u32 + 1;
            if (self.lang.imports)(node, self.src, line, &mut self.imports) {
                return false;
            }
        }
        if flags & KindFlags::DECL != 0 {
            if let Some(decl) = (self.lang.classify)(node, self.src, &self.ancestors) {
                self.definition(node, decl);
                return true;
            }
        }
        if flags & KindFlags::CALL != 0 {
            self.call(node);
        }
        true
    }

    /// The kind lists the walk dispatches on hold every kind `classify` / `imports` accept.
    #[cfg(debug_assertions)]
    fn check_dispatch(&self, node: TsNode<'a>, flags: u16) {
        if flags & KindFlags::IMPORT == 0 {
            let mut scratch = Vec::new();
            assert!(
                !(self.lang.imports)(node, self.src, 0, &mut scratch),
                "`imports` accepts `{}`, missing from `import_kinds`",
                node.kind()
            );
        }
        if flags & KindFlags::DECL == 0 {
            assert!(
                (self.lang.classify)(node, self.src, &self.ancestors).is_none(),
                "`classify` accepts `{}`, missing from `decl_kinds`",
                node.kind()
            );
        }
    }

    /// Records a type name at `node` when it is in a type position; returns whether to walk into
    /// it, or `None` when it is not a type name here (the node is then visited as usual).
    fn type_ref(&mut self, node: TsNode<'a>, flags: u16, pos: At<'_, 'a>) -> Option<bool> {
        let lang: &'a GraphLang = self.lang;
        let types = &lang.types;
        let always = flags & KindFlags::TYPE_NAME != 0;
        if always {
            // The name of the type being defined (`struct Foo`, `type Foo = …`).
            if let Some(name_field) = self.grammar.name_field {
                if self.in_field(node, pos, &[name_field]) {
                    return Some(false);
                }
            }
        } else {
            let mut at = self.ancestors.len();
            let mut parent_flags = 0;
            while at > 0 {
                at -= 1;
                parent_flags = self.flags(self.ancestors[at]);
                if parent_flags & KindFlags::TYPE_UNION == 0 {
                    break;
                }
            }
            let slot = parent_flags & KindFlags::TYPE_PARENT != 0
                || (!self.grammar.type_fields.is_empty()
                    && self.in_field(node, pos, &self.grammar.type_fields))
                || (!types.keywords.is_empty()
                    && node.prev_sibling().is_some_and(|p| types.keywords.contains(&p.kind())));
            if !slot {
                return None;
            }
        }
        let raw = text(node, self.src);
        // Most type names are a plain identifier: name and text as written, nothing to strip or
        // split (and nothing to allocate for the names dropped below).
        let (written, name, qualifier): (Cow<'_, str>, Cow<'_, str>, Option<String>) =
            if is_plain_identifier(raw) {
                (raw.into(), raw.into(), None)
            } else {
                let written = strip_generics(raw);
                let (name, qualifier) = split_path(&written);
                (written.into(), name.into(), qualifier)
            };
        // Single letters are type parameters (`T`, `K`), not types of the project.
        let keep = name.chars().nth(1).is_some()
            && written.len() <= 200
            && !types.builtins.contains(&name.as_ref())
            && !(types.screaming_values && is_screaming(&name))
            && !lang.self_names.contains(&name.as_ref());
        if keep {
            let owner = self.enclosing_type().and_then(|s| s.owner.clone());
            self.refs.push(PendingRef {
                src: self.caller(),
                name: (name != written).then(|| name.into_owned()),
                qualifier,
                owner,
                dst_name: written.into_owned(),
                line: line_of(node),
            });
        }
        Some(!always)
    }

    /// Whether `node`, at `at`, is in one of `fields` (`name` or the type fields, the only ones
    /// asked about).
    fn in_field(&self, node: TsNode<'a>, at: At<'_, 'a>, fields: &[FieldId]) -> bool {
        match at {
            At::Cursor(cursor) => cursor.field_id().is_some_and(|f| fields.contains(&f)),
            At::Child(parent, index) => {
                // Most parents have no child in these fields at all, which the parent's field
                // map answers without walking to child `index` (`field_name_for_child` does).
                let mut unsure = false;
                for &f in fields {
                    match parent.child_by_field_id(f.get()) {
                        None => {}
                        Some(child) if child.id() == node.id() => return true,
                        // A field may hold several children: only the slow lookup is exact.
                        Some(_) => unsure = true,
                    }
                }
                unsure
                    && parent.field_name_for_child(index).is_some_and(|name| {
                        self.grammar.fields.iter().any(|&(n, id)| n == name && fields.contains(&id))
                    })
            }
        }
    }

    fn enclosing_type(&self) -> Option<&Scope> {
        self.scopes.iter().rev().find(|s| s.owner.is_some())
    }

    fn definition(&mut self, node: TsNode<'a>, mut decl: super::lang::Decl<'a>) {
        let mut span = node;
        // The siblings before `span`: those of the node, or of the wrapper it is in.
        let mut level = self.runs.len().saturating_sub(1);
        for i in (0..self.ancestors.len()).rev() {
            let parent = self.ancestors[i];
            if self.flags(parent) & KindFlags::WRAPPER != 0 && i > 0 {
                span = parent;
                level = i - 1;
            } else {
                break;
            }
        }
        let innermost = self.scopes.last().map(|s| s.node).unwrap_or(0);
        // Directly in a type (or an `impl` block): functions are methods.
        let in_type =
            self.scopes.last().is_some_and(|s| s.owner.is_some() && !self.nodes[s.node].kind.is_body());
        if decl.scope_only {
            // An `impl` block: members are the owner's, parented to the owner when it is here.
            let owner = decl.owner.clone().unwrap_or_default();
            let owner_fqn = self.fqn_of(&owner);
            let parent = self.find_fqn(&owner_fqn).unwrap_or(innermost);
            if let Some(owner_node) = self.find_fqn(&owner_fqn) {
                for (kind, base) in &decl.bases {
                    self.base_edge(owner_node, *kind, base, line_of(node));
                }
            }
            self.parts.push(&owner);
            self.scopes.push(Scope {
                ts_id: node.id(),
                node: parent,
                owner: Some(owner_fqn.into()),
                receiver: None,
                pushed: true,
            });
            return;
        }
        let mut kind = decl.kind;
        if kind == NodeKind::Function && (in_type || decl.owner.is_some()) {
            kind = NodeKind::Method;
        }
        // Members declared outside their type (`func (s *S) M()`, `void S::m()`).
        let mut pushed_owner = false;
        let mut parent = innermost;
        if let Some(owner) = decl.owner.as_deref().filter(|_| !in_type) {
            let owner_fqn = self.fqn_of(owner);
            if let Some(owner_node) = self.find_fqn(&owner_fqn) {
                parent = owner_node;
            }
            self.parts.push(owner);
            pushed_owner = true;
        }
        let fqn = self.fqn_of(&decl.name);
        let signature = signature(node, decl.body, self.src);
        let before = self.runs.get(level).map_or(&[][..], Vec::as_slice);
        let doc = doc_of(span, before, decl.body, self.src);
        let annotations = self.annotations(span, before, node);
        let mut route = annotations.iter().find_map(|a| annotation_route(a));
        if route.is_none() && kind.is_body() {
            route = next_route(self.path, &decl.name);
        }
        if let Some((_, r)) = &mut route {
            if let Some((_, prefix)) = self.route_prefix.last() {
                *r = join_route(prefix, r);
            }
        }
        let mut class_prefix = None;
        if kind.is_type() {
            if let Some((_, r)) = route.take() {
                class_prefix = Some(r);
            }
        } else if route.is_some() && kind.is_body() {
            kind = NodeKind::Endpoint;
        }
        let start = line_of(span);
        let end = span.end_position().row as u32 + 1;
        // The name and fqn move into the node; what follows reads them from there.
        let index = self.push_node(
            kind,
            std::mem::take(&mut decl.name),
            fqn,
            Some(parent),
            start,
            end,
            signature,
            doc,
            route,
        );
        self.nodes[index].declared_type = decl.type_ref.take();
        if pushed_owner {
            self.parts.pop();
        }
        for (base_kind, base) in &decl.bases {
            self.base_edge(index, *base_kind, base, start);
        }
        let owner: Option<Arc<str>> = if kind.is_type() {
            Some(Arc::from(self.nodes[index].fqn.as_str()))
        } else if let Some(owner) = &decl.owner {
            Some(self.fqn_of(owner).into())
        } else {
            self.enclosing_type().and_then(|s| s.owner.clone())
        };
        let receiver = decl
            .receiver
            .as_deref()
            .map(Arc::from)
            .or_else(|| self.scopes.last().and_then(|s| s.receiver.clone()));
        if let Some(prefix) = class_prefix {
            self.route_prefix.push((node.id(), prefix));
        }
        let pushed = if pushed_owner {
            // Keep the owner in the fqn of anything nested in the method.
            self.parts.push(decl.owner.as_deref().unwrap_or_default());
            self.parts.push(&self.nodes[index].name);
            // Two parts: pop one now through a helper scope sharing the same ts id.
            self.scopes.push(Scope {
                ts_id: node.id(),
                node: index,
                owner: owner.clone(),
                receiver: receiver.clone(),
                pushed: true,
            });
            true
        } else {
            self.parts.push(&self.nodes[index].name);
            true
        };
        self.scopes.push(Scope { ts_id: node.id(), node: index, owner, receiver, pushed });
    }

    /// Decorator / annotation / attribute texts attached to a definition.
    fn annotations(&self, span: TsNode<'a>, before: &[TsNode<'a>], node: TsNode<'a>) -> Vec<&'a str> {
        let mut out = Vec::new();
        // A definition has a few named children: indexing them is cheaper than a tree cursor,
        // whose every step recomputes its position (and whose creation allocates).
        let named_children =
            |n: TsNode<'a>| (0..n.named_child_count()).filter_map(move |i| n.named_child(i as u32));
        let collect = |n: TsNode<'a>, out: &mut Vec<&'a str>| {
            for c in named_children(n) {
                let flags = self.flags(c);
                if flags & KindFlags::ANNOTATION != 0 {
                    out.push(text(c, self.src));
                } else if flags & KindFlags::MODIFIERS != 0 {
                    for m in named_children(c) {
                        if self.flags(m) & KindFlags::ANNOTATION != 0 {
                            out.push(text(m, self.src));
                        }
                    }
                }
            }
        };
        collect(span, &mut out);
        if node.id() != span.id() {
            collect(node, &mut out);
        }
        for p in before.iter().rev() {
            if self.flags(*p) & KindFlags::ANNOTATION != 0 {
                out.push(text(*p, self.src));
            }
        }
        out
    }

    fn base_edge(&mut self, src: usize, kind: EdgeKind, base: &str, line: u32) {
        let clean = strip_generics(base);
        let (name, qualifier) = split_path(&clean);
        if name.is_empty() {
            return;
        }
        self.edges.push(Edge {
            kind,
            src: self.nodes[src].id.clone(),
            dst: None,
            dst_name: clean.clone(),
            confidence: 0.0,
            resolution: Resolution::External,
            path: self.file.clone(),
            line,
            hint: Some(Hint { name, qualifier, owner: None }),
        });
    }

    fn find_fqn(&self, fqn: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.fqn == fqn && n.kind.is_type())
    }

    /// The node a call at this point is attributed to.
    fn caller(&self) -> usize {
        self.scopes.last().map(|s| s.node).unwrap_or(0)
    }

    fn call(&mut self, node: TsNode<'a>) {
        let Some((name, qualifier, written)) = callee(node, self.src, &self.grammar.callee_fields) else {
            return;
        };
        let line = line_of(node);
        let in_annotation = match self.ancestors.last() {
            Some(&p) => self.flags(p) & KindFlags::ANNOTATION != 0,
            None => false,
        };
        let simple = name.as_deref().unwrap_or(&written);
        let route = if in_annotation { None } else { call_route(node, simple, self.src) };
        if let Some((method, route, handlers)) = route {
            let caller = self.caller();
            let label = format!("{method} {route}");
            let fqn = self.fqn_of(&label);
            let end = node.end_position().row as u32 + 1;
            let signature = Some(collapse(&first_line(text(node, self.src)), MAX_SIGNATURE));
            let index = self.push_node(
                NodeKind::Endpoint,
                label.clone(),
                fqn,
                Some(caller),
                line,
                end,
                signature,
                None,
                Some((method, route)),
            );
            let owner = self.scopes.last().and_then(|s| s.owner.clone());
            let receiver = self.scopes.last().and_then(|s| s.receiver.clone());
            for handler in handlers {
                let (hname, hqual) = split_path(&handler);
                if hname.is_empty() {
                    continue;
                }
                self.calls.push(PendingCall {
                    src: index,
                    name: (hname != handler).then_some(hname),
                    qualifier: hqual,
                    owner: owner.clone(),
                    receiver: receiver.clone(),
                    dst_name: handler,
                    line,
                });
            }
            self.parts.push(&label);
            self.scopes.push(Scope { ts_id: node.id(), node: index, owner, receiver, pushed: true });
            return;
        }
        let (owner, receiver) = match self.scopes.last() {
            Some(s) => (s.owner.clone(), s.receiver.clone()),
            None => (None, None),
        };
        self.calls.push(PendingCall {
            src: self.caller(),
            name,
            qualifier,
            owner,
            receiver,
            dst_name: written,
            line,
        });
    }

    fn finish(mut self) -> FileGraph {
        let calls = std::mem::take(&mut self.calls);
        // Only calls look nodes up by fqn (a declaration file has none).
        let mut by_fqn: HashMap<&str, usize> = HashMap::new();
        if !calls.is_empty() {
            by_fqn.reserve(self.nodes.len());
            for (i, n) in self.nodes.iter().enumerate() {
                by_fqn.entry(n.fqn.as_str()).or_insert(i);
            }
        }
        let types = types_by_name(&self.nodes);
        let mut edges = Vec::with_capacity(calls.len());
        for call in calls {
            let found = self.resolve_local(&call, &by_fqn, &types);
            let (dst, resolution) = match found {
                Some((i, r)) => (Some(self.nodes[i].id.clone()), r),
                None => (None, Resolution::External),
            };
            let hint = found.is_none().then(|| Hint {
                name: call.name.unwrap_or_else(|| call.dst_name.clone()),
                qualifier: self_qualifier(call.qualifier, self.lang, call.receiver.as_deref()),
                owner: call.owner,
            });
            edges.push(Edge {
                kind: EdgeKind::Calls,
                src: self.nodes[call.src].id.clone(),
                dst,
                dst_name: call.dst_name,
                confidence: resolution.confidence(),
                resolution,
                path: self.file.clone(),
                line: call.line,
                hint,
            });
        }
        // Local types for EXTENDS / IMPLEMENTS.
        for edge in &mut self.edges {
            if edge.dst.is_some() {
                continue;
            }
            let Some(hint) = &edge.hint else { continue };
            if hint.qualifier.is_none() {
                if let Some(n) = types.get(hint.name.as_str()).map(|&i| &self.nodes[i]) {
                    edge.dst = Some(n.id.clone());
                    edge.resolution = Resolution::SameFile;
                    edge.confidence = Resolution::SameFile.confidence();
                    edge.hint = None;
                }
            }
        }
        drop(types);
        self.edges.extend(edges);
        self.references();
        let module_id = self.nodes[0].id.clone();
        for import in &self.imports {
            let dst_name = match &import.name {
                Some(name) => format!("{}.{}", import.module, name),
                None => import.module.clone(),
            };
            self.edges.push(Edge {
                kind: EdgeKind::Imports,
                src: module_id.clone(),
                dst: None,
                dst_name,
                confidence: 0.0,
                resolution: Resolution::External,
                path: self.file.clone(),
                line: import.line,
                hint: Some(Hint {
                    name: import.name.clone().unwrap_or_default(),
                    qualifier: None,
                    owner: None,
                }),
            });
        }
        FileGraph {
            path: self.path.to_string(),
            language: self.language,
            package: self.package.as_deref().map(str::to_string),
            nodes: self.nodes,
            edges: self.edges,
            imports: self.imports,
        }
    }

    /// `REFERENCES` edges, one per (symbol, type as written) at its first line: a type of the
    /// same file resolves here, the rest keep a hint for cross-file resolution. A type's own
    /// name and its bases (already `EXTENDS` / `IMPLEMENTS`) are not references.
    fn references(&mut self) {
        let refs = std::mem::take(&mut self.refs);
        // Base edges by source node index (few per file): looked up per reference without
        // building a key.
        let mut bases: HashMap<&str, Vec<&str>> = HashMap::new();
        for e in self.edges.iter().filter(|e| matches!(e.kind, EdgeKind::Extends | EdgeKind::Implements)) {
            bases.entry(&*e.src).or_default().push(e.dst_name.as_str());
        }
        let types = types_by_name(&self.nodes);
        let mut seen: HashSet<(usize, &str)> = HashSet::with_capacity(refs.len());
        let mut out = Vec::new();
        for (at, r) in refs.iter().enumerate() {
            if !seen.insert((r.src, r.dst_name.as_str())) {
                continue;
            }
            let src = &*self.nodes[r.src].id;
            if bases.get(src).is_some_and(|b| b.contains(&r.dst_name.as_str())) {
                continue;
            }
            let name = r.name.as_deref().unwrap_or(&r.dst_name);
            let local = if r.qualifier.is_none() { types.get(name).copied() } else { None };
            if local == Some(r.src) {
                continue;
            }
            out.push((at, local));
        }
        drop((bases, types, seen));
        let mut refs: Vec<Option<PendingRef>> = refs.into_iter().map(Some).collect();
        for (at, local) in out {
            let Some(r) = refs[at].take() else { continue };
            let (dst, resolution) = match local {
                Some(i) => (Some(self.nodes[i].id.clone()), Resolution::SameFile),
                None => (None, Resolution::External),
            };
            let hint = local.is_none().then(|| Hint {
                name: r.name.unwrap_or_else(|| r.dst_name.clone()),
                qualifier: r.qualifier,
                owner: r.owner,
            });
            self.edges.push(Edge {
                kind: EdgeKind::References,
                src: self.nodes[r.src].id.clone(),
                dst,
                dst_name: r.dst_name,
                confidence: resolution.confidence(),
                resolution,
                path: self.file.clone(),
                line: r.line,
                hint,
            });
        }
    }

    fn resolve_local(
        &self,
        call: &PendingCall,
        by_fqn: &HashMap<&str, usize>,
        types: &HashMap<&str, usize>,
    ) -> Option<(usize, Resolution)> {
        let callable = |i: &usize| self.nodes[*i].kind.is_callable();
        let name = call.name.as_deref().unwrap_or(&call.dst_name);
        match call.qualifier.as_deref() {
            None => {
                // Enclosing scopes, innermost first: nested functions, then (where the language
                // allows bare member calls) the type, then the file.
                let mut at = Some(call.src);
                while let Some(scope) = at {
                    let skip = self.nodes[scope].kind.is_type() && !self.lang.implicit_members;
                    if !skip {
                        if let Some(i) =
                            self.children_of(scope).find(|&i| callable(&i) && self.nodes[i].name == name)
                        {
                            let r = if scope == 0 { Resolution::SameFile } else { Resolution::Scope };
                            return Some((i, r));
                        }
                    }
                    at = self.parent_index(scope);
                }
                if self.lang.implicit_members {
                    if let Some(owner) = &call.owner {
                        let fqn = format!("{owner}.{name}");
                        if let Some(&i) = by_fqn.get(fqn.as_str()).filter(|i| callable(i)) {
                            return Some((i, Resolution::Scope));
                        }
                    }
                }
                None
            }
            Some(q) if SUPER_NAMES.contains(&q) => None,
            Some(q) if self.lang.self_names.contains(&q) || call.receiver.as_deref() == Some(q) => {
                let owner = call.owner.as_ref()?;
                let fqn = format!("{owner}.{name}");
                by_fqn.get(fqn.as_str()).filter(|i| callable(i)).map(|&i| (i, Resolution::Scope))
            }
            Some(q) => {
                // `Type.member()` / `Type::new()` for a type of this file.
                let ty = *types.get(q)?;
                let fqn = format!("{}.{name}", self.nodes[ty].fqn);
                by_fqn.get(fqn.as_str()).filter(|i| callable(i)).map(|&i| (i, Resolution::SameFile))
            }
        }
    }

    fn parent_index(&self, i: usize) -> Option<usize> {
        self.parents.get(i).copied().flatten()
    }
}

/// The enclosing definitions' names joined with `.` (as `[String]::join`, kept joined: every
/// definition's fqn starts with it).
#[derive(Default)]
struct Parts {
    joined: String,
    /// Where each part starts in `joined` (its separator included).
    starts: Vec<usize>,
}

impl Parts {
    fn push(&mut self, part: &str) {
        self.starts.push(self.joined.len());
        if self.starts.len() > 1 {
            self.joined.push('.');
        }
        self.joined.push_str(part);
    }

    fn pop(&mut self) {
        if let Some(start) = self.starts.pop() {
            self.joined.truncate(start);
        }
    }

    fn fqn_of(&self, name: &str) -> String {
        let mut fqn = String::with_capacity(self.joined.len() + 1 + name.len());
        fqn.push_str(&self.joined);
        if !fqn.is_empty() {
            fqn.push('.');
        }
        fqn.push_str(name);
        fqn
    }
}

/// As `src.lines().count()`.
fn line_count(src: &str) -> usize {
    let newlines = src.bytes().filter(|&b| b == b'\n').count();
    newlines + usize::from(!src.is_empty() && !src.ends_with('\n'))
}

/// `MAX_SIZE`, `PLANS`: upper case, digits and underscores only.
fn is_screaming(name: &str) -> bool {
    name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// The first type node of each name.
fn types_by_name(nodes: &[Node]) -> HashMap<&str, usize> {
    let mut types = HashMap::new();
    for (i, n) in nodes.iter().enumerate().filter(|(_, n)| n.kind.is_type()) {
        types.entry(n.name.as_str()).or_insert(i);
    }
    types
}

/// Qualifiers that reach the base type's members.
const SUPER_NAMES: &[&str] = &["super", "base", "parent"];

/// `self`-like qualifiers are normalised to `self` in hints so that resolution across files need
/// not know each language's spelling.
fn self_qualifier(q: Option<String>, lang: &GraphLang, receiver: Option<&str>) -> Option<String> {
    let q = q?;
    let (head, rest) = match q.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (q.as_str(), None),
    };
    let normal = if SUPER_NAMES.contains(&head) {
        "super"
    } else if lang.self_names.contains(&head) || receiver == Some(head) {
        "self"
    } else {
        return Some(q);
    };
    Some(match rest {
        Some(rest) => format!("{normal}.{rest}"),
        None => normal.to_string(),
    })
}

fn join_route(prefix: &str, route: &str) -> String {
    if route.is_empty() {
        return prefix.to_string();
    }
    format!("{}/{}", prefix.trim_end_matches('/'), route.trim_start_matches('/'))
}

/// Where the walk is among a node's children: what a visit asks the field of.
#[derive(Clone, Copy)]
enum At<'c, 'a> {
    /// At the cursor's node.
    Cursor(&'c tree_sitter::TreeCursor<'a>),
    /// At child `index` of a node (counting every child the cursor would visit).
    Child(TsNode<'a>, u32),
}

/// The children of a node the walk is in that it has not visited yet.
///
/// A cursor step costs about 600 instructions whatever it lands on (it climbs through the
/// grammar's hidden nodes to find the next sibling), while reading child `i` by index walks the
/// `i` children before it at a few dozen each: most nodes have a handful of children, so they
/// are read by index, and the few wide ones (a class body, a file) with a cursor. Either way the
/// walk stops after the last named child, without stepping over the closing tokens.
enum Frame<'a> {
    Indexed { parent: TsNode<'a>, next: u32, count: u32, named_left: usize },
    Cursor { cursor: tree_sitter::TreeCursor<'a>, started: bool, named_left: usize },
}

impl<'a> Frame<'a> {
    /// Children up to this many are read by index.
    const NARROW: u32 = 12;

    fn new(parent: TsNode<'a>, named: usize) -> Self {
        let count = parent.child_count();
        if count <= Self::NARROW {
            Frame::Indexed { parent, next: 0, count, named_left: named }
        } else {
            Frame::Cursor { cursor: parent.walk(), started: false, named_left: named }
        }
    }

    /// The next child and its flags, or `None` after the last named one.
    fn next(&mut self, table: &[u16], lang: &GraphLang) -> Option<(TsNode<'a>, u16)> {
        let (node, named_left) = match self {
            Frame::Indexed { parent, next, count, named_left } => {
                if *named_left == 0 || *next >= *count {
                    return None;
                }
                let node = parent.child(*next)?;
                *next += 1;
                (node, named_left)
            }
            Frame::Cursor { cursor, started, named_left } => {
                if *named_left == 0 {
                    return None;
                }
                let moved = if *started { cursor.goto_next_sibling() } else { cursor.goto_first_child() };
                *started = true;
                if !moved {
                    debug_assert!(false, "`named_child_count` counted a child the cursor does not reach");
                    return None;
                }
                (cursor.node(), named_left)
            }
        };
        let flags = flags_of(table, node, lang);
        if flags & KindFlags::NAMED != 0 {
            *named_left -= 1;
        }
        Some((node, flags))
    }

    /// Where the child [`Frame::next`] returned last is.
    fn at(&self) -> At<'_, 'a> {
        match self {
            Frame::Indexed { parent, next, .. } => At::Child(*parent, next.saturating_sub(1)),
            Frame::Cursor { cursor, .. } => At::Cursor(cursor),
        }
    }
}
