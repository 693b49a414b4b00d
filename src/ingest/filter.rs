//! What gets indexed: ignore rules on paths, then size / binary / UTF-8 checks on contents.
use edgerag_core::Language;

use super::{AcceptedFile, Candidate, Skip};

/// Directories never indexed (seed 003), at any depth.
pub const IGNORED_DIRS: &[&str] = &[".git", ".github", "node_modules", "dist", "build"];

/// Path-based ignore rules. Every source (uploads, archives, GitHub) goes through the same rules.
#[derive(Debug, Clone)]
pub struct IgnoreRules {
    /// When false (e.g. a benchmark indexing a package tree on purpose), only explicit checks apply.
    pub skip_default_dirs: bool,
}

impl IgnoreRules {
    pub fn standard() -> IgnoreRules {
        IgnoreRules { skip_default_dirs: true }
    }

    /// No path rules at all (content checks still apply).
    pub fn none() -> IgnoreRules {
        IgnoreRules { skip_default_dirs: false }
    }

    /// True when a normalized relative path must not be indexed.
    pub fn is_ignored(&self, path: &str) -> bool {
        if !self.skip_default_dirs {
            return false;
        }
        let mut segments: Vec<&str> = path.split('/').collect();
        segments.pop(); // the file name itself
        segments.iter().any(|s| IGNORED_DIRS.contains(s))
    }
}

/// Check a file's bytes; `path` is already normalized and not ignored.
pub fn check_content(path: &str, bytes: &[u8], max_file_bytes: usize) -> Candidate {
    if bytes.len() > max_file_bytes {
        return skip(path, "FILE_TOO_LARGE");
    }
    if bytes.contains(&0) {
        return skip(path, "BINARY_FILE");
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(_) => return skip(path, "INVALID_UTF8"),
    };
    Candidate::Accepted(AcceptedFile {
        path: path.to_string(),
        text: text.to_string(),
        content_hash: edgerag_core::ids::content_hash(bytes),
        size: bytes.len() as u64,
        language: Language::detect(path).as_str().to_string(),
    })
}

/// Normalize, apply the ignore rules and check the content of one named file.
pub fn classify(raw_path: &str, bytes: &[u8], rules: &IgnoreRules, max_file_bytes: usize) -> Candidate {
    match super::paths::normalize(raw_path) {
        Err(reason) => skip(raw_path, reason),
        Ok(path) if rules.is_ignored(&path) => skip(&path, "IGNORED"),
        Ok(path) => check_content(&path, bytes, max_file_bytes),
    }
}

pub fn skip(path: &str, reason: &'static str) -> Candidate {
    Candidate::Skipped(Skip { path: path.to_string(), reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(c: &Candidate) -> &'static str {
        match c {
            Candidate::Skipped(s) => s.reason,
            Candidate::Accepted(_) => "ACCEPTED",
        }
    }

    #[test]
    fn classifies_every_case() {
        let rules = IgnoreRules::standard();
        let ok = classify("./src/a.rs", b"fn a() {}\n", &rules, 100);
        match &ok {
            Candidate::Accepted(f) => {
                assert_eq!((f.path.as_str(), f.language.as_str(), f.size), ("src/a.rs", "rust", 10));
                assert_eq!(f.content_hash, edgerag_core::ids::content_hash(b"fn a() {}\n"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(reason(&classify("node_modules/x/a.js", b"x", &rules, 100)), "IGNORED");
        assert_eq!(reason(&classify("a/.git/config", b"x", &rules, 100)), "IGNORED");
        assert_eq!(reason(&classify("build.rs", b"x", &rules, 100)), "ACCEPTED");
        assert_eq!(reason(&classify("../x", b"x", &rules, 100)), "PATH_TRAVERSAL");
        assert_eq!(reason(&classify("/x", b"x", &rules, 100)), "ABSOLUTE_PATH");
        assert_eq!(reason(&classify("big.txt", &[b'a'; 101], &rules, 100)), "FILE_TOO_LARGE");
        assert_eq!(reason(&classify("a.bin", b"\x89PNG\0\0", &rules, 100)), "BINARY_FILE");
        assert_eq!(reason(&classify("a.txt", b"caf\xe9", &rules, 100)), "INVALID_UTF8");
        let all = IgnoreRules::none();
        assert_eq!(reason(&classify("node_modules/x/a.js", b"x", &all, 100)), "ACCEPTED");
    }
}
