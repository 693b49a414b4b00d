//! Rust. Outer attributes (`#[derive]`) and doc comments are siblings before an item; inner
//! doc comments (`//!`) describe the enclosing module and stay plain code.
use tree_sitter::Node;

use crate::chunk::code::grammar::{named, text, Def, Grammar, Role};
use crate::chunk::ChunkType;

pub(crate) static RUST: Grammar = Grammar { language: || tree_sitter_rust::LANGUAGE.into(), classify };

fn classify<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "line_comment" | "block_comment" => {
            if node.child_by_field_name("inner").is_some() {
                Role::Code
            } else {
                Role::Prefix
            }
        }
        "attribute_item" => Role::Prefix,
        "function_item" | "function_signature_item" | "macro_definition" => {
            named(ChunkType::CodeFunction, node, src)
        }
        "struct_item" | "union_item" => named(ChunkType::CodeStruct, node, src),
        "enum_item" => named(ChunkType::CodeEnum, node, src),
        "trait_item" => named(ChunkType::CodeTrait, node, src),
        "type_item" => named(ChunkType::CodeType, node, src),
        // `mod x;` is a one-line declaration, not a module body.
        "mod_item" if node.child_by_field_name("body").is_some() => named(ChunkType::CodeModule, node, src),
        "impl_item" => {
            // Named by the implementing type, without generics: `impl<T> Display for Foo<T>` → Foo.
            let name = node.child_by_field_name("type").map(|t| {
                let base = t.child_by_field_name("type").filter(|_| t.kind() == "generic_type").unwrap_or(t);
                text(base, src).to_string()
            });
            Role::Def(Def { chunk_type: ChunkType::CodeImpl, name, parent: None, node })
        }
        _ => Role::Code,
    }
}
