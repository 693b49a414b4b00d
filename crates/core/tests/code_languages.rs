//! Per-language behaviour of the code chunker on the fixtures (one generated test module per
//! language, like charabia's per-language tests): the definitions come out typed and named at the
//! default limits, and with a small line limit a class is split at its methods, which name the
//! class as `parent_symbol`. Invariants are checked on every output.
#![allow(clippy::unwrap_used)]
use std::path::Path;

use edgerag_core::chunk::invariants;
use edgerag_core::{chunk_text, Chunk, ChunkConfig, ChunkType};

fn chunks(rel: &str, config: &ChunkConfig) -> Vec<Chunk> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures").join(rel);
    let text = std::fs::read_to_string(path).unwrap();
    let chunks = chunk_text(rel, &text, config);
    invariants::check(&text, &chunks, config).unwrap_or_else(|e| panic!("{rel}: {e}"));
    chunks
}

fn has(chunks: &[Chunk], chunk_type: ChunkType, symbol: &str, parent: Option<&str>) -> bool {
    chunks.iter().any(|c| {
        c.chunk_type == chunk_type
            && c.metadata.symbol_name.as_deref() == Some(symbol)
            && (parent.is_none() || c.metadata.parent_symbol.as_deref() == parent)
    })
}

fn describe(chunks: &[Chunk]) -> String {
    chunks
        .iter()
        .map(|c| {
            format!(
                "{} L{}-{} {:?} parent={:?}\n",
                c.chunk_type.as_str(),
                c.start_line,
                c.end_line,
                c.metadata.symbol_name,
                c.metadata.parent_symbol
            )
        })
        .collect()
}

macro_rules! language_tests {
    ($($name:ident ($feature:literal): $file:literal,
        whole: [$(($wt:ident, $ws:literal)),* $(,)?],
        split: [$(($st:ident, $ss:literal, $sp:literal)),* $(,)?];)*) => {$(
        #[cfg(feature = $feature)]
        mod $name {
            use super::*;

            #[test]
            fn definitions_are_typed_and_named() {
                let chunks = chunks($file, &ChunkConfig::default());
                $(assert!(has(&chunks, ChunkType::$wt, $ws, None), "no {} {} in\n{}", stringify!($wt), $ws, describe(&chunks));)*
            }

            #[test]
            fn small_limits_split_classes_at_their_methods() {
                let config = ChunkConfig { max_lines: 15, ..ChunkConfig::default() };
                let chunks = chunks($file, &config);
                assert!(chunks.len() > 3, "{}", describe(&chunks));
                $(assert!(has(&chunks, ChunkType::$st, $ss, Some($sp)), "no {} {} in {} in\n{}", stringify!($st), $ss, $sp, describe(&chunks));)*
            }
        }
    )*};
}

language_tests! {
    typescript ("lang-typescript"): "typescript/inventory_service.ts",
        whole: [(CodeClass, "InventoryService"), (CodeInterface, "LedgerEntry"), (CodeEnum, "StockStatus"),
                (CodeFunction, "Audited"), (CodeFunction, "formatLevel"), (CodeModule, "Inventory")],
        split: [(CodeMethod, "receive", "InventoryService"), (CodeMethod, "ship", "InventoryService"),
                (CodeClass, "Snapshot", "InventoryService"), (CodeFunction, "isSku", "Inventory")];
    tsx ("lang-typescript"): "tsx/ProductCard.tsx",
        whole: [(CodeInterface, "ProductCardProps"), (CodeFunction, "ProductCard"), (CodeFunction, "QuantityPicker"),
                (CodeClass, "ProductGrid")],
        split: [(CodeMethod, "render", "ProductGrid")];
    javascript ("lang-javascript"): "javascript/router.js",
        whole: [(CodeClass, "Router"), (CodeFunction, "paginate"), (CodeFunction, "json"), (CodeFunction, "readBody")],
        split: [(CodeMethod, "add", "Router"), (CodeMethod, "match", "Router")];
    python ("lang-python"): "python/scheduler.py",
        whole: [(CodeFunction, "retry"), (CodeClass, "Job"), (CodeClass, "Scheduler"), (CodeFunction, "sync_inventory")],
        split: [(CodeMethod, "run_forever", "Scheduler"), (CodeClass, "State", "Job"), (CodeFunction, "wrap", "retry")];
    rust ("lang-rust"): "rust/order_book.rs",
        whole: [(CodeEnum, "Side"), (CodeType, "Price"), (CodeStruct, "Order"), (CodeTrait, "TradeSink"),
                (CodeImpl, "OrderBook"), (CodeFunction, "fill"), (CodeModule, "tests")],
        split: [(CodeMethod, "submit", "OrderBook"), (CodeMethod, "spread", "OrderBook"),
                (CodeFunction, "non_crossing_orders_rest", "tests")];
    go ("lang-go"): "go/cache.go",
        whole: [(CodeStruct, "Stats"), (CodeInterface, "Store"), (CodeStruct, "LRU"), (CodeFunction, "New"),
                (CodeFunction, "Keys")],
        split: [(CodeMethod, "Get", "LRU"), (CodeMethod, "Delete", "LRU")];
    java ("lang-java"): "java/LibraryCatalog.java",
        whole: [(CodeClass, "LibraryCatalog")],
        split: [(CodeMethod, "lend", "LibraryCatalog"), (CodeClass, "Book", "LibraryCatalog"),
                (CodeEnum, "Genre", "LibraryCatalog"), (CodeMethod, "overdue", "Loan")];
    c ("lang-c"): "c/ring_buffer.c",
        whole: [(CodeEnum, "rb_status"), (CodeStruct, "ring_buffer"), (CodeFunction, "rb_init"),
                (CodeFunction, "rb_write"), (CodeFunction, "rb_dump")],
        split: [];
    cpp ("lang-cpp"): "cpp/matrix.cpp",
        whole: [(CodeClass, "Matrix"), (CodeMethod, "operator*"), (CodeFunction, "norm"), (CodeFunction, "main")],
        split: [(CodeStruct, "RowView", "Matrix"), (CodeMethod, "operator*", "Matrix")];
    csharp ("lang-csharp"): "csharp/OrderProcessor.cs",
        whole: [(CodeClass, "OrderProcessor"), (CodeInterface, "IOrderProcessor"), (CodeStruct, "OrderLine"),
                (CodeClass, "Order")],
        split: [(CodeMethod, "SubmitAsync", "OrderProcessor"), (CodeClass, "OrderProcessor", "Shop.Orders")];
    ruby ("lang-ruby"): "ruby/subscriptions.rb",
        whole: [(CodeModule, "Billing"), (CodeClass, "Subscription")],
        split: [(CodeMethod, "invoice_lines", "Subscription"), (CodeClass, "Line", "Subscription")];
    php ("lang-php"): "php/UserRepository.php",
        whole: [(CodeClass, "UserRepository"), (CodeInterface, "RepositoryInterface"), (CodeTrait, "Timestamps"),
                (CodeEnum, "Role"), (CodeFunction, "normalize_email")],
        split: [(CodeMethod, "save", "UserRepository")];
    kotlin ("lang-kotlin"): "kotlin/Playlist.kt",
        whole: [(CodeClass, "Playlist"), (CodeInterface, "Player"), (CodeEnum, "RepeatMode"), (CodeClass, "SilentPlayer")],
        split: [(CodeMethod, "shuffled", "Playlist"), (CodeClass, "Companion", "Playlist")];
}

/// Doc comments and attributes directly above a definition go with it; a blank line detaches.
#[cfg(feature = "lang-rust")]
#[test]
fn docs_and_attributes_stay_with_their_definition() {
    let text = "// A detached note,\n// two lines long.\n\n/// Doc one.\n/// Doc two.\n#[derive(Debug)]\n#[serde(rename_all = \"camelCase\")]\npub struct A {\n    x: u8,\n}\n";
    let config = ChunkConfig::default();
    let chunks = chunk_text("a.rs", text, &config);
    let a = chunks.iter().find(|c| c.metadata.symbol_name.as_deref() == Some("A")).unwrap();
    assert!(a.text.starts_with("/// Doc one."), "{}", a.text);
    assert!(!a.text.contains("detached"));
}

/// A doc block longer than `docstring_lines` is kept whole when everything fits, else only its
/// last `docstring_lines` lines go with the definition (the rest is a chunk of its own).
#[cfg(feature = "lang-typescript")]
#[test]
fn long_doc_blocks_are_kept_whole_only_when_they_fit() {
    let doc: String = (0..8).map(|i| format!("// line {i} of a long explanation\n")).collect();
    let text = format!("{doc}function f() {{\n  return 1;\n}}\n");
    let whole = chunk_text("a.ts", &text, &ChunkConfig::default());
    assert_eq!(whole.len(), 1);
    assert!(whole[0].text.starts_with("// line 0"));

    let config = ChunkConfig { max_lines: 9, docstring_lines: 2, overlap_lines: 0, ..ChunkConfig::default() };
    let cut = chunk_text("a.ts", &text, &config);
    invariants::check(&text, &cut, &config).unwrap();
    let f = cut.iter().find(|c| c.metadata.symbol_name.as_deref() == Some("f")).unwrap();
    assert!(f.text.starts_with("// line 6"), "{}", f.text);
}

/// Consecutive one-line definitions merge into one `code-block` up to the limits; bigger
/// definitions never merge with their neighbours.
#[cfg(feature = "lang-typescript")]
#[test]
fn tiny_definitions_merge_big_ones_stand_alone() {
    let text = "type A = string;\ntype B = number;\ntype C = A | B;\n\nfunction big() {\n  return 1;\n}\nfunction other() {\n  return 2;\n}\n";
    let chunks = chunk_text("a.ts", text, &ChunkConfig::default());
    let got: Vec<_> = chunks.iter().map(|c| (c.chunk_type, c.metadata.symbol_name.as_deref())).collect();
    assert_eq!(
        got,
        [
            (ChunkType::CodeBlock, None),
            (ChunkType::CodeFunction, Some("big")),
            (ChunkType::CodeFunction, Some("other"))
        ]
    );
}

/// A single definition bigger than the limits with nothing to split at is cut by lines (with
/// overlap), keeping its type and name on every piece.
#[cfg(feature = "lang-python")]
#[test]
fn oversize_definition_without_members_is_cut_by_lines() {
    let body: String = (0..60).map(|i| format!("    x{i} = {i}\n")).collect();
    let text = format!("def huge():\n{body}");
    let config = ChunkConfig { max_lines: 20, overlap_lines: 2, ..ChunkConfig::default() };
    let chunks = chunk_text("a.py", &text, &config);
    invariants::check(&text, &chunks, &config).unwrap();
    assert!(chunks.len() >= 3);
    assert!(chunks.iter().all(|c| c.chunk_type == ChunkType::CodeFunction));
    assert!(chunks.iter().all(|c| c.metadata.symbol_name.as_deref() == Some("huge")));
}

/// A minified line far over the token limit is cut inside the line.
#[cfg(feature = "lang-javascript")]
#[test]
fn minified_line_is_cut_inside_the_line() {
    let chunks = chunks("javascript/bundle.min.js", &ChunkConfig::default());
    assert!(chunks.len() > 5);
    assert!(chunks.iter().all(|c| c.token_count <= 2000));
    assert!(chunks.iter().filter(|c| c.start_line == 1 && c.end_line == 1).count() > 5);
}

/// Languages without a grammar use the declaration patterns with brace counting.
#[test]
fn languages_without_a_grammar_use_the_heuristics() {
    let text = "import Foundation\n\n/// A shape.\nprotocol Shape {\n    func area() -> Double\n}\n\nstruct Square: Shape {\n    let side: Double\n    func area() -> Double { side * side }\n}\n\nfunc describe(_ s: Shape) -> String {\n    return \"area \\(s.area())\"\n}\n";
    let config = ChunkConfig::default();
    let chunks = chunk_text("Shapes.swift", text, &config);
    invariants::check(text, &chunks, &config).unwrap();
    let got: Vec<_> = chunks.iter().map(|c| (c.chunk_type, c.metadata.symbol_name.as_deref())).collect();
    assert_eq!(
        got,
        [
            (ChunkType::CodeBlock, None),
            (ChunkType::CodeInterface, Some("Shape")),
            (ChunkType::CodeStruct, Some("Square")),
            (ChunkType::CodeFunction, Some("describe")),
        ]
    );
    assert!(chunks[1].text.starts_with("/// A shape."));
}
