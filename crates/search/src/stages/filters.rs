//! Result filters shared by both retrievers: path globs, languages, tags.
//!
//! Globs are read as [`edgerag_core::path_glob`] reads them (`*` crosses `/`, so `*.py` finds
//! Python files in every folder; `**` for any depth). Stores push filters down as far as they can
//! ([`SearchFilters::sql_globs`], [`SearchFilters::path_prefix`]) and then call
//! [`FilterMatcher::matches`] (from [`SearchFilters::matcher`]) for the exact answer.
pub use edgerag_core::path_glob::compile_glob;
use edgerag_core::path_glob::PathGlobs;
use edgerag_core::Language;
use serde::{Deserialize, Serialize};

/// Sanitized filters (see the sanitizer for how raw input becomes this).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchFilters {
    /// Path globs; a chunk matches when any glob matches. Empty = every path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Any of these languages. Empty = every language.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub languages: Vec<Language>,
    /// Any of these tags. Empty = no tag filter.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// Compiled form of [`SearchFilters`] for exact matching.
#[derive(Debug, Clone)]
pub struct FilterMatcher {
    globs: PathGlobs,
    /// The globs as written (what a remembered answer per path is keyed by).
    patterns: Vec<String>,
    languages: Vec<Language>,
    tags: Vec<String>,
}

impl SearchFilters {
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty() && self.languages.is_empty() && self.tags.is_empty()
    }

    /// Compile the globs. Invalid globs were already dropped by the sanitizer; any left are
    /// ignored here rather than failing a search.
    pub fn matcher(&self) -> FilterMatcher {
        FilterMatcher {
            globs: PathGlobs::new(&self.paths),
            patterns: self.paths.clone(),
            languages: self.languages.clone(),
            tags: self.tags.clone(),
        }
    }

    /// The longest literal path prefix shared by every glob (for indexes that only filter by
    /// prefix, like Vectorize); `None` when there is no useful prefix.
    pub fn path_prefix(&self) -> Option<String> {
        let prefixes: Vec<&str> = self.paths.iter().map(|p| literal_prefix(p)).collect();
        let first = *prefixes.first()?;
        let mut len = first.len();
        for p in &prefixes[1..] {
            len = len.min(common_prefix_len(first, p));
        }
        let prefix = &first[..len];
        (!prefix.is_empty()).then(|| prefix.to_string())
    }

    /// SQLite `GLOB` patterns that select a superset of what the globs match (SQLite's `*` also
    /// crosses `/`, `**` becomes `*`, `{a,b}` alternatives are expanded). The caller ORs them and
    /// then applies [`FilterMatcher::matches_path`] for the exact result.
    pub fn sql_globs(&self) -> Vec<String> {
        let mut out = Vec::new();
        for pattern in &self.paths {
            for alt in expand_braces(pattern) {
                let mut sql = String::with_capacity(alt.len());
                let mut chars = alt.chars().peekable();
                while let Some(c) = chars.next() {
                    match c {
                        '*' => {
                            let mut stars = 1;
                            while chars.peek() == Some(&'*') {
                                chars.next();
                                stars += 1;
                            }
                            // `**/` also matches zero folders: drop the separator it owns.
                            if stars > 1 && chars.peek() == Some(&'/') {
                                chars.next();
                            }
                            if !sql.ends_with('*') {
                                sql.push('*');
                            }
                        }
                        '\\' => match chars.next() {
                            // An escaped metacharacter becomes a one-character class in SQLite.
                            Some(e @ ('*' | '?' | '[' | ']')) => {
                                sql.push('[');
                                sql.push(e);
                                sql.push(']');
                            }
                            Some(e) => sql.push(e),
                            None => {}
                        },
                        c => sql.push(c),
                    }
                }
                if !out.contains(&sql) {
                    out.push(sql);
                }
            }
        }
        out
    }
}

impl FilterMatcher {
    /// No filter: every chunk matches.
    pub fn accepts_all(&self) -> bool {
        self.globs.accepts_all() && self.languages.is_empty() && self.tags.is_empty()
    }

    pub fn matches_path(&self, path: &str) -> bool {
        self.globs.is_match(path)
    }

    /// The path globs as written: two matchers with the same ones pass the same paths.
    pub fn path_patterns(&self) -> &[String] {
        &self.patterns
    }

    pub fn matches(&self, path: &str, language: Language, tags: &[String]) -> bool {
        self.matches_fields(language, tags) && self.matches_path(path)
    }

    /// [`Self::matches`] without the path (for a caller that matches each distinct path once).
    pub fn matches_fields(&self, language: Language, tags: &[String]) -> bool {
        (self.languages.is_empty() || self.languages.contains(&language))
            && (self.tags.is_empty() || self.tags.iter().any(|t| tags.contains(t)))
    }
}

fn literal_prefix(pattern: &str) -> &str {
    let end = pattern.find(['*', '?', '[', '{', '\\']).unwrap_or(pattern.len());
    &pattern[..end]
}

fn common_prefix_len(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .take_while(|((_, x), y)| x == y)
        .map(|((i, x), _)| i + x.len_utf8())
        .last()
        .unwrap_or(0)
}

/// `src/{a,b}/*.{ts,tsx}` → the four plain alternatives (one level of nesting per brace group).
fn expand_braces(pattern: &str) -> Vec<String> {
    let Some(open) = pattern.find('{') else { return vec![pattern.to_string()] };
    let Some(close_rel) = pattern[open..].find('}') else { return vec![pattern.to_string()] };
    let close = open + close_rel;
    let (head, body, tail) = (&pattern[..open], &pattern[open + 1..close], &pattern[close + 1..]);
    body.split(',').flat_map(|alt| expand_braces(&format!("{head}{alt}{tail}"))).take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filters(paths: &[&str]) -> SearchFilters {
        SearchFilters { paths: paths.iter().map(|p| p.to_string()).collect(), ..Default::default() }
    }

    #[test]
    fn globs_cross_folders_like_people_expect() {
        let m = filters(&["*.py"]).matcher();
        assert!(m.matches_path("a/b/c.py"));
        assert!(!m.matches_path("a/b/c.rs"));
        let m = filters(&["src/**/*.ts", "docs/*"]).matcher();
        assert!(m.matches_path("src/x/y/z.ts"));
        assert!(m.matches_path("docs/guide/intro.md"));
        assert!(!m.matches_path("lib/z.ts"));
    }

    #[test]
    fn languages_and_tags_filter() {
        let f =
            SearchFilters { languages: vec![Language::Rust], tags: vec!["api".into()], ..Default::default() };
        let m = f.matcher();
        assert!(m.matches("a.rs", Language::Rust, &["api".into()]));
        assert!(!m.matches("a.rs", Language::Rust, &[]));
        assert!(!m.matches("a.py", Language::Python, &["api".into()]));
    }

    #[test]
    fn prefix_and_sql_pushdown() {
        assert_eq!(filters(&["src/auth/**", "src/api/*.ts"]).path_prefix().as_deref(), Some("src/a"));
        assert_eq!(filters(&["*.py"]).path_prefix(), None);
        assert_eq!(filters(&[]).path_prefix(), None);
        assert_eq!(filters(&["src/**/*.{ts,tsx}"]).sql_globs(), ["src/*.ts", "src/*.tsx"]);
        assert_eq!(filters(&["a\\*b"]).sql_globs(), ["a[*]b"]);
    }
}
