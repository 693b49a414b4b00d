//! Names as written in source: generic arguments dropped, paths split into name and qualifier.

/// `Foo<T>` → `Foo`, `a.b.C<X, Y>` → `a.b.C`.
pub(crate) fn strip_generics(s: &str) -> String {
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
    out.trim_start_matches("::").to_string()
}

/// Splits a callee as written into its name and what it was reached through:
/// `self.save` → (`save`, `self`), `a::b::c` → (`c`, `a.b`), `foo().bar` → (`bar`, `?`).
pub(crate) fn split_path(written: &str) -> (String, Option<String>) {
    let s = written.trim();
    let mut cut = None;
    for sep in ["?.", "->", "::", ".", "\\"] {
        if let Some(i) = s.rfind(sep) {
            let end = i + sep.len();
            if cut.is_none_or(|(c, _)| end > c) {
                cut = Some((end, i));
            }
        }
    }
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
