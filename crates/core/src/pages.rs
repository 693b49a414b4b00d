//! Work cut into pages by size: consecutive items (files, rows) of at most a byte budget each,
//! for the stages and stores that read or write a large set a page at a time.

/// Consecutive runs of `sizes` (in order) of at most `max_bytes` in total, as `(first, count)`; an
/// item over `max_bytes` is a page of its own.
pub fn pages_of(sizes: &[usize], max_bytes: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut bytes = 0;
    for (i, &size) in sizes.iter().enumerate() {
        match out.last_mut() {
            Some((_, count)) if *count > 0 && bytes + size <= max_bytes => {
                *count += 1;
                bytes += size;
            }
            _ => {
                out.push((i, 1));
                bytes = size;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_hold_consecutive_files_up_to_the_byte_budget_and_a_larger_file_alone() {
        assert!(pages_of(&[], 10).is_empty());
        assert_eq!(pages_of(&[4, 4, 4, 4], 10), [(0, 2), (2, 2)]);
        assert_eq!(pages_of(&[3, 30, 3, 3, 3, 3], 10), [(0, 1), (1, 1), (2, 3), (5, 1)]);
        assert_eq!(pages_of(&[0, 0, 0], 1), [(0, 3)]);
        // Every file in exactly one page, in order.
        let sizes: Vec<usize> = (0..500).map(|i| (i * 7919) % 1_000).collect();
        let pages = pages_of(&sizes, 2_500);
        let mut next = 0;
        for &(first, count) in &pages {
            assert_eq!(first, next);
            let bytes: usize = sizes[first..first + count].iter().sum();
            assert!(count == 1 || bytes <= 2_500, "{bytes}");
            next += count;
        }
        assert_eq!(next, sizes.len());
    }
}
