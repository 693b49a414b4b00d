//! A file's definitions: what [`SymbolTable::add`](super::SymbolTable::add) reads of its graph,
//! and nothing else, in a compact JSON of its own.
//!
//! A job's end builds the namespace's symbol table in every message it takes (a message cannot
//! hand a table to the next), then resolves a few pages of graphs against it. Read from the
//! stored graphs, that table costs a statement per page of graph JSON — the edges, signatures and
//! docs the table drops are most of a graph — so a namespace of enough pages spends a message's
//! whole statement budget before it resolves anything. Stored beside each graph (written with
//! it, so always of the same graph), the definitions are 4–7 % of its bytes on real code, and the
//! table is read in as small a part of the statements.
//!
//! What the table reads, and so what is kept (see [`SymbolTable`](super::SymbolTable)):
//! 1. the file's path, language and package (its module keys and package key come from them);
//! 2. each node's kind, name, fqn, declared type, whether its parent is the file's module node,
//!    and its id only when that is not [`node_id`] of the node (an id from an older build): the
//!    others are computed again;
//! 3. the `EXTENDS` / `IMPLEMENTS` edges, whole, and the imports resolving them can read.
//!
//! [`Definitions::graph`] gives back a graph that the table reads exactly as the file's own (the
//! same table, so the same edges and ranks: `resolve/paged_tests.rs` checks it on real code).
use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::node_id;
use super::resolve::type_imports;
use super::types::{Edge, EdgeKind, FileGraph, Import, Node, NodeKind};
use crate::lang::Language;

/// See the module docs. Field names are one letter: they are repeated in every stored row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Definitions {
    /// The format, first in the JSON ([`Definitions::JSON_PREFIX`]): a store reads definitions of
    /// another format as absent (and reads the graph instead).
    v: u32,
    #[serde(rename = "p")]
    path: String,
    #[serde(rename = "l")]
    language: Language,
    #[serde(rename = "k", default, skip_serializing_if = "Option::is_none")]
    package: Option<String>,
    #[serde(rename = "n")]
    nodes: Vec<Definition>,
    #[serde(rename = "t", default, skip_serializing_if = "Vec::is_empty")]
    typed: Vec<Edge>,
    #[serde(rename = "i", default, skip_serializing_if = "Vec::is_empty")]
    imports: Vec<Import>,
}

/// One node, as a JSON array: kind, name, fqn, 1 when its parent is the file's module node (else
/// 0), its declared type, its id when that is not [`node_id`] of the node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Definition(NodeKind, String, String, u8, Option<String>, Option<Arc<str>>);

/// Each node's ordinal: the how-manieth node with its kind and fqn in the file, from 0 (the last
/// part of [`node_id`]).
fn ordinals<'a>(nodes: impl Iterator<Item = (NodeKind, &'a str)>) -> Vec<u32> {
    let mut seen: HashMap<(NodeKind, &str), u32> = HashMap::new();
    nodes
        .map(|key| {
            let n = seen.entry(key).or_insert(0);
            *n += 1;
            *n - 1
        })
        .collect()
}

impl Definitions {
    /// The format written now.
    pub const VERSION: u32 = 1;
    /// How the JSON of this format starts (`v` is serialized first): a store tells the format from
    /// the first bytes, without parsing.
    pub const JSON_PREFIX: &'static str = "{\"v\":1,";

    /// What the symbol table reads of `file`.
    pub fn of(file: &FileGraph) -> Definitions {
        let module = file.nodes.first().map(|n| &*n.id);
        let ordinals = ordinals(file.nodes.iter().map(|n| (n.kind, n.fqn.as_str())));
        let nodes = file
            .nodes
            .iter()
            .zip(ordinals)
            .enumerate()
            .map(|(i, (node, ordinal))| {
                let top = i > 0 && node.parent.as_deref() == module;
                let own = *node_id(&file.path, node.kind, &node.fqn, ordinal) == *node.id;
                Definition(
                    node.kind,
                    node.name.clone(),
                    node.fqn.clone(),
                    u8::from(top),
                    node.declared_type.clone(),
                    (!own).then(|| node.id.clone()),
                )
            })
            .collect();
        let typed: Vec<Edge> = file
            .edges
            .iter()
            .filter(|e| matches!(e.kind, EdgeKind::Extends | EdgeKind::Implements))
            .cloned()
            .collect();
        let imports = type_imports(file, &typed);
        Definitions {
            v: Definitions::VERSION,
            path: file.path.clone(),
            language: file.language,
            package: file.package.clone(),
            nodes,
            typed,
            imports,
        }
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// A graph the symbol table reads as the file's own: its nodes with what the table reads (the
    /// parent of a top-level node is the module node; lines, signatures and docs are empty), its
    /// type edges and their imports, no other edge.
    pub fn graph(&self) -> FileGraph {
        let path: Arc<str> = Arc::from(self.path.as_str());
        let ordinals = ordinals(self.nodes.iter().map(|d| (d.0, d.2.as_str())));
        let mut nodes: Vec<Node> = Vec::with_capacity(self.nodes.len());
        for (Definition(kind, name, fqn, top, declared, odd), ordinal) in self.nodes.iter().zip(ordinals) {
            let id = odd.clone().unwrap_or_else(|| node_id(&path, *kind, fqn, ordinal));
            let parent = (*top != 0).then(|| nodes.first().map(|m| m.id.clone())).flatten();
            nodes.push(Node {
                id,
                kind: *kind,
                name: name.clone(),
                fqn: fqn.clone(),
                package: None,
                signature: None,
                doc: None,
                path: path.clone(),
                language: self.language,
                start_line: 0,
                end_line: 0,
                parent,
                route: None,
                http_method: None,
                declared_type: declared.clone(),
            });
        }
        FileGraph {
            path: self.path.clone(),
            language: self.language,
            package: self.package.clone(),
            nodes,
            edges: self.typed.clone(),
            imports: self.imports.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Hint, Resolution};

    fn node(path: &str, kind: NodeKind, fqn: &str, ordinal: u32, parent: Option<&Arc<str>>) -> Node {
        Node {
            id: node_id(path, kind, fqn, ordinal),
            kind,
            name: fqn.rsplit('.').next().unwrap_or(fqn).to_string(),
            fqn: fqn.to_string(),
            package: Some("shop".into()),
            signature: Some(format!("def {fqn}(self):")),
            doc: Some("A doc comment the table never reads.".into()),
            path: path.into(),
            language: Language::Python,
            start_line: 3,
            end_line: 9,
            parent: parent.cloned(),
            route: None,
            http_method: None,
            declared_type: None,
        }
    }

    fn edge(kind: EdgeKind, src: &Arc<str>, name: &str, qualifier: Option<&str>) -> Edge {
        Edge {
            kind,
            src: src.clone(),
            dst: None,
            dst_name: name.into(),
            confidence: 0.0,
            resolution: Resolution::External,
            path: "shop/models.py".into(),
            line: 4,
            hint: Some(Hint { name: name.into(), qualifier: qualifier.map(Into::into), owner: None }),
        }
    }

    fn import(module: &str, name: &str) -> Import {
        Import { module: module.into(), name: Some(name.into()), alias: None, wildcard: false, line: 1 }
    }

    /// A file with a module node, a class with two same-named methods (ordinals 0 and 1), a
    /// nested class, a field with a declared type, a node whose id is not `node_id`'s, a base
    /// class from an import, and calls and imports the table does not keep.
    fn file() -> FileGraph {
        let path = "shop/models.py";
        let module = node(path, NodeKind::Module, "shop.models", 0, None);
        let class = node(path, NodeKind::Class, "shop.models.Cart", 0, Some(&module.id));
        let first = node(path, NodeKind::Method, "shop.models.Cart.add", 0, Some(&class.id));
        let second = node(path, NodeKind::Method, "shop.models.Cart.add", 1, Some(&class.id));
        let inner = node(path, NodeKind::Class, "shop.models.Cart.Line", 0, Some(&class.id));
        let mut field = node(path, NodeKind::Field, "shop.models.Cart.store", 0, Some(&class.id));
        field.declared_type = Some("Store".into());
        let mut odd = node(path, NodeKind::Function, "shop.models.helper", 0, Some(&module.id));
        odd.id = Arc::from("0000-an-id-from-an-older-build");
        let edges = vec![
            edge(EdgeKind::Extends, &class.id, "Base", None),
            edge(EdgeKind::Calls, &first.id, "save", Some("self.store")),
            edge(EdgeKind::Imports, &module.id, "shop.base", None),
        ];
        FileGraph {
            path: path.into(),
            language: Language::Python,
            package: Some("shop".into()),
            nodes: vec![module, class, first, second, inner, field, odd],
            edges,
            imports: vec![
                import("shop.base", "Base"),
                import("shop.store", "Store"),
                import("json", "dumps"),
            ],
        }
    }

    #[test]
    fn the_graph_given_back_has_the_ids_parents_and_type_edges_the_table_reads() {
        let file = file();
        let back = Definitions::of(&file).graph();
        assert_eq!((&back.path, back.language, &back.package), (&file.path, file.language, &file.package));
        let ids = |g: &FileGraph| g.nodes.iter().map(|n| n.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&back), ids(&file), "ids computed again, the odd one kept");
        for (got, node) in back.nodes.iter().zip(&file.nodes) {
            assert_eq!((got.kind, &got.name, &got.fqn), (node.kind, &node.name, &node.fqn));
            assert_eq!(got.declared_type, node.declared_type);
            let top = |n: &Node| n.parent.as_deref() == Some(&*file.nodes[0].id);
            assert_eq!(top(got), top(node), "{}", node.fqn);
        }
        assert_eq!(back.edges, file.edges[..1], "only the type edge");
        assert_eq!(back.imports, [import("shop.base", "Base")], "only the import binding the base's name");
        // Read again, the graph given back gives the same definitions.
        assert_eq!(Definitions::of(&back), Definitions::of(&file));
    }

    #[test]
    fn definitions_start_with_their_format_and_are_a_small_part_of_the_graph() {
        let file = file();
        let json = serde_json::to_string(&Definitions::of(&file)).expect("definitions as JSON");
        assert!(json.starts_with(Definitions::JSON_PREFIX), "{json}");
        let parsed: Definitions = serde_json::from_str(&json).expect("parsed back");
        assert_eq!(parsed, Definitions::of(&file));
        let graph = serde_json::to_string(&file).expect("graph as JSON");
        assert!(json.len() * 3 < graph.len(), "{} B of definitions, {} B of graph", json.len(), graph.len());
    }
}
