//! Invariants of how a search's keyword term lists are planned together: which phrases to ask an
//! index about, and which lists share one scoring pass.
use edgerag_search::query::{mergeable_phrases, shared_scoring, without_absent};
use proptest::prelude::*;

/// Distinct lists of distinct phrases from a small alphabet, so that prefixes and overlaps occur.
fn lists() -> impl Strategy<Value = Vec<Vec<String>>> {
    prop::collection::vec(prop::collection::vec(0u8..8, 0..6), 0..7).prop_map(|raw| {
        let mut out: Vec<Vec<String>> = Vec::new();
        for r in raw {
            let mut list: Vec<String> = Vec::new();
            for p in r {
                let phrase = format!("\"p{p}\"");
                if !list.contains(&phrase) {
                    list.push(phrase);
                }
            }
            if !out.contains(&list) {
                out.push(list);
            }
        }
        out
    })
}

proptest! {
    #[test]
    fn every_list_is_planned_once_and_extends_its_base(lists in lists(), cap in 0usize..6) {
        let groups = shared_scoring(&lists, cap);
        let mut seen: Vec<usize> = groups.iter().flat_map(|g| std::iter::once(g.base).chain(g.extensions.iter().copied())).collect();
        seen.sort_unstable();
        prop_assert_eq!(seen, (0..lists.len()).collect::<Vec<_>>());
        for g in &groups {
            let base = &lists[g.base];
            let mut extra = 0;
            for &e in &g.extensions {
                prop_assert!(lists[e].len() > base.len() && lists[e].starts_with(base));
                extra += lists[e].len() - base.len();
            }
            prop_assert!(extra <= cap);
        }
    }

    /// Every pair of lists that differs only by phrases absent from an index becomes equal once
    /// those are dropped: the phrases only one of the pair holds are all asked about, and are only
    /// ever phrases some list lacks.
    #[test]
    fn asked_phrases_are_what_keeps_mergeable_lists_apart(lists in lists()) {
        let asked = mergeable_phrases(&lists);
        for p in &asked {
            prop_assert!(lists.iter().any(|l| l.contains(p)) && !lists.iter().all(|l| l.contains(p)));
        }
        for (i, a) in lists.iter().enumerate() {
            for b in &lists[i + 1..] {
                let common: Vec<&String> = a.iter().filter(|p| b.contains(p)).collect();
                let same_order = common == b.iter().filter(|p| a.contains(p)).collect::<Vec<_>>();
                if !common.is_empty() && same_order {
                    let only_one: Vec<String> =
                        a.iter().chain(b).filter(|p| !(a.contains(p) && b.contains(p))).cloned().collect();
                    prop_assert!(only_one.iter().all(|p| asked.contains(p)), "{:?} / {:?} asked {:?}", a, b, asked);
                    prop_assert_eq!(without_absent(a, &only_one), without_absent(b, &only_one));
                }
            }
        }
    }
}
