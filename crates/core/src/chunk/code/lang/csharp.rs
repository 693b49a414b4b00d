//! C#. Attributes (`[Obsolete]`) are part of a declaration; `///` XML doc comments are prefixes.
//! A file-scoped `namespace X;` is a one-line statement, its types follow as siblings.
use tree_sitter::Node;

use crate::chunk::code::grammar::{named, Grammar, Role};
use crate::chunk::ChunkType;

pub(crate) static CSHARP: Grammar = Grammar { language: || tree_sitter_c_sharp::LANGUAGE.into(), classify };

fn classify<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "comment" => Role::Prefix,
        "class_declaration" | "record_declaration" => named(ChunkType::CodeClass, node, src),
        "struct_declaration" | "record_struct_declaration" => named(ChunkType::CodeStruct, node, src),
        "interface_declaration" => named(ChunkType::CodeInterface, node, src),
        "enum_declaration" => named(ChunkType::CodeEnum, node, src),
        "delegate_declaration" => named(ChunkType::CodeType, node, src),
        "method_declaration"
        | "constructor_declaration"
        | "destructor_declaration"
        | "operator_declaration"
        | "conversion_operator_declaration"
        | "local_function_statement" => named(ChunkType::CodeFunction, node, src),
        "namespace_declaration" => named(ChunkType::CodeModule, node, src),
        _ => Role::Code,
    }
}
