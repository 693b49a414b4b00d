//! What graph extraction needs to know about each language: one file per language family, each
//! exposing a [`GraphLang`] per language behind its cargo feature. Which rules a language uses is
//! said in the language registry, [`crate::lang::registry`], with the template for adding a
//! language (the rules' fields are described there and on [`GraphLang`]).
use std::cell::RefCell;
use std::num::NonZeroU16 as FieldId;

use tree_sitter::Node;

pub(crate) use super::modules::ModuleStyle;
use super::types::{EdgeKind, Import, NodeKind};
use crate::chunk::code::grammar::text;
use crate::lang::{registry, Language};

crate::lang::registry::family_modules!();

/// A definition found by [`GraphLang::classify`].
pub(crate) struct Decl<'t> {
    pub kind: NodeKind,
    pub name: String,
    /// The body (signature = the text before it); `None` for body-less declarations.
    pub body: Option<Node<'t>>,
    /// The type this member belongs to when it is declared outside it (Go receivers, C++
    /// `Foo::bar`, Rust `impl Foo`), as a name relative to the package.
    pub owner: Option<String>,
    /// The receiver variable (Go `func (s *Server)`): calls through it are `self` calls.
    pub receiver: Option<String>,
    /// `EXTENDS` / `IMPLEMENTS` targets, as written.
    pub bases: Vec<(EdgeKind, String)>,
    /// A scope without a node of its own (a Rust `impl` block): members get `owner`.
    pub scope_only: bool,
    /// A field's declared type as written (`store.Store`, `List<Item>`): calls through the field
    /// are resolved on that type.
    pub type_ref: Option<String>,
}

/// `node`'s child in field `name`. `child_by_field_name` looks the name up among all the
/// grammar's field names (string compares) on every call; the ids are cached per grammar here.
pub(crate) fn field<'t>(node: Node<'t>, name: &'static str) -> Option<Node<'t>> {
    thread_local! {
        static IDS: RefCell<Vec<(tree_sitter::Language, &'static str, Option<FieldId>)>> =
            const { RefCell::new(Vec::new()) };
    }
    let language = node.language();
    let id = IDS.with(|ids| {
        let mut ids = ids.borrow_mut();
        // By the name's address first: each call site passes its own literal, so the string
        // compares of a scan by content are paid once per call site, not once per call.
        let same = |l: &tree_sitter::Language| *l == *language;
        if let Some((_, _, id)) = ids.iter().find(|(l, n, _)| std::ptr::eq(*n, name) && same(l)) {
            return *id;
        }
        if let Some(&(_, _, id)) = ids.iter().find(|(l, n, _)| *n == name && same(l)) {
            ids.push(((*language).clone(), name, id));
            return id;
        }
        let id = language.field_id_for_name(name);
        ids.push(((*language).clone(), name, id));
        id
    });
    node.child_by_field_id(id?.get())
}

/// The text of `node`'s child in field `name`, if not empty.
pub(crate) fn field_text(node: Node<'_>, name: &'static str, src: &str) -> Option<String> {
    field(node, name).map(|n| text(n, src).to_string()).filter(|s| !s.is_empty())
}

/// A plain definition named `name`.
pub(crate) fn decl<'t>(kind: NodeKind, name: String, body: Option<Node<'t>>) -> Decl<'t> {
    Decl {
        kind,
        name,
        body,
        owner: None,
        receiver: None,
        bases: Vec::new(),
        scope_only: false,
        type_ref: None,
    }
}

/// A definition named by its `name` field with its `body` field as body.
pub(crate) fn named<'t>(kind: NodeKind, node: Node<'t>, src: &str) -> Option<Decl<'t>> {
    let name = field_text(node, "name", src)?;
    Some(decl(kind, name, field(node, "body")))
}

/// A field named `name` whose declared type is the text of `node`'s `field` (if any).
pub(crate) fn typed_field<'t>(name: String, node: Node<'t>, field_name: &'static str, src: &str) -> Decl<'t> {
    let mut d = decl(NodeKind::Field, name, None);
    d.type_ref = field(node, field_name).map(|t| text(t, src).trim_start_matches(':').trim().to_string());
    d
}

/// The text of every named child of `node` (optionally only of kind `kind`).
#[cfg(any(feature = "lang-java", feature = "lang-csharp", feature = "lang-php"))]
pub(crate) fn child_texts(node: Node<'_>, kind: Option<&str>, src: &str) -> Vec<String> {
    let mut cursor = node.walk();
    let out = node
        .named_children(&mut cursor)
        .filter(|c| kind.is_none_or(|k| c.kind() == k))
        .map(|c| text(c, src).to_string())
        .collect();
    out
}

pub(crate) struct GraphLang {
    /// `parents`: the node's ancestors, root first (`Node::parent` walks down from the root on
    /// every call).
    pub classify: for<'t> fn(Node<'t>, &str, &[Node<'t>]) -> Option<Decl<'t>>,
    /// Every kind `classify` may accept: the walk calls it on these kinds only (checked on every
    /// node in debug builds).
    pub decl_kinds: &'static [&'static str],
    pub call_kinds: &'static [&'static str],
    pub imports: fn(Node<'_>, &str, u32, &mut Vec<Import>) -> bool,
    /// Every kind `imports` may accept, as `decl_kinds`.
    pub import_kinds: &'static [&'static str],
    pub package: fn(Node<'_>, &str) -> Option<String>,
    pub self_names: &'static [&'static str],
    pub implicit_members: bool,
    pub wrappers: &'static [&'static str],
    pub modules: ModuleStyle,
    /// Kinds whose subtrees hold nothing the rules read (no definition, call, import, type name
    /// or comment below them): the walk does not enter them. Only a speed-up, never needed.
    pub opaque: &'static [&'static str],
    pub types: TypeRefs,
}

/// Where a language writes type names (for `REFERENCES` edges: parameter, return, field and
/// variable types, `new X`, generic arguments, annotations).
pub(crate) struct TypeRefs {
    /// Kinds that name a type wherever they appear (`type_identifier`), except as the `name` of
    /// the definition they belong to. Not walked into.
    pub names: &'static [&'static str],
    /// Kinds that name a type only in a type position: as a child in one of `fields`, or under
    /// one of `parents` (C# and Python spell types as plain identifiers). Walked into.
    pub candidates: &'static [&'static str],
    pub fields: &'static [&'static str],
    pub parents: &'static [&'static str],
    /// Tokens after which a candidate kind names a type (PHP `$x instanceof Foo`).
    pub keywords: &'static [&'static str],
    /// SCREAMING_CASE names are values, not types (Ruby constants: `PLANS.fetch(…)`).
    pub screaming_values: bool,
    /// Kinds that keep a type position for their children (`X | None` in a Python hint).
    pub unions: &'static [&'static str],
    /// Built-in types spelled like names (`string` in Go, `int` in Python): never an edge.
    pub builtins: &'static [&'static str],
}

pub(crate) fn no_package(_: Node<'_>, _: &str) -> Option<String> {
    None
}

/// The graph rules for `language`, when its grammar is compiled in.
pub(crate) fn graph_lang(language: Language) -> Option<&'static GraphLang> {
    registry::entry(language).graph
}
