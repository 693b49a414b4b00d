//! Java: classes / records, interfaces, enums, methods and constructors, fields (`static final`
//! → constants); `extends` / `implements`; `import` (`.*` = every type of the package).
use tree_sitter::Node;

use super::{child_texts, field, named, typed_field, Decl, GraphLang, ModuleStyle, TypeRefs};
use crate::chunk::code::grammar::{child_of_kind, text};
use crate::graph::types::{EdgeKind, Import, NodeKind};

pub(crate) static JAVA: GraphLang = GraphLang {
    classify,
    decl_kinds: &[
        "class_declaration",
        "record_declaration",
        "interface_declaration",
        "annotation_type_declaration",
        "enum_declaration",
        "method_declaration",
        "constructor_declaration",
        "compact_constructor_declaration",
        "field_declaration",
        "constant_declaration",
    ],
    call_kinds: &["method_invocation", "object_creation_expression"],
    imports,
    import_kinds: &["import_declaration"],
    package,
    self_names: &["this", "super"],
    implicit_members: true,
    wrappers: &[],
    modules: ModuleStyle::Package,
    opaque: &[],
    types: TypeRefs {
        names: &["type_identifier", "scoped_type_identifier"],
        // Annotation names (`@Transactional`); the `java.lang` ones are left out.
        candidates: &["identifier"],
        fields: &[],
        parents: &["marker_annotation", "annotation"],
        keywords: &[],
        screaming_values: false,
        unions: &[],
        builtins: &["Override", "Deprecated", "SuppressWarnings", "FunctionalInterface", "SafeVarargs"],
    },
};

fn package(node: Node<'_>, src: &str) -> Option<String> {
    (node.kind() == "package_declaration").then(|| node.named_child(0).map(|n| text(n, src).to_string()))?
}

fn types_in(node: Option<Node<'_>>, src: &str) -> Vec<String> {
    let Some(node) = node else { return Vec::new() };
    let list = child_of_kind(node, "type_list").unwrap_or(node);
    child_texts(list, None, src)
}

fn classify<'t>(node: Node<'t>, src: &str, _: &[Node<'t>]) -> Option<Decl<'t>> {
    let kind = match node.kind() {
        "class_declaration" | "record_declaration" => NodeKind::Class,
        "interface_declaration" | "annotation_type_declaration" => NodeKind::Interface,
        "enum_declaration" => NodeKind::Enum,
        "method_declaration" | "constructor_declaration" | "compact_constructor_declaration" => {
            return named(NodeKind::Method, node, src);
        }
        "field_declaration" | "constant_declaration" => {
            let declarator = field(node, "declarator")?;
            let name = text(field(declarator, "name")?, src).to_string();
            let modifiers = child_of_kind(node, "modifiers").map(|m| text(m, src)).unwrap_or("");
            let constant = node.kind() == "constant_declaration"
                || (modifiers.contains("static") && modifiers.contains("final"));
            let mut d = typed_field(name, node, "type", src);
            if constant {
                d.kind = NodeKind::Constant;
            }
            return Some(d);
        }
        _ => return None,
    };
    let mut d = named(kind, node, src)?;
    for t in types_in(field(node, "superclass"), src) {
        d.bases.push((EdgeKind::Extends, t));
    }
    for t in types_in(field(node, "interfaces"), src) {
        d.bases.push((EdgeKind::Implements, t));
    }
    for t in types_in(child_of_kind(node, "extends_interfaces"), src) {
        d.bases.push((EdgeKind::Extends, t));
    }
    Some(d)
}

fn imports(node: Node<'_>, src: &str, line: u32, out: &mut Vec<Import>) -> bool {
    if node.kind() != "import_declaration" {
        return false;
    }
    let raw = text(node, src);
    let path = raw
        .trim_start_matches("import")
        .trim()
        .trim_start_matches("static")
        .trim()
        .trim_end_matches(';')
        .trim();
    if let Some(module) = path.strip_suffix(".*") {
        out.push(Import { module: module.to_string(), name: None, alias: None, wildcard: true, line });
    } else if let Some((module, name)) = path.rsplit_once('.') {
        out.push(Import {
            module: module.to_string(),
            name: Some(name.to_string()),
            alias: None,
            wildcard: false,
            line,
        });
    }
    true
}
