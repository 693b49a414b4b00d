//! Little-endian byte encoding shared by the in-memory copies' snapshots (the vector copy's and
//! the keyword copy's): counts and lengths as `u32`, strings as length + UTF-8, and a reader that
//! refuses (returns `None`) instead of panicking on bytes that are too short or malformed.

/// Appends `v` as a little-endian `u32`. Panics when `v` does not fit: a copy is bounded far
/// below that.
pub fn put_u32(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&u32::try_from(v).expect("a count above u32").to_le_bytes());
}

/// Appends a string: its byte length, then its bytes.
pub fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

/// Appends a list of strings: its length, then each string.
pub fn put_strings<'a>(out: &mut Vec<u8>, values: impl ExactSizeIterator<Item = &'a str>) {
    put_u32(out, values.len());
    for s in values {
        put_str(out, s);
    }
}

/// Reads what the `put_*` functions wrote, front to back.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    /// How many bytes were read so far.
    pub fn position(&self) -> usize {
        self.at
    }

    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    pub fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(len)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// A count of items of at least `min_bytes` each: refused when the bytes left cannot hold
    /// them (before anything is allocated for them).
    pub fn count(&mut self, min_bytes: usize) -> Option<usize> {
        let n = self.u32()? as usize;
        (n.checked_mul(min_bytes)? <= self.remaining()).then_some(n)
    }

    pub fn str(&mut self) -> Option<&'a str> {
        let len = self.u32()? as usize;
        std::str::from_utf8(self.take(len)?).ok()
    }

    pub fn strings(&mut self) -> Option<Vec<&'a str>> {
        let n = self.count(4)?;
        (0..n).map(|_| self.str()).collect()
    }

    /// `n` values of `width` bytes each.
    pub fn column<T>(&mut self, n: usize, width: usize, read: impl Fn(&[u8]) -> T) -> Option<Vec<T>> {
        let raw = self.take(n.checked_mul(width)?)?;
        Some(raw.chunks_exact(width).map(read).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back_and_short_bytes_are_refused() {
        let mut out = Vec::new();
        put_u32(&mut out, 7);
        put_strings(&mut out, ["a", "βγ", ""].into_iter());
        out.extend_from_slice(&9u64.to_le_bytes());
        let mut r = Reader::new(&out);
        assert_eq!(r.u32(), Some(7));
        assert_eq!(r.strings(), Some(vec!["a", "βγ", ""]));
        assert_eq!(r.u64(), Some(9));
        assert_eq!(r.remaining(), 0);
        assert_eq!(r.u32(), None);
        // A count the bytes cannot hold is refused before anything is read.
        let mut r = Reader::new(&[255, 255, 255, 255, 0]);
        assert_eq!(r.count(1), None);
        // A string cut short, or not UTF-8.
        assert_eq!(Reader::new(&[3, 0, 0, 0, b'a']).str(), None);
        assert_eq!(Reader::new(&[1, 0, 0, 0, 0xff]).str(), None);
    }
}
