//! The preview API as JS sees it, run in node by `wasm-bindgen-test-runner`
//! (`scripts/test.d/40-preview.sh`): results are the core's own JSON, errors are JS `Error`s with a
//! stable `code`.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used)]

use edgerag_core::{chunk_text, options::parse_options, Chunk, ChunkConfig};
use edgerag_preview::{chunk, defaults, detect_language, languages, presets, version};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

const MARKDOWN: &str = "Intro line.\n\n# Title\n\nText.\n\n## Part A\n\nA body.\n\n### Deep\n\nDeep body.\n\n## Part B\n\nB body.\n";

const TYPESCRIPT: &str = "/** A point. */\nexport class Point {\n  constructor(public x: number, public y: number) {}\n\n  norm(): number {\n    return Math.hypot(this.x, this.y);\n  }\n}\n\nexport function origin(): Point {\n  return new Point(0, 0);\n}\n";

/// The `code` and `message` of a thrown value, which must be a real JS `Error`.
fn code_and_message(err: JsValue) -> (String, String) {
    assert!(err.is_instance_of::<js_sys::Error>(), "not an Error: {err:?}");
    let code = js_sys::Reflect::get(&err, &"code".into()).unwrap().as_string().unwrap();
    let message = String::from(err.unchecked_into::<js_sys::Error>().message());
    (code, message)
}

#[wasm_bindgen_test]
fn chunk_returns_the_cores_json_byte_for_byte() {
    for (path, text, options) in [
        ("docs/guide.md", MARKDOWN, ""),
        ("src/point.ts", TYPESCRIPT, r#"{"maxLines":4}"#),
        ("notes.txt", "a\nb\nc\n", r#"{"preset":"compact","overlapLines":0}"#),
    ] {
        let json = chunk(path, text, options).unwrap();
        let expected =
            serde_json::to_string(&chunk_text(path, text, &parse_options(options).unwrap())).unwrap();
        assert_eq!(json, expected, "{path}");
        let chunks: Vec<Chunk> = serde_json::from_str(&json).unwrap();
        assert!(!chunks.is_empty());
        assert_eq!(chunks[0].start_line, 1, "{path}");
        assert_eq!(chunks.last().unwrap().end_line as usize, text.lines().count(), "{path}");
    }
}

#[wasm_bindgen_test]
fn options_change_the_chunks() {
    let text: String = (1..=50).map(|i| format!("line {i}\n")).collect();
    let wide: Vec<Chunk> = serde_json::from_str(&chunk("a.txt", &text, "{}").unwrap()).unwrap();
    let narrow: Vec<Chunk> =
        serde_json::from_str(&chunk("a.txt", &text, r#"{"maxLines":10}"#).unwrap()).unwrap();
    assert!(narrow.len() > wide.len(), "{} vs {}", narrow.len(), wide.len());
    assert!(narrow.iter().all(|c| c.end_line - c.start_line < 10));
    // A forced language wins over the extension.
    let forced: Vec<Chunk> =
        serde_json::from_str(&chunk("a.txt", "x = 1\n", r#"{"language":"python"}"#).unwrap()).unwrap();
    assert_eq!(forced[0].language.as_str(), "python");
}

#[wasm_bindgen_test]
fn bad_input_throws_errors_with_stable_codes() {
    for (text, options, code, needle) in [
        ("a", "{", "INVALID_OPTIONS", "EOF"),
        ("a", "[1]", "INVALID_OPTIONS", "object"),
        ("a", r#"{"maxTokens":"many"}"#, "INVALID_OPTIONS", "many"),
        ("a", r#"{"maxLinez":5}"#, "INVALID_OPTIONS", "maxLinez"),
        ("a", r#"{"language":"klingon"}"#, "INVALID_OPTIONS", "klingon"),
        ("a", r#"{"preset":"huge"}"#, "UNKNOWN_PRESET", "huge"),
        ("a\0b", "", "BINARY_FILE", "binary"),
        ("0123456789", r#"{"maxFileBytes":4}"#, "FILE_TOO_LARGE", "10 bytes"),
    ] {
        let err = chunk("f.txt", text, options).unwrap_err();
        let (got_code, message) = code_and_message(err);
        assert_eq!(got_code, code, "options {options}");
        assert!(message.contains(needle), "{message:?} should mention {needle:?}");
    }
}

#[wasm_bindgen_test]
fn oversize_default_limit_is_enforced() {
    let big = "x".repeat(ChunkConfig::default().max_file_bytes + 1);
    let (code, _) = code_and_message(chunk("big.txt", &big, "").unwrap_err());
    assert_eq!(code, "FILE_TOO_LARGE");
}

#[wasm_bindgen_test]
fn metadata_exports_describe_this_build() {
    assert_eq!(detect_language("src/App.tsx"), "tsx");
    assert_eq!(detect_language("README.md"), "markdown");
    assert_eq!(detect_language("LICENSE"), "text");

    let d: ChunkConfig = serde_json::from_str(&defaults().unwrap()).unwrap();
    assert_eq!(d, ChunkConfig::default());

    let p: Vec<serde_json::Value> = serde_json::from_str(&presets().unwrap()).unwrap();
    let names: Vec<&str> = p.iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["default", "compact"]);
    assert_eq!(p[1]["config"]["maxTokens"], 500);

    let l: Vec<serde_json::Value> = serde_json::from_str(&languages().unwrap()).unwrap();
    assert!(l.iter().any(|x| x["name"] == "markdown"));
    let v: serde_json::Value = serde_json::from_str(&version().unwrap()).unwrap();
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["chunkSchemaVersion"], edgerag_core::chunk::CHUNK_SCHEMA_VERSION);
    // Every grammar the build reports is also flagged in `languages()`.
    for g in v["grammars"].as_array().unwrap() {
        assert!(l.iter().any(|x| &x["name"] == g && x["grammar"] == true), "{g}");
    }
}
