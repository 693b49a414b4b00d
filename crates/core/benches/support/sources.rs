//! Where the benches find real files at bench time (never copied into the repo): the cargo
//! registry sources and the repository's `node_modules`.
use std::path::{Path, PathBuf};

/// The directories searched for corpus files.
pub fn roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(home) = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
    {
        roots.push(home.join("registry/src"));
    }
    roots.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../node_modules"));
    roots
}

/// Files under `dir` accepted by `keep`, sorted, depth-first (the same order on every machine
/// holding the same files).
pub fn collect(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            collect(&e.path(), keep, out);
        } else if kind.is_file() && keep(&e.path()) {
            out.push(e.path());
        }
    }
}
