//! Seed inputs built from the repository's fixtures, so the fuzzer starts from real files and
//! archives. `tests/replay.rs` runs them and, with `EDGERAG_FUZZ_SEEDS_OUT=<dir>`, writes them to
//! `<dir>/<target>/` for `cargo fuzz run` (scripts/test.d/15-fuzz.sh).
use std::fs;
use std::path::{Path, PathBuf};

use edgerag_core::Language;

/// The repository root (this crate lives in `<root>/fuzz`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("fuzz/ has a parent").to_path_buf()
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files_under(&path, out);
        } else if path.extension().is_none_or(|e| e != "snap") {
            out.push(path);
        }
    }
}

/// `(name, input)` seeds of `target`; the committed ones in `fuzz/seeds/<target>/` included.
pub fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let root = repo_root();
    let mut out = Vec::new();
    let mut committed = Vec::new();
    files_under(&root.join("fuzz/seeds").join(target), &mut committed);
    for path in committed {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        out.push((name, fs::read(&path).expect("seed readable")));
    }
    match target {
        "chunk_code" | "chunk_text" => {
            let mut fixtures = Vec::new();
            files_under(&root.join("tests/fixtures"), &mut fixtures);
            for path in fixtures {
                let rel =
                    path.strip_prefix(&root).expect("under the root").to_string_lossy().replace('\\', "/");
                let language = Language::detect(&rel);
                let text_like = matches!(language, Language::Markdown | Language::Text);
                if (target == "chunk_text") != text_like {
                    continue;
                }
                let bytes = fs::read(&path).expect("fixture readable");
                // The defaults, and small limits that force splits and overlap.
                for (suffix, config) in [("", ""), ("-small", " 12 80 2 1 3")] {
                    let mut input = format!("{rel}{config}\n").into_bytes();
                    input.extend_from_slice(&bytes);
                    out.push((format!("{}{suffix}", rel.replace('/', "_")), input));
                }
            }
        }
        "archive" => {
            let tar = fixture_tar(&root.join("tests/e2e/fixtures/search-repo"));
            out.push(("search-repo.tar.gz".into(), gzip(&tar)));
            out.push(("search-repo.tar".into(), tar));
        }
        _ => {}
    }
    out
}

/// A tar of `dir` wrapped in one directory like a GitHub tarball, plus a link and an ignore file.
fn fixture_tar(dir: &Path) -> Vec<u8> {
    let mut files = Vec::new();
    files_under(dir, &mut files);
    let mut builder = tar::Builder::new(Vec::new());
    let add = |builder: &mut tar::Builder<Vec<u8>>, name: &str, kind: tar::EntryType, data: &[u8]| {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        if kind == tar::EntryType::Symlink {
            header.set_link_name("src/main.rs").expect("short link name");
        }
        builder.append_data(&mut header, name, data).expect("tar entry");
    };
    add(&mut builder, "owner-repo-0123abc/", tar::EntryType::Directory, b"");
    add(&mut builder, "owner-repo-0123abc/.gitignore", tar::EntryType::Regular, b"*.log\nbuild/\n");
    add(&mut builder, "owner-repo-0123abc/debug.log", tar::EntryType::Regular, b"ignored\n");
    add(&mut builder, "owner-repo-0123abc/link.rs", tar::EntryType::Symlink, b"");
    for path in files {
        let rel = path.strip_prefix(dir).expect("under dir").to_string_lossy().replace('\\', "/");
        let data = fs::read(&path).expect("fixture readable");
        add(&mut builder, &format!("owner-repo-0123abc/{rel}"), tar::EntryType::Regular, &data);
    }
    builder.into_inner().expect("tar finished")
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).expect("gzip in memory");
    enc.finish().expect("gzip finished")
}
