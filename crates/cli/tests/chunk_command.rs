//! `edgerag chunk` end to end: the built binary on a temporary tree with ignored directories,
//! ignore files, a binary file and a non-UTF-8 file.
#![allow(clippy::unwrap_used)]
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use edgerag_core::Chunk;

fn tree(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&root);
    let files: &[(&str, &[u8])] = &[
        ("README.md", b"# Title\n\nIntro.\n\n## Usage\n\nRun it.\n"),
        ("notes.txt", b"plain text\n"),
        ("src/lib.rs", b"pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"),
        ("image.bin", b"\x89PNG\r\n\x1a\n\x00\x00\x00"),
        ("latin1.txt", b"caf\xe9\n"),
        ("node_modules/pkg/index.js", b"module.exports = 1;\n"),
        ("dist/out.js", b"x\n"),
        (".git/HEAD", b"ref: refs/heads/main\n"),
        (".gitignore", b"*.log\nsecret/\n"),
        ("debug.log", b"log line\n"),
        ("secret/key.txt", b"hunter2\n"),
        ("docs/.mcpignore", b"draft.md\n"),
        ("docs/draft.md", b"# Draft\n"),
        ("docs/guide.md", b"# Guide\n\nText.\n"),
        ("empty.txt", b""),
    ];
    for (path, bytes) in files {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }
    root
}

fn edgerag(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_edgerag")).current_dir(dir).args(args).output().unwrap()
}

#[test]
fn walks_a_tree_with_ignore_rules_and_skips_bad_files() {
    let root = tree("walk");
    let out = edgerag(&root, &["chunk", "."]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    let chunks: Vec<Chunk> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let mut paths: Vec<&str> = chunks.iter().map(|c| c.path.as_str()).collect();
    paths.dedup();
    assert_eq!(
        paths,
        [".gitignore", "README.md", "docs/.mcpignore", "docs/guide.md", "notes.txt", "src/lib.rs"]
    );
    for (needle, code) in [
        ("image.bin", "BINARY_FILE"),
        ("latin1.txt", "INVALID_UTF8"),
        ("node_modules", "IGNORED_DIR"),
        ("dist", "IGNORED_DIR"),
        (".git", "IGNORED_DIR"),
        ("debug.log", "IGNORED_PATTERN"),
        ("secret", "IGNORED_PATTERN"),
        ("docs/draft.md", "IGNORED_PATTERN"),
    ] {
        assert!(
            stderr.lines().any(|l| l.contains(&format!("skipped {needle}: {code}"))),
            "{needle} {code}\n{stderr}"
        );
    }
    // The Markdown file is cut by headings, with true lines and every field.
    let readme: Vec<&Chunk> = chunks.iter().filter(|c| c.path == "README.md").collect();
    assert_eq!(readme.iter().map(|c| (c.start_line, c.end_line)).collect::<Vec<_>>(), [(1, 3), (5, 7)]);
    assert_eq!(readme[1].metadata.heading_path, ["Title", "Usage"]);
    let line = edgerag(&root, &["chunk", "README.md"]).stdout;
    let json: serde_json::Value =
        serde_json::from_slice(line.split(|&b| b == b'\n').next().unwrap()).unwrap();
    for field in [
        "id",
        "textHash",
        "path",
        "language",
        "type",
        "text",
        "startLine",
        "endLine",
        "startByte",
        "endByte",
        "chunkIndex",
        "tokenCount",
        "keywords",
        "metadata",
        "updatedAt",
        "version",
    ] {
        assert!(json.get(field).is_some(), "{field} missing from {json}");
    }
}

#[test]
fn explicit_files_missing_paths_and_formats() {
    let root = tree("formats");
    // A missing path is reported, not fatal; an explicitly named ignored file is still chunked.
    let out = edgerag(&root, &["chunk", "missing.md", "debug.log", "--format", "json", "--stats"]);
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("skipped missing.md: NOT_FOUND"), "{stderr}");
    assert!(stderr.contains("1 files, 1 chunks"), "{stderr}");
    let chunks: Vec<Chunk> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].path, "debug.log");

    let out = edgerag(&root, &["chunk", "--format=table", "README.md"]);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.lines().next().unwrap().starts_with("LOCATION"), "{table}");
    assert!(table.contains("README.md:5-7") && table.contains("Title > Usage"), "{table}");

    let out = edgerag(&root, &["chunk", "empty.txt", "--format", "json"]);
    assert_eq!(serde_json::from_slice::<Vec<Chunk>>(&out.stdout).unwrap().len(), 0);

    // Limits from the command line reach the chunker.
    let long: String = (0..50).map(|i| format!("line {i}\n")).collect();
    fs::write(root.join("long.txt"), long).unwrap();
    let out = edgerag(&root, &["chunk", "long.txt", "--max-lines", "10", "--overlap", "0"]);
    let chunks: Vec<Chunk> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(chunks.len(), 5);
    assert!(chunks.iter().all(|c| c.end_line - c.start_line < 10));
}

#[test]
fn usage_errors_exit_2() {
    let root = tree("usage");
    for args in [
        &["chunk"][..],
        &["chunk", ".", "--format", "xml"],
        &["chunk", ".", "--max-lines", "many"],
        &["chunk", ".", "--preset", "huge"],
        &["chunk", ".", "--nope"],
        &["frobnicate"],
        &[],
    ] {
        let out = edgerag(&root, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
    assert!(edgerag(&root, &["--help"]).status.success());
    assert!(edgerag(&root, &["chunk", "--help"]).status.success());
}

#[test]
fn the_output_is_the_same_for_one_thread_and_many() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("threads");
    let _ = fs::remove_dir_all(&root);
    // More files than are read ahead of the output, of different sizes, so threads finish out of
    // order and outputs wait for the files before them.
    for i in 0..1100 {
        let p = root.join(format!("d{}/f{i:03}.{}", i % 7, ["md", "rs", "txt"][i % 3]));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        let body = match i % 3 {
            0 => format!("# Doc {i}\n\n{}\n## Part\n\nmore words {i}\n", "text line\n".repeat(i % 50)),
            1 => format!("fn f{i}() -> u32 {{\n{}    {i}\n}}\n", "    let _x = 1;\n".repeat(i % 40)),
            _ => "plain words and more words\n".repeat(1 + i % 30),
        };
        fs::write(p, body).unwrap();
    }
    for format in ["jsonl", "json", "table"] {
        let one = edgerag(&root, &["chunk", ".", "--format", format, "-j", "1"]);
        let many = edgerag(&root, &["chunk", ".", "--format", format, "-j", "4"]);
        assert!(one.status.success() && many.status.success());
        assert!(one.stdout.len() > 10_000, "{format}");
        assert!(one.stdout == many.stdout, "{format}: output depends on the thread count");
    }
    let out = edgerag(&root, &["chunk", ".", "--json"]);
    let chunks: Vec<Chunk> = serde_json::from_slice(&out.stdout).unwrap();
    let mut paths: Vec<&str> = chunks.iter().map(|c| c.path.as_str()).collect();
    paths.dedup();
    assert_eq!(paths.len(), 1100);
    assert!(paths.windows(2).all(|w| w[0] < w[1]), "files are not in walk order");
}

/// `--parent-child`: every parent is followed by its children, which concatenate back to it; with
/// `--embedder URL` the sentences go to an OpenAI-compatible server (a stub here, counting the
/// texts it is sent) — each distinct sentence once.
#[test]
fn parent_child_prints_parents_then_their_children() {
    use std::io::{BufRead, BufReader, Read, Write};
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("parent_child");
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(&root).unwrap();
    let para = "Queues deliver messages at least once. Consumers must be idempotent. ".repeat(6);
    let text = format!("# Guide\n\n{para}\n\n## Part\n\n{para}\n\n# Other\n\nThe same sentence twice. The same sentence twice.\n");
    fs::write(root.join("guide.md"), &text).unwrap();

    let check = |out: &Output| -> usize {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let lines: Vec<serde_json::Value> =
            String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let mut parents = 0;
        let mut current: Option<(String, String, String)> = None; // id, text, rebuilt
        for l in &lines {
            match l["level"].as_str().unwrap() {
                "parent" => {
                    if let Some((_, t, r)) = current.take() {
                        assert_eq!(t, r);
                    }
                    parents += 1;
                    current = Some((
                        l["id"].as_str().unwrap().into(),
                        l["text"].as_str().unwrap().into(),
                        String::new(),
                    ));
                    assert!(l["startLine"].as_u64().unwrap() >= 1);
                }
                "child" => {
                    let (id, _, rebuilt) = current.as_mut().unwrap();
                    assert_eq!(l["parentId"].as_str().unwrap(), id);
                    assert!(l["chars"].as_u64().unwrap() <= 400);
                    rebuilt.push_str(l["text"].as_str().unwrap());
                }
                other => panic!("unknown level {other}"),
            }
        }
        let (_, t, r) = current.unwrap();
        assert_eq!(t, r);
        parents
    };
    assert!(check(&edgerag(&root, &["chunk", "--parent-child", "guide.md"])) >= 2);

    // A stub embeddings server: answers every POST with one vector per input, recording inputs.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let mut inputs: Vec<String> = Vec::new();
        listener.set_nonblocking(false).unwrap();
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            let mut line = String::new();
            loop {
                line.clear();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" || line.is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            if body["input"] == "stop" {
                return inputs;
            }
            let texts: Vec<String> = serde_json::from_value(body["input"].clone()).unwrap();
            let data: Vec<serde_json::Value> = texts
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let mut v = vec![0.0f32; 4];
                    v[t.len() % 4] = 1.0;
                    serde_json::json!({ "index": i, "embedding": v })
                })
                .collect();
            inputs.extend(texts);
            let answer = serde_json::json!({ "data": data }).to_string();
            write!(stream, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}", answer.len()).unwrap();
        }
        inputs
    });
    let url = format!("http://127.0.0.1:{port}/v1");
    let out =
        edgerag(&root, &["chunk", "--parent-child", "--embedder", &url, "--embed-dims", "4", "guide.md"]);
    check(&out);
    let mut stop = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let body = r#"{"input":"stop"}"#;
    write!(stop, "POST /v1/embeddings HTTP/1.1\r\ncontent-length: {}\r\n\r\n{body}", body.len()).unwrap();
    let inputs = server.join().unwrap();
    let distinct: std::collections::HashSet<&String> = inputs.iter().collect();
    assert_eq!(distinct.len(), inputs.len(), "a sentence was embedded twice");
    assert!(inputs.contains(&"The same sentence twice.".to_string()));
    assert!(inputs.contains(&"Consumers must be idempotent.".to_string()));
}
