//! Python. Docstrings live inside the body, so they come with the definition by themselves;
//! decorators are wrapped with the definition in `decorated_definition`.
use tree_sitter::Node;

use crate::chunk::code::grammar::{named, text, Def, Grammar, Role};
use crate::chunk::ChunkType;

pub(crate) static PYTHON: Grammar = Grammar { language: || tree_sitter_python::LANGUAGE.into(), classify };

fn classify<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "comment" => Role::Prefix,
        "function_definition" => named(ChunkType::CodeFunction, node, src),
        "class_definition" => named(ChunkType::CodeClass, node, src),
        "decorated_definition" => match node.child_by_field_name("definition") {
            Some(inner) => match classify(inner, src) {
                Role::Def(def) => Role::Def(def),
                _ => Role::Code,
            },
            None => Role::Code,
        },
        "type_alias_statement" => {
            let name = node.child_by_field_name("left").map(|n| text(n, src).to_string());
            Role::Def(Def { chunk_type: ChunkType::CodeType, name, parent: None, node })
        }
        _ => Role::Code,
    }
}
