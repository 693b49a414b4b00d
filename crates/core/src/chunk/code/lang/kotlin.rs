//! Kotlin (tree-sitter-kotlin-ng). `class_declaration` also covers `interface` and `enum class`;
//! annotations are part of `modifiers`.
use tree_sitter::Node;

use crate::chunk::code::grammar::{field_text, named, text, Def, Grammar, Role};
use crate::chunk::ChunkType;

pub(crate) static KOTLIN: Grammar = Grammar { language: || tree_sitter_kotlin_ng::LANGUAGE.into(), classify };

fn classify<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "line_comment" | "block_comment" => Role::Prefix,
        "class_declaration" => {
            let mut cursor = node.walk();
            let mut chunk_type = ChunkType::CodeClass;
            for child in node.children(&mut cursor) {
                match child.kind() {
                    "interface" => chunk_type = ChunkType::CodeInterface,
                    "modifiers" if modifiers_have(child, "enum", src) => chunk_type = ChunkType::CodeEnum,
                    _ => {}
                }
            }
            named(chunk_type, node, src)
        }
        "object_declaration" => named(ChunkType::CodeClass, node, src),
        "companion_object" => Role::Def(Def {
            chunk_type: ChunkType::CodeClass,
            name: field_text(node, "name", src).or_else(|| Some("Companion".to_string())),
            parent: None,
            node,
        }),
        "function_declaration" => named(ChunkType::CodeFunction, node, src),
        "secondary_constructor" => Role::Def(Def {
            chunk_type: ChunkType::CodeFunction,
            name: Some("constructor".to_string()),
            parent: None,
            node,
        }),
        // The grammar puts the alias name in the `type` field.
        "type_alias" => Role::Def(Def {
            chunk_type: ChunkType::CodeType,
            name: field_text(node, "type", src).or_else(|| field_text(node, "name", src)),
            parent: None,
            node,
        }),
        _ => Role::Code,
    }
}

fn modifiers_have(modifiers: Node<'_>, word: &str, src: &str) -> bool {
    let mut cursor = modifiers.walk();
    let found = modifiers.named_children(&mut cursor).any(|m| text(m, src) == word);
    found
}
