//! Python: functions, classes (bases → `EXTENDS`), module-level UPPER_CASE constants, class
//! attributes as fields; `import` / `from … import` (relative too); `self` / `cls` members.
use tree_sitter::Node;

use super::{decl, field, named, no_package, Decl, GraphLang, ModuleStyle, TypeRefs};
use crate::chunk::code::grammar::text;
use crate::graph::types::{EdgeKind, Import, NodeKind};

pub(crate) static PYTHON: GraphLang = GraphLang {
    classify,
    decl_kinds: &["function_definition", "class_definition", "assignment"],
    call_kinds: &["call"],
    imports,
    import_kinds: &["import_statement", "import_from_statement"],
    package: no_package,
    self_names: &["self", "cls"],
    implicit_members: false,
    wrappers: &["decorated_definition"],
    modules: ModuleStyle::Python,
    opaque: &[],
    // Type hints: `x: Item`, `-> list[Item]`, `Optional[models.Item]`.
    types: TypeRefs {
        names: &[],
        candidates: &["identifier", "attribute"],
        fields: &[],
        parents: &["type", "generic_type", "union_type"],
        keywords: &[],
        screaming_values: false,
        unions: &["binary_operator"],
        builtins: &[
            "int",
            "str",
            "float",
            "bool",
            "bytes",
            "object",
            "complex",
            "type",
            "list",
            "dict",
            "set",
            "tuple",
            "frozenset",
            "bytearray",
        ],
    },
};

fn classify<'t>(node: Node<'t>, src: &str, parents: &[Node<'t>]) -> Option<Decl<'t>> {
    match node.kind() {
        "function_definition" => named(NodeKind::Function, node, src),
        "class_definition" => {
            let mut d = named(NodeKind::Class, node, src)?;
            if let Some(bases) = field(node, "superclasses") {
                let mut cursor = bases.walk();
                for b in bases.named_children(&mut cursor) {
                    if matches!(b.kind(), "identifier" | "attribute") {
                        let name = text(b, src);
                        if name != "object" {
                            d.bases.push((EdgeKind::Extends, name.to_string()));
                        }
                    }
                }
            }
            Some(d)
        }
        // `NAME = …` at module level, `x = …` / `x: int` in a class body.
        "assignment" => {
            let mut up = parents.iter().rev();
            up.next().filter(|p| p.kind() == "expression_statement")?;
            let container = up.next()?;
            let left = field(node, "left").filter(|l| l.kind() == "identifier")?;
            let name = text(left, src).to_string();
            let in_class =
                container.kind() == "block" && up.next().is_some_and(|p| p.kind() == "class_definition");
            if in_class {
                Some(decl(NodeKind::Field, name, None))
            } else if container.kind() == "module"
                && name.len() > 1
                && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                Some(decl(NodeKind::Constant, name, None))
            } else {
                None
            }
        }
        _ => None,
    }
}

fn imports(node: Node<'_>, src: &str, line: u32, out: &mut Vec<Import>) -> bool {
    match node.kind() {
        "import_statement" => {
            let mut cursor = node.walk();
            for c in node.named_children(&mut cursor) {
                let (module, alias) = match c.kind() {
                    "aliased_import" => (
                        field(c, "name").map(|n| text(n, src).to_string()).unwrap_or_default(),
                        field(c, "alias").map(|n| text(n, src).to_string()),
                    ),
                    _ => (text(c, src).to_string(), None),
                };
                // `import a.b` binds `a`; `import a.b as c` binds the module a.b.
                let alias =
                    alias.or_else(|| module.split('.').next().filter(|f| *f != module).map(str::to_string));
                out.push(Import { module, name: None, alias, wildcard: false, line });
            }
            true
        }
        "import_from_statement" => {
            let module = field(node, "module_name").map(|m| text(m, src).to_string()).unwrap_or_default();
            let mut cursor = node.walk();
            let mut any = false;
            for c in node.children_by_field_name("name", &mut cursor) {
                any = true;
                let (name, alias) = match c.kind() {
                    "aliased_import" => (
                        field(c, "name").map(|n| text(n, src).to_string()).unwrap_or_default(),
                        field(c, "alias").map(|n| text(n, src).to_string()),
                    ),
                    _ => (text(c, src).to_string(), None),
                };
                out.push(Import { module: module.clone(), name: Some(name), alias, wildcard: false, line });
            }
            if !any {
                out.push(Import { module, name: None, alias: None, wildcard: true, line });
            }
            true
        }
        _ => false,
    }
}
