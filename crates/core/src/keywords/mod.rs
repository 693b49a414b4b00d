//! Keywords of a chunk: language keywords, identifiers and string literals, at most
//! [`MAX_KEYWORDS`], most relevant first.
//!
//! Terms are lowercased whole (`getUserData` → `getuserdata`); identifiers need ≥ 3 chars and a
//! letter, string literals 2–50 chars on one line. Relevance, in this order:
//! 1. **definition headers** — a definition keyword (`function`, `class`, `def`, `fn`, `struct`,
//!    …), the modifiers before it on its line (`export`, `async`, `pub`, …) and the name after it;
//!    in text order. In Markdown, the words of heading lines.
//! 2. **identifiers** — by frequency (compound identifiers such as `camelCase` / `snake_case`
//!    count double), then first occurrence; English stop words are dropped.
//! 3. **string literals** (inline code spans in Markdown) — by frequency, then first occurrence.
//! 4. **other language keywords** (`return`, `const`, …) — by frequency, then first occurrence.
//! 5. **parts of compound identifiers** already listed (`get`, `user`, `data`) when room is left.
//!
//! Comments count for identifiers but not for literals (so apostrophes in prose do not pair up).
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use crate::lang::registry::{self, Keywords};
use crate::lang::Language;
use crate::text::split_identifier;

/// At most this many keywords per chunk.
pub const MAX_KEYWORDS: usize = 20;

/// Extract the keywords of `text` written in `language` (see the module docs).
pub fn extract(text: &str, language: Language) -> Vec<String> {
    let profile = Profile::get(language);
    let mut scan = Scan::new(profile, text.len());
    scan.run(text);
    scan.finish()
}

/// How a language looks to the scanner.
struct Profile {
    /// [`fold_hash`] keys of the language's keywords, sorted: a word is a keyword when its key
    /// is here (the same test as comparing lowercase forms, without making one).
    keyword_keys: Vec<u64>,
    /// ASCII bytes the main loop only steps over (not a newline, word, digit, quote or the first
    /// byte of a comment opener of this language).
    skip: [bool; 128],
    quotes: &'static [u8],
    line_comment: &'static [&'static str],
    block_comment: bool,
    triple_quotes: bool,
    markdown: bool,
}

impl Profile {
    /// The profile of `language`, built once per process (every chunk needs one).
    fn get(language: Language) -> &'static Profile {
        const N: usize = Language::ALL.len();
        static PROFILES: [OnceLock<Profile>; N] = [const { OnceLock::new() }; N];
        PROFILES[language as usize].get_or_init(|| Profile::of(language))
    }

    fn of(language: Language) -> Profile {
        use Language as L;
        let Keywords { list: keywords, quotes, line_comment, block_comment } =
            registry::entry(language).keywords;
        let mut keyword_keys: Vec<u64> = words(keywords).map(|w| fold_hash(w, false)).collect();
        keyword_keys.sort_unstable();
        let mut profile = Profile {
            keyword_keys,
            skip: [false; 128],
            quotes,
            line_comment,
            block_comment,
            triple_quotes: language == L::Python,
            markdown: language == L::Markdown,
        };
        profile.skip = skippable_bytes(&profile);
        profile
    }

    fn has_keywords(&self) -> bool {
        !self.keyword_keys.is_empty()
    }

    /// Whether the word with [`fold_hash`] `key` (any case) is a keyword of the language.
    fn is_keyword_key(&self, key: u64) -> bool {
        self.keyword_keys.binary_search(&key).is_ok()
    }
}

/// Keywords that introduce a named definition: the identifier after one is a definition name.
fn is_definition_keyword(word: &str) -> bool {
    matches!(
        word,
        "function"
            | "class"
            | "interface"
            | "enum"
            | "type"
            | "struct"
            | "trait"
            | "impl"
            | "fn"
            | "def"
            | "func"
            | "fun"
            | "module"
            | "mod"
            | "namespace"
            | "object"
            | "record"
            | "union"
            | "protocol"
            | "extension"
            | "typealias"
            | "actor"
    )
}

/// One distinct term (identifiers and literals are kept apart).
struct Term<'t> {
    /// The first spelling seen; the keyword is its lowercase form.
    spelling: &'t str,
    first: u32,
    count: u32,
    header: bool,
    literal: bool,
    compound: bool,
}

/// Terms are keyed by a 64-bit hash of their lowercase form (computed without allocating), so
/// the map itself needs no hashing: an identity hasher.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(K);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type TermMap<'t> = HashMap<u64, Term<'t>, BuildHasherDefault<Prehashed>>;

const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// Hash of the lowercase form of `word` (and of its length); `literal` terms hash apart. Two
/// words get the same key exactly when their lowercase forms and byte lengths are equal.
///
/// Eight bytes are mixed at a time: ASCII capitals are lowercased in a `u64` at once, and a
/// non-ASCII word is lowercased into a string first (bytes ≥ 0x80 are left alone by the ASCII
/// step, so both paths hash the same lowercase bytes). A final avalanche spreads every input
/// byte over the low bits, which pick the map bucket.
fn fold_hash(word: &str, literal: bool) -> u64 {
    fold_hash_known(word, literal, word.is_ascii())
}

/// [`fold_hash`] when the caller already knows whether `word` is ASCII (`ascii` false for an
/// ASCII word only costs time: both paths hash the same bytes).
fn fold_hash_known(word: &str, literal: bool, ascii: bool) -> u64 {
    let seed: u64 = if literal { 0x9e37_79b9_7f4a_7c15 } else { 0 };
    let (h, lower_len) = if ascii {
        (hash_lowered(word.as_bytes(), seed), word.len())
    } else {
        let lower: String = word.chars().flat_map(char::to_lowercase).collect();
        (hash_lowered(lower.as_bytes(), seed), lower.len())
    };
    let mut h = h ^ word.len() as u64 ^ ((lower_len as u64) << 32);
    h = (h ^ (h >> 32)).wrapping_mul(K);
    h ^= h >> 29;
    // Never 0 (0 marks "no term" in `line_words`).
    h | 1
}

const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
const ONES: u64 = 0x0101_0101_0101_0101;

/// `x` with its ASCII capitals lowercased, eight bytes at once (bytes ≥ 0x80 are left alone).
fn lower_ascii_u64(x: u64) -> u64 {
    let low7 = x & !HIGH_BITS;
    // The high bit of each byte says "≥ 'A'" and "> 'Z'"; no carry crosses a byte.
    let at_least_a = low7 + ONES * u64::from(0x80 - b'A');
    let above_z = low7 + ONES * u64::from(0x7f - b'Z');
    let capital = at_least_a & !above_z & !x & HIGH_BITS;
    x | (capital >> 2)
}

fn hash_lowered(bytes: &[u8], mut h: u64) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ lower_ascii_u64(u64::from_le_bytes(word))).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ lower_ascii_u64(u64::from_le_bytes(word))).wrapping_mul(K);
    }
    h
}

struct Scan<'t, 'p> {
    profile: &'p Profile,
    terms: TermMap<'t>,
    order: u32,
    /// Keys of the identifiers of the current line so far, to mark the modifiers before a
    /// definition keyword, and whether each is a language keyword.
    line_words: Vec<(u64, bool)>,
    /// The next identifier is a definition name.
    expect_name: bool,
    /// Inside a Markdown heading line.
    heading: bool,
}

impl<'t, 'p> Scan<'t, 'p> {
    fn new(profile: &'p Profile, text_len: usize) -> Self {
        Scan {
            profile,
            terms: TermMap::with_capacity_and_hasher(text_len / 24 + 8, BuildHasherDefault::default()),
            order: 0,
            line_words: Vec::new(),
            expect_name: false,
            heading: false,
        }
    }

    fn add(&mut self, word: &'t str, header: bool, literal: bool) -> u64 {
        self.add_keyed(word, fold_hash(word, literal), header, literal)
    }

    /// [`Scan::add`] with the word's key already computed.
    fn add_keyed(&mut self, word: &'t str, key: u64, header: bool, literal: bool) -> u64 {
        let order = self.order;
        self.order += 1;
        let term = self.terms.entry(key).or_insert(Term {
            spelling: word,
            first: order,
            count: 0,
            header: false,
            literal,
            compound: false,
        });
        term.count += 1;
        term.header |= header;
        // The same spelling again cannot change the answer (most repeats are the same spelling).
        if !literal && !term.compound && (term.count == 1 || term.spelling != word) {
            term.compound = is_compound(word);
        }
        key
    }

    fn run(&mut self, text: &'t str) {
        let bytes = text.as_bytes();
        let mut i = 0;
        let mut line_start = true;
        while i < bytes.len() {
            let b = bytes[i];
            if line_start {
                line_start = false;
                self.line_words.clear();
                self.heading = self.profile.markdown && text[i..].trim_start().starts_with('#');
            }
            if b < 0x80 && self.profile.skip[usize::from(b)] {
                i += 1;
                continue;
            }
            if b == b'\n' {
                line_start = true;
                i += 1;
                continue;
            }
            if b.is_ascii_alphabetic() || b == b'_' || b == b'$' || (b >= 0x80 && starts_word(text, i)) {
                let (end, ascii) = word_span(text, i);
                self.word(&text[i..end], ascii);
                i = end;
                continue;
            }
            if b.is_ascii_digit() || b >= 0x80 {
                // A number (possibly `0x1f`, `1e9`) or a non-letter char: skip it whole.
                i = if b.is_ascii_digit() { word_end(text, i) } else { i + utf8_len(b) };
                continue;
            }
            if let Some(end) = self.comment_end(text, i) {
                self.words_only(&text[i..end]);
                line_start = end > i && bytes[end - 1] == b'\n';
                i = end;
                continue;
            }
            if self.profile.quotes.contains(&b) {
                i = self.literal(text, i);
                continue;
            }
            i += 1;
        }
    }

    /// Comments (and Python docstrings) starting at `i`: where they end.
    fn comment_end(&self, text: &str, i: usize) -> Option<usize> {
        let rest = &text[i..];
        if self.profile.line_comment.iter().any(|p| rest.starts_with(p)) {
            // Keep the newline for the main loop.
            return Some(rest.find('\n').map_or(text.len(), |n| i + n));
        }
        if self.profile.block_comment && rest.starts_with("/*") {
            return Some(rest[2..].find("*/").map_or(text.len(), |n| i + 2 + n + 2));
        }
        if self.profile.triple_quotes && (rest.starts_with("\"\"\"") || rest.starts_with("'''")) {
            let quote = &rest[..3];
            return Some(rest[3..].find(quote).map_or(text.len(), |n| i + 3 + n + 3));
        }
        None
    }

    /// Identifiers of a comment / docstring; no literals, no definition headers.
    fn words_only(&mut self, text: &'t str) {
        let mut i = 0;
        let bytes = text.as_bytes();
        while i < bytes.len() {
            let b = bytes[i];
            if b.is_ascii_alphabetic() || b == b'_' || (b >= 0x80 && starts_word(text, i)) {
                let (end, ascii) = word_span(text, i);
                let word = trim_word(&text[i..end]);
                if word_ok(word) {
                    self.add_keyed(word, fold_hash_known(word, false, ascii), false, false);
                }
                i = end;
            } else if b.is_ascii_digit() {
                i = word_end(text, i);
            } else {
                i += if b >= 0x80 { utf8_len(b) } else { 1 };
            }
        }
        self.expect_name = false;
    }

    /// An identifier-like run; `ascii` says whether it is all ASCII.
    fn word(&mut self, raw: &'t str, ascii: bool) {
        let word = trim_word(raw);
        if word.is_empty() {
            return;
        }
        let keep = word_ok(word);
        let has_keywords = self.profile.has_keywords();
        let key = if keep || has_keywords { fold_hash_known(word, false, ascii) } else { 0 };
        let is_keyword = has_keywords && self.profile.is_keyword_key(key);
        if has_keywords && is_definition_keyword(word) {
            // The modifiers before it on this line (`export async function`) join the header.
            for &(key, kw) in self.line_words.iter().rev() {
                if !kw {
                    break;
                }
                if let Some(t) = self.terms.get_mut(&key) {
                    t.header = true;
                }
            }
            let key = if keep { self.add_keyed(word, key, true, false) } else { 0 };
            self.line_words.push((key, true));
            self.expect_name = true;
            return;
        }
        let key = if self.expect_name && !is_keyword {
            self.expect_name = false;
            if keep {
                self.add_keyed(word, key, true, false)
            } else {
                0
            }
        } else if keep {
            self.add_keyed(word, key, self.heading, false)
        } else {
            0
        };
        self.line_words.push((key, is_keyword));
    }

    /// A string literal starting at the quote at `i`: record it if it closes on the same line with
    /// 2–50 chars inside; returns where scanning resumes.
    fn literal(&mut self, text: &'t str, i: usize) -> usize {
        let bytes = text.as_bytes();
        let quote = bytes[i];
        let mut j = i + 1;
        while j < bytes.len() {
            match bytes[j] {
                b'\\' if quote != b'`' => j += 2,
                b'\n' => return i + 1,
                b if b == quote => {
                    let content = &text[i + 1..j];
                    let chars = content.chars().count();
                    if (2..=50).contains(&chars) && content.trim() == content {
                        self.add(content, false, true);
                    }
                    self.words_only(content);
                    return j + 1;
                }
                _ => j += 1,
            }
        }
        i + 1
    }

    fn finish(self) -> Vec<String> {
        let profile = self.profile;
        // Rank without allocating: tier (2 bits), then weight (descending), then first occurrence.
        let mut ranked: Vec<(u64, bool, u64, &Term<'t>)> = self
            .terms
            .iter()
            .map(|(&key, t)| {
                let keyword = !t.literal && profile.is_keyword_key(key);
                let (tier, weight) = if t.header {
                    (0u64, 0u64)
                } else if t.literal {
                    (2, u64::from(t.count))
                } else if keyword {
                    (3, u64::from(t.count))
                } else {
                    (1, u64::from(t.count) * if t.compound { 2 } else { 1 })
                };
                let rank =
                    tier << 62 | ((1 << 30) - 1 - weight.min((1 << 30) - 1)) << 32 | u64::from(t.first);
                (rank, keyword, key, t)
            })
            .collect();
        // Only the best few are needed: select them, sort them, and sort the rest only if the
        // first ones were mostly stop words or duplicates.
        const HEAD: usize = 64;
        let rest = if ranked.len() > HEAD {
            ranked.select_nth_unstable_by_key(HEAD - 1, |r| r.0);
            ranked.split_off(HEAD)
        } else {
            Vec::new()
        };
        ranked.sort_unstable_by_key(|r| r.0);
        let mut out: Vec<String> = Vec::with_capacity(MAX_KEYWORDS);
        let mut out_keys: Vec<u64> = Vec::with_capacity(MAX_KEYWORDS);
        let mut compounds: Vec<&str> = Vec::new();
        let mut take = |batch: Vec<(u64, bool, u64, &Term<'t>)>, out: &mut Vec<String>| {
            for (_, keyword, key, t) in batch {
                if out.len() == MAX_KEYWORDS {
                    break;
                }
                let ident_key = if t.literal { fold_hash(t.spelling, false) } else { key };
                if (!t.literal && !keyword && is_stopword_key(ident_key)) || out_keys.contains(&ident_key) {
                    continue;
                }
                if t.compound {
                    compounds.push(t.spelling);
                }
                out_keys.push(ident_key);
                out.push(t.spelling.to_lowercase());
            }
        };
        take(ranked, &mut out);
        if out.len() < MAX_KEYWORDS && !rest.is_empty() {
            let mut rest = rest;
            rest.sort_unstable_by_key(|r| r.0);
            take(rest, &mut out);
        }
        // Parts of the listed compound identifiers, if room is left.
        for ident in compounds {
            for part in split_identifier(ident) {
                if out.len() >= MAX_KEYWORDS {
                    return out;
                }
                if word_ok(&part) && !is_stopword(&part) && !out.contains(&part) {
                    out.push(part);
                }
            }
        }
        out
    }
}

/// Whether a non-ASCII char at byte `i` starts an identifier (a letter).
fn starts_word(text: &str, i: usize) -> bool {
    text[i..].chars().next().is_some_and(char::is_alphabetic)
}

/// End of the identifier-like run (letters, digits, `_`, `$`) starting at `i`.
fn word_end(text: &str, i: usize) -> usize {
    word_span(text, i).0
}

/// [`word_end`], and whether the run is all ASCII.
fn word_span(text: &str, i: usize) -> (usize, bool) {
    let bytes = text.as_bytes();
    let mut j = i;
    let mut ascii = true;
    while j < bytes.len() {
        let b = bytes[j];
        if b < 0x80 {
            if !WORD_BYTES[usize::from(b)] {
                break;
            }
            j += 1;
        } else {
            ascii = false;
            match text[j..].chars().next() {
                Some(c) if c.is_alphanumeric() => j += c.len_utf8(),
                _ => break,
            }
        }
    }
    (j, ascii)
}

fn utf8_len(first_byte: u8) -> usize {
    match first_byte {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// See [`Scan::skip`].
fn skippable_bytes(profile: &Profile) -> [bool; 128] {
    let mut skip = [false; 128];
    for b in 0..128u8 {
        let special = b == b'\n'
            || is_word_byte(b)
            || profile.quotes.contains(&b)
            || profile.line_comment.iter().any(|p| p.as_bytes().first() == Some(&b))
            || (profile.block_comment && b == b'/')
            || (profile.triple_quotes && (b == b'"' || b == b'\''));
        skip[usize::from(b)] = !special;
    }
    skip
}

/// ASCII bytes of an identifier-like run: letters, digits, `_`, `$`.
const WORD_BYTES: [bool; 128] = {
    let mut table = [false; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
        b += 1;
    }
    table
};

fn is_word_byte(b: u8) -> bool {
    b < 0x80 && WORD_BYTES[usize::from(b)]
}

/// `$name` (PHP, shell) is `name`.
fn trim_word(word: &str) -> &str {
    word.trim_start_matches('$')
}

/// ≥ 3 chars with a letter.
fn word_ok(word: &str) -> bool {
    let b = word.as_bytes();
    // Three ASCII bytes are three chars; an ASCII letter among them settles the rest.
    if b.len() >= 3 && b[..3].is_ascii() && b[..3].iter().any(u8::is_ascii_alphabetic) {
        return true;
    }
    word.len() >= 3 && word.chars().nth(2).is_some() && word.chars().any(char::is_alphabetic)
}

/// `camelCase`, `PascalCase` (two humps), `snake_case`, `kebab-case` or with digits inside.
fn is_compound(word: &str) -> bool {
    let w = word.trim_matches('_');
    if w.contains('_') {
        return true;
    }
    let mut prev_lower = false;
    for c in w.chars() {
        if c.is_uppercase() && prev_lower {
            return true;
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
    }
    false
}

fn is_stopword(word: &str) -> bool {
    is_stopword_key(fold_hash(word, false))
}

/// Stop words are looked up by the same hash terms are keyed by (no lowercase string needed).
fn is_stopword_key(key: u64) -> bool {
    static KEYS: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    let keys = KEYS.get_or_init(|| {
        let mut keys: Vec<u64> = words(KEYWORD_STOPWORDS).map(|w| fold_hash(w, false)).collect();
        keys.sort_unstable();
        keys
    });
    keys.binary_search(&key).is_ok()
}

/// The English stop words: a data file the build includes, one lowercase word a line in byte
/// order (a test checks), read into sorted hash keys at first use. Each language's keyword list is
/// named by its entry in the language registry ([`crate::lang::registry`]).
const KEYWORD_STOPWORDS: &str = include_str!("lists/stopwords.txt");

/// The words of a list file.
fn words(list: &str) -> std::str::Lines<'_> {
    list.lines()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_bytes_are_lowercased_like_one_byte_at_a_time() {
        for first in (0u8..=255).step_by(1) {
            let bytes = [first, b'A', b'Z', b'@', b'[', 0xC3, b'a', first.wrapping_add(1)];
            let mut expected = bytes;
            expected.make_ascii_lowercase();
            assert_eq!(lower_ascii_u64(u64::from_le_bytes(bytes)).to_le_bytes(), expected, "{bytes:?}");
        }
    }

    #[test]
    fn words_share_a_key_exactly_when_their_lowercase_forms_and_lengths_match() {
        assert_eq!(fold_hash("getUserData", false), fold_hash("GETUSERDATA", false));
        assert_eq!(fold_hash("Größe", false), fold_hash("GRÖßE", false));
        assert_ne!(fold_hash("getUserData", false), fold_hash("getUserData", true));
        assert_ne!(fold_hash("getUserDat", false), fold_hash("getUserData", false));
        assert_ne!(fold_hash("abcdefgh", false), fold_hash("abcdefgh\0", false));
        // The Kelvin sign lowercases to `k` but is three bytes long: not the word `key`.
        assert_ne!(fold_hash("\u{212A}ey", false), fold_hash("key", false));
        assert!(words(KEYWORD_STOPWORDS).all(|w| is_stopword(w) && is_stopword(&w.to_uppercase())));
    }

    #[test]
    fn skipped_bytes_are_never_the_start_of_a_word_literal_or_comment() {
        for language in [Language::Markdown, Language::Python, Language::Rust, Language::Php, Language::Sql] {
            let profile = Profile::of(language);
            let skip = skippable_bytes(&profile);
            for b in 0u8..128 {
                if skip[usize::from(b)] {
                    let text = (b as char).to_string();
                    let scan = Scan::new(&profile, 1);
                    assert!(b != b'\n' && !is_word_byte(b) && !profile.quotes.contains(&b), "{b}");
                    assert_eq!(scan.comment_end(&text, 0), None, "{language:?} {b}");
                }
            }
        }
    }

    #[test]
    fn profiles_are_looked_up_by_language() {
        for (i, &language) in Language::ALL.iter().enumerate() {
            assert_eq!(language as usize, i, "{language:?}");
            let profile = Profile::get(language);
            assert_eq!(profile.markdown, language == Language::Markdown);
            assert_eq!(profile.skip, skippable_bytes(profile));
        }
    }

    #[test]
    fn keywords_are_found_by_key_in_any_case_and_only_whole() {
        let rust = Profile::get(Language::Rust);
        for word in ["fn", "FN", "Impl", "struct", "where"] {
            assert!(rust.is_keyword_key(fold_hash(word, false)), "{word}");
        }
        for word in ["fnn", "f", "structs", "\u{212A}ey", "größe", ""] {
            assert!(!rust.is_keyword_key(fold_hash(word, false)), "{word}");
        }
        assert!(!Profile::get(Language::Markdown).has_keywords());
    }

    #[test]
    fn lists_are_sorted_for_binary_search() {
        let lists = Language::ALL.iter().map(|&l| registry::entry(l).keywords.list);
        for list in lists.filter(|l| !l.is_empty()).chain([KEYWORD_STOPWORDS]) {
            let list: Vec<&str> = words(list).collect();
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
            assert!(
                list.iter().all(|w| !w.is_empty() && *w == w.trim() && *w == w.to_lowercase()),
                "{list:?}"
            );
        }
    }

    #[test]
    fn typescript_signature_keywords() {
        let kw =
            extract("export async function getUserData(id: string): Promise<User>", Language::Typescript);
        for want in ["export", "async", "function", "getuserdata", "string", "promise", "user"] {
            assert!(kw.contains(&want.to_string()), "{want} missing from {kw:?}");
        }
        // The definition header comes first, in text order; `id` is too short.
        assert_eq!(kw[..4], ["export", "async", "function", "getuserdata"]);
        assert!(!kw.contains(&"id".to_string()));
        // Split parts follow the whole identifiers.
        let pos = |w: &str| kw.iter().position(|k| k == w);
        assert!(pos("get").is_some() && pos("get") > pos("user"));
    }

    #[test]
    fn class_keywords() {
        let text = "/**\n * User management service\n */\nexport class UserService {\n    private users: User[] = [];\n\n    addUser(user: User): void {\n        this.users.push(user);\n    }\n\n    findUser(id: string): User | null {\n        return this.users.find(u => u.id === id) || null;\n    }\n}\n";
        let kw = extract(text, Language::Typescript);
        for want in ["export", "class", "userservice", "user", "adduser", "finduser"] {
            assert!(kw.contains(&want.to_string()), "{want} missing from {kw:?}");
        }
        assert_eq!(kw[..3], ["export", "class", "userservice"]);
        assert_eq!(kw[3], "user", "the most frequent identifier follows the header: {kw:?}");
        assert!(kw.len() <= MAX_KEYWORDS);
    }

    #[test]
    fn literals_and_limits() {
        let kw = extract(r#"let a = "hello world"; let b = 'x'; let c = "ok";"#, Language::Javascript);
        assert!(kw.contains(&"hello world".to_string()), "{kw:?}");
        assert!(kw.contains(&"ok".to_string()));
        assert!(!kw.contains(&"x".to_string()));
        let many: String = (0..100).map(|i| format!("ident{i} ")).collect();
        assert_eq!(extract(&many, Language::Text).len(), MAX_KEYWORDS);
        assert!(extract("", Language::Rust).is_empty());
    }

    #[test]
    fn comments_do_not_pair_apostrophes() {
        let kw = extract("# don't stop, it's fine\nx = 'value'\n", Language::Python);
        assert!(kw.contains(&"value".to_string()), "{kw:?}");
        assert!(!kw.iter().any(|k| k.contains(' ')), "{kw:?}");
    }

    #[test]
    fn markdown_headings_first_and_stop_words_dropped() {
        let kw = extract(
            "## Rate limiting\n\nThe limiter uses `tokenBucket` and the the the.\n",
            Language::Markdown,
        );
        assert_eq!(kw[..2], ["rate", "limiting"]);
        assert!(kw.contains(&"tokenbucket".to_string()), "{kw:?}");
        assert!(!kw.contains(&"the".to_string()));
    }

    #[test]
    fn rust_definitions_and_unicode() {
        let kw = extract("pub fn größe_berechnen(x: u32) -> u32 { x }", Language::Rust);
        assert_eq!(kw[..2], ["pub", "größe_berechnen"]);
        assert!(kw.contains(&"größe".to_string()));
    }
}
