//! Java. Annotations are part of a declaration's `modifiers`, so only comments are prefixes.
use tree_sitter::Node;

use crate::chunk::code::grammar::{named, Grammar, Role};
use crate::chunk::ChunkType;

pub(crate) static JAVA: Grammar = Grammar { language: || tree_sitter_java::LANGUAGE.into(), classify };

fn classify<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "line_comment" | "block_comment" => Role::Prefix,
        "class_declaration" | "record_declaration" => named(ChunkType::CodeClass, node, src),
        "interface_declaration" | "annotation_type_declaration" => named(ChunkType::CodeInterface, node, src),
        "enum_declaration" => named(ChunkType::CodeEnum, node, src),
        "method_declaration" | "constructor_declaration" | "compact_constructor_declaration" => {
            named(ChunkType::CodeMethod, node, src)
        }
        "module_declaration" => named(ChunkType::CodeModule, node, src),
        _ => Role::Code,
    }
}
