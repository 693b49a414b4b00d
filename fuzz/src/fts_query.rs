//! Target `fts_query`: the keyword path from a user's query text to the FTS5 `MATCH` expression
//! (`edgerag_search::query`): `keyword_terms` under every option, then `fts5_expression`; and the
//! builder alone on arbitrary terms (one per input line, a trailing `*` for a prefix term), since
//! it must stay safe whatever terms reach it.
//!
//! Invariants: the expression is a valid FTS5 query ([`crate::fts5::parse`]); it is only quoted
//! strings joined by `OR`, each optionally a prefix (`"x"*`), so no user text can be an operator,
//! a column filter or a bareword; every string is a term's letters and digits, in order, one per
//! term that has any; no expression exactly when no term has any; the terms are unique, at most
//! `MAX_TERMS`, lowercase tokens as the index's tokenizer cuts them; deterministic.
use edgerag_search::query::{fts5_expression, keyword_terms, QueryTerm, TermOptions, MAX_TERMS};

use crate::fts5;

pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for split_identifiers in [false, true] {
        for stem_prefixes in [false, true] {
            let options = TermOptions { split_identifiers, stem_prefixes };
            let terms = keyword_terms(&text, options);
            assert_eq!(terms, keyword_terms(&text, options), "terms are not deterministic");
            check_terms(&terms, options);
            check_expression(&terms);
        }
    }
    let arbitrary: Vec<QueryTerm> = text
        .lines()
        .map(|line| match line.strip_suffix('*') {
            Some(t) => QueryTerm { text: t.to_string(), prefix: true },
            None => QueryTerm { text: line.to_string(), prefix: false },
        })
        .collect();
    check_expression(&arbitrary);
}

fn check_terms(terms: &[QueryTerm], options: TermOptions) {
    assert!(terms.len() <= MAX_TERMS, "{} terms", terms.len());
    for (i, t) in terms.iter().enumerate() {
        assert!(!t.text.is_empty(), "empty term");
        assert!(terms[..i].iter().all(|u| u.text != t.text), "term {:?} twice", t.text);
        // Lowercased as the tokenizer does (some capitals, like `ϔ`, have no lowercase form).
        let lower: String = t.text.chars().flat_map(char::to_lowercase).collect();
        assert_eq!(lower, t.text, "term {:?} is not lowercase", t.text);
        assert!(
            !t.text.contains(|c: char| c.is_whitespace() || "\"*:^(){}+-".contains(c)),
            "term {:?} holds query syntax",
            t.text
        );
        assert!(!t.prefix || options.stem_prefixes, "prefix term {:?} with stemming off", t.text);
    }
}

fn check_expression(terms: &[QueryTerm]) {
    let expected: Vec<(String, bool)> = terms
        .iter()
        .map(|t| (t.text.chars().filter(|c| c.is_alphanumeric()).collect::<String>(), t.prefix))
        .filter(|(s, _)| !s.is_empty())
        .collect();
    let expr = fts5_expression(terms);
    assert_eq!(expr, fts5_expression(terms), "the expression is not deterministic");
    let Some(expr) = expr else {
        assert!(expected.is_empty(), "no expression for terms {expected:?}");
        return;
    };
    let parsed = fts5::parse(&expr).unwrap_or_else(|e| panic!("{expr:?} is not a valid FTS5 query: {e}"));
    let strings: Vec<&(String, bool)> = parsed.strings.iter().collect();
    assert_eq!(strings.len(), expected.len(), "{expr:?} for {expected:?}");
    for ((s, quoted), (want, _)) in parsed.strings.iter().zip(&expected) {
        assert!(*quoted, "{expr:?}: {s:?} is not quoted");
        assert_eq!(s, want, "{expr:?}");
        assert!(!s.contains('"'));
    }
    let ops: Vec<&str> = parsed.operators.iter().map(String::as_str).collect();
    let mut want_ops = Vec::new();
    for (i, (_, prefix)) in expected.iter().enumerate() {
        if i > 0 {
            want_ops.push("OR");
        }
        if *prefix {
            want_ops.push("*");
        }
    }
    assert_eq!(ops, want_ops, "{expr:?} uses operators beyond OR and prefix");
}
