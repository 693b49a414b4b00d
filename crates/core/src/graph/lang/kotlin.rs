//! Kotlin: classes / interfaces / enums / objects (delegation specifiers → `EXTENDS`), functions
//! (methods in types), properties; `import`; `this` members and bare member calls.
use tree_sitter::Node;

use super::{decl, named, Decl, GraphLang, ModuleStyle, TypeRefs};
use crate::chunk::code::grammar::{child_of_kind, text};
use crate::graph::types::{EdgeKind, Import, NodeKind};

pub(crate) static KOTLIN: GraphLang = GraphLang {
    classify,
    decl_kinds: &["class_declaration", "object_declaration", "function_declaration", "property_declaration"],
    call_kinds: &["call_expression"],
    imports,
    import_kinds: &["import"],
    package,
    self_names: &["this", "super"],
    implicit_members: true,
    wrappers: &[],
    modules: ModuleStyle::Package,
    opaque: &[],
    types: TypeRefs {
        names: &[],
        candidates: &["identifier"],
        fields: &[],
        parents: &["user_type"],
        keywords: &[],
        screaming_values: false,
        unions: &[],
        builtins: &[
            "Any", "Boolean", "Byte", "Char", "Double", "Float", "Int", "Long", "Nothing", "Short", "String",
            "Unit",
        ],
    },
};

fn package(node: Node<'_>, src: &str) -> Option<String> {
    (node.kind() == "package_header").then(|| node.named_child(0).map(|n| text(n, src).to_string()))?
}

fn classify<'t>(node: Node<'t>, src: &str, parents: &[Node<'t>]) -> Option<Decl<'t>> {
    match node.kind() {
        "class_declaration" | "object_declaration" => {
            let mut kind = NodeKind::Class;
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                match child.kind() {
                    "interface" => kind = NodeKind::Interface,
                    "modifiers" if text(child, src).split_whitespace().any(|w| w == "enum") => {
                        kind = NodeKind::Enum
                    }
                    _ => {}
                }
            }
            let mut d = named(kind, node, src)?;
            d.body = child_of_kind(node, "class_body").or_else(|| child_of_kind(node, "enum_class_body"));
            if let Some(specs) = child_of_kind(node, "delegation_specifiers") {
                let mut cursor = specs.walk();
                for s in specs.named_children(&mut cursor) {
                    let t = text(s, src);
                    let base = t.split('(').next().unwrap_or(t).trim().to_string();
                    d.bases.push((EdgeKind::Extends, base));
                }
            }
            Some(d)
        }
        "function_declaration" => {
            let mut d = named(NodeKind::Function, node, src)?;
            d.body = child_of_kind(node, "function_body");
            Some(d)
        }
        "property_declaration"
            if parents.last().is_some_and(|p| matches!(p.kind(), "class_body" | "source_file")) =>
        {
            let var = child_of_kind(node, "variable_declaration")?;
            let name = var.named_child(0).map(|n| text(n, src).to_string())?;
            let constant = child_of_kind(node, "modifiers").is_some_and(|m| text(m, src).contains("const"));
            Some(decl(if constant { NodeKind::Constant } else { NodeKind::Field }, name, None))
        }
        _ => None,
    }
}

fn imports(node: Node<'_>, src: &str, line: u32, out: &mut Vec<Import>) -> bool {
    if node.kind() != "import" {
        return false;
    }
    let raw = text(node, src).trim_start_matches("import").trim();
    let (path, alias) = match raw.split_once(" as ") {
        Some((p, a)) => (p.trim(), Some(a.trim().to_string())),
        None => (raw, None),
    };
    if let Some(module) = path.strip_suffix(".*") {
        out.push(Import { module: module.to_string(), name: None, alias: None, wildcard: true, line });
    } else if let Some((module, name)) = path.rsplit_once('.') {
        out.push(Import {
            module: module.to_string(),
            name: Some(name.to_string()),
            alias,
            wildcard: false,
            line,
        });
    }
    true
}
