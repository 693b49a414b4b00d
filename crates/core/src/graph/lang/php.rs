//! PHP: namespaces, classes (`extends` / `implements`), interfaces, traits, enums, functions,
//! methods, properties, class constants; `use` statements; `$this` / `self` / `static` members;
//! type declarations, `new X`, `instanceof X` and `X::y()` as `REFERENCES`.
use tree_sitter::Node;

use super::{child_texts, decl, field, named, Decl, GraphLang, ModuleStyle, TypeRefs};
use crate::chunk::code::grammar::{child_of_kind, text};
use crate::graph::types::{EdgeKind, Import, NodeKind};

pub(crate) static PHP: GraphLang = GraphLang {
    classify,
    decl_kinds: &[
        "class_declaration",
        "interface_declaration",
        "trait_declaration",
        "enum_declaration",
        "function_definition",
        "method_declaration",
        "namespace_definition",
        "property_declaration",
        "property_element",
        "const_element",
    ],
    call_kinds: &[
        "function_call_expression",
        "member_call_expression",
        "scoped_call_expression",
        "nullsafe_member_call_expression",
        "object_creation_expression",
    ],
    imports,
    import_kinds: &["namespace_use_declaration"],
    package,
    self_names: &["this", "self", "static", "parent"],
    implicit_members: false,
    wrappers: &[],
    modules: ModuleStyle::Package,
    opaque: &[],
    // Parameter / return / property types and `catch` lists (`named_type`), `new X`,
    // `$x instanceof X`, static calls and properties `X::y()` on a class.
    types: TypeRefs {
        names: &["named_type"],
        candidates: &["name", "qualified_name"],
        fields: &["scope"],
        parents: &["object_creation_expression"],
        keywords: &["instanceof"],
        screaming_values: false,
        unions: &[],
        builtins: &[],
    },
};

fn package(node: Node<'_>, src: &str) -> Option<String> {
    if node.kind() != "namespace_definition" || field(node, "body").is_some() {
        return None;
    }
    field(node, "name").map(|n| text(n, src).replace('\\', "."))
}

/// The only `property_element` of a `property_declaration` (`private ?Item $last;`), if it has
/// one: the declaration is then the property, so that its type and doc belong to it.
fn single_property<'t>(declaration: Node<'t>) -> Option<Node<'t>> {
    let mut cursor = declaration.walk();
    let mut elements = declaration.named_children(&mut cursor).filter(|c| c.kind() == "property_element");
    let first = elements.next()?;
    elements.next().is_none().then_some(first)
}

fn property<'t>(element: Node<'t>, src: &str) -> Option<Decl<'t>> {
    let name = field(element, "name").map(|n| text(n, src).trim_start_matches('$').to_string())?;
    Some(decl(NodeKind::Field, name, None))
}

fn classify<'t>(node: Node<'t>, src: &str, ancestors: &[Node<'t>]) -> Option<Decl<'t>> {
    let kind = match node.kind() {
        "class_declaration" => NodeKind::Class,
        "interface_declaration" => NodeKind::Interface,
        "trait_declaration" => NodeKind::Trait,
        "enum_declaration" => NodeKind::Enum,
        "function_definition" => return named(NodeKind::Function, node, src),
        "method_declaration" => return named(NodeKind::Method, node, src),
        "namespace_definition" if field(node, "body").is_some() => {
            return named(NodeKind::Module, node, src);
        }
        "property_declaration" => return property(single_property(node)?, src),
        // `public ?Item $a, $b;`: each element is a property; the type stays with the class.
        "property_element" => {
            let declared = ancestors.last().filter(|p| p.kind() == "property_declaration");
            if declared.is_some_and(|d| single_property(*d).is_some()) {
                return None;
            }
            return property(node, src);
        }
        "const_element" => {
            let name = node.named_child(0).map(|n| text(n, src).to_string())?;
            return Some(decl(NodeKind::Constant, name, None));
        }
        _ => return None,
    };
    let mut d = named(kind, node, src)?;
    if let Some(base) = child_of_kind(node, "base_clause") {
        for b in child_texts(base, None, src) {
            d.bases.push((EdgeKind::Extends, b));
        }
    }
    if let Some(ifaces) = child_of_kind(node, "class_interface_clause") {
        for b in child_texts(ifaces, None, src) {
            d.bases.push((EdgeKind::Implements, b));
        }
    }
    Some(d)
}

fn imports(node: Node<'_>, src: &str, line: u32, out: &mut Vec<Import>) -> bool {
    if node.kind() != "namespace_use_declaration" {
        return false;
    }
    let mut cursor = node.walk();
    for clause in node.named_children(&mut cursor).filter(|c| c.kind() == "namespace_use_clause") {
        let raw = text(clause, src);
        let (path, alias) = match raw.split_once(" as ") {
            Some((p, a)) => (p.trim(), Some(a.trim().to_string())),
            None => (raw.trim(), None),
        };
        let path = path.trim_start_matches('\\').replace('\\', ".");
        if let Some((module, name)) = path.rsplit_once('.') {
            out.push(Import {
                module: module.to_string(),
                name: Some(name.to_string()),
                alias,
                wildcard: false,
                line,
            });
        }
    }
    true
}
