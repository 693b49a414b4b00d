//! Properties of parent/child chunking on random documents, with the deterministic hashing
//! embedder: parents tile the document and children tile their parent (content integrity), no
//! parent crosses a chapter, every child names an existing parent, child order is contiguous,
//! children never exceed the maximum, parents are within bounds except a chapter smaller than the
//! minimum, the same content is never embedded twice, and chunking is deterministic. Then
//! snapshots of a few real fixture documents.
#![allow(clippy::unwrap_used)]
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::path::Path;

use edgerag_core::chunk::parent_child::{chunk_document, prepare, ParentChildConfig, ParentChildDocument};
use edgerag_core::embed::{EmbedError, Embedder, EmbedderInfo, HashingEmbedder, InMemoryEmbeddingCache};
use edgerag_core::vector::testing::block_on;
use edgerag_core::Language;
use proptest::prelude::*;
use pulldown_cmark::{Event, HeadingLevel, Parser, Tag};

/// The hashing embedder, recording every text it is sent.
struct Recording {
    inner: HashingEmbedder,
    sent: RefCell<Vec<String>>,
}

impl Recording {
    fn new() -> Self {
        Recording { inner: HashingEmbedder::new(64), sent: RefCell::new(Vec::new()) }
    }
}

#[async_trait::async_trait(?Send)]
impl Embedder for Recording {
    fn info(&self) -> EmbedderInfo {
        self.inner.info()
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.sent.borrow_mut().extend(texts.iter().cloned());
        self.inner.embed(texts).await
    }
}

const WORDS: &[&str] = &[
    "parser", "config", "retry", "queue", "vector", "index", "garden", "river", "tomato", "sunlight",
    "engine", "budget", "chapter", "story", "dragon", "castle", "the", "a", "of", "and", "is", "with",
];

fn sentence() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (prop::collection::vec(prop::sample::select(WORDS), 2..18), prop::sample::select(vec![".", "!", "?", "", "..."]))
            .prop_map(|(w, end)| format!("{}{end}", w.join(" "))),
        1 => Just("Pi is 3.14 and e.g. this is fine.".to_string()),
        1 => Just("See https://example.com/a.b?c=d for more.".to_string()),
        1 => Just("Use `a.b()` here.".to_string()),
        1 => "[中文字句测试]{1,30}".prop_map(|s| format!("{s}。")),
        1 => "[a-z]{300,700}".prop_map(|s| s),
    ]
}

fn paragraph() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => prop::collection::vec(sentence(), 1..12).prop_map(|s| s.join(" ")),
        1 => prop::collection::vec(sentence(), 1..4).prop_map(|s| s.join("\n")),
        1 => prop::collection::vec("[a-z =;]{0,40}", 1..8).prop_map(|l| format!("```\n{}\n```", l.join("\n"))),
        1 => prop::collection::vec(sentence(), 1..5).prop_map(|s| s.iter().map(|x| format!("- {x}")).collect::<Vec<_>>().join("\n")),
    ]
}

fn block() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => paragraph(),
        1 => (1usize..4, prop::collection::vec(prop::sample::select(WORDS), 1..4))
            .prop_map(|(level, w)| format!("{} {}", "#".repeat(level), w.join(" "))),
    ]
}

fn document() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(block(), 0..30),
        prop::sample::select(vec!["\n\n", "\n\n\n", "\r\n\r\n"]),
        any::<bool>(),
    )
        .prop_map(|(blocks, sep, trailing)| {
            let mut d = blocks.join(sep);
            if trailing {
                d.push('\n');
            }
            d
        })
}

/// Byte offsets of the top-level H1 headings (the chapter starts), independently of the chunker.
fn chapter_starts(text: &str) -> Vec<usize> {
    let mut depth = 0usize;
    let mut out = Vec::new();
    let options = pulldown_cmark::Options::ENABLE_TABLES
        | pulldown_cmark::Options::ENABLE_FOOTNOTES
        | pulldown_cmark::Options::ENABLE_STRIKETHROUGH
        | pulldown_cmark::Options::ENABLE_TASKLISTS
        | pulldown_cmark::Options::ENABLE_HEADING_ATTRIBUTES
        | pulldown_cmark::Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | pulldown_cmark::Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS;
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        match event {
            Event::Start(tag) => {
                if depth == 0 && matches!(tag, Tag::Heading { level: HeadingLevel::H1, .. }) {
                    let line_start = text[..range.start].rfind('\n').map_or(0, |k| k + 1);
                    out.push(line_start);
                }
                depth += 1;
            }
            Event::End(_) => depth -= 1,
            _ => {}
        }
    }
    out
}

fn chunk(text: &str, language: Language, config: &ParentChildConfig) -> (ParentChildDocument, Vec<String>) {
    let e = Recording::new();
    let (doc, _) =
        block_on(chunk_document("doc.md", text, language, config, &e, &InMemoryEmbeddingCache::new()))
            .unwrap();
    let sent = e.sent.take();
    (doc, sent)
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// Every property that holds for any document and any valid configuration.
fn check(text: &str, language: Language, config: &ParentChildConfig) -> Result<(), TestCaseError> {
    let (doc, sent) = chunk(text, language, config);
    // Content integrity: parents tile the document, children tile their parent.
    let joined: String = doc.parents.iter().map(|p| p.text.as_str()).collect();
    if text.trim().is_empty() {
        prop_assert!(doc.parents.is_empty());
    } else {
        // A byte order mark is in no parent.
        prop_assert_eq!(joined.as_str(), text.strip_prefix('\u{feff}').unwrap_or(text));
    }
    let ids: HashSet<&str> = doc.parents.iter().map(|p| p.id.as_str()).collect();
    prop_assert_eq!(ids.len(), doc.parents.len(), "parent ids are unique");
    let mut by_parent: HashMap<&str, Vec<&_>> = HashMap::new();
    for c in &doc.children {
        // Every child has a valid parent.
        prop_assert!(ids.contains(c.parent_id.as_str()), "child of an unknown parent");
        by_parent.entry(c.parent_id.as_str()).or_default().push(c);
        prop_assert!(chars(&c.text) <= config.max_child_size, "child of {} chars", chars(&c.text));
    }
    for (i, p) in doc.parents.iter().enumerate() {
        prop_assert_eq!(p.order as usize, i);
        prop_assert_eq!(&text[p.start_byte..p.end_byte], p.text.as_str());
        prop_assert_eq!(p.end_char - p.start_char, chars(&p.text));
        let kids = by_parent.get(p.id.as_str()).cloned().unwrap_or_default();
        prop_assert_eq!(kids.len(), p.child_count as usize);
        prop_assert!(!kids.is_empty(), "a parent without children");
        // Child order is contiguous 0..n, and the children concatenate to the parent exactly.
        let orders: Vec<u32> = kids.iter().map(|c| c.order).collect();
        prop_assert_eq!(orders, (0..kids.len() as u32).collect::<Vec<_>>());
        let mut at = 0;
        let mut rebuilt = String::new();
        for c in &kids {
            prop_assert_eq!(c.start_char, at);
            at = c.end_char;
            rebuilt.push_str(&c.text);
            prop_assert!(c.start_line >= p.start_line && c.end_line <= p.end_line);
        }
        prop_assert_eq!(at, chars(&p.text));
        prop_assert_eq!(&rebuilt, &p.text);
    }
    // No parent crosses a chapter: every chapter start is a parent start, and chapter numbers
    // change exactly there.
    if language == Language::Markdown {
        let starts: HashSet<usize> = chapter_starts(text).into_iter().filter(|&s| s > 0).collect();
        for p in &doc.parents {
            for &s in &starts {
                prop_assert!(
                    !(p.start_byte < s && s < p.end_byte),
                    "parent {} crosses the chapter at {s}",
                    p.order
                );
            }
        }
        for w in doc.parents.windows(2) {
            let new_chapter = w[1].chapter != w[0].chapter;
            prop_assert_eq!(
                new_chapter,
                starts.contains(&w[1].start_byte),
                "chapter change at {}",
                w[1].start_byte
            );
        }
    } else {
        prop_assert!(doc.parents.iter().all(|p| p.chapter == 0));
    }
    // Parent sizes are within bounds, except a chapter smaller than the minimum (one parent).
    let mut chapters: HashMap<u32, Vec<usize>> = HashMap::new();
    for p in &doc.parents {
        chapters.entry(p.chapter).or_default().push(chars(&p.text));
    }
    for (chapter, sizes) in &chapters {
        let total: usize = sizes.iter().sum();
        if total < config.min_parent_size {
            prop_assert_eq!(sizes.len(), 1, "small chapter {} is split", chapter);
        } else {
            for &s in sizes {
                prop_assert!(
                    (config.min_parent_size..=config.max_parent_size).contains(&s),
                    "parent of {s} chars in chapter {chapter} (sizes {sizes:?})"
                );
            }
        }
    }
    // The same content is never embedded twice: each sentence text once, and not at all the
    // second time with the same cache.
    let distinct: HashSet<&String> = sent.iter().collect();
    prop_assert_eq!(distinct.len(), sent.len(), "a text was embedded twice");
    let prepared = prepare(text, language, config);
    let expected: HashSet<&str> = prepared.embedding_texts().into_iter().flatten().collect();
    prop_assert_eq!(sent.len(), expected.len());
    Ok(())
}

fn valid_config() -> impl Strategy<Value = ParentChildConfig> {
    (-0.2f32..0.9, 20usize..200, 0usize..100, 100usize..400).prop_map(
        |(threshold, min_child, extra, max_parent_min)| {
            let max_child = min_child + extra + 50;
            let min_parent = max_parent_min;
            ParentChildConfig {
                similarity_threshold: threshold,
                min_child_size: min_child,
                target_child_size: min_child + extra / 2,
                max_child_size: max_child,
                min_parent_size: min_parent,
                // The documented condition for the size bounds to be guaranteed.
                max_parent_size: 2 * min_parent + max_child,
                ..ParentChildConfig::default()
            }
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn markdown_documents_keep_every_property(text in document()) {
        check(&text, Language::Markdown, &ParentChildConfig::default())?;
    }

    #[test]
    fn plain_text_documents_keep_every_property(text in document()) {
        check(&text, Language::Text, &ParentChildConfig::default())?;
    }

    #[test]
    fn properties_hold_under_any_valid_configuration(text in document(), config in valid_config()) {
        check(&text, Language::Markdown, &config)?;
    }

    #[test]
    fn chunking_is_deterministic_and_a_second_run_embeds_nothing(text in document()) {
        let config = ParentChildConfig::default();
        let e = Recording::new();
        let cache = InMemoryEmbeddingCache::new();
        let (a, _) = block_on(chunk_document("x.md", &text, Language::Markdown, &config, &e, &cache)).unwrap();
        let first = e.sent.borrow().len();
        let (b, stats) = block_on(chunk_document("x.md", &text, Language::Markdown, &config, &e, &cache)).unwrap();
        prop_assert_eq!(a, b);
        prop_assert_eq!(stats.embedded, 0);
        prop_assert_eq!(e.sent.borrow().len(), first);
    }

    #[test]
    fn an_edit_of_one_paragraph_embeds_only_its_new_sentences(text in document(), extra in paragraph()) {
        let config = ParentChildConfig::default();
        let e = Recording::new();
        let cache = InMemoryEmbeddingCache::new();
        block_on(chunk_document("x.md", &text, Language::Markdown, &config, &e, &cache)).unwrap();
        let before: HashSet<String> = e.sent.take().into_iter().collect();
        let edited = format!("{text}\n\n{extra}\n");
        block_on(chunk_document("x.md", &edited, Language::Markdown, &config, &e, &cache)).unwrap();
        let expected: HashSet<&str> = prepare(&edited, Language::Markdown, &config)
            .embedding_texts().into_iter().flatten().filter(|t| !before.contains(*t)).collect();
        let sent = e.sent.take();
        prop_assert_eq!(sent.len(), expected.len());
        prop_assert!(sent.iter().all(|t| expected.contains(t.as_str())));
    }
}

/// A compact view of a document's parents and children for snapshots.
fn view(doc: &ParentChildDocument) -> String {
    let mut out = String::new();
    for p in &doc.parents {
        let head: String = p.text.chars().take(40).collect::<String>().replace('\n', "⏎");
        writeln!(
            out,
            "P{} ch{} lines {}-{} chars {}-{} path {:?} {:?}",
            p.order, p.chapter, p.start_line, p.end_line, p.start_char, p.end_char, p.heading_path, head
        )
        .unwrap();
        for c in doc.children.iter().filter(|c| c.parent_id == p.id) {
            let head: String = c.text.chars().take(30).collect::<String>().replace('\n', "⏎");
            writeln!(
                out,
                "  C{} lines {}-{} chars {}-{} {:?}",
                c.order, c.start_line, c.end_line, c.start_char, c.end_char, head
            )
            .unwrap();
        }
    }
    out
}

#[test]
fn fixture_documents_snapshot() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    for name in [
        "markdown/nested_headings.md",
        "markdown/oversize_section.md",
        "markdown/unicode.md",
        "markdown/bom.md",
        "markdown/crlf_line_endings.md",
        "markdown/huge_single_line.md",
        "text/paragraphs.txt",
        "text/LICENSE",
    ] {
        let text = std::fs::read_to_string(root.join(name)).unwrap();
        let language = if name.ends_with(".md") { Language::Markdown } else { Language::Text };
        let config = ParentChildConfig::default();
        check(&text, language, &config).unwrap();
        let (doc, _) = chunk(&text, language, &config);
        assert!(!doc.parents.is_empty(), "{name}");
        let snap = name.replace(['/', '.'], "_");
        insta::assert_snapshot!(format!("parent_child_{snap}"), view(&doc));
    }
}
