//! Ruby: modules, classes (superclass → `EXTENDS`), methods, singleton methods, constants;
//! `require_relative`; `self` members and bare calls to the class's own methods.
use tree_sitter::Node;

use super::{decl, named, no_package, Decl, GraphLang, ModuleStyle, NO_TYPES};
use crate::chunk::code::grammar::{field_text, text};
use crate::graph::types::{EdgeKind, Import, NodeKind};

pub(crate) static RUBY: GraphLang = GraphLang {
    classify,
    call_kinds: &["call"],
    imports,
    package: no_package,
    self_names: &["self"],
    implicit_members: true,
    wrappers: &[],
    modules: ModuleStyle::Relative,
    types: NO_TYPES,
};

fn classify<'t>(node: Node<'t>, src: &str) -> Option<Decl<'t>> {
    match node.kind() {
        "module" => named(NodeKind::Module, node, src),
        "class" => {
            let mut d = named(NodeKind::Class, node, src)?;
            if let Some(sup) = node.child_by_field_name("superclass").and_then(|s| s.named_child(0)) {
                d.bases.push((EdgeKind::Extends, text(sup, src).to_string()));
            }
            Some(d)
        }
        "method" | "singleton_method" => named(NodeKind::Function, node, src),
        "assignment" => {
            let left = node.child_by_field_name("left").filter(|l| l.kind() == "constant")?;
            Some(decl(NodeKind::Constant, text(left, src).to_string(), None))
        }
        _ => None,
    }
}

fn imports(node: Node<'_>, src: &str, line: u32, out: &mut Vec<Import>) -> bool {
    if node.kind() != "call" || node.child_by_field_name("receiver").is_some() {
        return false;
    }
    let method = field_text(node, "method", src);
    if !matches!(method.as_deref(), Some("require_relative" | "require")) {
        return false;
    }
    let Some(arg) = node.child_by_field_name("arguments").and_then(|a| a.named_child(0)) else {
        return false;
    };
    let module = text(arg, src).trim_matches(['"', '\'']).to_string();
    let relative = method.as_deref() == Some("require_relative");
    let module = if relative && !module.starts_with('.') { format!("./{module}") } else { module };
    out.push(Import { module, name: None, alias: None, wildcard: true, line });
    true
}
