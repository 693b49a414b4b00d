//! One file per language family, each exposing a [`Grammar`] per language behind its cargo
//! feature. Which grammar a language uses is said in the language registry,
//! [`crate::lang::registry`], with the template for adding a language.
use super::grammar::Grammar;
use crate::lang::{registry, Language};

crate::lang::registry::family_modules!();

/// The grammar for `language`, when its feature is enabled.
pub(crate) fn grammar(language: Language) -> Option<&'static Grammar> {
    registry::entry(language).grammar
}
