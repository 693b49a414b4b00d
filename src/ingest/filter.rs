//! What gets indexed: the core's ignore rules on paths (built-in directories + `.gitignore` /
//! `.mcpignore` patterns, `edgerag_core::ignore`), then size / binary / UTF-8 checks on contents.
//! The CLI walks directories with the same rules, so a file skipped locally is skipped here too.
use edgerag_core::ignore::{IgnoreRules, IGNORE_FILE_NAMES};
use edgerag_core::Language;

use super::{AcceptedFile, Candidate, Skip};

/// Ignore rules built from the ignore files found in an input (`(path, contents)` pairs; paths
/// already normalized). Files are added per directory in the core's order (`.gitignore`, then
/// `.mcpignore`, which wins on conflicts).
pub fn rules_from<'a>(ignore_files: impl IntoIterator<Item = (&'a str, &'a str)>) -> IgnoreRules {
    let mut found: Vec<(String, usize, &str)> = Vec::new();
    for (path, contents) in ignore_files {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        if let Some(rank) = IGNORE_FILE_NAMES.iter().position(|n| *n == name) {
            found.push((dir.to_string(), rank, contents));
        }
    }
    found.sort_by(|a, b| (a.0.as_str(), a.1).cmp(&(b.0.as_str(), b.1)));
    let mut rules = IgnoreRules::new();
    for (dir, _, contents) in found {
        rules.add_ignore_file(&dir, contents);
    }
    rules
}

/// True when `path`'s file name is an ignore file.
pub fn is_ignore_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    IGNORE_FILE_NAMES.contains(&name)
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

/// Why a normalized path is ignored (`IGNORED_DIR`, `IGNORED_PATTERN`), if it is.
pub fn ignored(rules: &IgnoreRules, path: &str) -> Option<&'static str> {
    rules.is_ignored(path, false).map(|r| r.code())
}

/// Normalize, apply the ignore rules and check the content of one named file.
pub fn classify(raw_path: &str, bytes: &[u8], rules: &IgnoreRules, max_file_bytes: usize) -> Candidate {
    match super::paths::normalize(raw_path) {
        Err(reason) => skip(raw_path, reason),
        Ok(path) => match ignored(rules, &path) {
            Some(reason) => skip(&path, reason),
            None => check_content(&path, bytes, max_file_bytes),
        },
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
        let rules = IgnoreRules::new();
        let ok = classify("./src/a.rs", b"fn a() {}\n", &rules, 100);
        match &ok {
            Candidate::Accepted(f) => {
                assert_eq!((f.path.as_str(), f.language.as_str(), f.size), ("src/a.rs", "rust", 10));
                assert_eq!(f.content_hash, edgerag_core::ids::content_hash(b"fn a() {}\n"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(reason(&classify("node_modules/x/a.js", b"x", &rules, 100)), "IGNORED_DIR");
        assert_eq!(reason(&classify("a/.git/config", b"x", &rules, 100)), "IGNORED_DIR");
        assert_eq!(reason(&classify("build.rs", b"x", &rules, 100)), "ACCEPTED");
        assert_eq!(reason(&classify("../x", b"x", &rules, 100)), "PATH_TRAVERSAL");
        assert_eq!(reason(&classify("/x", b"x", &rules, 100)), "ABSOLUTE_PATH");
        assert_eq!(reason(&classify("big.txt", &[b'a'; 101], &rules, 100)), "FILE_TOO_LARGE");
        assert_eq!(reason(&classify("a.bin", b"\x89PNG\0\0", &rules, 100)), "BINARY_FILE");
        assert_eq!(reason(&classify("a.txt", b"caf\xe9", &rules, 100)), "INVALID_UTF8");
    }

    #[test]
    fn ignore_files_of_the_input_apply() {
        let rules = rules_from([
            (".gitignore", "*.log\nsecret/\n"),
            (".mcpignore", "!keep.log\n"),
            ("docs/.gitignore", "draft.md\n"),
            ("README.md", "not an ignore file"),
        ]);
        assert_eq!(reason(&classify("app.log", b"x", &rules, 100)), "IGNORED_PATTERN");
        assert_eq!(reason(&classify("keep.log", b"x", &rules, 100)), "ACCEPTED");
        assert_eq!(reason(&classify("secret/key.txt", b"x", &rules, 100)), "IGNORED_PATTERN");
        assert_eq!(reason(&classify("docs/draft.md", b"x", &rules, 100)), "IGNORED_PATTERN");
        assert_eq!(reason(&classify("draft.md", b"x", &rules, 100)), "ACCEPTED");
        assert!(is_ignore_file("a/.mcpignore") && !is_ignore_file("gitignore"));
    }
}
