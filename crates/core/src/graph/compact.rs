//! Compact storage for the resolver's definitions: every name and scope kept once in one buffer,
//! and lookups as sorted arrays of packed integers (8 bytes an entry), so that a namespace's
//! definitions cost tens of bytes each instead of a few hundred.

/// FNV-1a, 64 bits (the same on every platform): the key of a string in [`Strings`] and
/// [`Positions`] (collisions are told apart by the string itself). Each part ends with a `0xff`
/// byte, so `["ab", "c"]` and `["a", "bc"]` differ.
pub(super) fn fnv(parts: &[&[u8]]) -> u64 {
    use std::hash::Hasher;
    let mut h = fnv::FnvHasher::default();
    for part in parts {
        h.write(part);
        h.write_u8(0xff);
    }
    h.finish()
}

/// [`fnv`] folded to the 32 bits a [`Positions`] entry keeps.
pub(super) fn fnv32(parts: &[&[u8]]) -> u32 {
    let h = fnv(parts);
    (h ^ (h >> 32)) as u32
}

/// A growing array kept in blocks of [`Column::BLOCK`] items: adding an item never copies the
/// others into a buffer twice their size (a `Vec` doubles, and holds both while it copies), and
/// the spare room is at most one block. A column made [`Column::with_capacity`] keeps its first
/// `capacity` items in one buffer of that size, allocated at once (so, in wasm32, where memory
/// never shrinks, before the passing allocations that would otherwise sit between its blocks),
/// and [`Column::into_vec`] then hands that buffer over without a copy.
pub(super) struct Column<T> {
    blocks: Vec<Vec<T>>,
    /// Items of the first block (the capacity asked for, or [`Column::BLOCK`]).
    first: usize,
    len: usize,
}

impl<T> Default for Column<T> {
    fn default() -> Self {
        Column { blocks: Vec::new(), first: Column::<T>::BLOCK, len: 0 }
    }
}

impl<T> Column<T> {
    const BLOCK: usize = 1 << 12;

    /// A column whose first `capacity` items go into one buffer, allocated now (none for 0).
    pub(super) fn with_capacity(capacity: usize) -> Column<T> {
        if capacity == 0 {
            return Column::default();
        }
        Column { blocks: vec![Vec::with_capacity(capacity)], first: capacity, len: 0 }
    }

    pub(super) fn push(&mut self, item: T) {
        let room = match self.blocks.len() {
            0 => 0,
            1 => self.first,
            _ => Column::<T>::BLOCK,
        };
        match self.blocks.last_mut() {
            Some(block) if block.len() < room => block.push(item),
            _ => {
                let size = if self.blocks.is_empty() { self.first } else { Column::<T>::BLOCK };
                let mut block = Vec::with_capacity(size);
                block.push(item);
                self.blocks.push(block);
            }
        }
        self.len += 1;
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every item in order, each block freed once read.
    pub(super) fn into_items(self) -> impl Iterator<Item = T> {
        self.blocks.into_iter().flatten()
    }

    /// Every item in one buffer of their size, filled as the blocks are freed (the first block
    /// itself when it holds them all).
    pub(super) fn into_vec(mut self) -> Vec<T> {
        if self.blocks.len() <= 1 {
            return self.blocks.pop().unwrap_or_default();
        }
        let mut out = Vec::with_capacity(self.len);
        for block in self.blocks {
            out.extend(block);
        }
        out
    }
}

impl<T: Copy> Column<T> {
    pub(super) fn get(&self, i: usize) -> T {
        if i < self.first {
            return self.blocks[0][i];
        }
        let i = i - self.first;
        self.blocks[1 + i / Column::<T>::BLOCK][i % Column::<T>::BLOCK]
    }
}

/// Strings stored about once each, by number: their text in buffers of [`Strings::BLOCK`] bytes
/// (a string never straddles two; a longer one has a buffer of its own), so that the text never
/// doubles into a copy of itself, and the end of each string in the text of all buffers end to
/// end. While strings are added, an equal one gets the same number when it is still the last
/// string of its hash's slot in a fixed table of [`Strings::SLOTS`] numbers (1 MB); otherwise it
/// is stored again, which costs only its bytes: strings are always compared by their text, never
/// by number. A map of every string (9 bytes or more a string, doubling as it grows) was the
/// largest thing the table dropped when sealed; the slots store the registry's 20,000 files'
/// 124,000 distinct strings about 128,000 times (a simulation of the slots).
#[derive(Default)]
pub(super) struct Strings {
    blocks: Vec<String>,
    /// Each buffer's first string and where its text starts (in the text of all buffers).
    block_first: Vec<u32>,
    block_start: Vec<u32>,
    ends: Column<u32>,
    /// Bytes of text stored.
    bytes: u32,
    /// The last string stored in each slot (by [`fnv32`] of its text), [`Strings::EMPTY`] for
    /// none; allocated by the first string, dropped when sealed.
    seen: Vec<u32>,
}

impl Strings {
    const BLOCK: usize = 1 << 16;
    /// Slots of the table finding equal strings.
    const SLOTS: usize = 1 << 18;
    const EMPTY: u32 = u32::MAX;

    /// The number of `s`: the one it had when it is still its slot's last string, else a new one.
    pub(super) fn intern(&mut self, s: &str) -> u32 {
        if self.seen.is_empty() {
            self.seen = vec![Strings::EMPTY; Strings::SLOTS];
        }
        let slot = fnv32(&[s.as_bytes()]) as usize % Strings::SLOTS;
        let last = self.seen[slot];
        if last != Strings::EMPTY && self.get(last) == s {
            return last;
        }
        let id = self.push(s);
        self.seen[slot] = id;
        id
    }

    fn push(&mut self, s: &str) -> u32 {
        let id = self.ends.len() as u32;
        let fits = self.blocks.last().is_some_and(|b| b.capacity() - b.len() >= s.len());
        if !fits {
            self.blocks.push(String::with_capacity(Strings::BLOCK.max(s.len())));
            self.block_first.push(id);
            self.block_start.push(self.bytes);
        }
        if let Some(block) = self.blocks.last_mut() {
            block.push_str(s);
        }
        self.bytes += s.len() as u32;
        self.ends.push(self.bytes);
        id
    }

    /// Strings stored.
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    pub(super) fn get(&self, id: u32) -> &str {
        let k = self.block_first.partition_point(|&f| f <= id) - 1;
        let base = self.block_start[k] as usize;
        let start = if id == 0 { 0 } else { self.ends.get(id as usize - 1) as usize };
        &self.blocks[k][start - base..self.ends.get(id as usize) as usize - base]
    }

    /// No more strings: the table that finds equal ones is dropped.
    pub(super) fn seal(&mut self) {
        self.seen = Vec::new();
    }
}

/// Node positions (numbered across files) by a 32-bit hash of a string of theirs:
/// `hash << 32 | position`, sorted once every node is in; each match is checked against the string
/// itself. A string's positions come out in position order (file, then node).
#[derive(Default)]
pub(super) struct Positions {
    added: Column<u64>,
    entries: Vec<u64>,
}

impl Positions {
    /// Room for `capacity` positions in one buffer, sorted in place when sealed.
    pub(super) fn with_capacity(capacity: usize) -> Positions {
        Positions { added: Column::with_capacity(capacity), entries: Vec::new() }
    }

    pub(super) fn push(&mut self, hash: u32, at: u32) {
        self.added.push(u64::from(hash) << 32 | u64::from(at));
    }

    pub(super) fn seal(&mut self) {
        let mut entries = std::mem::take(&mut self.added).into_vec();
        if !self.entries.is_empty() {
            entries.extend(std::mem::take(&mut self.entries));
        }
        entries.sort_unstable();
        self.entries = entries;
    }

    /// The sorted entries' buffer, for another use of its memory (see [`super::SymbolTable::rank`]).
    pub(super) fn into_buffer(self) -> Vec<u64> {
        self.entries
    }

    /// The positions in `from..to` under `hash`, in order.
    pub(super) fn get(&self, hash: u32, from: u32, to: u32) -> impl Iterator<Item = u32> + '_ {
        let key = |at: u32| u64::from(hash) << 32 | u64::from(at);
        let (low, high) = (key(from), key(to));
        let start = self.entries.partition_point(|&e| e < low);
        self.entries[start..].iter().take_while(move |&&e| e < high).map(|&e| e as u32)
    }

    /// Every position under `hash`, in order.
    pub(super) fn all(&self, hash: u32) -> impl Iterator<Item = u32> + '_ {
        let start = self.entries.partition_point(|&e| (e >> 32) < u64::from(hash));
        self.entries[start..].iter().take_while(move |&&e| (e >> 32) == u64::from(hash)).map(|&e| e as u32)
    }
}

/// A key of `s` in 32 bits, ordered as the strings are (a smaller key, a string no greater), so
/// that ids sort by key first and by their text only when keys are equal: the first 8 characters
/// as hex digits (all 32 bits of a lowercase hex id, such as a node id). At the first character
/// that is not a lowercase hex digit the key ends: with zeros for a character below `0` or for
/// the end of the string, with ones for a character above `f` or between `9` and `a` (there with
/// the digit 9).
pub(super) fn order_key(s: &str) -> u32 {
    let bytes = s.as_bytes();
    let mut key = 0u32;
    for i in 0..8 {
        let (digit, rest) = match bytes.get(i) {
            Some(&b @ b'0'..=b'9') => (u32::from(b - b'0'), None),
            Some(&b @ b'a'..=b'f') => (u32::from(b - b'a') + 10, None),
            None => (0, Some(0)),
            Some(&b) if b < b'0' => (0, Some(0)),
            Some(&b) if b < b'a' => (9, Some(0xf)),
            Some(_) => (0xf, Some(0xf)),
        };
        key = key << 4 | digit;
        if let Some(rest) = rest {
            for _ in i + 1..8 {
                key = key << 4 | rest;
            }
            break;
        }
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_strings_share_a_number_and_every_string_reads_back() {
        let mut s = Strings::default();
        let words = ["new", "run", "", "new", "a.b.c", "run", "ü"];
        let ids: Vec<u32> = words.iter().map(|w| s.intern(w)).collect();
        assert_eq!(ids[0], ids[3]);
        assert_eq!(ids[1], ids[5]);
        s.seal();
        for (w, id) in words.iter().zip(ids) {
            assert_eq!(s.get(id), *w);
        }
    }

    #[test]
    fn a_string_whose_slot_another_took_is_stored_again_and_reads_back() {
        let slot = |w: &str| fnv32(&[w.as_bytes()]) as usize % Strings::SLOTS;
        let other = (0..)
            .map(|i| format!("s{i}"))
            .find(|w| slot(w) == slot("new"))
            .expect("some string shares the slot");
        let mut s = Strings::default();
        let ids = [s.intern("new"), s.intern("new"), s.intern(&other), s.intern("new"), s.intern("new")];
        assert_eq!(ids[0], ids[1]);
        assert_ne!(ids[0], ids[3], "stored again once its slot held another string");
        assert_eq!(ids[3], ids[4]);
        assert_eq!(s.len(), 3);
        s.seal();
        assert!(s.seen.is_empty());
        assert_eq!([s.get(ids[0]), s.get(ids[2]), s.get(ids[3])], ["new", other.as_str(), "new"]);
    }

    #[test]
    fn strings_read_back_across_buffers_and_a_long_one_has_its_own() {
        let mut s = Strings::default();
        let long = "x".repeat(Strings::BLOCK + 3);
        let words: Vec<String> = (0..40_000)
            .map(|i| if i == 20_000 { long.clone() } else { format!("name_{i}") })
            .chain(["".to_string(), "name_7".to_string()])
            .collect();
        let ids: Vec<u32> = words.iter().map(|w| s.intern(w)).collect();
        assert!(s.blocks.len() > 5, "{} buffers", s.blocks.len());
        assert_eq!(ids[40_001], ids[7]);
        s.seal();
        for (w, id) in words.iter().zip(ids) {
            assert_eq!(s.get(id), w);
        }
        assert!(s.blocks.iter().all(|b| b.capacity() == Strings::BLOCK || b.len() == long.len()));
    }

    #[test]
    fn a_column_reads_back_every_item_across_blocks() {
        let mut c = Column::default();
        let n = 3 * Column::<u32>::BLOCK + 5;
        for i in 0..n {
            c.push(i as u32 * 3);
        }
        assert_eq!(c.len(), n);
        assert!((0..n).all(|i| c.get(i) == i as u32 * 3));
        let v = c.into_vec();
        assert_eq!(v.len(), n);
        assert_eq!(v.capacity(), n);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32 * 3));
    }

    #[test]
    fn a_column_with_a_capacity_keeps_it_in_one_buffer_and_grows_past_it_in_blocks() {
        for (capacity, n) in [(10, 10), (10, 3), (10, 11), (10, 10 + 2 * Column::<u32>::BLOCK + 1), (0, 7)] {
            let mut c = Column::with_capacity(capacity);
            let first = c.blocks.first().map(|b: &Vec<u32>| b.as_ptr());
            for i in 0..n {
                c.push(i as u32 * 5);
            }
            assert!((0..n).all(|i| c.get(i) == i as u32 * 5), "capacity {capacity}, {n} items");
            let v = c.into_vec();
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32 * 5) && v.len() == n);
            // Within the capacity the first buffer itself comes out, not a copy.
            assert_eq!(n <= capacity, first == Some(v.as_ptr()), "capacity {capacity}, {n} items");
        }
    }

    #[test]
    fn positions_sorted_in_place_or_from_blocks_are_the_same() {
        let pushes: Vec<(u32, u32)> =
            (0..3 * Column::<u64>::BLOCK as u32).map(|i| (i.wrapping_mul(2_654_435_761) % 97, i)).collect();
        let mut sealed = Vec::new();
        for capacity in [0, 10, pushes.len()] {
            let mut p = Positions::with_capacity(capacity);
            for &(hash, at) in &pushes {
                p.push(hash, at);
            }
            p.seal();
            sealed.push(p.entries);
        }
        assert!(sealed.windows(2).all(|w| w[0] == w[1]));
        assert!(sealed[0].windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn positions_come_out_in_order_within_a_range() {
        let mut p = Positions::default();
        for (hash, at) in [(7, 5), (3, 1), (7, 2), (7, 9), (u32::MAX, 4)] {
            p.push(hash, at);
        }
        p.seal();
        assert_eq!(p.all(7).collect::<Vec<_>>(), [2, 5, 9]);
        assert_eq!(p.get(7, 3, 9).collect::<Vec<_>>(), [5]);
        assert_eq!(p.all(u32::MAX).collect::<Vec<_>>(), [4]);
        assert_eq!(p.all(8).count(), 0);
    }

    #[test]
    fn order_keys_sort_as_their_strings() {
        let mut words = vec![
            "b",
            "ab",
            "abcdefgh1",
            "abcdefgh0",
            "",
            "a",
            "abcdefg",
            "ff",
            "0f",
            "9",
            "9:",
            ":",
            "9z",
            "a/",
            "A",
            "0000-an-id",
            "0000",
            "000",
            "g",
            "ü",
            "fffffffff",
            "f0",
            "09abcdef",
            "09abcdeg",
            "9`",
            "9a",
        ];
        let mut state = 7u64;
        for _ in 0..3_000 {
            let len = (state % 11) as usize;
            let word: String = (0..len)
                .map(|_| {
                    state =
                        state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                    b"0123456789abcdef/:`gA~-"[(state >> 33) as usize % 23] as char
                })
                .collect();
            words.push(Box::leak(word.into_boxed_str()));
        }
        words.sort();
        assert!(words.windows(2).all(|w| order_key(w[0]) <= order_key(w[1])), "keys in string order");
        // Every bit of a lowercase hex id counts.
        assert_eq!(order_key("0123abcd99"), 0x0123_abcd);
        assert_ne!(order_key("00000001"), order_key("00000000"));
    }
}
