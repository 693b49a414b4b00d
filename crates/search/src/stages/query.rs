//! From a query text to keyword terms, and from terms to a safe FTS5 `MATCH` expression.
//!
//! Tokens are cut like FTS5's `unicode61` tokenizer cuts documents (letters and digits; every
//! other character separates), lowercased and folded. Compound identifiers add their parts
//! (`getUserData` → `getuserdata`, `get`, `user`, `data`) because the indexed document holds both
//! forms ([`edgerag_core::text::fts_document`]). Function words are dropped. A light suffix
//! stemmer turns `parsing` into the prefix term `pars*`, which also finds `parse` and `parser`.
//! The FTS5 expression only ever contains double-quoted alphanumeric tokens joined by `OR`, so no
//! user input can reach FTS5's query syntax.
use serde::{Deserialize, Serialize};

use edgerag_core::text::split_identifier;

/// One keyword term: a lowercase token, optionally matched as a prefix.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct QueryTerm {
    pub text: String,
    pub prefix: bool,
}

/// At most this many terms reach the index (long pasted questions stay cheap).
pub const MAX_TERMS: usize = 32;

/// BM25 column weights for `chunks_fts (search_text, path, symbol_name)`, used by the D1 query
/// (`bm25(chunks_fts, 1.0, 2.0, 4.0)`) and the in-memory index alike.
pub const BM25_WEIGHTS: [f64; 3] = [1.0, 2.0, 4.0];
/// FTS5's fixed BM25 parameters.
pub const BM25_K1: f64 = 1.2;
pub const BM25_B: f64 = 0.75;

/// Function words dropped from a question before BM25 and expansion (they match everything).
const QUERY_STOPWORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "all",
    "also",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "but",
    "by",
    "can",
    "code",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "done",
    "each",
    "find",
    "for",
    "from",
    "function",
    "get",
    "gets",
    "given",
    "had",
    "has",
    "have",
    "how",
    "i",
    "if",
    "implement",
    "implementation",
    "implemented",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "me",
    "method",
    "my",
    "of",
    "on",
    "or",
    "our",
    "please",
    "should",
    "show",
    "so",
    "some",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "this",
    "those",
    "to",
    "us",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
];

/// Is `word` (lowercase) a function word that carries no retrieval signal?
pub fn is_stopword(word: &str) -> bool {
    QUERY_STOPWORDS.binary_search(&word).is_ok()
}

/// Fold a lowercase char the way `remove_diacritics` does for the common Latin letters.
pub(crate) fn fold(c: char) -> char {
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' => 'a',
        'ç' | 'č' | 'ć' => 'c',
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ě' => 'e',
        'ì' | 'í' | 'î' | 'ï' | 'ī' => 'i',
        'ñ' | 'ń' | 'ň' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' => 'o',
        'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' => 'u',
        'ý' | 'ÿ' => 'y',
        'š' | 'ś' => 's',
        'ž' | 'ź' | 'ż' => 'z',
        'ř' => 'r',
        'ď' => 'd',
        'ť' => 't',
        'ł' => 'l',
        c => c,
    }
}

/// Tokens as FTS5 `unicode61 remove_diacritics 2` produces them (lowercase, folded).
pub fn tokenize(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(|t| t.chars().flat_map(char::to_lowercase).map(fold).collect())
}

/// A light English stemmer for prefix matching: plural `s`, `ies`, `ing`, `ed` and a final `e`
/// (`parsing`, `parses`, `parsed`, `parse` → `pars`). `None` when the word is short, not ASCII,
/// or unchanged.
pub fn light_stem(word: &str) -> Option<&str> {
    if word.len() < 5 || !word.is_ascii() || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return None;
    }
    let mut stem = word;
    if let Some(s) = stem.strip_suffix("ies") {
        stem = s;
    } else if stem.ends_with('s') && !stem.ends_with("ss") && !stem.ends_with("us") && !stem.ends_with("is") {
        stem = &stem[..stem.len() - 1];
    }
    for suffix in ["ing", "ed"] {
        if let Some(s) = stem.strip_suffix(suffix) {
            if s.len() >= 3 {
                stem = s;
                break;
            }
        }
    }
    if let Some(s) = stem.strip_suffix('e') {
        if s.len() >= 3 {
            stem = s;
        }
    }
    (stem.len() >= 3 && stem.len() < word.len()).then_some(stem)
}

/// How keyword terms are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TermOptions {
    /// Add identifier parts (`getUserData` → `get user data`).
    pub split_identifiers: bool,
    /// Match stemmed words as prefixes (`parsing` → `pars*`).
    pub stem_prefixes: bool,
}

impl Default for TermOptions {
    fn default() -> Self {
        TermOptions { split_identifiers: true, stem_prefixes: true }
    }
}

/// The keyword terms of a query, in first-occurrence order, deduplicated, ≤ [`MAX_TERMS`].
pub fn keyword_terms(query: &str, options: TermOptions) -> Vec<QueryTerm> {
    keyword_terms_up_to(query, options, MAX_TERMS)
}

/// [`keyword_terms`] with another cap (`max`).
pub fn keyword_terms_up_to(query: &str, options: TermOptions, max: usize) -> Vec<QueryTerm> {
    let mut out: Vec<QueryTerm> = Vec::new();
    let mut push = |text: String, prefix: bool, out: &mut Vec<QueryTerm>| {
        if text.is_empty() || out.len() >= max {
            return;
        }
        // A prefix term subsumes the exact one; keep the more general.
        if let Some(existing) = out.iter_mut().find(|t| t.text == text) {
            existing.prefix |= prefix;
            return;
        }
        out.push(QueryTerm { text, prefix });
    };
    for raw in query.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')) {
        if raw.is_empty() {
            continue;
        }
        let parts = if options.split_identifiers { split_identifier(raw) } else { Vec::new() };
        // The whole token as the tokenizer would index it (`get_user` is two tokens there).
        for token in tokenize(raw) {
            let keep_whole = parts.len() > 1 || !is_stopword(&token);
            if keep_whole && (token.chars().count() > 1 || token.chars().all(|c| c.is_ascii_digit())) {
                add_word(&token, options, &mut push, &mut out);
            }
        }
        if parts.len() > 1 {
            for part in parts {
                for token in tokenize(&part) {
                    if !is_stopword(&token) && token.chars().count() > 1 {
                        add_word(&token, options, &mut push, &mut out);
                    }
                }
            }
        }
    }
    out
}

fn add_word(
    token: &str,
    options: TermOptions,
    push: &mut impl FnMut(String, bool, &mut Vec<QueryTerm>),
    out: &mut Vec<QueryTerm>,
) {
    match light_stem(token).filter(|_| options.stem_prefixes) {
        Some(stem) => push(stem.to_string(), true, out),
        None => push(token.to_string(), false, out),
    }
}

/// The FTS5 phrases of the terms, in order (`"get"`, `"pars"*`). Terms only hold letters and
/// digits (see [`tokenize`]); anything else is dropped defensively, and a term left empty has no
/// phrase.
pub fn fts5_phrases(terms: &[QueryTerm]) -> Vec<String> {
    terms
        .iter()
        .filter_map(|t| {
            let clean: String = t.text.chars().filter(|c| c.is_alphanumeric()).collect();
            (!clean.is_empty())
                .then(|| if t.prefix { format!("\"{clean}\"*") } else { format!("\"{clean}\"") })
        })
        .collect()
}

/// The FTS5 `MATCH` expression for the terms (`"get" OR "pars"*`), or `None` when empty.
pub fn fts5_expression(terms: &[QueryTerm]) -> Option<String> {
    let phrases = fts5_phrases(terms);
    (!phrases.is_empty()).then(|| phrases.join(" OR "))
}

/// Several phrase lists searched together (the sub-queries of one search), and which of their
/// phrases an index should be asked about so that lists can share one ranking.
///
/// A phrase that no row of an index contains changes nothing there: it adds no match, and BM25
/// (FTS5's `bm25()` and the in-memory reference alike) adds `idf · f·(k1+1) / (f + k1·(…))` per
/// phrase, exactly `0.0` when its frequency `f` is zero. So a list without its absent phrases
/// finds the same rows with bit-for-bit the same scores, and two lists that differ only by phrases
/// absent from the index are one ranking, computed once. Sub-queries often differ exactly so: a
/// query's identifier spellings (`slotPair`, `key_value`) are added to its words and seldom occur.
pub fn mergeable_phrases(lists: &[Vec<String>]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, a) in lists.iter().enumerate() {
        for b in &lists[i + 1..] {
            if a == b {
                continue;
            }
            // Equal once the phrases of one that the other lacks are gone, in the same order.
            let common_a: Vec<&String> = a.iter().filter(|p| b.contains(p)).collect();
            let common_b: Vec<&String> = b.iter().filter(|p| a.contains(p)).collect();
            // (Lists with nothing in common could only merge by both finding nothing.)
            if common_a.is_empty() || common_a != common_b {
                continue;
            }
            for p in a.iter().chain(b).filter(|p| !(a.contains(p) && b.contains(p))) {
                if !out.contains(p) {
                    out.push(p.clone());
                }
            }
        }
    }
    out
}

/// `phrases` without those in `absent` (an index holds none of them), order kept.
pub fn without_absent(phrases: &[String], absent: &[String]) -> Vec<String> {
    phrases.iter().filter(|p| !absent.contains(p)).cloned().collect()
}

/// Phrase lists that share one scoring pass: a base list and the lists that extend it (all of the
/// base's phrases in order, then more), by index into the lists given to [`shared_scoring`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedScoring {
    pub base: usize,
    pub extensions: Vec<usize>,
}

/// Groups distinct phrase lists for shared scoring: every list is in exactly one group, as its base
/// or as an extension of the longest base that is a proper prefix of it, as long as the group's
/// extra phrases (summed over its extensions) stay within `max_extra_phrases` — each is scored on
/// its own, and the statement that holds them must stay small. Groups come in the order of their
/// bases (shortest first, then as given).
///
/// Why an extension's ranking can come from its base's: BM25 adds one term per phrase in query
/// order, so for `B = A + [x₁ … xₘ]` a row's score is `((score_A + s₁) + …) + sₘ`, each `sᵢ` being
/// phrase `xᵢ`'s own term (exactly `0.0` for a row without it) — the same floating-point sums
/// FTS5's `bm25()` does for `B`. A row without any extra phrase keeps its score under `A`, so `B`'s
/// best K are among `A`'s best K (ties included) and the rows that hold an extra phrase — usually
/// few: a query's identifier spellings added to its words.
pub fn shared_scoring(lists: &[Vec<String>], max_extra_phrases: usize) -> Vec<SharedScoring> {
    let mut order: Vec<usize> = (0..lists.len()).collect();
    order.sort_by_key(|&i| lists[i].len());
    let mut groups: Vec<SharedScoring> = Vec::new();
    for i in order {
        let list = &lists[i];
        let extra = |g: &SharedScoring| -> usize {
            g.extensions.iter().map(|&e| lists[e].len() - lists[g.base].len()).sum()
        };
        let base = groups
            .iter_mut()
            .filter(|g| {
                let b = &lists[g.base];
                b.len() < list.len()
                    && list.starts_with(b)
                    && extra(g) + list.len() - b.len() <= max_extra_phrases
            })
            .max_by_key(|g| lists[g.base].len());
        match base {
            Some(g) => g.extensions.push(i),
            None => groups.push(SharedScoring { base: i, extensions: Vec::new() }),
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(q: &str) -> Vec<String> {
        keyword_terms(q, TermOptions::default())
            .into_iter()
            .map(|t| if t.prefix { format!("{}*", t.text) } else { t.text })
            .collect()
    }

    fn phrases(list: &[&str]) -> Vec<String> {
        list.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn lists_that_differ_by_added_phrases_can_merge() {
        let words = phrases(&["\"convert\"*", "\"slot\"", "\"pair\""]);
        let spelled = phrases(&["\"convert\"*", "\"slot\"", "\"pair\"", "\"slotpair\""]);
        let split = phrases(&["\"get\"", "\"user\""]);
        assert_eq!(mergeable_phrases(&[words.clone(), spelled.clone()]), ["\"slotpair\""]);
        // Identical lists need no question; unrelated ones cannot merge by dropping phrases.
        assert!(mergeable_phrases(&[words.clone(), words.clone()]).is_empty());
        assert!(mergeable_phrases(&[words.clone(), split.clone()]).is_empty());
        let parts = phrases(&["\"getuserdata\"", "\"user\""]);
        assert_eq!(mergeable_phrases(&[split, parts.clone(), parts]), ["\"get\"", "\"getuserdata\""]);
        // The order of the shared phrases is part of the score (summed in order): not mergeable.
        let reordered = phrases(&["\"slot\"", "\"convert\"*", "\"pair\"", "\"x\""]);
        assert!(mergeable_phrases(&[words.clone(), reordered]).is_empty());
        assert_eq!(without_absent(&spelled, &phrases(&["\"slotpair\""])), words);
        assert_eq!(fts5_expression(&[]), None);
    }

    #[test]
    fn lists_that_extend_another_share_its_scoring() {
        let words = phrases(&["\"convert\"*", "\"slot\""]);
        let spelled = phrases(&["\"convert\"*", "\"slot\"", "\"convertslot\""]);
        let longer = phrases(&["\"convert\"*", "\"slot\"", "\"convertslot\"", "\"x\""]);
        let other = phrases(&["\"slot\"", "\"convert\"*", "\"y\""]);
        let lists = [longer, other, spelled, words];
        let groups = shared_scoring(&lists, 8);
        assert_eq!(
            groups,
            [
                SharedScoring { base: 3, extensions: vec![2, 0] },
                SharedScoring { base: 1, extensions: vec![] },
            ]
        );
        // At most 2 extra phrases per group: `longer` (2 more than `words`) no longer fits beside
        // `spelled` and is a base of its own.
        assert_eq!(
            shared_scoring(&lists, 2),
            [
                SharedScoring { base: 3, extensions: vec![2] },
                SharedScoring { base: 1, extensions: vec![] },
                SharedScoring { base: 0, extensions: vec![] },
            ]
        );
        assert!(shared_scoring(&[], 8).is_empty());
    }

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        let mut sorted = QUERY_STOPWORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, QUERY_STOPWORDS);
    }

    #[test]
    fn splits_identifiers_and_drops_function_words() {
        assert_eq!(texts("how do I getUserData?"), ["getuserdata", "user", "data"]);
        assert_eq!(texts("parse_config_file"), ["pars*", "config", "file"]);
        assert_eq!(texts("Parsing the HTTP headers"), ["pars*", "http", "header*"]);
        assert_eq!(
            texts("parses parsed parse creates classes status"),
            ["pars*", "creat*", "class*", "status"]
        );
        assert_eq!(texts("café naïve"), ["cafe", "naiv*"]);
        assert!(texts("the of and").is_empty());
    }

    #[test]
    fn stemming_and_prefixes_can_be_turned_off() {
        let opts = TermOptions { split_identifiers: false, stem_prefixes: false };
        let t: Vec<_> = keyword_terms("getUserData parsing", opts).into_iter().map(|t| t.text).collect();
        assert_eq!(t, ["getuserdata", "parsing"]);
    }

    #[test]
    fn fts_expression_is_always_safe() {
        for hostile in [
            "\" OR 1=1 --",
            "NEAR(a b)",
            "col:value",
            "a AND NOT b",
            "\"unbalanced",
            "x* ^y",
            "{a b}",
            "'; DROP TABLE chunks; --",
            "",
            "***",
            "\u{0}\u{1}",
        ] {
            let terms = keyword_terms(hostile, TermOptions::default());
            if let Some(expr) = fts5_expression(&terms) {
                for part in expr.split(" OR ") {
                    let inner = part.trim_end_matches('*');
                    assert!(inner.starts_with('"') && inner.ends_with('"'), "{hostile:?} → {expr}");
                    assert!(
                        inner[1..inner.len() - 1].chars().all(char::is_alphanumeric),
                        "{hostile:?} → {expr}"
                    );
                }
            }
        }
        assert_eq!(fts5_expression(&[]), None);
    }

    #[test]
    fn caps_the_number_of_terms() {
        let long: String = (0..200).map(|i| format!("word{i} ")).collect();
        assert_eq!(keyword_terms(&long, TermOptions::default()).len(), MAX_TERMS);
    }
}
