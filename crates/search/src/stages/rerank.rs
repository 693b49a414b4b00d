//! Post-retrieval reordering of the head of the list:
//! - [`code_aware`]: language bonus, symbol-type priority, path penalties and diversity over the
//!   head of `ceil(rerankTopN × headMultiplier)`;
//! - [`heuristic`]: weighted score / span over the top `rerankTopN`;
//! - [`apply_cross_encoder_scores`]: blends a cross-encoder's scores into the top `rerankTopN`.
//!
//! Each returns whether the order changed (→ `rerankApplied`).
use std::collections::HashMap;

use edgerag_core::text::{identifiers, split_identifier};
use edgerag_core::{ChunkType, Language};

use crate::candidate::{order_of, sort_by_score, Candidate};
use crate::expand::QueryAnalysis;
use crate::profile::{CodeAwareSettings, HeuristicSettings};
use crate::query::{is_stopword, light_stem};

/// The symbol kind used by `symbolPriority`.
pub fn symbol_kind(c: &Candidate) -> &'static str {
    let chunk = &c.record.chunk;
    match chunk.chunk_type {
        ChunkType::CodeClass
        | ChunkType::CodeStruct
        | ChunkType::CodeTrait
        | ChunkType::CodeImpl
        | ChunkType::CodeModule => "class",
        ChunkType::CodeInterface => "interface",
        ChunkType::CodeEnum | ChunkType::CodeType => "type",
        ChunkType::CodeFunction => {
            if is_public(c) {
                "function_public"
            } else {
                "function"
            }
        }
        ChunkType::CodeMethod => {
            if is_public(c) {
                "method_public"
            } else {
                "method"
            }
        }
        ChunkType::CodeBlock => "block",
        ChunkType::MarkdownSection | ChunkType::SymbolPlan => "doc",
        ChunkType::TextBlock => {
            if matches!(chunk.language, Language::Text | Language::Markdown) {
                "text"
            } else {
                "block"
            }
        }
    }
}

/// A chunk's lines of code: not blank, not a comment, docstring quote or annotation.
fn code_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim_start).filter(|l| {
        !l.is_empty()
            && !l.starts_with("//")
            && !l.starts_with('#')
            && !l.starts_with('*')
            && !l.starts_with("/*")
            && !l.starts_with('@')
            && !l.starts_with("\"\"\"")
            && !l.starts_with("'''")
    })
}

/// Exported / public by the conventions of the chunk's language.
fn is_public(c: &Candidate) -> bool {
    let chunk = &c.record.chunk;
    let symbol = chunk.metadata.symbol_name.as_deref().unwrap_or("");
    match chunk.language {
        Language::Python => !symbol.starts_with('_'),
        Language::Go => symbol.chars().next().is_some_and(char::is_uppercase),
        _ => code_lines(&chunk.text).take(2).any(|l| {
            l.starts_with("pub ")
                || l.starts_with("pub(")
                || l.starts_with("public ")
                || l.starts_with("export ")
                || l.contains(" public ")
        }),
    }
}

fn is_test_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let file = lower.rsplit('/').next().unwrap_or(&lower);
    lower.split('/').any(|seg| matches!(seg, "test" | "tests" | "__tests__" | "spec" | "specs" | "testdata"))
        || file.starts_with("test_")
        || file.contains("_test.")
        || file.contains(".test.")
        || file.contains(".spec.")
        || file.contains("_spec.")
        || (file.ends_with("test.java") || file.ends_with("tests.cs") || file.ends_with("test.kt"))
}

/// `prefix` at the start of the path or of any folder in it.
fn has_prefix_at_any_level(path: &str, prefix: &str) -> bool {
    path.starts_with(prefix) || path.match_indices('/').any(|(i, _)| path[i + 1..].starts_with(prefix))
}

/// The multiplier the code-aware step gives one candidate (before diversity).
pub fn code_aware_multiplier(c: &Candidate, settings: &CodeAwareSettings, query: &QueryAnalysis) -> f32 {
    let chunk = &c.record.chunk;
    let mut m = 1.0;
    if query.languages.contains(&chunk.language) {
        m *= settings
            .language_bonus
            .get(chunk.language.as_str())
            .or_else(|| settings.language_bonus.get("default"))
            .copied()
            .unwrap_or(1.0);
    }
    let kind = symbol_kind(c);
    if !(query.wants_docs && matches!(kind, "doc" | "text")) {
        m *= settings.symbol_priority.get(kind).copied().unwrap_or(1.0);
    }
    let path = chunk.path.as_str();
    let pp = &settings.path_penalty;
    let allowed = pp.allow_prefixes.iter().any(|p| path.starts_with(p.as_str()));
    if !allowed {
        if pp.deny_prefixes.iter().any(|p| has_prefix_at_any_level(path, p)) {
            m *= pp.penalty_multiplier;
        }
        if !query.wants_tests && is_test_path(path) {
            m *= pp.test_penalty;
        }
    }
    if query.path_hints.iter().any(|h| path.contains(h.as_str())) {
        m *= 1.25;
    }
    if let Some(name) = chunk.metadata.symbol_name.as_deref() {
        let own = own_name(name);
        if query.identifiers.iter().any(|i| i == own) {
            m *= settings.named_symbol_bonus;
        } else if own.chars().count() > 2 && query.words.iter().any(|w| w == own) {
            m *= settings.named_word_bonus;
        } else if name_words_in_question(own, query) {
            m *= settings.named_parts_bonus;
        }
    }
    if let Some(parent) = chunk.metadata.parent_symbol.as_deref() {
        let own = own_name(parent);
        if own.chars().count() > 2 && query.identifiers.iter().chain(&query.words).any(|w| w == own) {
            m *= settings.named_parent_bonus;
        }
    }
    if !query.quoted.is_empty() && chunk.metadata.symbol_name.is_some() && quoted_in_signature(c, query) {
        m *= settings.quoted_in_signature_bonus;
    }
    m
}

/// Whether the definition's first line of code holds a name the question quotes as code, other
/// than the definition's own name.
fn quoted_in_signature(c: &Candidate, query: &QueryAnalysis) -> bool {
    let chunk = &c.record.chunk;
    let own = own_name(chunk.metadata.symbol_name.as_deref().unwrap_or(""));
    let Some(signature) = code_lines(&chunk.text).next() else { return false };
    identifiers(signature).any(|token| token != own && query.quoted.iter().any(|q| q == token))
}

/// A definition's own name: the last segment of a qualified one (`Store::new` → `new`).
fn own_name(name: &str) -> &str {
    name.rsplit(['.', ':', '#']).next().unwrap_or(name)
}

/// Whether a candidate is secondary to code for this question: a test the question does not ask
/// for, or prose (Markdown, text, plans' descriptions) when it does not ask for docs.
pub fn is_secondary(c: &Candidate, query: &QueryAnalysis) -> bool {
    (!query.wants_tests && is_test_path(&c.record.chunk.path))
        || (!query.wants_docs && matches!(symbol_kind(c), "doc" | "text"))
}

/// Code first: the first `n` candidates reordered so every one that is not
/// [secondary](is_secondary) comes before those that are, each group in its own order. Returns
/// whether anything moved.
pub fn code_first(candidates: &mut [Candidate], n: usize, query: &QueryAnalysis) -> bool {
    let n = n.min(candidates.len());
    let head = &mut candidates[..n];
    if head.windows(2).all(|w| is_secondary(&w[0], query) <= is_secondary(&w[1], query)) {
        return false;
    }
    // Stable: each group keeps its order.
    head.sort_by_cached_key(|c| is_secondary(c, query));
    true
}

/// Whether the question holds every word of a definition's name (function words aside; at least
/// one word of three letters or more), a word matching in any form: `remove` for "Removes",
/// `vec` for "vector", `parse` for "parsing".
pub fn name_words_in_question(name: &str, query: &QueryAnalysis) -> bool {
    let parts: Vec<String> = split_identifier(name).into_iter().filter(|p| !is_stopword(p)).collect();
    if !parts.iter().any(|p| p.chars().count() >= 3) {
        return false;
    }
    parts.iter().all(|part| {
        query.content_words.iter().any(|w| {
            w == part
                || (part.chars().count() >= 3 && w.starts_with(part.as_str()))
                || light_stem(w).is_some_and(|stem| part.starts_with(stem))
        })
    })
}

/// Reorder the head (`head` candidates): multiply scores, sort, then demote (to the end of the
/// head) what exceeds `maxPerFile` / `maxPerSymbol`. Candidates beyond the head are untouched.
pub fn code_aware(
    candidates: &mut [Candidate],
    head: usize,
    settings: &CodeAwareSettings,
    query: &QueryAnalysis,
) -> bool {
    let head = head.min(candidates.len());
    if head == 0 {
        return false;
    }
    let before = order_of(&candidates[..head]);
    let slice = &mut candidates[..head];
    for c in slice.iter_mut() {
        c.score *= code_aware_multiplier(c, settings, query);
    }
    sort_by_score(slice);
    let div = &settings.diversity;
    if div.max_per_file > 0 || div.max_per_symbol > 0 {
        let mut per_file: HashMap<(String, String), u32> = HashMap::new();
        let mut per_symbol: HashMap<(String, String, String), u32> = HashMap::new();
        let (mut kept, mut demoted): (Vec<Candidate>, Vec<Candidate>) = (Vec::new(), Vec::new());
        for c in slice.iter() {
            let file_key = (c.record.namespace.clone(), c.record.chunk.path.clone());
            let file_n = per_file.entry(file_key.clone()).or_default();
            *file_n += 1;
            let over_file = div.max_per_file > 0 && *file_n > div.max_per_file;
            let symbol = c
                .record
                .chunk
                .metadata
                .parent_symbol
                .clone()
                .or_else(|| c.record.chunk.metadata.symbol_name.clone());
            let over_symbol = match symbol {
                Some(s) if div.max_per_symbol > 0 => {
                    let n = per_symbol.entry((file_key.0, file_key.1, s)).or_default();
                    *n += 1;
                    *n > div.max_per_symbol
                }
                _ => false,
            };
            if over_file || over_symbol {
                demoted.push(c.clone());
            } else {
                kept.push(c.clone());
            }
        }
        kept.extend(demoted);
        slice.clone_from_slice(&kept);
    }
    order_of(&candidates[..head]) != before
}

/// Span quality in 0..1: full inside the ideal line range, decaying outside it.
pub fn span_quality(lines: u32, settings: &HeuristicSettings) -> f32 {
    let lines = lines.max(1) as f32;
    let (lo, hi) = (settings.ideal_min_lines as f32, settings.ideal_max_lines as f32);
    if lines < lo {
        lines / lo
    } else if lines > hi {
        hi / lines
    } else {
        1.0
    }
}

/// Reorder the top `n` by `scoreWeight × score/maxScore + spanWeight × spanQuality` (scores are
/// rescaled back so later modules see the same range).
pub fn heuristic(candidates: &mut [Candidate], n: usize, settings: &HeuristicSettings) -> bool {
    let n = n.min(candidates.len());
    if n < 2 {
        return false;
    }
    let before = order_of(&candidates[..n]);
    let slice = &mut candidates[..n];
    let max = slice.iter().map(|c| c.score).fold(f32::MIN, f32::max).max(f32::EPSILON);
    let total = (settings.score_weight + settings.span_weight).max(f32::EPSILON);
    for c in slice.iter_mut() {
        let (start, end) = c.lines();
        let span = span_quality(end.saturating_sub(start) + 1, settings);
        let blended = (settings.score_weight * (c.score / max) + settings.span_weight * span) / total;
        c.score = blended * max;
    }
    sort_by_score(slice);
    order_of(&candidates[..n]) != before
}

/// Blend cross-encoder scores (one per candidate of the top `scores.len()`) into the scores:
/// `weight × sigmoid(rerank) + (1 − weight) × score/maxScore`, rescaled; then sort that head.
pub fn apply_cross_encoder_scores(candidates: &mut [Candidate], scores: &[f32], weight: f32) -> bool {
    let n = scores.len().min(candidates.len());
    if n == 0 {
        return false;
    }
    let before = order_of(&candidates[..n]);
    let slice = &mut candidates[..n];
    let max = slice.iter().map(|c| c.score).fold(f32::MIN, f32::max).max(f32::EPSILON);
    // Reranker scales differ (logits vs probabilities): min-max them within the head.
    let (lo, hi) = scores[..n].iter().fold((f32::MAX, f32::MIN), |(lo, hi), s| (lo.min(*s), hi.max(*s)));
    for (c, s) in slice.iter_mut().zip(scores) {
        let r = if hi > lo { (s - lo) / (hi - lo) } else { 0.5 };
        c.score = (weight * r + (1.0 - weight) * c.score / max) * max;
    }
    sort_by_score(slice);
    order_of(&candidates[..n]) != before
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::profile::Profile;
    use crate::testutil::candidate;

    fn settings() -> CodeAwareSettings {
        Profile::balanced().post_processing.code_aware
    }

    #[test]
    fn a_definition_the_query_names_is_preferred() {
        let named = |name: &str| {
            let mut c = candidate("a.rs", ChunkType::CodeFunction, "fn x() {}", 1.0);
            c.record.chunk.metadata.symbol_name = Some(name.into());
            c
        };
        let q = crate::expand::analyse("Mount attaches a router; see parse_args and Config.Load", &[]);
        let s = settings();
        let base = code_aware_multiplier(&named("Other"), &s, &q);
        assert_eq!(code_aware_multiplier(&named("parse_args"), &s, &q), base * s.named_symbol_bonus);
        assert_eq!(code_aware_multiplier(&named("Config::Load"), &s, &q), base * s.named_symbol_bonus);
        assert_eq!(code_aware_multiplier(&named("Mount"), &s, &q), base * s.named_word_bonus);
        // Case and all for the word bonus: otherwise only the weaker bonus of a name whose words
        // the question holds in any form.
        assert_eq!(code_aware_multiplier(&named("mount"), &s, &q), base * s.named_parts_bonus);
        assert_eq!(code_aware_multiplier(&named("attach_router"), &s, &q), base * s.named_parts_bonus);
        assert_eq!(code_aware_multiplier(&named("detach_router"), &s, &q), base);
        assert!(s.named_symbol_bonus > s.named_word_bonus && s.named_word_bonus > s.named_parts_bonus);
        assert!(s.named_parts_bonus > 1.0);
    }

    #[test]
    fn a_definition_whose_signature_holds_a_name_the_question_quotes_is_preferred() {
        let def = |name: &str, text: &str| {
            let mut c = candidate("src/number.rs", ChunkType::CodeFunction, text, 1.0);
            c.record.chunk.metadata.symbol_name = Some(name.into());
            c
        };
        let q = crate::expand::analyse("Converts a `u128` to a number, applying {@code typeArguments}.", &[]);
        assert_eq!(q.quoted, ["u128", "typeArguments"]);
        let s = settings();
        assert!(s.quoted_in_signature_bonus > 1.0);
        let base = code_aware_multiplier(&def("from_i64", "fn from_i64(i: i64) -> Number {"), &s, &q);
        let doc_first = "/// Makes one.\n#[inline]\nfn from_u128(i: u128) -> Number {\n    todo!()\n}";
        assert_eq!(
            code_aware_multiplier(&def("from_u128", doc_first), &s, &q),
            base * s.quoted_in_signature_bonus
        );
        let java = "static Type get(Type rawType, Type... typeArguments) {";
        assert_eq!(code_aware_multiplier(&def("get", java), &s, &q), base * s.quoted_in_signature_bonus);
        // Only the signature counts, and not the definition's own name (the name bonuses see to that).
        assert_eq!(
            code_aware_multiplier(&def("widen", "fn widen() {\n    let x: u128 = 0;\n}"), &s, &q),
            base
        );
        let quoted = crate::expand::analyse("What does `u128` do?", &[]);
        let plain = crate::expand::analyse("What does u128 do?", &[]);
        let own = def("u128", "fn u128() {");
        assert_eq!(code_aware_multiplier(&own, &s, &quoted), code_aware_multiplier(&own, &s, &plain));
        // Quoting needs both backticks.
        assert!(crate::expand::analyse("a stray ` u128", &[]).quoted.is_empty());
    }

    #[test]
    fn a_definition_of_the_type_the_query_names_is_preferred() {
        let method = |name: &str, parent: Option<&str>| {
            let mut c = candidate("src/number.rs", ChunkType::CodeMethod, "fn x() {}", 1.0);
            c.record.chunk.metadata.symbol_name = Some(name.into());
            c.record.chunk.metadata.parent_symbol = parent.map(Into::into);
            c
        };
        let q =
            crate::expand::analyse("Returns true if the `Number` is an integer; see serde_json::Value", &[]);
        let s = settings();
        assert!(s.named_parent_bonus > 1.0);
        let base = code_aware_multiplier(&method("is_i64", None), &s, &q);
        assert_eq!(
            code_aware_multiplier(&method("is_i64", Some("Number")), &s, &q),
            base * s.named_parent_bonus
        );
        assert_eq!(
            code_aware_multiplier(&method("is_i64", Some("Value")), &s, &q),
            base * s.named_parent_bonus
        );
        assert_eq!(
            code_aware_multiplier(&method("is_i64", Some("crate::Number")), &s, &q),
            base * s.named_parent_bonus
        );
        // Case and all: `number` is not the type `Number`; nor is a type the question does not name.
        assert_eq!(code_aware_multiplier(&method("is_i64", Some("number")), &s, &q), base);
        assert_eq!(code_aware_multiplier(&method("is_i64", Some("Map")), &s, &q), base);
    }

    #[test]
    fn a_name_whose_words_the_question_holds_in_any_form() {
        let q = |text: &str| crate::expand::analyse(text, &[]);
        assert!(name_words_in_question("remove_entry", &q("Removes the entry from the map.")));
        assert!(name_words_in_question(
            "to_vec_pretty",
            &q("Serialize it as a pretty-printed JSON byte vector.")
        ));
        assert!(name_words_in_question("get_mut", &q("Gets a mutable reference to the value.")));
        assert!(name_words_in_question("parseConfig", &q("parsing of the config file")));
        assert!(!name_words_in_question("remove_entry", &q("Removes a key from the map.")));
        // Function words alone, or only short words, name nothing.
        assert!(!name_words_in_question("is", &q("is it")));
        assert!(!name_words_in_question("de", &q("de facto")));
    }

    #[test]
    fn prose_is_not_ranked_below_code_when_the_question_is_about_docs() {
        let c = candidate("README.md", ChunkType::MarkdownSection, "# Install\n\nRun it.", 1.0);
        let s = settings();
        let plain = code_aware_multiplier(&c, &s, &QueryAnalysis::default());
        let docs = code_aware_multiplier(&c, &s, &QueryAnalysis { wants_docs: true, ..Default::default() });
        assert_eq!(plain, s.symbol_priority["doc"]);
        assert!(plain < 1.0);
        assert_eq!(docs, 1.0);
    }

    #[test]
    fn symbol_kinds_and_visibility() {
        let c = candidate("a.rs", ChunkType::CodeFunction, "pub fn run() {}", 1.0);
        assert_eq!(symbol_kind(&c), "function_public");
        let c = candidate("a.rs", ChunkType::CodeFunction, "/// doc\nfn run() {}", 1.0);
        assert_eq!(symbol_kind(&c), "function");
        let c = candidate("a.ts", ChunkType::CodeClass, "export class A {}", 1.0);
        assert_eq!(symbol_kind(&c), "class");
        let c = candidate("README.md", ChunkType::MarkdownSection, "# x", 1.0);
        assert_eq!(symbol_kind(&c), "doc");
        let c = candidate("a.py", ChunkType::TextBlock, "x = 1", 1.0);
        assert_eq!(symbol_kind(&c), "block");
    }

    #[test]
    fn penalizes_generated_vendor_and_tests_unless_asked() {
        let s = settings();
        let q = QueryAnalysis::default();
        let base = candidate("src/a.rs", ChunkType::CodeBlock, "x", 1.0);
        let gen = candidate("src/generated/a.rs", ChunkType::CodeBlock, "x", 1.0);
        let vendor = candidate("vendor/lib/a.rs", ChunkType::CodeBlock, "x", 1.0);
        let test = candidate("tests/a_test.rs", ChunkType::CodeBlock, "x", 1.0);
        let m = |c: &Candidate, q: &QueryAnalysis| code_aware_multiplier(c, &s, q);
        assert!((m(&gen, &q) / m(&base, &q) - 0.6).abs() < 1e-6);
        assert!((m(&vendor, &q) / m(&base, &q) - 0.6).abs() < 1e-6);
        assert!((m(&test, &q) / m(&base, &q) - s.path_penalty.test_penalty).abs() < 1e-6);
        assert!(s.path_penalty.test_penalty < 1.0);
        let tests_q = QueryAnalysis { wants_tests: true, ..Default::default() };
        assert_eq!(m(&test, &tests_q), m(&base, &tests_q));
        let mut allow = s.clone();
        allow.path_penalty.allow_prefixes = vec!["vendor/lib/".into()];
        assert_eq!(code_aware_multiplier(&vendor, &allow, &q), code_aware_multiplier(&base, &allow, &q));
        assert!(
            is_test_path("pkg/foo_test.go") && is_test_path("src/a.spec.ts") && is_test_path("test_x.py")
        );
        assert!(!is_test_path("src/contest.rs") && !is_test_path("src/attestation.rs"));
    }

    #[test]
    fn code_first_moves_tests_and_prose_after_code_unless_asked() {
        let list = || {
            vec![
                candidate("tests/test_a.py", ChunkType::CodeFunction, "def test_a(): pass", 0.9),
                candidate("CHANGES.md", ChunkType::MarkdownSection, "# Changes", 0.8),
                candidate("src/a.py", ChunkType::CodeFunction, "def a(): pass", 0.7),
                candidate("src/b.py", ChunkType::CodeFunction, "def b(): pass", 0.6),
                candidate("tests/test_b.py", ChunkType::CodeFunction, "def test_b(): pass", 0.5),
            ]
        };
        let paths = |l: &[Candidate]| l.iter().map(|c| c.record.chunk.path.clone()).collect::<Vec<_>>();
        let mut l = list();
        assert!(code_first(&mut l, 5, &QueryAnalysis::default()));
        assert_eq!(paths(&l), ["src/a.py", "src/b.py", "tests/test_a.py", "CHANGES.md", "tests/test_b.py"]);
        // Scores are the candidates' own.
        assert_eq!(l[2].score, 0.9);
        // Only the first n move.
        let mut l = list();
        code_first(&mut l, 3, &QueryAnalysis::default());
        assert_eq!(paths(&l), ["src/a.py", "tests/test_a.py", "CHANGES.md", "src/b.py", "tests/test_b.py"]);
        // A question about tests keeps them in place; one about docs keeps prose.
        let mut l = list();
        code_first(&mut l, 5, &QueryAnalysis { wants_tests: true, ..Default::default() });
        assert_eq!(paths(&l), ["tests/test_a.py", "src/a.py", "src/b.py", "tests/test_b.py", "CHANGES.md"]);
        let mut l = list();
        code_first(&mut l, 5, &QueryAnalysis { wants_docs: true, ..Default::default() });
        assert_eq!(paths(&l), ["CHANGES.md", "src/a.py", "src/b.py", "tests/test_a.py", "tests/test_b.py"]);
        // Already in order: nothing moves.
        let mut l = list();
        l.retain(|c| c.record.chunk.path.starts_with("src/"));
        assert!(!code_first(&mut l, 5, &QueryAnalysis::default()));
    }

    #[test]
    fn language_bonus_applies_to_the_query_language() {
        let s = settings();
        let q = QueryAnalysis { languages: vec![Language::Python], ..Default::default() };
        let py = candidate("a.py", ChunkType::CodeBlock, "x", 1.0);
        let rs = candidate("a.rs", ChunkType::CodeBlock, "x", 1.0);
        assert!(
            (code_aware_multiplier(&py, &s, &q) / code_aware_multiplier(&rs, &s, &q) - 1.15).abs() < 1e-6
        );
    }

    #[test]
    fn reorders_only_the_head_and_enforces_diversity() {
        let s = settings();
        let mut cands = vec![
            candidate("a.rs", ChunkType::CodeBlock, "1", 1.0),
            candidate("a.rs", ChunkType::CodeBlock, "2", 0.99),
            candidate("a.rs", ChunkType::CodeBlock, "3", 0.98),
            candidate("a.rs", ChunkType::CodeBlock, "4", 0.97),
            candidate("b.rs", ChunkType::CodeBlock, "5", 0.5),
            candidate("gen/c.rs", ChunkType::CodeBlock, "6", 0.1),
        ];
        let changed = code_aware(&mut cands, 5, &s, &QueryAnalysis::default());
        assert!(changed);
        let texts: Vec<&str> = cands.iter().map(|c| c.record.chunk.text.as_str()).collect();
        // The 4th chunk of a.rs is demoted behind b.rs; the candidate outside the head stays last.
        assert_eq!(texts, ["1", "2", "3", "5", "4", "6"]);
        assert!(!code_aware(&mut [], 5, &s, &QueryAnalysis::default()));
    }

    #[test]
    fn heuristic_prefers_sane_spans_among_close_scores() {
        let s = Profile::balanced().post_processing.heuristic;
        let one_line = candidate("a.rs", ChunkType::CodeBlock, "x", 1.0);
        let body = candidate("b.rs", ChunkType::CodeFunction, &"line\n".repeat(20), 0.99);
        let mut cands = vec![one_line, body];
        assert!(heuristic(&mut cands, 2, &s));
        assert_eq!(cands[0].record.chunk.path, "b.rs");
        assert!(span_quality(200, &s) < 0.5 && span_quality(10, &s) == 1.0);
    }

    #[test]
    fn cross_encoder_blend() {
        let mut cands = vec![
            candidate("a.rs", ChunkType::CodeBlock, "a", 1.0),
            candidate("b.rs", ChunkType::CodeBlock, "b", 0.9),
            candidate("c.rs", ChunkType::CodeBlock, "c", 0.1),
        ];
        assert!(apply_cross_encoder_scores(&mut cands, &[-3.0, 5.0], 0.7));
        assert_eq!(cands[0].record.chunk.path, "b.rs");
        assert_eq!(cands[2].record.chunk.path, "c.rs");
    }
}
