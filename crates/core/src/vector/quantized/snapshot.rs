//! A [`QuantizedVectors`] as bytes, so that a new isolate reads a namespace's in-memory copy
//! ready-made instead of rebuilding it row by row.
//!
//! Layout (version 1, little-endian): the magic `EQV1`, `dims` and `n` as u32; then per vector, as
//! columns: keys (i64), steps, norms (f32), norms in f64, the two error bounds (f32), the path,
//! language and tag-set indexes (u32); then the distinct paths, languages and tag sets (a u32
//! count, each string a u32 length and its UTF-8 bytes, each tag set a u32 count of strings); last
//! the codes (`n × dims` i8, so that the reader can keep them where they are). Vectors removed since the copy was built are left out: they are never
//! candidates, so the copy read back answers exactly as the one written. The interned values are
//! written in their order, so the indexes stay valid.
use super::{Interned, QuantizedVectors};
use crate::bytes::{put_strings, put_u32, Reader};

const MAGIC: &[u8; 4] = b"EQV1";

impl QuantizedVectors {
    /// The copy as bytes ([`QuantizedVectors::from_snapshot`] reads them back).
    pub fn to_snapshot(&self) -> Vec<u8> {
        let live: Vec<usize> = (0..self.len()).filter(|&i| !self.removed[i]).collect();
        let n = live.len();
        let mut out = Vec::with_capacity(12 + n * (Self::bytes_per_vector(self.dims) - 1) + 1024);
        out.extend_from_slice(MAGIC);
        put_u32(&mut out, self.dims);
        put_u32(&mut out, n);
        for &i in &live {
            out.extend_from_slice(&self.keys[i].to_le_bytes());
        }
        for column in [&self.steps, &self.norms] {
            for &i in &live {
                out.extend_from_slice(&column[i].to_le_bytes());
            }
        }
        for &i in &live {
            out.extend_from_slice(&self.norms64[i].to_le_bytes());
        }
        for column in [&self.error_max, &self.error_len] {
            for &i in &live {
                out.extend_from_slice(&column[i].to_le_bytes());
            }
        }
        for column in [&self.path_of, &self.language_of, &self.tags_of] {
            for &i in &live {
                out.extend_from_slice(&column[i].to_le_bytes());
            }
        }
        put_strings(&mut out, self.paths.values.iter().map(String::as_str));
        put_strings(&mut out, self.languages.values.iter().map(String::as_str));
        put_u32(&mut out, self.tag_sets.values.len());
        for set in &self.tag_sets.values {
            put_strings(&mut out, set.iter().map(String::as_str));
        }
        if n == self.len() {
            out.extend(self.codes.iter().map(|&c| c as u8));
        } else {
            for &i in &live {
                out.extend(self.codes[i * self.dims..(i + 1) * self.dims].iter().map(|&c| c as u8));
            }
        }
        out
    }

    /// A copy from [`QuantizedVectors::to_snapshot`]'s bytes; `None` for bytes that are not one
    /// (another version, cut short, trailing bytes, an index or code out of range, keys not
    /// ascending, invalid UTF-8).
    pub fn from_snapshot(bytes: &[u8]) -> Option<Self> {
        Self::from_snapshot_vec(bytes.to_vec())
    }

    /// [`QuantizedVectors::from_snapshot`] taking the bytes: their allocation becomes the codes
    /// (the codes come last), so reading a copy back holds it about once, not twice.
    pub fn from_snapshot_vec(mut bytes: Vec<u8>) -> Option<Self> {
        let mut r = Reader::new(&bytes);
        if r.take(4)? != MAGIC {
            return None;
        }
        let dims = r.u32()? as usize;
        let n = r.u32()? as usize;
        // Every vector takes at least this many bytes: refuse a count the bytes cannot hold
        // before allocating for it.
        if n.checked_mul(dims + 36)? > bytes.len() {
            return None;
        }
        let keys: Vec<i64> = r.column(n, 8, |b| i64::from_le_bytes(b.try_into().expect("8 bytes")))?;
        if keys.windows(2).any(|w| w[0] >= w[1]) {
            return None;
        }
        let f32s = |r: &mut Reader| r.column(n, 4, |b| f32::from_le_bytes(b.try_into().expect("4 bytes")));
        let steps = f32s(&mut r)?;
        let norms = f32s(&mut r)?;
        let norms64: Vec<f64> = r.column(n, 8, |b| f64::from_le_bytes(b.try_into().expect("8 bytes")))?;
        let error_max = f32s(&mut r)?;
        let error_len = f32s(&mut r)?;
        let u32s = |r: &mut Reader| r.column(n, 4, |b| u32::from_le_bytes(b.try_into().expect("4 bytes")));
        let path_of = u32s(&mut r)?;
        let language_of = u32s(&mut r)?;
        let tags_of = u32s(&mut r)?;
        let paths = r.strings()?.into_iter().map(String::from).collect::<Vec<String>>();
        let languages = r.strings()?.into_iter().map(String::from).collect::<Vec<String>>();
        let sets = r.u32()? as usize;
        let mut tag_sets = Vec::with_capacity(sets.min(bytes.len() / 4));
        for _ in 0..sets {
            tag_sets.push(r.strings()?.into_iter().map(String::from).collect::<Vec<String>>());
        }
        let codes_at = r.position();
        if bytes.len() - codes_at != n.checked_mul(dims)? || bytes[codes_at..].contains(&(i8::MIN as u8)) {
            return None;
        }
        let in_range = |of: &[u32], len: usize| of.iter().all(|&i| (i as usize) < len);
        if !in_range(&path_of, paths.len())
            || !in_range(&language_of, languages.len())
            || !in_range(&tags_of, tag_sets.len())
        {
            return None;
        }
        let string_heap = |s: &String| s.capacity();
        let tags_heap =
            |t: &Vec<String>| t.iter().map(|s| s.capacity() + std::mem::size_of::<String>()).sum::<usize>();
        let mut bytes_held = n * Self::bytes_per_vector(dims);
        let paths = Interned::from_values(paths, string_heap, &mut bytes_held);
        let languages = Interned::from_values(languages, string_heap, &mut bytes_held);
        let tag_sets = Interned::from_values(tag_sets, tags_heap, &mut bytes_held);
        bytes.drain(..codes_at);
        // In place: the same allocation, each byte read as a code.
        let codes: Vec<i8> = bytes.into_iter().map(|b| b as i8).collect();
        Some(QuantizedVectors {
            dims,
            keys,
            codes,
            steps,
            norms,
            norms64,
            error_max,
            error_len,
            path_of,
            language_of,
            tags_of,
            removed: vec![false; n],
            removed_count: 0,
            paths,
            languages,
            tag_sets,
            path_verdicts: Default::default(),
            bytes: bytes_held,
        })
    }

    /// The snapshot's size without building it (what a writer checks against its budget).
    pub fn snapshot_len(&self) -> usize {
        let n = self.len() - self.removed_count;
        let strings = |v: &[String]| 4 + v.iter().map(|s| 4 + s.len()).sum::<usize>();
        12 + n * (8 + 4 + 4 + 8 + 4 + 4 + self.dims + 12)
            + strings(&self.paths.values)
            + strings(&self.languages.values)
            + 4
            + self.tag_sets.values.iter().map(|t| strings(t)).sum::<usize>()
    }
}

/// One stored part of a snapshot as text (base64: D1 takes text as it is, a BLOB as an array of
/// byte numbers).
pub fn part_text(part: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(part)
}

/// Appends the bytes of a part's text ([`part_text`]) to `out`; `false` for text that is not one.
pub fn append_part(text: &str, out: &mut Vec<u8>) -> bool {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode_vec(text.as_bytes(), out).is_ok()
}

#[cfg(test)]
mod tests {
    use super::super::FilterFields;
    use super::*;
    use crate::vector::VectorFilter;
    use proptest::prelude::*;

    fn fields(path: &str, language: &str, tags: &[&str]) -> FilterFields {
        FilterFields {
            path: path.into(),
            language: language.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
        }
    }

    fn sample(n: usize, dims: usize) -> QuantizedVectors {
        let mut set = QuantizedVectors::new(dims);
        for i in 0..n {
            let values: Vec<f32> =
                (0..dims).map(|d| (((i * 31 + d * 17) % 23) as f32 - 11.0) / 7.0).collect();
            let tags: &[&str] = if i % 3 == 0 { &["a", "b"] } else { &[] };
            set.push(
                i as i64 * 2 + 1,
                &values,
                fields(&format!("src/f{}.rs", i % 5), ["rust", "go"][i % 2], tags),
            );
        }
        set
    }

    #[test]
    fn a_copy_read_back_equals_the_copy_written() {
        let set = sample(40, 12);
        let bytes = set.to_snapshot();
        assert_eq!(bytes.len(), set.snapshot_len());
        let back = QuantizedVectors::from_snapshot(&bytes).expect("a snapshot");
        assert_eq!(back, set);
        assert_eq!(back.bytes(), set.bytes());
        assert_eq!(back.to_snapshot(), bytes);
    }

    #[test]
    fn parts_as_text_join_back() {
        let bytes = sample(25, 16).to_snapshot();
        let mut joined = Vec::new();
        for part in bytes.chunks(100) {
            assert!(append_part(&part_text(part), &mut joined));
        }
        assert_eq!(joined, bytes);
        assert!(!append_part("not base64!", &mut joined));
    }

    #[test]
    fn an_empty_copy_round_trips() {
        let set = QuantizedVectors::new(384);
        let back = QuantizedVectors::from_snapshot(&set.to_snapshot()).expect("a snapshot");
        assert_eq!(back, set);
    }

    #[test]
    fn removed_vectors_are_left_out_and_the_answers_stay() {
        let mut set = sample(30, 8);
        for key in [1, 9, 33, 59] {
            set.remove(key);
        }
        let bytes = set.to_snapshot();
        assert_eq!(bytes.len(), set.snapshot_len());
        let back = QuantizedVectors::from_snapshot(&bytes).expect("a snapshot");
        assert_eq!(back.len(), 26);
        assert_eq!(back.removed(), 0);
        let q: Vec<f32> = (0..8).map(|d| d as f32 - 3.5).collect();
        for filter in
            [VectorFilter::default(), VectorFilter { languages: vec!["go".into()], ..Default::default() }]
        {
            for k in [1, 3, 10, 40] {
                assert_eq!(back.candidates(&q, k, &filter), set.candidates(&q, k, &filter));
            }
        }
    }

    #[test]
    fn bytes_that_are_not_a_snapshot_are_refused() {
        let bytes = sample(10, 4).to_snapshot();
        for cut in [0, 3, 4, 11, 12, bytes.len() / 2, bytes.len() - 1] {
            assert!(QuantizedVectors::from_snapshot(&bytes[..cut]).is_none(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(QuantizedVectors::from_snapshot(&longer).is_none());
        let mut other_version = bytes.clone();
        other_version[3] = b'2';
        assert!(QuantizedVectors::from_snapshot(&other_version).is_none());
        // A huge vector count does not allocate: refused by the size check.
        let mut huge = bytes.clone();
        huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(QuantizedVectors::from_snapshot(&huge).is_none());
        // A path index out of range.
        let mut bad_index = bytes;
        let at = 12 + 10 * (8 + 4 + 4 + 8 + 4 + 4);
        bad_index[at..at + 4].copy_from_slice(&1000u32.to_le_bytes());
        assert!(QuantizedVectors::from_snapshot(&bad_index).is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn round_trip_keeps_every_answer(
            vectors in prop::collection::vec((prop::collection::vec(-4.0f32..4.0, 6), 0usize..4, 0usize..3, any::<bool>()), 0..60),
            removed in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
            query in prop::collection::vec(-4.0f32..4.0, 6),
            k in 1usize..20,
            language in 0usize..3,
        ) {
            let mut set = QuantizedVectors::new(6);
            for (i, (values, path, lang, tagged)) in vectors.iter().enumerate() {
                let tags: &[&str] = if *tagged { &["t"] } else { &[] };
                set.push(i as i64 * 3, values, fields(&format!("p/{path}.py"), ["python", "rust", "go"][*lang], tags));
            }
            if !vectors.is_empty() {
                for r in &removed {
                    set.remove(r.index(vectors.len()) as i64 * 3);
                }
            }
            let bytes = set.to_snapshot();
            prop_assert_eq!(bytes.len(), set.snapshot_len());
            let back = QuantizedVectors::from_snapshot(&bytes).expect("a snapshot");
            prop_assert_eq!(back.to_snapshot(), bytes);
            let filters = [
                VectorFilter::default(),
                VectorFilter { languages: vec![["python", "rust", "go"][language].into()], ..Default::default() },
                VectorFilter { tag: Some("t".into()), ..Default::default() },
                VectorFilter { path_globs: vec!["p/1*".into()], ..Default::default() },
            ];
            for f in &filters {
                prop_assert_eq!(back.candidates(&query, k, f), set.candidates(&query, k, f));
            }
        }

        #[test]
        fn any_bytes_are_read_or_refused_without_panicking(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = QuantizedVectors::from_snapshot(&bytes);
            let mut with_magic = MAGIC.to_vec();
            with_magic.extend(&bytes);
            let _ = QuantizedVectors::from_snapshot(&with_magic);
        }
    }
}
