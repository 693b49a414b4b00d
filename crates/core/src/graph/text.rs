//! Names as written in source: generic arguments dropped, paths split into name and qualifier.

/// Whether `s` is an identifier of ASCII letters, digits and `_` only: [`strip_generics`] and
/// [`split_path`] leave it as is (`s`, and `(s, None)`). Only the extractor asks.
#[cfg(feature = "tree-sitter")]
pub(crate) fn is_plain_identifier(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `Foo<T>` → `Foo`, `a.b.C<X, Y>` → `a.b.C`.
pub(crate) fn strip_generics(s: &str) -> String {
    // Most names have no generics and no spaces: nothing to drop.
    if s.is_ascii() && !s.bytes().any(|b| b == b'<' || b == b'[' || char::from(b).is_whitespace()) {
        return s.trim_start_matches("::").to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '<' | '[' if depth > 0 || !out.is_empty() => depth += 1,
            '>' | ']' if depth > 0 => depth -= 1,
            _ if depth == 0 && !c.is_whitespace() => out.push(c),
            _ => {}
        }
    }
    let lead = out.len() - out.trim_start_matches("::").len();
    out.drain(..lead);
    out
}

/// The last separator (`?.`, `->`, `::`, `.`, `\\`) in `s` as (end, start): the one ending
/// last, `?.` before `.` when both end there. One backward scan (this runs for every call and
/// type name).
fn last_separator(s: &str) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    let mut j = b.len();
    while j > 0 {
        j -= 1;
        let before = if j > 0 { b[j - 1] } else { 0 };
        match b[j] {
            b'.' if before == b'?' => return Some((j + 1, j - 1)),
            b'.' | b'\\' => return Some((j + 1, j)),
            b'>' if before == b'-' => return Some((j + 1, j - 1)),
            b':' if before == b':' => return Some((j + 1, j - 1)),
            _ => {}
        }
    }
    None
}

/// Splits a callee as written into its name and what it was reached through:
/// `self.save` → (`save`, `self`), `a::b::c` → (`c`, `a.b`), `foo().bar` → (`bar`, `?`).
pub(crate) fn split_path(written: &str) -> (String, Option<String>) {
    let s = written.trim();
    let cut = last_separator(s);
    let is_ident = |t: &str| {
        !t.is_empty() && t.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '!' | '?' | '@'))
    };
    match cut {
        None => {
            let name = s.trim_start_matches(['@', '$', '&', '*']).to_string();
            if is_ident(&name) {
                (name, None)
            } else {
                (String::new(), None)
            }
        }
        Some((end, start)) => {
            let name = s[end..].trim().to_string();
            if !is_ident(&name) {
                return (String::new(), None);
            }
            let qual = s[..start].trim().trim_start_matches(['$', '@']);
            let simple = qual
                .split(['.', ':', '\\'])
                .filter(|p| !p.is_empty())
                .all(|p| p.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$'));
            let qualifier = if qual.is_empty() {
                None
            } else if simple && !qual.contains([':', '-', '\\']) {
                Some(qual.trim_matches('.').to_string())
            } else if simple {
                Some(
                    qual.replace("::", ".")
                        .replace("->", ".")
                        .replace('\\', ".")
                        .trim_matches('.')
                        .to_string(),
                )
            } else {
                Some("?".to_string())
            };
            (name, qualifier)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The separator rule as first written: each separator's last occurrence, the one ending
    /// last winning, earlier separators winning ties.
    fn last_separator_by_rfind(s: &str) -> Option<(usize, usize)> {
        let mut cut = None;
        for sep in ["?.", "->", "::", ".", "\\"] {
            if let Some(i) = s.rfind(sep) {
                let end = i + sep.len();
                if cut.is_none_or(|(c, _)| end > c) {
                    cut = Some((end, i));
                }
            }
        }
        cut
    }

    #[test]
    fn the_backward_scan_finds_the_same_separator_as_searching_each_one() {
        let cases = [
            "",
            "a",
            ".",
            "?.",
            "::",
            "->",
            "\\",
            ":",
            ">",
            "-",
            "?",
            "a.b",
            "a?.b",
            "a->b",
            "a::b",
            "a\\b",
            "a::::b",
            ":::",
            "a.b::c",
            "a::b.c",
            "a?.b.c",
            "a.b?.c",
            "x-->y",
            "a->b::c?.d\\e",
            "?.?.",
            "foo().bar",
            "a?..b",
            ".a",
            "a.",
            "$this->x",
            "A\\B\\C",
            "Vec::<u8>::new",
            "a - > b",
        ];
        for case in cases {
            assert_eq!(last_separator(case), last_separator_by_rfind(case), "{case:?}");
        }
        // Every string over the separator alphabet up to length 5.
        let alphabet = ['a', '.', '?', '-', '>', ':', '\\'];
        let mut words = vec![String::new()];
        for _ in 0..5 {
            let mut next = Vec::new();
            for w in &words {
                for c in alphabet {
                    let mut n = w.clone();
                    n.push(c);
                    assert_eq!(last_separator(&n), last_separator_by_rfind(&n), "{n:?}");
                    next.push(n);
                }
            }
            words = next;
        }
    }

    #[test]
    fn generics_spaces_and_a_leading_path_separator_are_dropped() {
        assert_eq!(strip_generics("::std::Vec<T>"), "std::Vec");
        assert_eq!(strip_generics("a.b.C<X, Y>"), "a.b.C");
        assert_eq!(strip_generics("::::A"), "A");
        assert_eq!(strip_generics("::a::B"), "a::B");
        assert_eq!(strip_generics("a .\u{b}b"), "a.b");
        assert_eq!(strip_generics("a\u{a0}b"), "ab");
        assert_eq!(strip_generics("<T>"), "<T>");
        assert_eq!(strip_generics("a>b]"), "a>b]");
    }

    #[test]
    fn qualifiers_are_dotted_paths() {
        let q = |s: &str| split_path(s).1;
        assert_eq!(q("a.b.c"), Some("a.b".into()));
        assert_eq!(q("a::b::c"), Some("a.b".into()));
        assert_eq!(q("\\App\\Models\\User"), Some("App.Models".into()));
        assert_eq!(q("foo().bar"), Some("?".into()));
        assert_eq!(q("bar"), None);
    }
}
