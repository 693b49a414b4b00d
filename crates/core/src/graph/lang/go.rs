//! Go: functions, methods (owner = receiver type, receiver variable = `self`), struct /
//! interface / other types, struct fields, constants; `import` specs (a package = a directory).
use tree_sitter::Node;

use super::{decl, field, field_text, named, typed_field, Decl, GraphLang, ModuleStyle, TypeRefs};
use crate::chunk::code::grammar::{child_of_kind, text};
use crate::graph::types::{EdgeKind, Import, NodeKind};

pub(crate) static GO: GraphLang = GraphLang {
    classify,
    decl_kinds: &[
        "function_declaration",
        "method_declaration",
        "type_spec",
        "type_alias",
        "field_declaration",
        "method_elem",
        "method_spec",
        "const_spec",
    ],
    call_kinds: &["call_expression"],
    imports,
    import_kinds: &["import_declaration"],
    package,
    self_names: &[],
    implicit_members: false,
    wrappers: &["type_declaration"],
    modules: ModuleStyle::Go,
    opaque: &[],
    types: TypeRefs {
        names: &["type_identifier", "qualified_type"],
        candidates: &[],
        fields: &[],
        parents: &[],
        keywords: &[],
        screaming_values: false,
        unions: &[],
        builtins: &[
            "any",
            "bool",
            "byte",
            "comparable",
            "complex64",
            "complex128",
            "error",
            "float32",
            "float64",
            "int",
            "int8",
            "int16",
            "int32",
            "int64",
            "rune",
            "string",
            "uint",
            "uint8",
            "uint16",
            "uint32",
            "uint64",
            "uintptr",
        ],
    },
};

fn package(node: Node<'_>, src: &str) -> Option<String> {
    (node.kind() == "package_clause").then(|| node.named_child(0).map(|n| text(n, src).to_string()))?
}

fn classify<'t>(node: Node<'t>, src: &str, _: &[Node<'t>]) -> Option<Decl<'t>> {
    match node.kind() {
        "function_declaration" => named(NodeKind::Function, node, src),
        "method_declaration" => {
            let mut d = named(NodeKind::Method, node, src)?;
            let (ty, var) = receiver(node, src)?;
            d.owner = Some(ty);
            d.receiver = var;
            Some(d)
        }
        "type_spec" | "type_alias" => {
            let name = field_text(node, "name", src)?;
            let ty = field(node, "type");
            let kind = match ty.map(|t| t.kind()) {
                Some("struct_type") if node.kind() == "type_spec" => NodeKind::Struct,
                Some("interface_type") if node.kind() == "type_spec" => NodeKind::Interface,
                _ => NodeKind::Type,
            };
            let mut d = decl(kind, name, ty);
            // Embedded types: the struct / interface extends them.
            if let Some(t) = ty {
                let list = child_of_kind(t, "field_declaration_list").unwrap_or(t);
                let mut cursor = list.walk();
                for f in list.named_children(&mut cursor) {
                    let embedded = match f.kind() {
                        "field_declaration" if field(f, "name").is_none() => field(f, "type"),
                        "type_elem" => f.named_child(0),
                        _ => None,
                    };
                    if let Some(e) = embedded {
                        d.bases.push((EdgeKind::Extends, text(e, src).trim_start_matches('*').to_string()));
                    }
                }
            }
            Some(d)
        }
        "field_declaration" => {
            let name = field_text(node, "name", src)?;
            Some(typed_field(name, node, "type", src))
        }
        "method_elem" | "method_spec" => {
            let name = field_text(node, "name", src)?;
            Some(decl(NodeKind::Method, name, None))
        }
        "const_spec" => {
            let name = field_text(node, "name", src)?;
            Some(decl(NodeKind::Constant, name, None))
        }
        _ => None,
    }
}

/// `func (p *Point[T]) M()` → (`Point`, `p`).
fn receiver(node: Node<'_>, src: &str) -> Option<(String, Option<String>)> {
    let receiver = field(node, "receiver")?;
    let param = child_of_kind(receiver, "parameter_declaration")?;
    let var = field_text(param, "name", src);
    let mut ty = field(param, "type")?;
    loop {
        match ty.kind() {
            "pointer_type" => ty = ty.named_child(0)?,
            "generic_type" => ty = field(ty, "type")?,
            _ => return Some((text(ty, src).to_string(), var)),
        }
    }
}

fn imports(node: Node<'_>, src: &str, line: u32, out: &mut Vec<Import>) -> bool {
    if node.kind() != "import_declaration" {
        return false;
    }
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        let mut cursor = n.walk();
        for c in n.named_children(&mut cursor) {
            match c.kind() {
                "import_spec" => {
                    let module =
                        field_text(c, "path", src).unwrap_or_default().trim_matches(['"', '`']).to_string();
                    let alias = field_text(c, "name", src);
                    let wildcard = alias.as_deref() == Some(".");
                    let alias = alias.filter(|a| a != "." && a != "_");
                    out.push(Import {
                        module,
                        name: None,
                        alias,
                        wildcard,
                        line: c.start_position().row as u32 + 1,
                    });
                }
                "import_spec_list" => stack.push(c),
                _ => {}
            }
        }
    }
    let _ = line;
    true
}
