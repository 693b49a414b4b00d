//! TypeScript, TSX and JavaScript (incl. JSX): one classifier, the grammars differ only in
//! TypeScript-only node kinds, which simply never occur in JavaScript trees.
use tree_sitter::Node;

use crate::chunk::code::grammar::{field_text, named, Def, Grammar, Role};
use crate::chunk::ChunkType;

#[cfg(feature = "lang-typescript")]
pub(crate) static TYPESCRIPT: Grammar =
    Grammar { language: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(), classify };

#[cfg(feature = "lang-typescript")]
pub(crate) static TSX: Grammar =
    Grammar { language: || tree_sitter_typescript::LANGUAGE_TSX.into(), classify };

#[cfg(feature = "lang-javascript")]
pub(crate) static JAVASCRIPT: Grammar =
    Grammar { language: || tree_sitter_javascript::LANGUAGE.into(), classify };

fn classify<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "comment" | "html_comment" | "decorator" => Role::Prefix,
        "function_declaration"
        | "generator_function_declaration"
        | "function_signature"
        | "method_definition"
        | "method_signature"
        | "abstract_method_signature" => named(ChunkType::CodeFunction, node, src),
        "class_declaration" | "abstract_class_declaration" => named(ChunkType::CodeClass, node, src),
        "interface_declaration" => named(ChunkType::CodeInterface, node, src),
        "enum_declaration" => named(ChunkType::CodeEnum, node, src),
        "type_alias_declaration" => named(ChunkType::CodeType, node, src),
        "internal_module" | "module" => named(ChunkType::CodeModule, node, src),
        // `export …`, `declare …`, `namespace X {}` (an expression statement): the wrapped
        // declaration decides, the wrapper's span (with `export`, decorators) is the chunk.
        "export_statement" => match node.child_by_field_name("declaration") {
            Some(inner) => rewrap(classify(inner, src)),
            None => match node.child_by_field_name("value") {
                Some(value) => value_def(value, Some("default".to_string()), src),
                None => Role::Code,
            },
        },
        "ambient_declaration" | "expression_statement" => match single_named_child(node) {
            Some(inner) if node.kind() == "ambient_declaration" || inner.kind() == "internal_module" => {
                rewrap(classify(inner, src))
            }
            _ => Role::Code,
        },
        // `const f = () => {}`, `let C = class {}`: named by the variable.
        "lexical_declaration" | "variable_declaration" => {
            let Some(declarator) = single_named_child(node).filter(|d| d.kind() == "variable_declarator")
            else {
                return Role::Code;
            };
            match declarator.child_by_field_name("value") {
                Some(value) => value_def(value, field_text(declarator, "name", src), src),
                None => Role::Code,
            }
        }
        // Class fields holding a function (`onClick = () => {}`) are methods.
        "public_field_definition" | "field_definition" => {
            let name = field_text(node, "name", src).or_else(|| field_text(node, "property", src));
            match node.child_by_field_name("value") {
                Some(value) => value_def(value, name, src),
                None => Role::Code,
            }
        }
        _ => Role::Code,
    }
}

/// A function or class expression used as a value, named `name`.
fn value_def<'t>(value: Node<'t>, name: Option<String>, src: &str) -> Role<'t> {
    let chunk_type = match value.kind() {
        "arrow_function" | "function_expression" | "function" | "generator_function" => {
            ChunkType::CodeFunction
        }
        "class" => ChunkType::CodeClass,
        _ => return Role::Code,
    };
    let name = name.or_else(|| field_text(value, "name", src));
    Role::Def(Def { chunk_type, name, parent: None, node: value })
}

/// Keeps the inner definition but never its prefix role (a wrapper is never a comment).
fn rewrap(role: Role<'_>) -> Role<'_> {
    match role {
        Role::Def(def) => Role::Def(def),
        _ => Role::Code,
    }
}

fn single_named_child(node: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = node.walk();
    let mut named = node.named_children(&mut cursor).filter(|c| c.kind() != "comment");
    let first = named.next()?;
    named.next().is_none().then_some(first)
}
