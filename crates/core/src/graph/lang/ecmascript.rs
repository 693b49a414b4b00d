//! TypeScript / TSX / JavaScript: functions (also `const f = () => …`), classes (`extends` /
//! `implements`), interfaces, enums, type aliases, methods, fields, namespaces, UPPER_CASE
//! constants; ES `import` and `require`; `this` members.
use tree_sitter::Node;

use super::{
    decl, field, field_text, named, no_package, typed_field, Decl, GraphLang, ModuleStyle, TypeRefs,
};
use crate::chunk::code::grammar::text;
use crate::graph::types::{EdgeKind, Import, NodeKind};

pub(crate) static ECMASCRIPT: GraphLang = GraphLang {
    classify,
    decl_kinds: &[
        "function_declaration",
        "generator_function_declaration",
        "function_signature",
        "method_definition",
        "method_signature",
        "abstract_method_signature",
        "class_declaration",
        "abstract_class_declaration",
        "class",
        "interface_declaration",
        "enum_declaration",
        "type_alias_declaration",
        "internal_module",
        "module",
        "variable_declarator",
        "public_field_definition",
        "field_definition",
        "property_signature",
    ],
    call_kinds: &["call_expression", "new_expression"],
    imports,
    import_kinds: &["import_statement", "variable_declarator"],
    package: no_package,
    self_names: &["this", "super"],
    implicit_members: false,
    wrappers: &["export_statement", "lexical_declaration", "variable_declaration", "ambient_declaration"],
    modules: ModuleStyle::EcmaScript,
    // Literals hold no definitions, calls or type names (template strings may: not here).
    opaque: &["string", "number", "regex", "predefined_type", "literal_type"],
    // `new X()` names a type in JavaScript too.
    types: TypeRefs {
        names: &["type_identifier", "nested_type_identifier"],
        candidates: &["identifier"],
        fields: &["constructor"],
        parents: &[],
        keywords: &[],
        screaming_values: false,
        unions: &[],
        builtins: &[],
    },
};

fn is_function(value: Node<'_>) -> bool {
    matches!(value.kind(), "arrow_function" | "function_expression" | "function" | "generator_function")
}

fn heritage(node: Node<'_>, src: &str, d: &mut Decl<'_>) {
    let mut cursor = node.walk();
    for c in node.named_children(&mut cursor) {
        match c.kind() {
            "class_heritage" => heritage(c, src, d),
            "extends_clause" | "extends_type_clause" => {
                let mut inner = c.walk();
                for t in c.named_children(&mut inner) {
                    if !t.kind().contains("type_arguments") {
                        d.bases.push((EdgeKind::Extends, text(t, src).to_string()));
                    }
                }
            }
            "implements_clause" => {
                let mut inner = c.walk();
                for t in c.named_children(&mut inner) {
                    d.bases.push((EdgeKind::Implements, text(t, src).to_string()));
                }
            }
            // JavaScript: `class A extends B` has the expression directly in `class_heritage`.
            "identifier" | "member_expression" if node.kind() == "class_heritage" => {
                d.bases.push((EdgeKind::Extends, text(c, src).to_string()));
            }
            _ => {}
        }
    }
}

fn classify<'t>(node: Node<'t>, src: &str, parents: &[Node<'t>]) -> Option<Decl<'t>> {
    match node.kind() {
        "function_declaration" | "generator_function_declaration" | "function_signature" => {
            named(NodeKind::Function, node, src)
        }
        "method_definition" | "method_signature" | "abstract_method_signature" => {
            named(NodeKind::Method, node, src)
        }
        "class_declaration" | "abstract_class_declaration" | "class" => {
            let mut d = named(NodeKind::Class, node, src)?;
            heritage(node, src, &mut d);
            Some(d)
        }
        "interface_declaration" => {
            let mut d = named(NodeKind::Interface, node, src)?;
            heritage(node, src, &mut d);
            Some(d)
        }
        "enum_declaration" => named(NodeKind::Enum, node, src),
        "type_alias_declaration" => named(NodeKind::Type, node, src),
        "internal_module" | "module" => named(NodeKind::Module, node, src),
        "variable_declarator" => {
            let name_node = field(node, "name").filter(|n| n.kind() == "identifier")?;
            let name = text(name_node, src).to_string();
            match field(node, "value") {
                Some(v) if is_function(v) => Some(decl(NodeKind::Function, name, field(v, "body"))),
                Some(v) if v.kind() == "class" => {
                    let mut d = decl(NodeKind::Class, name, field(v, "body"));
                    heritage(v, src, &mut d);
                    Some(d)
                }
                Some(_) if top_level(parents) && is_constant_name(&name) => {
                    Some(decl(NodeKind::Constant, name, None))
                }
                _ => None,
            }
        }
        "public_field_definition" | "field_definition" => {
            let name = field_text(node, "name", src).or_else(|| field_text(node, "property", src))?;
            match field(node, "value") {
                Some(v) if is_function(v) => Some(decl(NodeKind::Method, name, field(v, "body"))),
                _ => Some(typed_field(name, node, "type", src)),
            }
        }
        "property_signature" => {
            let name = field_text(node, "name", src)?;
            Some(typed_field(name, node, "type", src))
        }
        _ => None,
    }
}

fn is_constant_name(name: &str) -> bool {
    name.len() > 1 && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Whether a declarator with these ancestors (root first) is a declaration of the program.
fn top_level(parents: &[Node<'_>]) -> bool {
    for n in parents.iter().rev() {
        match n.kind() {
            "lexical_declaration" | "variable_declaration" | "export_statement" => {}
            "program" => return true,
            _ => return false,
        }
    }
    false
}

fn string_text(node: Node<'_>, src: &str) -> String {
    text(node, src).trim_matches(['"', '\'', '`']).to_string()
}

fn imports(node: Node<'_>, src: &str, line: u32, out: &mut Vec<Import>) -> bool {
    match node.kind() {
        "import_statement" => {
            let Some(source) = field(node, "source") else { return true };
            let module = string_text(source, src);
            let mut any = false;
            let mut cursor = node.walk();
            for clause in node.named_children(&mut cursor).filter(|c| c.kind() == "import_clause") {
                let mut inner = clause.walk();
                for c in clause.named_children(&mut inner) {
                    match c.kind() {
                        "identifier" => {
                            any = true;
                            out.push(Import {
                                module: module.clone(),
                                name: Some("default".into()),
                                alias: Some(text(c, src).to_string()),
                                wildcard: false,
                                line,
                            });
                        }
                        "namespace_import" => {
                            any = true;
                            let alias = c.named_child(0).map(|n| text(n, src).to_string());
                            out.push(Import {
                                module: module.clone(),
                                name: None,
                                alias,
                                wildcard: false,
                                line,
                            });
                        }
                        "named_imports" => {
                            let mut specs = c.walk();
                            for s in c.named_children(&mut specs).filter(|s| s.kind() == "import_specifier") {
                                any = true;
                                out.push(Import {
                                    module: module.clone(),
                                    name: field_text(s, "name", src),
                                    alias: field_text(s, "alias", src),
                                    wildcard: false,
                                    line,
                                });
                            }
                        }
                        _ => {}
                    }
                }
            }
            if !any {
                out.push(Import { module, name: None, alias: None, wildcard: false, line });
            }
            true
        }
        // `const x = require("./x")` / `const { a, b } = require("./x")`.
        "variable_declarator" => {
            let Some(value) = field(node, "value") else { return false };
            if value.kind() != "call_expression"
                || field(value, "function").map(|f| text(f, src)) != Some("require")
            {
                return false;
            }
            let Some(arg) = field(value, "arguments").and_then(|a| a.named_child(0)) else {
                return false;
            };
            if !arg.kind().contains("string") {
                return false;
            }
            let module = string_text(arg, src);
            let Some(name) = field(node, "name") else { return false };
            match name.kind() {
                "identifier" => out.push(Import {
                    module,
                    name: None,
                    alias: Some(text(name, src).to_string()),
                    wildcard: false,
                    line,
                }),
                "object_pattern" => {
                    let mut cursor = name.walk();
                    for p in name.named_children(&mut cursor) {
                        let t = text(p, src);
                        let (n, a) = match t.split_once(':') {
                            Some((n, a)) => (n.trim().to_string(), Some(a.trim().to_string())),
                            None => (t.trim().to_string(), None),
                        };
                        out.push(Import {
                            module: module.clone(),
                            name: Some(n),
                            alias: a,
                            wildcard: false,
                            line,
                        });
                    }
                }
                _ => return false,
            }
            true
        }
        _ => false,
    }
}
