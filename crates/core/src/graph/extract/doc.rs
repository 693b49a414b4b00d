//! A definition's signature (its declaration without the body, annotations and whitespace
//! collapsed) and its doc comment, read from the source around its node.

use tree_sitter::Node as TsNode;

use crate::chunk::code::grammar::text;

/// Longest signature kept (chars).
pub(super) const MAX_SIGNATURE: usize = 400;
/// Longest doc kept (chars).
const MAX_DOC: usize = 2000;

pub(super) fn line_of(node: TsNode<'_>) -> u32 {
    node.start_position().row as u32 + 1
}

pub(super) fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

/// Whitespace runs collapsed to one space, capped at `max` chars.
pub(crate) fn collapse(s: &str, max: usize) -> String {
    // Already collapsed (one line, single spaces, short): the loop below would copy it as is.
    let b = s.as_bytes();
    if s.len() <= max
        && s.is_ascii()
        && !s.starts_with(' ')
        && !s.ends_with(' ')
        && !b.iter().any(|&c| (c.is_ascii_whitespace() && c != b' ') || c == 0x0b)
        && !s.contains("  ")
    {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len().min(max));
    for (i, word) in s.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(word);
        if out.len() > max {
            let cut = out.char_indices().take_while(|(i, _)| *i < max).last().map(|(i, c)| i + c.len_utf8());
            out.truncate(cut.unwrap_or(0));
            out.push('…');
            break;
        }
    }
    out
}

pub(super) fn signature(node: TsNode<'_>, body: Option<TsNode<'_>>, src: &str) -> Option<String> {
    let start = node.start_byte();
    let end = match body {
        Some(b) if b.start_byte() > start => b.start_byte(),
        _ => {
            let t = text(node, src);
            start + t.find('\n').unwrap_or(t.len())
        }
    };
    let raw = src.get(start..end)?;
    // Comment lines between the header and the body are not part of the declaration.
    let is_code = |l: &&str| {
        let t = l.trim_start();
        !(t.starts_with("//")
            || t.starts_with("/*")
            || t.starts_with('*')
            || (t.starts_with('#') && !t.starts_with("#[")))
    };
    let joined;
    let code = if raw.contains('\n') {
        joined = raw.lines().filter(is_code).collect::<Vec<_>>().join("\n");
        joined.as_str()
    } else if is_code(&raw) {
        raw
    } else {
        ""
    };
    let mut sig = collapse(strip_annotations(code), MAX_SIGNATURE);
    let kept = sig.trim_end_matches(['{', ':', '=', ' ']).trim_end().len();
    sig.truncate(kept);
    (!sig.is_empty()).then_some(sig)
}

/// Leading `@Annotation(…)` / `[Attribute(…)]` groups removed (they are routes and markers,
/// not the declaration).
pub(super) fn strip_annotations(mut s: &str) -> &str {
    loop {
        s = s.trim_start();
        let (open, close) = match s.chars().next() {
            Some('@') => ('(', ')'),
            Some('[') => ('[', ']'),
            _ => return s,
        };
        let mut depth = 0usize;
        let mut end = s.len();
        for (i, c) in s.char_indices().skip(1) {
            if c == open {
                depth += 1;
            } else if c == close {
                if depth <= 1 && (open == '[' || depth == 1) {
                    end = i + 1;
                    break;
                }
                depth = depth.saturating_sub(1);
            } else if depth == 0 && open == '(' && c.is_whitespace() {
                end = i;
                break;
            }
        }
        if end >= s.len() {
            return s;
        }
        s = &s[end..];
    }
}

pub(super) const ANNOTATION_KINDS: &[&str] =
    &["decorator", "attribute_item", "attribute_list", "annotation", "marker_annotation", "attribute"];

/// Comments directly above the definition (attributes in between are skipped), or a Python
/// docstring at the start of the body.
pub(super) fn is_doc_or_annotation(kind: &str) -> bool {
    kind.contains("comment") || ANNOTATION_KINDS.contains(&kind)
}

/// `before`: the comments and annotations right before `span` among its siblings, in order.
pub(super) fn doc_of(
    span: TsNode<'_>,
    before: &[TsNode<'_>],
    body: Option<TsNode<'_>>,
    src: &str,
) -> Option<String> {
    if let Some(body) = body {
        let first = body.named_child(0).filter(|c| c.kind() == "expression_statement");
        if let Some(s) = first.and_then(|c| c.named_child(0)).filter(|c| c.kind() == "string") {
            let raw = text(s, src);
            let trimmed = raw
                .trim_start_matches(['r', 'u', 'b', 'R', 'U', 'B'])
                .trim_matches(|c| c == '"' || c == '\'');
            return clean_doc(trimmed);
        }
    }
    let mut lines: Vec<&str> = Vec::new();
    let mut top = span.start_position().row;
    for p in before.iter().rev() {
        if p.end_position().row + 1 < top {
            break;
        }
        if p.kind().contains("comment") {
            lines.push(text(*p, src));
        }
        top = p.start_position().row;
    }
    if lines.is_empty() {
        return None;
    }
    lines.reverse();
    clean_doc(&lines.join("\n"))
}

pub(super) fn clean_doc(raw: &str) -> Option<String> {
    let mut out = Vec::new();
    for line in raw.lines() {
        let mut l = line.trim();
        for marker in ["/**", "/*!", "/*", "*/", "///", "//!", "//", "#", "*"] {
            if let Some(rest) = l.strip_prefix(marker) {
                l = rest;
                break;
            }
        }
        let l = l.trim_end_matches("*/").trim();
        if !l.is_empty() {
            out.push(l);
        }
    }
    let doc = out.join("\n");
    if doc.is_empty() {
        return None;
    }
    let mut doc = doc;
    if doc.len() > MAX_DOC {
        let cut = doc.char_indices().take_while(|(i, _)| *i < MAX_DOC).last().map(|(i, c)| i + c.len_utf8());
        doc.truncate(cut.unwrap_or(0));
    }
    Some(doc)
}
