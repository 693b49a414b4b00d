//! Path hygiene: every stored path is relative, `/`-separated, without `.`/`..`/empty segments,
//! so nothing can be written outside its namespace or alias another file.

/// Longest accepted path, in bytes.
pub const MAX_PATH_BYTES: usize = 1024;

/// Normalize a user- or archive-supplied path, or say why it is refused
/// (`ABSOLUTE_PATH`, `PATH_TRAVERSAL`, `INVALID_PATH`).
pub fn normalize(raw: &str) -> Result<String, &'static str> {
    if raw.is_empty() || raw.len() > MAX_PATH_BYTES * 2 {
        return Err("INVALID_PATH");
    }
    if raw.chars().any(|c| c.is_control()) {
        return Err("INVALID_PATH");
    }
    let bytes = raw.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if raw.starts_with('/') || raw.starts_with('\\') || drive {
        return Err("ABSOLUTE_PATH");
    }
    let mut parts = Vec::new();
    for part in raw.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => return Err("PATH_TRAVERSAL"),
            p => parts.push(p),
        }
    }
    let path = parts.join("/");
    if path.is_empty() || path.len() > MAX_PATH_BYTES {
        return Err("INVALID_PATH");
    }
    Ok(path)
}

/// Drop the first path segment (GitHub tarballs wrap everything in `owner-repo-sha/`).
/// `None` for the wrapper directory itself.
pub fn strip_first_segment(raw: &str) -> Option<&str> {
    let trimmed = raw.trim_start_matches("./");
    let (_, rest) = trimmed.split_once('/')?;
    (!rest.is_empty()).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_and_refuses() {
        assert_eq!(normalize("src/lib.rs"), Ok("src/lib.rs".into()));
        assert_eq!(normalize("./src//a/./b.rs"), Ok("src/a/b.rs".into()));
        assert_eq!(normalize("a\\b.rs"), Ok("a/b.rs".into()));
        assert_eq!(normalize("../etc/passwd"), Err("PATH_TRAVERSAL"));
        assert_eq!(normalize("a/../../b"), Err("PATH_TRAVERSAL"));
        assert_eq!(normalize("a\\..\\b"), Err("PATH_TRAVERSAL"));
        assert_eq!(normalize("/etc/passwd"), Err("ABSOLUTE_PATH"));
        assert_eq!(normalize("C:\\x"), Err("ABSOLUTE_PATH"));
        assert_eq!(normalize(""), Err("INVALID_PATH"));
        assert_eq!(normalize("./"), Err("INVALID_PATH"));
        assert_eq!(normalize("a\0b"), Err("INVALID_PATH"));
        assert_eq!(normalize(&"x".repeat(MAX_PATH_BYTES + 1)), Err("INVALID_PATH"));
    }

    #[test]
    fn strips_the_wrapper_directory() {
        assert_eq!(strip_first_segment("o-r-abc/src/a.rs"), Some("src/a.rs"));
        assert_eq!(strip_first_segment("o-r-abc/"), None);
        assert_eq!(strip_first_segment("o-r-abc"), None);
        assert_eq!(strip_first_segment("./o-r-abc/x"), Some("x"));
    }
}
