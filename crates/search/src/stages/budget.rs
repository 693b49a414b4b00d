//! Context-window budget: keep matches in order while their tokens fit `maxContextTokens`;
//! the first match is always kept, even alone over the budget.
use crate::candidate::Candidate;

/// Trim to the budget. Returns the kept matches and how many were dropped.
pub fn apply(candidates: Vec<Candidate>, max_tokens: u32) -> (Vec<Candidate>, usize) {
    let (kept, dropped) = split(candidates, max_tokens);
    (kept, dropped.len())
}

/// Trim to the budget like [`apply`], returning what did not fit, in order.
pub fn split(candidates: Vec<Candidate>, max_tokens: u32) -> (Vec<Candidate>, Vec<Candidate>) {
    cut(candidates, max_tokens, true)
}

/// Keep matches in order while they fit `max_tokens`, none required (matches that follow an
/// answer already holding one).
pub fn apply_after(candidates: Vec<Candidate>, max_tokens: u32) -> (Vec<Candidate>, usize) {
    fit(candidates, max_tokens, false)
}

fn fit(candidates: Vec<Candidate>, max_tokens: u32, keep_first: bool) -> (Vec<Candidate>, usize) {
    let (kept, dropped) = cut(candidates, max_tokens, keep_first);
    (kept, dropped.len())
}

fn cut(
    mut candidates: Vec<Candidate>,
    max_tokens: u32,
    keep_first: bool,
) -> (Vec<Candidate>, Vec<Candidate>) {
    let mut used: u64 = 0;
    let mut fits = 0;
    for c in &candidates {
        let t = u64::from(c.tokens());
        if (!keep_first || fits > 0) && used + t > u64::from(max_tokens) {
            break;
        }
        used += t;
        fits += 1;
    }
    let dropped = candidates.split_off(fits);
    (candidates, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::candidate;
    use edgerag_core::ChunkType;

    fn sized(tokens: usize) -> Candidate {
        candidate("a.rs", ChunkType::CodeBlock, &"x".repeat(tokens * 4), 1.0)
    }

    #[test]
    fn trims_at_the_budget_and_keeps_at_least_one() {
        let (kept, dropped) = apply(vec![sized(100), sized(100), sized(100)], 256);
        assert_eq!((kept.len(), dropped), (2, 1));
        let (kept, dropped) = apply(vec![sized(5000), sized(10)], 256);
        assert_eq!((kept.len(), dropped), (1, 1));
        let (kept, dropped) = apply(Vec::new(), 256);
        assert_eq!((kept.len(), dropped), (0, 0));
    }

    #[test]
    fn after_an_answer_nothing_is_required() {
        let (kept, dropped) = apply_after(vec![sized(300), sized(10)], 256);
        assert_eq!((kept.len(), dropped), (0, 2));
        let (kept, _) = apply_after(vec![sized(100), sized(100)], 256);
        assert_eq!(kept.len(), 2);
    }

    #[test]
    fn split_returns_what_did_not_fit_in_order() {
        let (kept, dropped) = split(vec![sized(100), sized(200), sized(10)], 256);
        assert_eq!(kept.len(), 1);
        assert_eq!(dropped.iter().map(|c| c.tokens()).collect::<Vec<_>>(), [200, 10]);
    }

    #[test]
    fn stops_at_the_first_match_that_does_not_fit() {
        // Order is relevance: a smaller later match never jumps over a dropped better one.
        let (kept, _) = apply(vec![sized(200), sized(100), sized(10)], 256);
        assert_eq!(kept.len(), 1);
    }
}
