//! What the syntax-aware chunker needs to know about one tree-sitter grammar. Each language
//! family lives in its own file under `lang/` and exposes one `Grammar` per language; adding a
//! language follows the template of the language registry (`crate::lang::registry`).
use tree_sitter::Node;

use crate::chunk::ChunkType;

/// A definition recognised by a grammar's [`Grammar::classify`].
#[derive(Debug, Clone)]
pub(crate) struct Def<'t> {
    pub chunk_type: ChunkType,
    /// The symbol name (`symbol_name`), when the definition has one.
    pub name: Option<String>,
    /// Overrides the enclosing definition as `parent_symbol` (Go methods name their receiver type,
    /// C++ `Foo::bar` names `Foo`).
    pub parent: Option<String>,
    /// The node that holds the definition's members (its body is searched for children when the
    /// definition must be split); often the classified node itself, or the node a wrapper wraps.
    pub node: Node<'t>,
}

/// How a node is treated by the chunker.
pub(crate) enum Role<'t> {
    /// A definition: its own chunk (or chunks, split at its members when too big).
    Def(Def<'t>),
    /// A doc comment, comment or attribute/decorator: goes with the definition directly below it.
    Prefix,
    /// A pure container (C preprocessor conditionals, `extern "C" { }`): always split into its
    /// members so that the definitions inside get chunks of their own.
    #[cfg_attr(not(any(feature = "lang-c", feature = "lang-cpp")), allow(dead_code))]
    Transparent,
    /// Anything else: plain code, merged with its neighbours.
    Code,
}

pub(crate) struct Grammar {
    pub language: fn() -> tree_sitter::Language,
    /// Role of a (non-zero-width) node; `src` is the text the tree was parsed from.
    pub classify: for<'t> fn(Node<'t>, &str) -> Role<'t>,
}

/// `node`'s text (empty when the span is not valid UTF-8 boundaries, which tree-sitter never
/// produces for `&str` input).
pub(crate) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// Text of the `name` field, if any.
pub(crate) fn field_text(node: Node<'_>, field: &str, src: &str) -> Option<String> {
    node.child_by_field_name(field).map(|n| text(n, src).to_string()).filter(|s| !s.is_empty())
}

/// A definition named by its `name` field.
pub(crate) fn named<'t>(chunk_type: ChunkType, node: Node<'t>, src: &str) -> Role<'t> {
    Role::Def(Def { chunk_type, name: field_text(node, "name", src), parent: None, node })
}

/// The first named child of `node` with kind `kind`.
pub(crate) fn child_of_kind<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut cursor = node.walk();
    let found = node.named_children(&mut cursor).find(|c| c.kind() == kind);
    found
}
