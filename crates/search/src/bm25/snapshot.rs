//! A [`Bm25Index`] as bytes, so that a new isolate reads a namespace's keyword copy ready-made
//! instead of tokenizing every document again.
//!
//! Layout (version 1, little-endian; counts and lengths u32): the magic `EBM1`; live documents,
//! tokens and inexact documents (u64 each); the language names; the ids (each string and its
//! document number, `u32::MAX` for a removed one), terms, paths (strings) and tag sets (a count
//! of strings each); the documents as columns (id index, row i64, three token counts, path index,
//! tag set index, language index u8, flags u8: exact, live); the terms' order for prefix phrases
//! (a count, then term numbers); the postings' list starts (terms + 1) and their bytes (one buffer,
//! as [`Bm25Index::pack`] makes it). A copy read back is the copy written: the same search
//! results for every query, and the same bytes when written again.
//!
//! Reading checks everything a search relies on, so bytes that are not a copy are refused rather
//! than answered from: every index in range, the list starts ascending within the bytes, every
//! posting of every list a document in range with a non-zero frequency (document numbers
//! ascending), the term order a permutation, the counts equal to what the documents add up to.
use edgerag_core::bytes::{put_str, put_strings, put_u32, Reader};
use edgerag_core::Language;
use indexmap::{IndexMap, IndexSet};

use std::borrow::Cow;

use super::{Bm25Index, Doc, Postings, GONE};

const MAGIC: &[u8; 4] = b"EBM1";

impl Bm25Index {
    /// The index as bytes ([`Bm25Index::from_snapshot`] reads them back).
    pub fn to_snapshot(&self) -> Vec<u8> {
        let (postings, starts): (Cow<[u8]>, Cow<[u32]>) = match &self.postings {
            Postings::Packed { bytes, starts } => (Cow::Borrowed(bytes), Cow::Borrowed(starts)),
            Postings::Growing { lists, .. } => {
                let mut starts = Vec::with_capacity(lists.len() + 1);
                let mut bytes = Vec::new();
                for list in lists {
                    starts.push(bytes.len() as u32);
                    bytes.extend_from_slice(list);
                }
                starts.push(bytes.len() as u32);
                (Cow::Owned(bytes), Cow::Owned(starts))
            }
        };
        // The term order only when it is complete (an index written since has none).
        let sorted: &[u32] = if self.sorted.len() == self.terms.len() { &self.sorted } else { &[] };
        let mut out = Vec::with_capacity(self.bytes() / 2 + 64);
        out.extend_from_slice(MAGIC);
        for v in [self.live, self.tokens, self.inexact] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        let languages: Vec<&str> = Language::ALL.iter().map(|l| l.as_str()).collect();
        put_strings(&mut out, languages.iter().copied());
        put_u32(&mut out, self.ids.len());
        for (id, &doc) in &self.ids {
            put_str(&mut out, id);
            put_u32(&mut out, doc as usize);
        }
        put_strings(&mut out, self.terms.iter().map(|t| &**t));
        put_strings(&mut out, self.paths.iter().map(|p| &**p));
        put_u32(&mut out, self.tag_sets.len());
        for set in &self.tag_sets {
            put_strings(&mut out, set.iter().map(String::as_str));
        }
        put_u32(&mut out, self.docs.len());
        for d in &self.docs {
            put_u32(&mut out, d.id as usize);
            out.extend_from_slice(&d.row.to_le_bytes());
            for s in d.sizes {
                put_u32(&mut out, s as usize);
            }
            put_u32(&mut out, d.path as usize);
            put_u32(&mut out, d.tags as usize);
            let language = Language::ALL.iter().position(|l| *l == d.language).unwrap_or(0);
            out.push(language as u8);
            out.push(u8::from(d.exact) | (u8::from(d.live) << 1));
        }
        put_u32(&mut out, sorted.len());
        for &t in sorted {
            put_u32(&mut out, t as usize);
        }
        for &s in starts.iter() {
            put_u32(&mut out, s as usize);
        }
        put_u32(&mut out, postings.len());
        out.extend_from_slice(&postings);
        out
    }

    /// An index from [`Bm25Index::to_snapshot`]'s bytes; `None` for bytes that are not one (see
    /// the module docs for what is checked).
    pub fn from_snapshot(bytes: &[u8]) -> Option<Self> {
        let mut r = Reader::new(bytes);
        if r.take(4)? != MAGIC {
            return None;
        }
        let (live, tokens, inexact) = (r.u64()?, r.u64()?, r.u64()?);
        let names = r.strings()?;
        let languages: Vec<Language> =
            names.iter().map(|n| Language::from_name(n)).collect::<Option<Vec<_>>>()?;
        let n_ids = r.count(8)?;
        let mut ids: IndexMap<Box<str>, u32> = IndexMap::with_capacity(n_ids);
        for _ in 0..n_ids {
            let id: Box<str> = r.str()?.into();
            let doc = r.u32()?;
            if ids.insert(id, doc).is_some() {
                return None;
            }
        }
        let terms: IndexSet<Box<str>> = string_set(&mut r)?;
        let paths: IndexSet<Box<str>> = string_set(&mut r)?;
        let n_sets = r.count(4)?;
        let mut tag_sets: IndexSet<Vec<String>> = IndexSet::with_capacity(n_sets);
        for _ in 0..n_sets {
            let set: Vec<String> = r.strings()?.into_iter().map(String::from).collect();
            if !tag_sets.insert(set) {
                return None;
            }
        }
        let n_docs = r.count(30)?;
        let mut docs = Vec::with_capacity(n_docs);
        for _ in 0..n_docs {
            let id = r.u32()?;
            let row = i64::from_le_bytes(r.take(8)?.try_into().ok()?);
            let sizes = [r.u32()?, r.u32()?, r.u32()?];
            let (path, tags) = (r.u32()?, r.u32()?);
            let language = *languages.get(usize::from(r.take(1)?[0]))?;
            let flags = r.take(1)?[0];
            if flags > 3
                || id as usize >= ids.len()
                || path as usize >= paths.len()
                || tags as usize >= tag_sets.len()
            {
                return None;
            }
            docs.push(Doc {
                id,
                row,
                sizes,
                path,
                tags,
                language,
                exact: flags & 1 == 1,
                live: flags & 2 == 2,
            });
        }
        // Each id names its live document (or none), and each live document is named by its id.
        for (i, &doc) in ids.values().enumerate() {
            if doc != GONE && (doc as usize >= docs.len() || docs[doc as usize].id as usize != i) {
                return None;
            }
        }
        let named = ids.values().filter(|&&d| d != GONE).count();
        let live_docs: Vec<&Doc> = docs.iter().filter(|d| d.live).collect();
        if live_docs.len() != named
            || live_docs.len() as u64 != live
            || live_docs.iter().map(|d| u64::from(d.len())).sum::<u64>() != tokens
            || live_docs.iter().filter(|d| !d.exact).count() as u64 != inexact
        {
            return None;
        }
        let n_sorted = r.count(4)?;
        if n_sorted != 0 && n_sorted != terms.len() {
            return None;
        }
        let mut seen = vec![false; n_sorted];
        let mut sorted = Vec::with_capacity(n_sorted);
        for _ in 0..n_sorted {
            let t = r.u32()?;
            if std::mem::replace(seen.get_mut(t as usize)?, true) {
                return None;
            }
            sorted.push(t);
        }
        if r.remaining() < (terms.len() + 1) * 4 {
            return None;
        }
        let mut starts = Vec::with_capacity(terms.len() + 1);
        for _ in 0..=terms.len() {
            starts.push(r.u32()?);
        }
        let len = r.u32()? as usize;
        let postings = r.take(len)?.to_vec();
        if r.remaining() != 0
            || starts.first() != Some(&0)
            || starts.last().map(|&s| s as usize) != Some(len)
            || starts.windows(2).any(|w| w[0] > w[1])
        {
            return None;
        }
        for w in starts.windows(2) {
            if !list_is_sound(&postings[w[0] as usize..w[1] as usize], docs.len()) {
                return None;
            }
        }
        Some(Bm25Index {
            docs,
            ids,
            terms,
            postings: Postings::Packed { bytes: postings, starts },
            sorted,
            paths,
            path_verdicts: Default::default(),
            tag_sets,
            live,
            tokens,
            inexact,
        })
    }
}

/// Whether an encoded list is whole pairs of varints (each at most a u32) that decode to
/// documents below `docs`, ascending, with non-zero frequencies — what [`decode`] reads without
/// overflowing and a search indexes without going out of range.
fn list_is_sound(list: &[u8], docs: usize) -> bool {
    let read = |at: &mut usize| -> Option<u32> {
        let mut v = 0u64;
        for shift in (0..35).step_by(7) {
            let b = *list.get(*at)?;
            *at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return u32::try_from(v).ok();
            }
        }
        None
    };
    let (mut at, mut doc, mut first) = (0usize, 0u64, true);
    while at < list.len() {
        let (Some(gap), Some(freq)) = (read(&mut at), read(&mut at)) else { return false };
        if freq == 0 || (!first && gap == 0) {
            return false;
        }
        doc = if first { u64::from(gap) } else { doc + u64::from(gap) };
        first = false;
        if doc >= docs as u64 {
            return false;
        }
    }
    true
}

/// Distinct strings in their order (a repeated one is refused).
fn string_set(r: &mut Reader<'_>) -> Option<IndexSet<Box<str>>> {
    let values = r.strings()?;
    let n = values.len();
    let set: IndexSet<Box<str>> = values.into_iter().map(Box::from).collect();
    (set.len() == n).then_some(set)
}

#[cfg(test)]
mod tests {
    use super::super::{DocInput, Phrase};
    use super::*;
    use crate::filters::SearchFilters;
    use proptest::prelude::*;

    fn sample(docs: &[(&str, &str, &str, Language, &[&str])]) -> Bm25Index {
        let mut index = Bm25Index::new();
        for (row, (id, text, path, language, tags)) in docs.iter().enumerate() {
            let tags: Vec<String> = tags.iter().map(|t| t.to_string()).collect();
            index.insert(DocInput {
                id,
                row: row as i64 * 3 + 1,
                columns: [text, path, if row % 2 == 0 { "retryWithBackoff" } else { "" }],
                path,
                language: *language,
                tags: &tags,
            });
        }
        index
    }

    fn everything(index: &Bm25Index, phrases: &[Phrase]) -> Vec<(String, i64, u64)> {
        let filters = [
            SearchFilters::default(),
            SearchFilters { languages: vec![Language::Python], ..Default::default() },
            SearchFilters { tags: vec!["gen".into()], ..Default::default() },
            SearchFilters { paths: vec!["src/**".into()], ..Default::default() },
        ];
        filters
            .iter()
            .flat_map(|f| index.search(phrases, &f.matcher(), 20))
            .map(|h| (h.id.to_string(), h.row, h.score.to_bits()))
            .collect()
    }

    fn phrase(token: &str, prefix: bool) -> Phrase {
        Phrase { token: token.into(), prefix }
    }

    #[test]
    fn a_copy_read_back_answers_exactly_as_the_copy_written() {
        let mut index = sample(&[
            ("a", "retry the request with backoff", "src/net/retry.py", Language::Python, &["gen"]),
            ("b", "backoff jitter retry retry", "src/net/jitter.rs", Language::Rust, &[]),
            ("c", "parse the session token", "lib/session.py", Language::Python, &[]),
            ("d", "Café naïve résumé", "docs/readme.md", Language::Markdown, &["gen", "docs"]),
        ]);
        // A replaced and a removed document: their old numbers are dead.
        index.insert(DocInput {
            id: "b",
            row: 99,
            columns: ["backoff again", "src/net/jitter.rs", ""],
            path: "src/net/jitter.rs",
            language: Language::Rust,
            tags: &[],
        });
        assert!(index.remove("c"));
        let bytes = index.to_snapshot();
        let back = Bm25Index::from_snapshot(&bytes).expect("a snapshot");
        assert_eq!(
            (back.len(), back.tokens(), back.inexact(), back.terms()),
            (3, index.tokens(), 0, index.terms())
        );
        for phrases in [
            vec![phrase("retry", false), phrase("backoff", false)],
            vec![phrase("ret", true)],
            vec![phrase("session", false)],
            vec![phrase("cafe", false), phrase("resume", true)],
        ] {
            assert_eq!(everything(&back, &phrases), everything(&index, &phrases));
        }
        assert!(!everything(&back, &[phrase("backoff", false)]).is_empty());
        assert_eq!(back.clone().to_snapshot(), bytes, "written again, the same bytes");
        assert_eq!(back.sizes("a"), index.sizes("a"));
        assert_eq!(back.sizes("c"), None);
    }

    #[test]
    fn an_empty_index_round_trips() {
        let bytes = Bm25Index::new().to_snapshot();
        let back = Bm25Index::from_snapshot(&bytes).expect("a snapshot");
        assert!(back.is_empty());
        assert!(back.search(&[phrase("x", false)], &SearchFilters::default().matcher(), 5).is_empty());
    }

    #[test]
    fn bytes_that_are_not_a_copy_are_refused() {
        let index = sample(&[
            ("a", "alpha beta gamma", "src/a.rs", Language::Rust, &[]),
            ("b", "beta delta", "src/b.py", Language::Python, &["t"]),
        ]);
        let bytes = index.to_snapshot();
        for cut in [0, 3, 4, 20, bytes.len() / 2, bytes.len() - 1] {
            assert!(Bm25Index::from_snapshot(&bytes[..cut]).is_none(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Bm25Index::from_snapshot(&longer).is_none());
        let mut other_version = bytes.clone();
        other_version[3] = b'2';
        assert!(Bm25Index::from_snapshot(&other_version).is_none());
        // The live count no longer adds up.
        let mut live = bytes.clone();
        live[4] = 7;
        assert!(Bm25Index::from_snapshot(&live).is_none());
        // A posting naming a document that does not exist (the last posting's document gap).
        let n = bytes.len();
        let mut posting = bytes.clone();
        posting[n - 2] = 0x7f;
        assert!(Bm25Index::from_snapshot(&posting).is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn any_index_round_trips_and_any_bytes_are_refused_or_read(
            docs in prop::collection::vec(("[a-e]{1,2}", "[a-z ]{0,30}", 0usize..3, 0usize..3, any::<bool>()), 0..30),
            removed in prop::collection::vec("[a-e]{1,2}", 0..4),
            flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
            query in prop::collection::vec(("[a-z]{1,3}", any::<bool>()), 1..4),
        ) {
            let mut index = Bm25Index::new();
            for (row, (id, text, path, lang, tagged)) in docs.iter().enumerate() {
                let tags: Vec<String> = if *tagged { vec!["gen".into()] } else { vec![] };
                let path = ["src/a.py", "src/b.rs", "lib/c.go"][*path];
                let language = [Language::Python, Language::Rust, Language::Go][*lang];
                index.insert(DocInput { id, row: row as i64, columns: [text, path, ""], path, language, tags: &tags });
            }
            for id in &removed {
                index.remove(id);
            }
            let bytes = index.to_snapshot();
            let back = Bm25Index::from_snapshot(&bytes).expect("a snapshot");
            let phrases: Vec<Phrase> = query.iter().map(|(t, p)| phrase(t, *p)).collect();
            prop_assert_eq!(everything(&back, &phrases), everything(&index, &phrases));
            // Damaged bytes: refused, or read into an index that searches without panicking.
            let mut damaged = bytes.clone();
            for (at, b) in &flips {
                let i = at.index(damaged.len());
                damaged[i] ^= b | 1;
            }
            if let Some(other) = Bm25Index::from_snapshot(&damaged) {
                let _ = everything(&other, &phrases);
            }
        }
    }
}
