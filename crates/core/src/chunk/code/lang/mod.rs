//! One file per language family, each exposing a [`Grammar`] per language behind its cargo
//! feature. [`grammar`] is the registry.
//!
//! Adding a language (template):
//! 1. add the grammar crate to `crates/core/Cargo.toml` as an optional dependency with a
//!    `lang-<name>` feature (and list the feature in `all-languages`); check it builds for wasm32
//!    (`docs/tree-sitter-wasm.md`);
//! 2. write `lang/<family>.rs` with a `static <NAME>: Grammar` whose `classify` maps node kinds
//!    to a [`Role`](super::grammar::Role): comments / doc comments / sibling attributes →
//!    `Prefix`; definitions → `Def` via [`named`](super::grammar::named) (or a hand-built
//!    [`Def`](super::grammar::Def) when the name is not in a `name` field); wrappers such as
//!    `export …` → the wrapped declaration's role; pure containers → `Transparent`; anything else
//!    → `Code`. Print a tree with `tree-sitter parse` or `Node::to_sexp` to find the kinds;
//! 3. add a registry line below and a fixture under `tests/fixtures/<lang>/`;
//!
//! and outside the chunker, the same language in the places that read it:
//! 4. `lang.rs`: the [`Language`] variant, its name and its file extensions;
//! 5. `keywords/`: the language's keywords in `keywords/lists/<lang>.txt` (one lowercase word a
//!    line, in byte order) and its line in `Profile::of` (the list, quotes, comment openers);
//! 6. `graph/lang/`: its graph rules, after the template at the top of `graph/lang/mod.rs`.
use super::grammar::Grammar;
use crate::lang::Language;

#[cfg(any(feature = "lang-c", feature = "lang-cpp"))]
mod c_family;
#[cfg(feature = "lang-csharp")]
mod csharp;
#[cfg(any(feature = "lang-typescript", feature = "lang-javascript"))]
mod ecmascript;
#[cfg(feature = "lang-go")]
mod go;
#[cfg(feature = "lang-java")]
mod java;
#[cfg(feature = "lang-kotlin")]
mod kotlin;
#[cfg(feature = "lang-php")]
mod php;
#[cfg(feature = "lang-python")]
mod python;
#[cfg(feature = "lang-ruby")]
mod ruby;
#[cfg(feature = "lang-rust")]
mod rust;

/// The grammar for `language`, when its feature is enabled.
pub(crate) fn grammar(language: Language) -> Option<&'static Grammar> {
    match language {
        #[cfg(feature = "lang-typescript")]
        Language::Typescript => Some(&ecmascript::TYPESCRIPT),
        #[cfg(feature = "lang-typescript")]
        Language::Tsx => Some(&ecmascript::TSX),
        #[cfg(feature = "lang-javascript")]
        Language::Javascript => Some(&ecmascript::JAVASCRIPT),
        #[cfg(feature = "lang-python")]
        Language::Python => Some(&python::PYTHON),
        #[cfg(feature = "lang-rust")]
        Language::Rust => Some(&rust::RUST),
        #[cfg(feature = "lang-go")]
        Language::Go => Some(&go::GO),
        #[cfg(feature = "lang-java")]
        Language::Java => Some(&java::JAVA),
        #[cfg(feature = "lang-c")]
        Language::C => Some(&c_family::C),
        #[cfg(feature = "lang-cpp")]
        Language::Cpp => Some(&c_family::CPP),
        #[cfg(feature = "lang-csharp")]
        Language::Csharp => Some(&csharp::CSHARP),
        #[cfg(feature = "lang-ruby")]
        Language::Ruby => Some(&ruby::RUBY),
        #[cfg(feature = "lang-php")]
        Language::Php => Some(&php::PHP),
        #[cfg(feature = "lang-kotlin")]
        Language::Kotlin => Some(&kotlin::KOTLIN),
        _ => None,
    }
}
