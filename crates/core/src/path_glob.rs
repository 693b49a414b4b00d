//! Path globs as every part of edgerag reads them: `globset` with `*` allowed to cross `/` (so
//! `*.py` finds Python files in every folder, as people expect), `**` for any depth and `\` to
//! escape a metacharacter. Search filters and the vector indexes that filter by glob share this.
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Compile one glob.
pub fn compile_glob(pattern: &str) -> Result<globset::Glob, globset::Error> {
    GlobBuilder::new(pattern).literal_separator(false).backslash_escape(true).build()
}

/// A compiled list of globs: a path passes when any of them matches it. No globs at all means
/// every path passes; a glob that does not compile matches nothing (sanitizers reject those first).
#[derive(Debug, Clone, Default)]
pub struct PathGlobs(Option<GlobSet>);

impl PathGlobs {
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Self {
        if patterns.is_empty() {
            return PathGlobs(None);
        }
        let mut builder = GlobSetBuilder::new();
        for pattern in patterns {
            if let Ok(glob) = compile_glob(pattern.as_ref()) {
                builder.add(glob);
            }
        }
        // An empty set (every glob invalid) matches nothing, as it should.
        PathGlobs(Some(builder.build().unwrap_or_else(|_| GlobSet::empty())))
    }

    /// No globs: every path passes.
    pub fn accepts_all(&self) -> bool {
        self.0.is_none()
    }

    pub fn is_match(&self, path: &str) -> bool {
        self.0.as_ref().is_none_or(|g| g.is_match(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_crosses_folders_and_double_star_any_depth() {
        let g = PathGlobs::new(&["*.py", "docs/**/*.md"]);
        assert!(g.is_match("a.py") && g.is_match("src/deep/a.py"));
        assert!(g.is_match("docs/a.md") && g.is_match("docs/x/y/a.md"));
        assert!(!g.is_match("src/a.md") && !g.is_match("a.pyc"));
    }

    #[test]
    fn no_globs_pass_everything_and_invalid_ones_match_nothing() {
        assert!(PathGlobs::new::<&str>(&[]).accepts_all());
        assert!(PathGlobs::new::<&str>(&[]).is_match("any/path"));
        let bad = PathGlobs::new(&["src/[a"]);
        assert!(!bad.accepts_all() && !bad.is_match("src/[a") && !bad.is_match("src/a"));
    }

    #[test]
    fn a_backslash_escapes_a_metacharacter() {
        let g = PathGlobs::new(&[r"src/\*.rs"]);
        assert!(g.is_match("src/*.rs") && !g.is_match("src/a.rs"));
    }
}
