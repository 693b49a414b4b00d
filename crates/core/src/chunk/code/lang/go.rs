//! Go. Methods name their receiver type as `parent_symbol`; `type` declarations are typed by
//! what they declare (struct, interface, other).
use tree_sitter::Node;

use crate::chunk::code::grammar::{child_of_kind, field_text, named, text, Def, Grammar, Role};
use crate::chunk::ChunkType;

pub(crate) static GO: Grammar = Grammar { language: || tree_sitter_go::LANGUAGE.into(), classify };

fn classify<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "comment" => Role::Prefix,
        "function_declaration" => named(ChunkType::CodeFunction, node, src),
        "method_declaration" => Role::Def(Def {
            chunk_type: ChunkType::CodeMethod,
            name: field_text(node, "name", src),
            parent: receiver_type(node, src),
            node,
        }),
        "type_declaration" => {
            let mut cursor = node.walk();
            let specs: Vec<Node<'t>> = node
                .named_children(&mut cursor)
                .filter(|c| matches!(c.kind(), "type_spec" | "type_alias"))
                .collect();
            match specs.as_slice() {
                [spec] => {
                    let chunk_type = match spec.child_by_field_name("type").map(|t| t.kind()) {
                        Some("struct_type") if spec.kind() == "type_spec" => ChunkType::CodeStruct,
                        Some("interface_type") if spec.kind() == "type_spec" => ChunkType::CodeInterface,
                        _ => ChunkType::CodeType,
                    };
                    Role::Def(Def { chunk_type, name: field_text(*spec, "name", src), parent: None, node })
                }
                // A `type ( … )` group: one type chunk named after its first type.
                [first, ..] => Role::Def(Def {
                    chunk_type: ChunkType::CodeType,
                    name: field_text(*first, "name", src),
                    parent: None,
                    node,
                }),
                [] => Role::Code,
            }
        }
        _ => Role::Code,
    }
}

/// `func (p *Point[T]) M()` → `Point`.
fn receiver_type(node: Node<'_>, src: &str) -> Option<String> {
    let receiver = node.child_by_field_name("receiver")?;
    let param = child_of_kind(receiver, "parameter_declaration")?;
    let mut ty = param.child_by_field_name("type")?;
    loop {
        match ty.kind() {
            "pointer_type" => ty = ty.named_child(0)?,
            "generic_type" => ty = ty.child_by_field_name("type")?,
            _ => return Some(text(ty, src).to_string()),
        }
    }
}
