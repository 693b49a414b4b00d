//! C#: namespaces, classes / records, structs, interfaces, enums, methods and constructors,
//! properties and fields; base lists (→ `EXTENDS`); `using` (every type of the namespace).
use tree_sitter::Node;

use super::{child_texts, field_text, named, typed_field, Decl, GraphLang, ModuleStyle, TypeRefs};
use crate::chunk::code::grammar::{child_of_kind, text};
use crate::graph::types::{EdgeKind, Import, NodeKind};

pub(crate) static CSHARP: GraphLang = GraphLang {
    classify,
    decl_kinds: &[
        "class_declaration",
        "record_declaration",
        "struct_declaration",
        "record_struct_declaration",
        "interface_declaration",
        "enum_declaration",
        "method_declaration",
        "constructor_declaration",
        "local_function_statement",
        "property_declaration",
        "field_declaration",
        "namespace_declaration",
    ],
    call_kinds: &["invocation_expression", "object_creation_expression"],
    imports,
    import_kinds: &["using_directive"],
    package,
    self_names: &["this", "base"],
    implicit_members: true,
    wrappers: &[],
    modules: ModuleStyle::Package,
    opaque: &[],
    // Types are plain names in C#: a `type` / `returns` child, a generic argument, an array or
    // nullable element.
    types: TypeRefs {
        names: &[],
        candidates: &["identifier", "generic_name", "qualified_name"],
        fields: &["type", "returns"],
        parents: &["type_argument_list", "base_list", "nullable_type", "array_type"],
        keywords: &[],
        screaming_values: false,
        unions: &[],
        builtins: &[],
    },
};

fn package(node: Node<'_>, src: &str) -> Option<String> {
    (node.kind() == "file_scoped_namespace_declaration").then(|| field_text(node, "name", src))?
}

fn classify<'t>(node: Node<'t>, src: &str, _: &[Node<'t>]) -> Option<Decl<'t>> {
    let kind = match node.kind() {
        "class_declaration" | "record_declaration" => NodeKind::Class,
        "struct_declaration" | "record_struct_declaration" => NodeKind::Struct,
        "interface_declaration" => NodeKind::Interface,
        "enum_declaration" => NodeKind::Enum,
        "method_declaration" | "constructor_declaration" | "local_function_statement" => {
            return named(NodeKind::Method, node, src);
        }
        "property_declaration" => {
            return Some(typed_field(field_text(node, "name", src)?, node, "type", src))
        }
        "field_declaration" => {
            let var = child_of_kind(node, "variable_declaration")?;
            let declarator = child_of_kind(var, "variable_declarator")?;
            let name = field_text(declarator, "name", src)?;
            let constant = text(node, src).split('=').next().is_some_and(|h| h.contains("const "));
            let mut d = typed_field(name, var, "type", src);
            if constant {
                d.kind = NodeKind::Constant;
            }
            return Some(d);
        }
        "namespace_declaration" => return named(NodeKind::Module, node, src),
        _ => return None,
    };
    let mut d = named(kind, node, src)?;
    if let Some(bases) = child_of_kind(node, "base_list") {
        for b in child_texts(bases, None, src) {
            // By convention `IName` is an interface.
            let is_interface = b.len() > 1 && b.starts_with('I') && b[1..].starts_with(char::is_uppercase);
            d.bases.push((if is_interface { EdgeKind::Implements } else { EdgeKind::Extends }, b));
        }
    }
    Some(d)
}

fn imports(node: Node<'_>, src: &str, line: u32, out: &mut Vec<Import>) -> bool {
    if node.kind() != "using_directive" {
        return false;
    }
    if let Some(name) = node.named_child((node.named_child_count() as u32).saturating_sub(1)) {
        out.push(Import {
            module: text(name, src).to_string(),
            name: None,
            alias: None,
            wildcard: true,
            line,
        });
    }
    true
}
