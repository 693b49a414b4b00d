//! The graph's data: nodes (symbols), edges, and what one file contributes before cross-file
//! resolution. Field names are the wire names (camelCase) used by the CLI and the worker.
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::lang::Language;

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NodeKind {
    /// A file, or a module / namespace block inside one.
    Module,
    Package,
    Class,
    Interface,
    Enum,
    Struct,
    Trait,
    Type,
    Method,
    Function,
    Field,
    Constant,
    /// An HTTP handler (`route` and `httpMethod` set).
    Endpoint,
}

impl NodeKind {
    pub const ALL: [NodeKind; 13] = [
        NodeKind::Module,
        NodeKind::Package,
        NodeKind::Class,
        NodeKind::Interface,
        NodeKind::Enum,
        NodeKind::Struct,
        NodeKind::Trait,
        NodeKind::Type,
        NodeKind::Method,
        NodeKind::Function,
        NodeKind::Field,
        NodeKind::Constant,
        NodeKind::Endpoint,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Module => "MODULE",
            NodeKind::Package => "PACKAGE",
            NodeKind::Class => "CLASS",
            NodeKind::Interface => "INTERFACE",
            NodeKind::Enum => "ENUM",
            NodeKind::Struct => "STRUCT",
            NodeKind::Trait => "TRAIT",
            NodeKind::Type => "TYPE",
            NodeKind::Method => "METHOD",
            NodeKind::Function => "FUNCTION",
            NodeKind::Field => "FIELD",
            NodeKind::Constant => "CONSTANT",
            NodeKind::Endpoint => "ENDPOINT",
        }
    }

    /// Case-insensitive parse (`"method"`, `"METHOD"`); `None` for unknown kinds.
    pub fn parse(raw: &str) -> Option<NodeKind> {
        NodeKind::ALL.into_iter().find(|k| k.as_str().eq_ignore_ascii_case(raw.trim()))
    }

    /// Whether calls can land on it (functions, methods, handlers, and types for constructors).
    pub fn is_callable(self) -> bool {
        matches!(
            self,
            NodeKind::Function
                | NodeKind::Method
                | NodeKind::Endpoint
                | NodeKind::Class
                | NodeKind::Struct
                | NodeKind::Enum
        )
    }

    /// Whether it holds members (methods, fields).
    pub fn is_type(self) -> bool {
        matches!(
            self,
            NodeKind::Class
                | NodeKind::Interface
                | NodeKind::Enum
                | NodeKind::Struct
                | NodeKind::Trait
                | NodeKind::Type
        )
    }

    /// Whether it is code that runs (a call inside it is attributed to it).
    pub fn is_body(self) -> bool {
        matches!(self, NodeKind::Function | NodeKind::Method | NodeKind::Endpoint)
    }
}

/// What an edge says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EdgeKind {
    Contains,
    Calls,
    Imports,
    Extends,
    Implements,
    References,
}

impl EdgeKind {
    pub const ALL: [EdgeKind; 6] = [
        EdgeKind::Contains,
        EdgeKind::Calls,
        EdgeKind::Imports,
        EdgeKind::Extends,
        EdgeKind::Implements,
        EdgeKind::References,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Contains => "CONTAINS",
            EdgeKind::Calls => "CALLS",
            EdgeKind::Imports => "IMPORTS",
            EdgeKind::Extends => "EXTENDS",
            EdgeKind::Implements => "IMPLEMENTS",
            EdgeKind::References => "REFERENCES",
        }
    }
}

/// How an edge's target was found, in the order resolution tries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Resolution {
    /// Structural (CONTAINS): certain.
    Syntax,
    /// A name in an enclosing scope, or a member through `self` / `this` / the receiver.
    Scope,
    /// A top-level name of the same file.
    SameFile,
    /// Followed the file's imports (relative paths, packages, modules).
    Import,
    /// Another file of the same package / namespace / directory.
    SamePackage,
    /// The only symbol with that name in the whole project.
    UniqueName,
    /// Not found in the project (a library, a builtin, or a dynamic call): `dst` is null.
    External,
}

impl Resolution {
    /// The confidence an edge resolved this way gets.
    pub fn confidence(self) -> f32 {
        match self {
            Resolution::Syntax => 1.0,
            Resolution::Scope => 0.95,
            Resolution::SameFile => 0.9,
            Resolution::Import => 0.85,
            Resolution::SamePackage => 0.8,
            Resolution::UniqueName => 0.5,
            Resolution::External => 0.0,
        }
    }
}

/// A symbol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    /// BLAKE3 of path + kind + fqn + ordinal (see [`crate::graph::node_id`]); shared with the
    /// edges and children that name it.
    pub id: Arc<str>,
    pub kind: NodeKind,
    pub name: String,
    /// Package / module parts, enclosing types and the name, joined with `.`.
    pub fqn: String,
    pub package: Option<Arc<str>>,
    /// The declaration without its body, whitespace collapsed.
    pub signature: Option<String>,
    /// The doc comment (markers stripped), or a Python docstring.
    pub doc: Option<String>,
    /// The file (shared by every node and edge of it).
    pub path: Arc<str>,
    pub language: Language,
    pub start_line: u32,
    pub end_line: u32,
    /// The enclosing node's id (`None` only for a file's module node).
    pub parent: Option<Arc<str>>,
    /// `ENDPOINT` only: the route as written (`/users/{id}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    /// `ENDPOINT` only: `GET`, `POST`, … or `ANY`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_method: Option<String>,
    /// `FIELD` only: the declared type as written, when the language states it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_type: Option<String>,
}

/// A relation between two nodes; `dst` is `None` for an external (unresolved) target, which is
/// then known by `dst_name` only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Edge {
    pub kind: EdgeKind,
    pub src: Arc<str>,
    pub dst: Option<Arc<str>>,
    /// The target's name as written at the site (`helper`, `self.save`, `os.path.join`, a module).
    pub dst_name: String,
    pub confidence: f32,
    pub resolution: Resolution,
    /// File of the site.
    pub path: Arc<str>,
    /// 1-based line of the site (call site, import, declaration).
    pub line: u32,
    /// What resolution needs beyond the name (kept so that a store can re-resolve later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<Hint>,
}

/// The context of an unresolved reference, kept until cross-file resolution.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hint {
    /// The callee's simple name.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// What the name was reached through (`self`, `utils`, `Foo`, `a.b`), `?` for an expression.
    pub qualifier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// fqn of the type whose member `self`/`this` is (the enclosing type or receiver type).
    pub owner: Option<Arc<str>>,
}

/// An import statement's binding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Import {
    /// The module as written (`./utils`, `app.models`, `crate::db`, `com.x`, `fmt`).
    pub module: String,
    /// The imported symbol, when one is named (`from m import name`, `import com.x.Name`).
    pub name: Option<String>,
    /// The local name it is bound to when it differs (`as` aliases).
    pub alias: Option<String>,
    /// `*` / `using` / `#include`: every top-level name of the module becomes visible.
    pub wildcard: bool,
    pub line: u32,
}

impl Import {
    /// The name this import binds in the file, if it binds one.
    pub fn local(&self) -> Option<&str> {
        if self.wildcard {
            return None;
        }
        self.alias
            .as_deref()
            .or(self.name.as_deref())
            .or_else(|| self.module.rsplit(['.', '/', ':', '\\']).find(|s| !s.is_empty()))
    }
}

/// One file's part of the graph: its nodes (the first is the file's module node), the edges that
/// start in it, and its imports. Produced by extraction (pure, per file); [`crate::graph::resolve`]
/// then links edges across files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileGraph {
    pub path: String,
    pub language: Language,
    pub package: Option<String>,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub imports: Vec<Import>,
}
