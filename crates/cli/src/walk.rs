//! Walking files and directories with the core's ignore rules (`.gitignore` / `.mcpignore` read
//! as directories are entered). Shared by the subcommands that read a tree (`chunk`, `index`).
use std::fs;
use std::path::{Path, PathBuf};

use edgerag_core::ignore::{check_content_with_limit, IgnoreRules, SkipReason, IGNORE_FILE_NAMES};

/// A file to process, or why a path was skipped.
pub enum Entry {
    /// `path` is how the file is named in chunks (the argument joined with the relative path,
    /// `/`-separated, without a leading `./`); `text` is its valid UTF-8 content.
    File {
        path: String,
        text: String,
    },
    Skipped {
        path: String,
        code: &'static str,
        message: String,
    },
}

/// Visit every file under `roots` in a stable (sorted) order. Explicitly named files skip the
/// ignore patterns but not the content checks; directories apply both.
pub fn walk(roots: &[String], max_file_bytes: usize, visit: &mut dyn FnMut(Entry)) {
    for root in roots {
        let path = Path::new(root);
        match fs::metadata(path) {
            Err(e) => visit(skipped(display(root, ""), "NOT_FOUND", e.to_string())),
            Ok(meta) if meta.is_dir() => {
                let mut rules = IgnoreRules::new();
                walk_dir(root, path, "", &mut rules, max_file_bytes, visit);
            }
            Ok(_) => visit(read_file(display(root, ""), path, max_file_bytes)),
        }
    }
}

fn walk_dir(
    root: &str,
    dir: &Path,
    rel: &str,
    rules: &mut IgnoreRules,
    max_file_bytes: usize,
    visit: &mut dyn FnMut(Entry),
) {
    for name in IGNORE_FILE_NAMES {
        if let Ok(contents) = fs::read_to_string(dir.join(name)) {
            rules.add_ignore_file(rel, &contents);
        }
    }
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => return visit(skipped(display(root, rel), "UNREADABLE", e.to_string())),
    };
    let mut children: Vec<(String, PathBuf, bool)> = Vec::new();
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            visit(skipped(display(root, rel), "INVALID_UTF8", format!("file name {:?}", entry.file_name())));
            continue;
        };
        let Ok(kind) = entry.file_type() else { continue };
        // Symlinked directories are not followed (no loops); symlinked files are read.
        let is_dir = kind.is_dir();
        if kind.is_symlink() && fs::metadata(entry.path()).map(|m| m.is_dir()).unwrap_or(true) {
            continue;
        }
        children.push((name, entry.path(), is_dir));
    }
    children.sort();
    for (name, path, is_dir) in children {
        let child_rel = if rel.is_empty() { name } else { format!("{rel}/{name}") };
        if let Some(reason) = rules.is_ignored(&child_rel, is_dir) {
            visit(skip_reason(display(root, &child_rel), &reason));
            continue;
        }
        if is_dir {
            walk_dir(root, &path, &child_rel, rules, max_file_bytes, visit);
        } else {
            visit(read_file(display(root, &child_rel), &path, max_file_bytes));
        }
    }
}

fn read_file(display: String, path: &Path, max_file_bytes: usize) -> Entry {
    // Check the size before reading a huge file into memory.
    if let Ok(meta) = fs::metadata(path) {
        if meta.len() > max_file_bytes as u64 {
            let reason = SkipReason::FileTooLarge { size: meta.len() as usize, limit: max_file_bytes };
            return skip_reason(display, &reason);
        }
    }
    match fs::read(path) {
        Err(e) => skipped(display, "UNREADABLE", e.to_string()),
        Ok(bytes) => match check_content_with_limit(&bytes, max_file_bytes) {
            Err(reason) => skip_reason(display, &reason),
            Ok(()) => match String::from_utf8(bytes) {
                Ok(text) => Entry::File { path: display, text },
                Err(e) => skipped(display, "INVALID_UTF8", e.to_string()),
            },
        },
    }
}

fn skipped(path: String, code: &'static str, message: String) -> Entry {
    Entry::Skipped { path, code, message }
}

fn skip_reason(path: String, reason: &SkipReason) -> Entry {
    skipped(path, reason.code(), reason.to_string())
}

/// `root` joined with `rel`, `/`-separated, without a leading `./`.
fn display(root: &str, rel: &str) -> String {
    let root = root.replace('\\', "/");
    if !root.is_empty() && root.chars().all(|c| c == '/') {
        return format!("/{rel}");
    }
    let mut root = root.trim_end_matches('/');
    while let Some(rest) = root.strip_prefix("./") {
        root = rest;
    }
    match (root, rel) {
        ("" | ".", "") => ".".to_string(),
        ("" | ".", rel) => rel.to_string(),
        (root, "") => root.to_string(),
        (root, rel) => format!("{root}/{rel}"),
    }
}

#[cfg(test)]
mod tests {
    use super::display;

    #[test]
    fn display_paths() {
        assert_eq!(display(".", "src/a.rs"), "src/a.rs");
        assert_eq!(display("./crates/", "x"), "crates/x");
        assert_eq!(display("a.md", ""), "a.md");
        assert_eq!(display("/abs", "b"), "/abs/b");
        assert_eq!(display("/", "b"), "/b");
    }
}
