//! Which files a repository walk skips, for every caller (CLI, worker, preview). Pure: the caller
//! feeds paths and file contents, nothing here touches a file system.
//!
//! - Directories always skipped: [`ALWAYS_IGNORED_DIRS`] (`.git`, `.github`, `node_modules`,
//!   `dist`, `build`), at any depth.
//! - Patterns from `.gitignore` and `.mcpignore` files ([`IGNORE_FILE_NAMES`]) with gitignore
//!   semantics: `#` comments, `!` negation (last match wins), trailing `/` for directories only, a
//!   pattern with a `/` anchored to its file's directory, `*` / `?` / `[...]` within one path
//!   component, `**` across components. A file in a nested directory applies below that
//!   directory and overrides the files above it; a file inside an ignored directory cannot be
//!   re-included (git does not look inside ignored directories either).
//! - Content: binary (a NUL byte), over [`MAX_FILE_BYTES`], not UTF-8.
//!
//! ```
//! use edgerag_core::ignore::IgnoreRules;
//! let mut rules = IgnoreRules::new();
//! rules.add_ignore_file("", "*.log\n!keep.log\n/tmp/\n");
//! assert_eq!(rules.is_ignored("logs/app.log", false).unwrap().code(), "IGNORED_PATTERN");
//! assert!(rules.is_ignored("logs/keep.log", false).is_none());
//! assert_eq!(rules.is_ignored("node_modules/x/index.js", false).unwrap().code(), "IGNORED_DIR");
//! assert!(rules.is_ignored("src/tmp", true).is_none(), "`/tmp/` is anchored to the root");
//! ```
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Directory names skipped at any depth.
pub const ALWAYS_IGNORED_DIRS: &[&str] = &[".git", ".github", "node_modules", "dist", "build"];
/// Files whose patterns [`IgnoreRules::add_ignore_file`] understands, in the order to add them
/// (a later file of the same directory wins on conflicts).
pub const IGNORE_FILE_NAMES: &[&str] = &[".gitignore", ".mcpignore"];
/// Files larger than this are skipped (1 MiB).
pub const MAX_FILE_BYTES: usize = 1024 * 1024;

/// Why a path or a file is skipped. [`SkipReason::code`] is stable (API errors, CLI output).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(tag = "code", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SkipReason {
    #[error("inside an always-ignored directory ({dir})")]
    IgnoredDir { dir: String },
    #[error("matches ignore pattern {pattern:?} of {source_dir:?}")]
    IgnoredPattern { pattern: String, source_dir: String },
    #[error("binary file (contains NUL bytes)")]
    BinaryFile,
    #[error("file is {size} bytes, over the {limit}-byte limit")]
    FileTooLarge { size: usize, limit: usize },
    #[error("not valid UTF-8 (first bad byte at offset {offset})")]
    InvalidUtf8 { offset: usize },
}

impl SkipReason {
    pub fn code(&self) -> &'static str {
        match self {
            SkipReason::IgnoredDir { .. } => "IGNORED_DIR",
            SkipReason::IgnoredPattern { .. } => "IGNORED_PATTERN",
            SkipReason::BinaryFile => "BINARY_FILE",
            SkipReason::FileTooLarge { .. } => "FILE_TOO_LARGE",
            SkipReason::InvalidUtf8 { .. } => "INVALID_UTF8",
        }
    }
}

/// Check file bytes: at most [`MAX_FILE_BYTES`], no NUL byte, valid UTF-8.
pub fn check_content(bytes: &[u8]) -> Result<(), SkipReason> {
    check_content_with_limit(bytes, MAX_FILE_BYTES)
}

/// [`check_content`] with another size limit.
pub fn check_content_with_limit(bytes: &[u8], limit: usize) -> Result<(), SkipReason> {
    if bytes.len() > limit {
        return Err(SkipReason::FileTooLarge { size: bytes.len(), limit });
    }
    if bytes.contains(&0) {
        return Err(SkipReason::BinaryFile);
    }
    std::str::from_utf8(bytes).map(|_| ()).map_err(|e| SkipReason::InvalidUtf8 { offset: e.valid_up_to() })
}

/// One pattern line of an ignore file.
#[derive(Debug, Clone)]
struct Pattern {
    line: String,
    negated: bool,
    dir_only: bool,
}

/// The patterns of one ignore file, applying to paths below `dir`.
#[derive(Debug, Clone)]
struct IgnoreFile {
    dir: String,
    depth: usize,
    patterns: Vec<Pattern>,
    set: GlobSet,
}

/// The ignore rules of one tree: the built-in directories plus every ignore file added.
#[derive(Debug, Clone, Default)]
pub struct IgnoreRules {
    files: Vec<IgnoreFile>,
}

impl IgnoreRules {
    pub fn new() -> Self {
        IgnoreRules::default()
    }

    /// Add the contents of an ignore file (`.gitignore` / `.mcpignore`) found in directory `dir`
    /// (relative to the root, `""` for the root). Lines that are not valid patterns are skipped.
    pub fn add_ignore_file(&mut self, dir: &str, contents: &str) {
        let dir = normalize(dir).to_string();
        let mut patterns = Vec::new();
        let mut builder = GlobSetBuilder::new();
        for raw in contents.lines() {
            let Some((pattern, glob)) = parse_line(raw) else { continue };
            let Ok(glob) = GlobBuilder::new(&glob).literal_separator(true).backslash_escape(true).build()
            else {
                continue;
            };
            builder.add(glob);
            patterns.push(pattern);
        }
        let Ok(set) = builder.build() else { return };
        if patterns.is_empty() {
            return;
        }
        let depth = if dir.is_empty() { 0 } else { dir.split('/').count() };
        // Shallow files first, so deeper ones (and later ones at the same depth) decide last.
        let at = self.files.partition_point(|f| f.depth <= depth);
        self.files.insert(at, IgnoreFile { dir, depth, patterns, set });
    }

    /// Why `path` (relative to the root, `/`-separated) is skipped, or `None` to keep it.
    /// `is_dir` says whether `path` itself is a directory. Ancestors are checked too, so a file
    /// below an ignored directory is ignored even when checked on its own.
    pub fn is_ignored(&self, path: &str, is_dir: bool) -> Option<SkipReason> {
        let path = normalize(path);
        if path.is_empty() {
            return None;
        }
        let components: Vec<&str> = path.split('/').collect();
        let dirs = if is_dir { components.len() } else { components.len() - 1 };
        if let Some(dir) = components[..dirs].iter().find(|c| ALWAYS_IGNORED_DIRS.contains(c)) {
            return Some(SkipReason::IgnoredDir { dir: dir.to_string() });
        }
        // Each ancestor directory, then the path itself.
        let mut end = 0;
        for (i, c) in components.iter().enumerate() {
            end += if i == 0 { c.len() } else { c.len() + 1 };
            let last = i + 1 == components.len();
            if let Some(reason) = self.pattern_match(&path[..end], !last || is_dir) {
                return Some(reason);
            }
        }
        None
    }

    /// The decision of the patterns alone for one path (not its ancestors).
    fn pattern_match(&self, path: &str, is_dir: bool) -> Option<SkipReason> {
        let mut decision: Option<(&IgnoreFile, &Pattern)> = None;
        let mut hits = Vec::new();
        for file in &self.files {
            let rel = if file.dir.is_empty() {
                path
            } else {
                match path.strip_prefix(file.dir.as_str()).and_then(|r| r.strip_prefix('/')) {
                    Some(rel) if !rel.is_empty() => rel,
                    _ => continue,
                }
            };
            file.set.matches_into(rel, &mut hits);
            if let Some(&i) = hits.iter().filter(|&&i| is_dir || !file.patterns[i].dir_only).max() {
                decision = Some((file, &file.patterns[i]));
            }
        }
        match decision {
            Some((file, pattern)) if !pattern.negated => Some(SkipReason::IgnoredPattern {
                pattern: pattern.line.clone(),
                source_dir: if file.dir.is_empty() { ".".into() } else { file.dir.clone() },
            }),
            _ => None,
        }
    }
}

/// `./a/b/`, `/a/b`, `a\b` → `a/b`.
fn normalize(path: &str) -> &str {
    let mut p = path.trim_start_matches("./");
    while let Some(rest) = p.strip_prefix('/').or_else(|| p.strip_prefix("./")) {
        p = rest;
    }
    p.trim_end_matches('/')
}

/// Parse one ignore-file line into its pattern and the glob that implements it.
fn parse_line(raw: &str) -> Option<(Pattern, String)> {
    let line = raw.strip_suffix('\r').unwrap_or(raw);
    // Trailing spaces are dropped unless escaped with a backslash.
    let mut line = line.trim_end_matches(' ').to_string();
    if line.ends_with('\\') && raw.trim_end_matches('\r').len() > line.len() {
        line.push(' ');
    }
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let original = line.clone();
    let mut body = line.as_str();
    let negated = body.starts_with('!');
    // `!` negates; `\!` and `\#` are a literal first char.
    if negated || body.starts_with("\\!") || body.starts_with("\\#") {
        body = &body[1..];
    }
    let dir_only = body.ends_with('/');
    let body = body.trim_end_matches('/');
    if body.is_empty() {
        return None;
    }
    // A slash anywhere but at the end anchors the pattern to the ignore file's directory.
    let anchored = body.contains('/');
    let body = body.trim_start_matches('/');
    // gitignore has no `{a,b}` alternation: make braces literal for globset.
    let body = body.replace('{', "\\{").replace('}', "\\}");
    let glob = if anchored || body.starts_with("**/") { body } else { format!("**/{body}") };
    Some((Pattern { line: original, negated, dir_only }, glob))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn code(rules: &IgnoreRules, path: &str, is_dir: bool) -> &'static str {
        rules.is_ignored(path, is_dir).map_or("KEEP", |r| r.code())
    }

    #[test]
    fn built_in_directories_at_any_depth() {
        let rules = IgnoreRules::new();
        for path in [
            ".git/config",
            "a/node_modules/x.js",
            "dist/app.js",
            "pkg/build/out.o",
            ".github/workflows/ci.yml",
        ] {
            assert_eq!(code(&rules, path, false), "IGNORED_DIR", "{path}");
        }
        assert_eq!(code(&rules, "node_modules", true), "IGNORED_DIR");
        // Only directories: a file called `build` is kept.
        assert_eq!(code(&rules, "scripts/build", false), "KEEP");
        assert_eq!(code(&rules, "src/builder.rs", false), "KEEP");
    }

    #[test]
    fn gitignore_semantics() {
        let mut rules = IgnoreRules::new();
        rules.add_ignore_file(
            "",
            "# comment\n\n*.log\n!important.log\n/target\ncache/\ndocs/*.tmp\n**/gen/**\n\\#hash\nfoo[0-9].txt\n",
        );
        assert_eq!(code(&rules, "a.log", false), "IGNORED_PATTERN");
        assert_eq!(code(&rules, "deep/x/a.log", false), "IGNORED_PATTERN");
        assert_eq!(code(&rules, "deep/important.log", false), "KEEP");
        assert_eq!(code(&rules, "target", true), "IGNORED_PATTERN");
        assert_eq!(code(&rules, "target/debug/x", false), "IGNORED_PATTERN");
        assert_eq!(code(&rules, "src/target", true), "KEEP", "anchored to the root");
        assert_eq!(code(&rules, "a/cache", true), "IGNORED_PATTERN");
        assert_eq!(code(&rules, "a/cache", false), "KEEP", "dir-only pattern");
        assert_eq!(code(&rules, "a/cache/x.txt", false), "IGNORED_PATTERN");
        assert_eq!(code(&rules, "docs/a.tmp", false), "IGNORED_PATTERN");
        assert_eq!(code(&rules, "docs/sub/a.tmp", false), "KEEP", "`*` stays in one component");
        assert_eq!(code(&rules, "x/gen/y/z.rs", false), "IGNORED_PATTERN");
        assert_eq!(code(&rules, "#hash", false), "IGNORED_PATTERN");
        assert_eq!(code(&rules, "foo7.txt", false), "IGNORED_PATTERN");
        assert_eq!(code(&rules, "fooX.txt", false), "KEEP");
        assert_eq!(code(&rules, "./a.log", false), "IGNORED_PATTERN");
    }

    #[test]
    fn nested_files_apply_below_their_directory_and_override() {
        let mut rules = IgnoreRules::new();
        rules.add_ignore_file("", "*.txt\n");
        rules.add_ignore_file("sub", "!*.txt\n/local.md\n");
        assert_eq!(code(&rules, "a.txt", false), "IGNORED_PATTERN");
        assert_eq!(code(&rules, "sub/a.txt", false), "KEEP");
        assert_eq!(code(&rules, "sub/deeper/a.txt", false), "KEEP");
        assert_eq!(code(&rules, "sub/local.md", false), "IGNORED_PATTERN");
        assert_eq!(code(&rules, "local.md", false), "KEEP");
        assert_eq!(code(&rules, "other/sub/local.md", false), "KEEP");
        match rules.is_ignored("sub/local.md", false).unwrap() {
            SkipReason::IgnoredPattern { pattern, source_dir } => {
                assert_eq!((pattern.as_str(), source_dir.as_str()), ("/local.md", "sub"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn mcpignore_added_after_gitignore_wins() {
        let mut rules = IgnoreRules::new();
        rules.add_ignore_file("", "secret/\n");
        rules.add_ignore_file("", "*.snap\n!keep.snap\n");
        assert_eq!(code(&rules, "a.snap", false), "IGNORED_PATTERN");
        assert_eq!(code(&rules, "keep.snap", false), "KEEP");
        assert_eq!(code(&rules, "secret/x", false), "IGNORED_PATTERN");
    }

    #[test]
    fn a_file_in_an_ignored_directory_cannot_be_re_included() {
        let mut rules = IgnoreRules::new();
        rules.add_ignore_file("", "logs/\n!logs/keep.log\n");
        assert_eq!(code(&rules, "logs/keep.log", false), "IGNORED_PATTERN");
    }

    #[test]
    fn content_checks_have_stable_codes() {
        assert_eq!(check_content(b"fn main() {}\n"), Ok(()));
        assert_eq!(check_content(b"").map_err(|e| e.code()), Ok(()));
        assert_eq!(check_content(b"a\0b").unwrap_err().code(), "BINARY_FILE");
        assert_eq!(check_content(&[b'a', 0xff, 0xfe]).unwrap_err(), SkipReason::InvalidUtf8 { offset: 1 });
        assert_eq!(check_content(&vec![b'a'; MAX_FILE_BYTES + 1]).unwrap_err().code(), "FILE_TOO_LARGE");
        assert_eq!(check_content_with_limit(b"abcd", 3).unwrap_err().code(), "FILE_TOO_LARGE");
    }

    #[test]
    fn braces_are_literal_and_bad_lines_are_skipped() {
        let mut rules = IgnoreRules::new();
        rules.add_ignore_file("", "{a,b}.txt\n[unclosed\n!\n/\n");
        assert_eq!(code(&rules, "{a,b}.txt", false), "IGNORED_PATTERN");
        assert_eq!(code(&rules, "a.txt", false), "KEEP");
    }
}
