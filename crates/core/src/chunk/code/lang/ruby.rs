//! Ruby. `def` inside a class is a method; modules are always split into their members.
use tree_sitter::Node;

use crate::chunk::code::grammar::{named, Grammar, Role};
use crate::chunk::ChunkType;

pub(crate) static RUBY: Grammar = Grammar { language: || tree_sitter_ruby::LANGUAGE.into(), classify };

fn classify<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "comment" => Role::Prefix,
        "method" | "singleton_method" => named(ChunkType::CodeFunction, node, src),
        "class" => named(ChunkType::CodeClass, node, src),
        "module" => named(ChunkType::CodeModule, node, src),
        _ => Role::Code,
    }
}
