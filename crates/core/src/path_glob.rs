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

/// Which paths of an append-only list pass a path filter, remembered for the last few filters:
/// a client tends to send the same filter again (an agent narrowing to `src/**/*.rs` for a whole
/// task), and matching distinct paths against compiled globs is then the largest cost of a
/// filtered query. Paths are only ever appended, so what is remembered stays true; paths added
/// since are decided when first asked about.
///
/// Not part of the value that holds it: a clone starts empty and any two compare equal.
#[derive(Debug, Default)]
pub struct PathVerdicts<K> {
    recent: std::sync::Mutex<Vec<(K, Vec<Option<bool>>)>>,
}

/// How many filters [`PathVerdicts`] remembers.
pub const REMEMBERED_FILTERS: usize = 8;

impl<K: PartialEq> PathVerdicts<K> {
    /// `work` gets the verdicts of the filter `key` for the first `count` paths (`None`: not
    /// decided yet) and may decide more; they are remembered as the most recent filter's.
    pub fn with<R>(&self, key: K, count: usize, work: impl FnOnce(&mut [Option<bool>]) -> R) -> R {
        let mut recent = self.recent.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut verdicts = match recent.iter().position(|(k, _)| *k == key) {
            Some(i) => recent.remove(i).1,
            None => Vec::new(),
        };
        // Lists only grow; a shorter `count` (a rebuilt list) drops what no longer applies.
        verdicts.resize(count, None);
        let out = work(&mut verdicts);
        recent.insert(0, (key, verdicts));
        recent.truncate(REMEMBERED_FILTERS);
        out
    }

    /// Every one of the first `count` verdicts, `decide(i)` for those not known yet.
    pub fn all(&self, key: K, count: usize, mut decide: impl FnMut(usize) -> bool) -> Vec<bool> {
        self.with(key, count, |verdicts| {
            verdicts.iter_mut().enumerate().map(|(i, v)| *v.get_or_insert_with(|| decide(i))).collect()
        })
    }
}

impl<K> Clone for PathVerdicts<K> {
    fn clone(&self) -> Self {
        PathVerdicts { recent: std::sync::Mutex::new(Vec::new()) }
    }
}

impl<K> PartialEq for PathVerdicts<K> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_remembered_per_filter_and_completed_for_new_paths() {
        let memo = PathVerdicts::<&str>::default();
        let paths = ["a.py", "b.rs", "c.py", "d.py"];
        let mut decided = Vec::new();
        let mut run = |key, count| {
            let globs = PathGlobs::new(&[key]);
            memo.all(key, count, |i| {
                decided.push((key, i));
                globs.is_match(paths[i])
            })
        };
        assert_eq!(run("*.py", 3), [true, false, true]);
        assert_eq!(run("*.py", 3), [true, false, true]);
        assert_eq!(run("*.rs", 2), [false, true]);
        // One more path since: only it is decided.
        assert_eq!(run("*.py", 4), [true, false, true, true]);
        assert_eq!(decided, [("*.py", 0), ("*.py", 1), ("*.py", 2), ("*.rs", 0), ("*.rs", 1), ("*.py", 3)]);
    }

    #[test]
    fn only_the_most_recent_filters_are_remembered() {
        let memo = PathVerdicts::<usize>::default();
        let mut calls = 0;
        for key in 0..=REMEMBERED_FILTERS {
            memo.all(key, 1, |_| {
                calls += 1;
                true
            });
        }
        // The first filter was pushed out by the later ones; the last is still there.
        memo.all(REMEMBERED_FILTERS, 1, |_| {
            calls += 1;
            true
        });
        memo.all(0, 1, |_| {
            calls += 1;
            true
        });
        assert_eq!(calls, REMEMBERED_FILTERS + 2);
        assert_eq!(memo.clone().recent.lock().map(|r| r.len()).unwrap_or(1), 0);
    }

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
