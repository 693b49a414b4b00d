//! Deterministic query analysis and expansion (no LLM needed, always available):
//! identifier splitting (`getUserData` → `get user data`), identifier synthesis from words
//! (`parse config file` → `parseConfigFile parse_config_file`), path / extension hints, the
//! languages a query names, and whether it asks about tests.
use edgerag_core::text::split_identifier;
use edgerag_core::Language;
use serde::Serialize;

use crate::query::{is_stopword, tokenize};

/// What the query itself tells the post-processing modules.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryAnalysis {
    /// Languages named in the query (`in python`, `.rs`, `TypeScript`) plus the language filter.
    pub languages: Vec<Language>,
    /// Path fragments named in the query (`src/auth`, `session.ts`).
    pub path_hints: Vec<String>,
    /// The query is about tests (`test`, `spec`, `unit test`): test files are not penalized.
    pub wants_tests: bool,
    /// The query is about documentation (`docs`, `README`, `guide`, `changelog`, `install`):
    /// prose is not ranked below code.
    pub wants_docs: bool,
    /// Names the query writes in code shape (`parse_args`, `OrderEntry`, `Config.Load`,
    /// `Session.request`, `new()`): each segment of a qualified name.
    pub identifiers: Vec<String>,
    /// The query's other words as written (`Compress`, `Mount`): a definition may still be named
    /// by one, case and all.
    pub words: Vec<String>,
    /// Every content word of the query, lowercase, identifier parts split (`pretty-printed
    /// byte vector` → `pretty printed byte vector`).
    pub content_words: Vec<String>,
    /// Single names the query quotes as code: in backticks (`` `u128` ``) or in a Javadoc tag
    /// (`{@code typeArguments}`, `{@link TypeName}`), as written.
    pub quoted: Vec<String>,
}

/// The single names `query` quotes as code (see [`QueryAnalysis::quoted`]).
fn quoted_names(query: &str) -> Vec<String> {
    let is_name = |s: &str| {
        s.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    let mut out: Vec<String> = Vec::new();
    let mut push = |name: &str| {
        if is_name(name) && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    };
    // Between an opening and a closing backtick: the odd parts, save a last one left open.
    let parts: Vec<&str> = query.split('`').collect();
    for part in parts.iter().take(parts.len().saturating_sub(1)).skip(1).step_by(2) {
        push(part);
    }
    for tag in ["{@code ", "{@link "] {
        for (at, _) in query.match_indices(tag) {
            let rest = &query[at + tag.len()..];
            if let Some(end) = rest.find('}') {
                push(&rest[..end]);
            }
        }
    }
    out
}

/// Whether a name is written the way code names things: `snake_case`, `camelCase` / `PascalCase`
/// with an inner capital, or a qualified `a.b` / `a::b` / `a#b`.
pub(crate) fn code_shaped(core: &str) -> bool {
    let has_letters = core.chars().any(|c| c.is_alphabetic());
    let inner_capital =
        core.chars().zip(core.chars().skip(1)).any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    let joined = |sep: &str| {
        core.split(sep).filter(|p| !p.is_empty()).count() > 1 && core.split(sep).all(|p| !p.is_empty())
    };
    has_letters
        && (inner_capital
            || core.trim_matches('_').contains('_')
            || joined("::")
            || joined(".")
            || joined("#"))
}

/// The segments of a name (`a.b::c#d` → `a`, `b`, `c`, `d`) that are identifiers.
fn name_segments(name: &str) -> impl Iterator<Item = &str> {
    name.split(['.', ':', '#'])
        .filter(|p| p.len() > 1 && p.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$'))
}

/// Analyse a query (languages from `filter_languages` are included).
pub fn analyse(query: &str, filter_languages: &[Language]) -> QueryAnalysis {
    let mut languages: Vec<Language> = filter_languages.to_vec();
    let mut path_hints = Vec::new();
    let mut wants_tests = false;
    let mut wants_docs = false;
    let (mut identifiers, mut words) = (Vec::<String>::new(), Vec::<String>::new());
    for raw in query.split_whitespace() {
        let token =
            raw.trim_start_matches(['"', '\'', '`', '(', '[', '{', '<']).trim_end_matches(|c: char| {
                matches!(c, '"' | '\'' | '`' | ',' | ';' | ':' | ')' | ']' | '}' | '>' | '?' | '!' | '.')
            });
        // A call (`new()`) is code however its name is written; the trim above took its `)`.
        let call = raw.trim_end_matches(['"', '\'', '`', ',', ';', ':', '?', '!', '.']).ends_with("()");
        let named = token.trim_end_matches(['(', ')']);
        let list = if call || code_shaped(named) { &mut identifiers } else { &mut words };
        for segment in name_segments(named) {
            if !list.iter().any(|s| s == segment) {
                list.push(segment.to_string());
            }
        }
        let token = raw
            .trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | ',' | ';' | ':' | '(' | ')' | '?' | '!'));
        let token = token.trim_end_matches('.');
        if token.is_empty() {
            continue;
        }
        let lower = token.to_lowercase();
        if matches!(lower.as_str(), "test" | "tests" | "testing" | "spec" | "specs" | "unittest" | "pytest") {
            wants_tests = true;
        }
        if matches!(
            lower.as_str(),
            "doc"
                | "docs"
                | "documentation"
                | "documented"
                | "readme"
                | "guide"
                | "tutorial"
                | "changelog"
                | "faq"
                | "install"
                | "installation"
                | "manual"
                | "howto"
        ) {
            wants_docs = true;
        }
        // A path or a file name with a known extension.
        let looks_like_file = lower.rsplit_once('.').is_some_and(|(stem, ext)| {
            !ext.is_empty()
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && Language::detect(&lower) != Language::Text
                || (stem.is_empty() && Language::from_name(ext).is_some())
        });
        if token.contains('/') || looks_like_file {
            if let Some(ext) = lower.rsplit_once('.').map(|(_, e)| e) {
                let lang = Language::detect(&format!("x.{ext}"));
                if lang != Language::Text && !languages.contains(&lang) {
                    languages.push(lang);
                }
            }
            let hint = token.trim_start_matches("./").trim_start_matches('*').trim_start_matches('/');
            if hint.len() > 1 && !hint.starts_with('.') && !path_hints.contains(&hint.to_string()) {
                path_hints.push(hint.to_string());
            }
            continue;
        }
        if let Some(lang) = language_word(&lower) {
            if !languages.contains(&lang) {
                languages.push(lang);
            }
        }
    }
    let content_words = query
        .split(|c: char| !c.is_alphanumeric())
        .flat_map(split_identifier)
        .filter(|w| w.chars().count() > 1 && !is_stopword(w))
        .collect();
    let quoted = quoted_names(query);
    QueryAnalysis {
        languages,
        path_hints,
        wants_tests,
        wants_docs,
        identifiers,
        words,
        content_words,
        quoted,
    }
}

/// A word that names a language. Ambiguous English words (`go`, `c`, `rust` is fine) need a
/// less ambiguous spelling (`golang`).
fn language_word(lower: &str) -> Option<Language> {
    match lower {
        "python" | "py" => Some(Language::Python),
        "rust" => Some(Language::Rust),
        "typescript" | "ts" => Some(Language::Typescript),
        "tsx" => Some(Language::Tsx),
        "javascript" | "js" | "node" | "nodejs" => Some(Language::Javascript),
        "golang" => Some(Language::Go),
        "java" => Some(Language::Java),
        "kotlin" => Some(Language::Kotlin),
        "c++" | "cpp" => Some(Language::Cpp),
        "c#" | "csharp" => Some(Language::Csharp),
        "ruby" => Some(Language::Ruby),
        "php" => Some(Language::Php),
        "swift" => Some(Language::Swift),
        "scala" => Some(Language::Scala),
        "markdown" | "readme" | "docs" | "documentation" => Some(Language::Markdown),
        "sql" => Some(Language::Sql),
        "bash" | "shell" => Some(Language::Shell),
        _ => None,
    }
}

/// The query with compound identifiers split: `where is getUserData` →
/// `where is get user data`. `None` when nothing was split.
pub fn split_identifiers_form(query: &str) -> Option<String> {
    let mut changed = false;
    let words: Vec<String> = query
        .split_whitespace()
        .map(|w| {
            let parts = split_identifier(w);
            if parts.len() > 1 && w.chars().any(|c| c.is_alphabetic()) {
                changed = true;
                parts.join(" ")
            } else {
                w.to_string()
            }
        })
        .collect();
    changed.then(|| words.join(" "))
}

/// Content words (no function words), lowercase, in order.
pub fn content_words(query: &str) -> Vec<String> {
    tokenize(query).filter(|t| t.chars().count() > 1 && !is_stopword(t)).collect()
}

/// Code spellings of adjacent content words: `parse config file` →
/// `parseConfig configFile parseConfigFile parse_config config_file parse_config_file`.
/// `None` when the query has fewer than two content words.
pub fn identifier_forms(query: &str) -> Option<String> {
    let words = content_words(query);
    if words.len() < 2 {
        return None;
    }
    let mut forms: Vec<String> = Vec::new();
    for n in [2usize, 3] {
        for window in words.windows(n).take(6) {
            if window.iter().any(|w| w.chars().all(|c| c.is_ascii_digit())) {
                continue;
            }
            let camel: String = window
                .iter()
                .enumerate()
                .map(|(i, w)| if i == 0 { w.clone() } else { capitalize(w) })
                .collect();
            let snake = window.join("_");
            for form in [camel, snake] {
                if !forms.contains(&form) {
                    forms.push(form);
                }
            }
        }
    }
    (!forms.is_empty()).then(|| forms.join(" "))
}

fn capitalize(w: &str) -> String {
    let mut c = w.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Deterministic sub-queries for multi-query without an LLM, distinct from the query and from
/// each other, at most `n - 1` of them: the identifier-split form, the query followed by the code
/// spellings of its adjacent words, and the content words alone.
pub fn deterministic_subqueries(query: &str, n: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let words = content_words(query);
    let mut candidates = Vec::new();
    if let Some(split) = split_identifiers_form(query) {
        candidates.push(split);
    }
    if let Some(forms) = identifier_forms(query) {
        // The query itself, then its spellings: its keyword terms are the query's, then more
        // (the keyword index ranks such a list from the query's own scores).
        candidates.push(format!("{query} {forms}"));
    }
    if !words.is_empty() {
        candidates.push(words.join(" "));
    }
    for c in candidates {
        if out.len() + 1 >= n {
            break;
        }
        if c != query && !out.contains(&c) && !c.trim().is_empty() {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_about_documentation_are_recognised() {
        assert!(analyse("where do the docs explain install steps?", &[]).wants_docs);
        assert!(analyse("README badge", &[]).wants_docs);
        assert!(!analyse("parse the config file", &[]).wants_docs);
    }

    #[test]
    fn names_in_code_shape_and_plain_words_are_told_apart() {
        let a =
            analyse("fix `Config.Load` so parse_args() and OrderEntry keep Compress working, e.g. here", &[]);
        assert_eq!(a.identifiers, ["Config", "Load", "parse_args", "OrderEntry"]);
        assert!(a.words.contains(&"Compress".to_string()) && a.words.contains(&"fix".to_string()));
        assert!(!a.words.iter().chain(&a.identifiers).any(|w| w == "e" || w == "g"));
        assert_eq!(analyse("call new() or render().", &[]).identifiers, ["new", "render"]);
        let a = analyse("Mount attaches another http.Handler (see Router::route) here.", &[]);
        assert_eq!(a.identifiers, ["http", "Handler", "Router", "route"]);
        assert_eq!(a.words[0], "Mount");
    }

    #[test]
    fn finds_languages_paths_and_tests() {
        let a = analyse("how does src/auth/session.ts refresh tokens in TypeScript?", &[]);
        assert_eq!(a.languages, [Language::Typescript]);
        assert_eq!(a.path_hints, ["src/auth/session.ts"]);
        assert!(!a.wants_tests);
        let a = analyse("python tests for the *.rs parser", &[Language::Go]);
        assert_eq!(a.languages, [Language::Go, Language::Python, Language::Rust]);
        assert!(a.wants_tests);
        assert_eq!(analyse("let's go to the store.", &[]).languages, []);
        assert_eq!(analyse("e.g. this, i.e. that", &[]).path_hints, Vec::<String>::new());
    }

    #[test]
    fn identifier_splitting_and_synthesis() {
        assert_eq!(
            split_identifiers_form("where is getUserData used").as_deref(),
            Some("where is get user data used")
        );
        assert_eq!(split_identifiers_form("plain words"), None);
        assert_eq!(
            identifier_forms("how to parse the config file").as_deref(),
            Some("parseConfig parse_config configFile config_file parseConfigFile parse_config_file")
        );
        assert_eq!(identifier_forms("retry"), None);
    }

    #[test]
    fn subqueries_are_distinct_and_bounded() {
        let q = "how does getUserData cache results";
        let subs = deterministic_subqueries(q, 3);
        assert_eq!(subs.len(), 2);
        assert_eq!(subs[0], "how does get user data cache results");
        assert!(subs[1].starts_with("how does getUserData cache results getuserdataCache"), "{subs:?}");
        assert!(deterministic_subqueries(q, 1).is_empty());
        assert!(deterministic_subqueries("retry", 3).is_empty());
    }
}
