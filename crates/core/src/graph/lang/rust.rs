//! Rust: functions (methods inside `impl` / `trait`), structs, enums, traits (supertraits →
//! `EXTENDS`), type aliases, consts / statics, fields, inline `mod` blocks; `impl Trait for T`
//! → `IMPLEMENTS`; `use` trees; `self` / `Self` members.
use tree_sitter::Node;

use super::{
    decl, field, field_text, named, no_package, typed_field, Decl, GraphLang, ModuleStyle, TypeRefs,
};
use crate::chunk::code::grammar::text;
use crate::graph::types::{EdgeKind, Import, NodeKind};

pub(crate) static RUST: GraphLang = GraphLang {
    classify,
    decl_kinds: &[
        "function_item",
        "function_signature_item",
        "struct_item",
        "union_item",
        "enum_item",
        "trait_item",
        "type_item",
        "const_item",
        "static_item",
        "field_declaration",
        "mod_item",
        "impl_item",
    ],
    call_kinds: &["call_expression"],
    imports,
    import_kinds: &["use_declaration"],
    package: no_package,
    self_names: &["self", "Self"],
    implicit_members: false,
    wrappers: &[],
    modules: ModuleStyle::Rust,
    opaque: &[],
    types: TypeRefs {
        names: &["type_identifier", "scoped_type_identifier"],
        candidates: &[],
        fields: &[],
        parents: &[],
        keywords: &[],
        screaming_values: false,
        unions: &[],
        builtins: &["Self"],
    },
};

fn base_type(t: Node<'_>, src: &str) -> String {
    let base = field(t, "type").filter(|_| t.kind() == "generic_type").unwrap_or(t);
    text(base, src).to_string()
}

fn classify<'t>(node: Node<'t>, src: &str, _: &[Node<'t>]) -> Option<Decl<'t>> {
    match node.kind() {
        "function_item" | "function_signature_item" => named(NodeKind::Function, node, src),
        "struct_item" | "union_item" => named(NodeKind::Struct, node, src),
        "enum_item" => named(NodeKind::Enum, node, src),
        "trait_item" => {
            let mut d = named(NodeKind::Trait, node, src)?;
            if let Some(bounds) = field(node, "bounds") {
                let mut cursor = bounds.walk();
                for b in bounds.named_children(&mut cursor) {
                    if !b.kind().contains("lifetime") {
                        d.bases.push((EdgeKind::Extends, base_type(b, src)));
                    }
                }
            }
            Some(d)
        }
        "type_item" => named(NodeKind::Type, node, src),
        "const_item" | "static_item" => named(NodeKind::Constant, node, src),
        "field_declaration" => {
            let name = field_text(node, "name", src)?;
            Some(typed_field(name, node, "type", src))
        }
        "mod_item" if field(node, "body").is_some() => named(NodeKind::Module, node, src),
        "impl_item" => {
            let ty = field(node, "type")?;
            let mut d = decl(NodeKind::Type, base_type(ty, src), field(node, "body"));
            d.owner = Some(d.name.clone());
            d.scope_only = true;
            if let Some(tr) = field(node, "trait") {
                d.bases.push((EdgeKind::Implements, base_type(tr, src)));
            }
            Some(d)
        }
        _ => None,
    }
}

fn imports(node: Node<'_>, src: &str, line: u32, out: &mut Vec<Import>) -> bool {
    if node.kind() != "use_declaration" {
        return false;
    }
    if let Some(arg) = field(node, "argument") {
        use_tree(arg, "", src, line, out);
    }
    true
}

/// Flattens a use tree: `a::{b, c::d as e, f::*}`.
fn use_tree(node: Node<'_>, prefix: &str, src: &str, line: u32, out: &mut Vec<Import>) {
    let join = |p: &str, s: &str| if p.is_empty() { s.to_string() } else { format!("{p}::{s}") };
    match node.kind() {
        "scoped_use_list" => {
            let path = field(node, "path").map(|p| text(p, src)).unwrap_or("");
            let prefix = join(prefix, path);
            if let Some(list) = field(node, "list") {
                use_tree(list, &prefix, src, line, out);
            }
        }
        "use_list" => {
            let mut cursor = node.walk();
            for c in node.named_children(&mut cursor) {
                use_tree(c, prefix, src, line, out);
            }
        }
        "use_as_clause" => {
            let path = field(node, "path").map(|p| text(p, src)).unwrap_or("");
            let alias = field_text(node, "alias", src);
            push_path(&join(prefix, path), alias, false, line, out);
        }
        "use_wildcard" => {
            let path = text(node, src).trim_end_matches("::*").trim_end_matches('*');
            push_path(&format!("{}::_", join(prefix, path)), None, true, line, out);
        }
        _ => push_path(&join(prefix, text(node, src)), None, false, line, out),
    }
}

fn push_path(full: &str, alias: Option<String>, wildcard: bool, line: u32, out: &mut Vec<Import>) {
    let (module, name) = match full.rsplit_once("::") {
        Some((m, n)) => (m.to_string(), n.to_string()),
        None => (String::new(), full.to_string()),
    };
    if wildcard {
        out.push(Import { module, name: None, alias: None, wildcard: true, line });
    } else if name == "self" {
        out.push(Import { module, name: None, alias, wildcard: false, line });
    } else {
        out.push(Import { module, name: Some(name), alias, wildcard: false, line });
    }
}
