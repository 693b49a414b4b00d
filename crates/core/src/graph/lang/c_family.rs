//! C and C++: functions (`Foo::bar` definitions are members of `Foo`), structs / classes /
//! unions (C++ bases → `EXTENDS`), enums, typedefs, namespaces, fields; `#include "…"`.
use tree_sitter::Node;

use super::{decl, field, field_text, named, no_package, Decl, GraphLang, ModuleStyle, TypeRefs};
use crate::chunk::code::grammar::{child_of_kind, text};
use crate::graph::types::{EdgeKind, Import, NodeKind};

pub(crate) static C_FAMILY: GraphLang = GraphLang {
    classify,
    decl_kinds: &[
        "function_definition",
        "struct_specifier",
        "class_specifier",
        "union_specifier",
        "enum_specifier",
        "type_definition",
        "namespace_definition",
        "field_declaration",
    ],
    call_kinds: &["call_expression", "new_expression"],
    imports,
    import_kinds: &["preproc_include"],
    package: no_package,
    self_names: &["this"],
    implicit_members: true,
    wrappers: &["template_declaration"],
    modules: ModuleStyle::Relative,
    opaque: &[],
    types: TypeRefs {
        names: &["type_identifier"],
        candidates: &[],
        fields: &[],
        parents: &[],
        keywords: &[],
        screaming_values: false,
        unions: &[],
        builtins: &[],
    },
};

/// The declarator's name: through pointers, references, function declarators.
fn declarator_name(mut node: Node<'_>, src: &str) -> Option<(String, Option<String>)> {
    loop {
        match node.kind() {
            "identifier" | "field_identifier" | "type_identifier" | "destructor_name" | "operator_name" => {
                return Some((text(node, src).to_string(), None));
            }
            "qualified_identifier" => {
                let scope = field(node, "scope").map(|s| text(s, src).to_string());
                let (name, _) = declarator_name(field(node, "name")?, src)?;
                return Some((name, scope));
            }
            _ => node = field(node, "declarator")?,
        }
    }
}

fn classify<'t>(node: Node<'t>, src: &str, _: &[Node<'t>]) -> Option<Decl<'t>> {
    match node.kind() {
        "function_definition" => {
            let (name, owner) = declarator_name(field(node, "declarator")?, src)?;
            let mut d = decl(NodeKind::Function, name, field(node, "body"));
            d.owner = owner.map(|o| o.replace("::", "."));
            Some(d)
        }
        "struct_specifier" | "class_specifier" | "union_specifier" => {
            field(node, "body")?;
            let kind = if node.kind() == "class_specifier" { NodeKind::Class } else { NodeKind::Struct };
            let mut d = named(kind, node, src)?;
            if let Some(bases) = child_of_kind(node, "base_class_clause") {
                let mut cursor = bases.walk();
                for b in bases.named_children(&mut cursor) {
                    if b.kind() != "access_specifier" {
                        d.bases.push((EdgeKind::Extends, text(b, src).to_string()));
                    }
                }
            }
            Some(d)
        }
        "enum_specifier" => {
            field(node, "body")?;
            named(NodeKind::Enum, node, src)
        }
        "type_definition" => {
            let (name, _) = declarator_name(field(node, "declarator")?, src)?;
            Some(decl(NodeKind::Type, name, None))
        }
        "namespace_definition" => named(NodeKind::Module, node, src),
        "field_declaration" => {
            let declarator = field(node, "declarator")?;
            let (name, _) = declarator_name(declarator, src)?;
            let kind =
                if declarator.kind() == "function_declarator" { NodeKind::Method } else { NodeKind::Field };
            Some(decl(kind, name, None))
        }
        _ => None,
    }
}

fn imports(node: Node<'_>, src: &str, line: u32, out: &mut Vec<Import>) -> bool {
    if node.kind() != "preproc_include" {
        return false;
    }
    if let Some(path) = field_text(node, "path", src) {
        if path.starts_with('"') {
            out.push(Import {
                module: path.trim_matches('"').to_string(),
                name: None,
                alias: None,
                wildcard: true,
                line,
            });
        }
    }
    true
}
