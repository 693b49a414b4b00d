//! Ruby: modules, classes (superclass → `EXTENDS`), methods, singleton methods, constants;
//! `require_relative`; `self` members and bare calls to the class's own methods; classes used as
//! call receivers (`Item.new`) and rescued as `REFERENCES`.
use tree_sitter::Node;

use super::{decl, field, field_text, named, no_package, Decl, GraphLang, ModuleStyle, TypeRefs};
use crate::chunk::code::grammar::text;
use crate::graph::types::{EdgeKind, Import, NodeKind};

pub(crate) static RUBY: GraphLang = GraphLang {
    classify,
    decl_kinds: &["module", "class", "method", "singleton_method", "assignment"],
    call_kinds: &["call"],
    imports,
    import_kinds: &["call"],
    package: no_package,
    self_names: &["self"],
    implicit_members: true,
    wrappers: &[],
    modules: ModuleStyle::Relative,
    opaque: &[],
    // Ruby has no type annotations: a class is referenced as a constant, `Item.new`,
    // `Shop::Item.find(…)` (the receiver of a call), or in a `rescue` list.
    types: TypeRefs {
        names: &[],
        candidates: &["constant", "scope_resolution"],
        fields: &["receiver"],
        parents: &["exceptions"],
        keywords: &[],
        screaming_values: true,
        unions: &[],
        builtins: &[],
    },
};

fn classify<'t>(node: Node<'t>, src: &str, _: &[Node<'t>]) -> Option<Decl<'t>> {
    match node.kind() {
        "module" => named(NodeKind::Module, node, src),
        "class" => {
            let mut d = named(NodeKind::Class, node, src)?;
            if let Some(sup) = field(node, "superclass").and_then(|s| s.named_child(0)) {
                d.bases.push((EdgeKind::Extends, text(sup, src).to_string()));
            }
            Some(d)
        }
        "method" | "singleton_method" => named(NodeKind::Function, node, src),
        "assignment" => {
            let left = field(node, "left").filter(|l| l.kind() == "constant")?;
            Some(decl(NodeKind::Constant, text(left, src).to_string(), None))
        }
        _ => None,
    }
}

fn imports(node: Node<'_>, src: &str, line: u32, out: &mut Vec<Import>) -> bool {
    if node.kind() != "call" || field(node, "receiver").is_some() {
        return false;
    }
    let method = field_text(node, "method", src);
    if !matches!(method.as_deref(), Some("require_relative" | "require")) {
        return false;
    }
    let Some(arg) = field(node, "arguments").and_then(|a| a.named_child(0)) else {
        return false;
    };
    let module = text(arg, src).trim_matches(['"', '\'']).to_string();
    let relative = method.as_deref() == Some("require_relative");
    let module = if relative && !module.starts_with('.') { format!("./{module}") } else { module };
    out.push(Import { module, name: None, alias: None, wildcard: true, line });
    true
}
