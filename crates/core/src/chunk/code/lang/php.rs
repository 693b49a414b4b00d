//! PHP. Attributes (`#[Attr]`) are part of a declaration; `/** */` doc comments are prefixes.
use tree_sitter::Node;

use crate::chunk::code::grammar::{named, Grammar, Role};
use crate::chunk::ChunkType;

pub(crate) static PHP: Grammar = Grammar { language: || tree_sitter_php::LANGUAGE_PHP.into(), classify };

fn classify<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "comment" => Role::Prefix,
        "function_definition" => named(ChunkType::CodeFunction, node, src),
        "method_declaration" => named(ChunkType::CodeMethod, node, src),
        "class_declaration" => named(ChunkType::CodeClass, node, src),
        "interface_declaration" => named(ChunkType::CodeInterface, node, src),
        "trait_declaration" => named(ChunkType::CodeTrait, node, src),
        "enum_declaration" => named(ChunkType::CodeEnum, node, src),
        // `namespace A;` is a statement; `namespace A { … }` a module.
        "namespace_definition" if node.child_by_field_name("body").is_some() => {
            named(ChunkType::CodeModule, node, src)
        }
        _ => Role::Code,
    }
}
