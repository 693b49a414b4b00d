//! C and C++. Functions are named through their declarator chain (`*f(int)`, `ns::A::f`);
//! preprocessor conditionals (include guards) and `extern "C" { }` are transparent containers.
use tree_sitter::Node;

use crate::chunk::code::grammar::{field_text, named, text, Def, Grammar, Role};
use crate::chunk::ChunkType;

#[cfg(feature = "lang-c")]
pub(crate) static C: Grammar = Grammar { language: || tree_sitter_c::LANGUAGE.into(), classify };

#[cfg(feature = "lang-cpp")]
pub(crate) static CPP: Grammar = Grammar { language: || tree_sitter_cpp::LANGUAGE.into(), classify };

fn classify<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    match node.kind() {
        "comment" | "attribute_declaration" => Role::Prefix,
        "preproc_ifdef"
        | "preproc_if"
        | "preproc_else"
        | "preproc_elif"
        | "preproc_elifdef"
        | "linkage_specification"
        | "declaration_list" => Role::Transparent,
        "function_definition" => function(node, src),
        // Only with a body: `struct a;` is a forward declaration.
        "struct_specifier" | "union_specifier" if has_body(node) => named(ChunkType::CodeStruct, node, src),
        "class_specifier" if has_body(node) => named(ChunkType::CodeClass, node, src),
        "enum_specifier" if has_body(node) => named(ChunkType::CodeEnum, node, src),
        "namespace_definition" => named(ChunkType::CodeModule, node, src),
        "alias_declaration" | "concept_definition" => named(ChunkType::CodeType, node, src),
        // `typedef struct { … } name;` is the struct `name`; other typedefs are type aliases.
        "type_definition" => {
            let name =
                node.child_by_field_name("declarator").and_then(|d| declarator_name(d, src)).map(|(n, _)| n);
            let chunk_type = match node.child_by_field_name("type") {
                Some(t) if has_body(t) => match t.kind() {
                    "enum_specifier" => ChunkType::CodeEnum,
                    "class_specifier" => ChunkType::CodeClass,
                    _ => ChunkType::CodeStruct,
                },
                _ => ChunkType::CodeType,
            };
            Role::Def(Def { chunk_type, name, parent: None, node })
        }
        // `struct a { … } x;` / `class A { … };` written as a declaration: the type decides.
        "declaration" | "field_declaration" => match node.child_by_field_name("type") {
            Some(t) if has_body(t) && node.child_by_field_name("declarator").is_none() => {
                match classify(t, src) {
                    Role::Def(def) => Role::Def(def),
                    _ => Role::Code,
                }
            }
            _ => Role::Code,
        },
        // `template <…> class X` / `template <…> T f()`: the templated declaration decides.
        "template_declaration" => {
            let mut cursor = node.walk();
            let inner = node
                .named_children(&mut cursor)
                .find(|c| !matches!(c.kind(), "template_parameter_list" | "comment" | "requires_clause"));
            match inner.map(|i| classify(i, src)) {
                Some(Role::Def(def)) => Role::Def(def),
                _ => Role::Code,
            }
        }
        _ => Role::Code,
    }
}

fn has_body(node: Node<'_>) -> bool {
    node.child_by_field_name("body").is_some()
}

fn function<'t>(node: Node<'t>, src: &str) -> Role<'t> {
    let (name, parent) = node
        .child_by_field_name("declarator")
        .and_then(|d| declarator_name(d, src))
        .unwrap_or((String::new(), None));
    // `void A::f() { }` defined outside its class is a method of `A`.
    let chunk_type = if parent.is_some() { ChunkType::CodeMethod } else { ChunkType::CodeFunction };
    Role::Def(Def { chunk_type, name: Some(name).filter(|n| !n.is_empty()), parent, node })
}

/// The declared name at the bottom of a declarator chain, and its qualifying class if any.
fn declarator_name(node: Node<'_>, src: &str) -> Option<(String, Option<String>)> {
    let mut current = node;
    for _ in 0..32 {
        match current.kind() {
            "identifier" | "field_identifier" | "type_identifier" | "operator_name" | "destructor_name" => {
                return Some((text(current, src).to_string(), None));
            }
            "qualified_identifier" => {
                let name = current.child_by_field_name("name")?;
                let scope = current.child_by_field_name("scope").map(|s| {
                    // `ns::Matrix<T>::f` → `Matrix`.
                    let scope = text(s, src);
                    let last = scope.rsplit("::").next().unwrap_or(scope);
                    last.split('<').next().unwrap_or(last).trim().to_string()
                });
                let (inner, _) = declarator_name(name, src)?;
                return Some((inner, scope.filter(|s| !s.is_empty())));
            }
            _ => {}
        }
        current = match current.child_by_field_name("declarator") {
            Some(next) => next,
            // Parenthesized / attributed declarators wrap the real one as a plain child.
            None => current.named_child(0)?,
        };
    }
    let _ = field_text;
    None
}
