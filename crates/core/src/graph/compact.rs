//! Compact storage for the resolver's definitions: every name and scope kept once in one buffer,
//! and lookups as sorted arrays of packed integers (4 bytes an entry), so that a namespace's
//! definitions cost tens of bytes each instead of a few hundred.

/// FNV-1a, 64 bits (the same on every platform): the key of a string in [`Strings`] and
/// [`Lookups`] (collisions are told apart by the string itself). Each part ends with a `0xff`
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

/// [`fnv`] folded to the 32 bits a [`Lookups`] entry hashes.
pub(super) fn fnv32(parts: &[&[u8]]) -> u32 {
    let h = fnv(parts);
    (h ^ (h >> 32)) as u32
}

/// A growing array kept in blocks of [`Column::BLOCK`] items: adding an item never copies the
/// others into a buffer twice their size (a `Vec` doubles, and holds both while it copies), and
/// the spare room is at most one block. A column made [`Column::with_capacity`] keeps its first
/// `capacity` items in one buffer of that size, allocated at once (so, in wasm32, where memory
/// never shrinks, before the passing allocations that would otherwise sit between its blocks).
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

    /// The buffer of every item when they are all in the first block (a column made for them),
    /// for another use of its memory; otherwise none (the blocks are freed).
    pub(super) fn into_buffer(mut self) -> Vec<T> {
        match self.blocks.len() {
            1 => self.blocks.pop().unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// Every item in order, each block freed once read.
    pub(super) fn into_items(self) -> impl Iterator<Item = T> {
        self.blocks.into_iter().flatten()
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

/// [`fnv32`] of the parts' bytes end to end, as of one string (`["a.b", "c"]` as `"a.bc"`).
pub(super) fn fnv32_joined(parts: &[&[u8]]) -> u32 {
    use std::hash::Hasher;
    let mut h = fnv::FnvHasher::default();
    for part in parts {
        h.write(part);
    }
    h.write_u8(0xff);
    let h = h.finish();
    (h ^ (h >> 32)) as u32
}

/// Two lookups of node positions (numbered across files) by a 32-bit hash of a string of theirs
/// (the [`Lookups::FQN`] one and the [`Lookups::NAME`] one), over the same positions, built once
/// every node is in ([`Lookups::seal`], from the hashes, computed again from the table's
/// strings). Each match is checked against the string itself: a lookup gives every position whose
/// hash shares its first bits with the string's, in position order (file, then node).
///
/// 4 bytes a position in each: the positions are counted into buckets by the hash's first bits (a
/// directory of `positions / 16` bucket starts), and an entry keeps the hash's next bits above
/// the position (`fingerprint << position_bits | position`), sorted within its bucket — 28 bits of
/// the hash in all, whatever the count. The two lookups' entries share one buffer of `u64`s (the
/// fqn lookup's in the low 32 bits of each, the name lookup's in the high), which the ranks can
/// then use again ([`Lookups::into_buffer`]).
#[derive(Default)]
pub(super) struct Lookups {
    entries: Vec<u64>,
    /// Each lookup's bucket starts (`buckets + 1`).
    starts: [Vec<u32>; 2],
    position_bits: u32,
    bucket_bits: u32,
}

impl Lookups {
    pub(super) const FQN: usize = 0;
    pub(super) const NAME: usize = 1;
    /// Bits of the hash a lookup tells apart (the others are told apart by the strings).
    const HASH_BITS: u32 = 28;

    /// Room for `capacity` positions, allocated now, filled in place when sealed.
    pub(super) fn with_capacity(capacity: usize) -> Lookups {
        Lookups { entries: Vec::with_capacity(capacity), ..Lookups::default() }
    }

    /// Builds both lookups over `positions` (ascending, below `nodes`; `positions` is called
    /// once per lookup and pass) from each position's hashes (`hash(lookup, position)`).
    pub(super) fn seal<P: Iterator<Item = u32>>(
        &mut self,
        nodes: usize,
        positions: impl Fn() -> P,
        hash: impl Fn(usize, u32) -> u32,
    ) {
        let count = positions().count();
        self.position_bits = (usize::BITS - nodes.saturating_sub(1).leading_zeros()).max(1);
        self.bucket_bits = self.position_bits.saturating_sub(4).min(Lookups::HASH_BITS);
        let buckets = 1usize << self.bucket_bits;
        self.entries.clear();
        self.entries.reserve_exact(count);
        self.entries.resize(count, 0);
        let mut scratch: Vec<u32> = Vec::new();
        for lookup in [Lookups::FQN, Lookups::NAME] {
            let shift = 32 * lookup as u32;
            // Counted by bucket, then placed (each bucket's start moving up to its end), then
            // shifted back, then each bucket sorted.
            let mut starts = vec![0u32; buckets + 1];
            for at in positions() {
                starts[self.bucket(hash(lookup, at)) + 1] += 1;
            }
            for b in 0..buckets {
                starts[b + 1] += starts[b];
            }
            for at in positions() {
                let h = hash(lookup, at);
                let slot = &mut starts[self.bucket(h)];
                let entry = u64::from(self.fingerprint(h)) << self.position_bits | u64::from(at);
                self.entries[*slot as usize] |= entry << shift;
                *slot += 1;
            }
            starts.copy_within(0..buckets, 1);
            starts[0] = 0;
            for b in 0..buckets {
                let bucket = &mut self.entries[starts[b] as usize..starts[b + 1] as usize];
                if bucket.len() < 2 {
                    continue;
                }
                scratch.clear();
                scratch.extend(bucket.iter().map(|&e| (e >> shift) as u32));
                scratch.sort_unstable();
                for (e, &s) in bucket.iter_mut().zip(&scratch) {
                    *e = *e & !(u64::from(u32::MAX) << shift) | u64::from(s) << shift;
                }
            }
            self.starts[lookup] = starts;
        }
    }

    fn bucket(&self, hash: u32) -> usize {
        (u64::from(hash) >> (32 - self.bucket_bits)) as usize
    }

    /// The hash's bits after the bucket's, as many as fit above a position.
    fn fingerprint(&self, hash: u32) -> u32 {
        let bits = (32 - self.position_bits).min(Lookups::HASH_BITS - self.bucket_bits);
        let rest = u64::from(hash) << self.bucket_bits & u64::from(u32::MAX);
        (rest >> (32 - bits)) as u32
    }

    /// The sorted entries' buffer, for another use of its memory (see [`super::SymbolTable::rank`]).
    pub(super) fn into_buffer(self) -> Vec<u64> {
        self.entries
    }

    /// The entries of `lookup` under `hash` from position `from` up to `to`.
    fn range(&self, lookup: usize, hash: u32, from: u32, to: u64) -> impl Iterator<Item = u32> + '_ {
        let (bucket, shift) = (self.bucket(hash), 32 * lookup as u32);
        let entries = match self.starts[lookup].get(bucket..bucket + 2) {
            Some(&[start, end]) => &self.entries[start as usize..end as usize],
            _ => &[],
        };
        let base = u64::from(self.fingerprint(hash)) << self.position_bits;
        let (low, high) = (base + u64::from(from), base + to);
        let entry = move |e: &u64| u64::from((e >> shift) as u32);
        let first = entries.partition_point(|e| entry(e) < low);
        let mask = (1u64 << self.position_bits) - 1;
        entries[first..].iter().map(entry).take_while(move |&e| e < high).map(move |e| (e & mask) as u32)
    }

    /// The positions of `lookup` in `from..to` under `hash`, in order.
    pub(super) fn get(&self, lookup: usize, hash: u32, from: u32, to: u32) -> impl Iterator<Item = u32> + '_ {
        self.range(lookup, hash, from, u64::from(to))
    }

    /// Every position of `lookup` under `hash`, in order.
    pub(super) fn all(&self, lookup: usize, hash: u32) -> impl Iterator<Item = u32> + '_ {
        self.range(lookup, hash, 0, 1u64 << self.position_bits)
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
        let v: Vec<u32> = c.into_items().collect();
        assert_eq!(v.len(), n);
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
            // Within the capacity the items stay in the first buffer, made at once, handed over.
            assert_eq!(n <= capacity, c.blocks.len() == 1 && first == Some(c.blocks[0].as_ptr()));
            let v: Vec<u32> = c.into_items().collect();
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32 * 5) && v.len() == n);
            let mut c = Column::with_capacity(capacity);
            let first = c.blocks.first().map(|b: &Vec<u32>| b.as_ptr());
            (0..n).for_each(|i| c.push(i as u32));
            let buffer = c.into_buffer();
            if n <= capacity {
                assert_eq!(Some(buffer.as_ptr()), first, "capacity {capacity}, {n} items");
            }
            // Every item, when one buffer holds them all; otherwise none.
            assert!(
                buffer.is_empty() || buffer.iter().copied().eq(0..n as u32),
                "capacity {capacity}, {n} items"
            );
            assert_eq!(buffer.is_empty(), n > capacity.max(1) && (capacity > 0 || n > Column::<u32>::BLOCK));
        }
    }

    /// Positions `0..nodes` but every 7th (as a file's module node is left out), with hashes of
    /// each lookup: spread, repeated (a common name) or colliding in their first bits.
    fn sealed_lookups(nodes: u32, capacity: usize) -> (Lookups, Vec<u32>, impl Fn(usize, u32) -> u32) {
        let positions = move || (0..nodes).filter(|at| at % 7 != 0);
        let hash = |lookup: usize, at: u32| match (lookup, at % 5) {
            (Lookups::FQN, 0) => 0xdead_beef,
            (Lookups::FQN, 1) => 0xdead_beef ^ 1,
            (Lookups::NAME, 3) => 42,
            _ => (at ^ lookup as u32).wrapping_mul(2_654_435_761).rotate_left(lookup as u32 * 7),
        };
        let mut l = Lookups::with_capacity(capacity);
        l.seal(nodes as usize, positions, hash);
        (l, positions().collect(), hash)
    }

    #[test]
    fn a_lookup_gives_every_position_of_a_hash_in_order_and_only_close_hashes_beside() {
        for nodes in [1, 2, 9, 100, 5_000, 70_000] {
            let (l, positions, hash) = sealed_lookups(nodes, 0);
            let used = l.bucket_bits + (32 - l.position_bits).min(Lookups::HASH_BITS - l.bucket_bits);
            assert_eq!(used, Lookups::HASH_BITS, "{nodes} nodes");
            let top = |h: u32| u64::from(h) >> (32 - used);
            let queries: Vec<u32> = [0xdead_beef, 0xdead_beef ^ 1, 42, 7]
                .into_iter()
                .chain(
                    positions
                        .iter()
                        .step_by(positions.len() / 40 + 1)
                        .flat_map(|&at| [hash(0, at), hash(1, at)]),
                )
                .collect();
            for lookup in [Lookups::FQN, Lookups::NAME] {
                for &q in &queries {
                    let got: Vec<u32> = l.all(lookup, q).collect();
                    assert!(got.windows(2).all(|w| w[0] < w[1]), "in position order");
                    let exact: Vec<u32> =
                        positions.iter().copied().filter(|&at| hash(lookup, at) == q).collect();
                    let close: Vec<u32> =
                        positions.iter().copied().filter(|&at| top(hash(lookup, at)) == top(q)).collect();
                    assert!(exact.iter().all(|at| got.contains(at)), "every exact match ({nodes} nodes)");
                    assert_eq!(got, close, "{nodes} nodes, lookup {lookup}, hash {q:x}");
                    let (from, to) = (nodes / 3, nodes / 3 * 2 + 1);
                    let ranged: Vec<u32> = l.get(lookup, q, from, to).collect();
                    assert_eq!(
                        ranged,
                        close.iter().copied().filter(|&at| at >= from && at < to).collect::<Vec<_>>()
                    );
                }
            }
        }
    }

    #[test]
    fn lookups_made_for_their_positions_are_built_in_their_buffer() {
        let (l, positions, _) = sealed_lookups(5_000, 5_000);
        assert_eq!(l.entries.len(), positions.len());
        assert_eq!(l.entries.capacity(), 5_000, "no buffer but the one made at first");
        // Made for no positions, the buffer has room for them alone.
        let (l, positions, _) = sealed_lookups(5_000, 0);
        assert_eq!(l.entries.capacity(), positions.len());
        let empty = Lookups::default();
        assert_eq!(empty.all(Lookups::NAME, 3).count(), 0, "an unsealed lookup finds nothing");
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
