//! Text derived from chunks for the two retrieval indexes: the BM25 document (identifiers split so
//! `getUserData` matches "get user data") and the text given to the embedder (symbol, path and
//! heading context, not only the body).
use crate::Chunk;

/// Split an identifier into lowercase words: `getUserData` → `get user data`,
/// `HTTPServer_config` → `http server config`. Non-alphanumerics separate words.
pub fn split_identifier(ident: &str) -> Vec<String> {
    let chars: Vec<char> = ident.chars().collect();
    let mut words = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        let boundary = match prev {
            Some(p) if p.is_alphanumeric() => {
                (c.is_uppercase() && p.is_lowercase())
                    || (c.is_uppercase() && p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
                    || (c.is_ascii_digit() != p.is_ascii_digit())
            }
            _ => false,
        };
        if boundary && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// What a keyword index column holds for a name or a path: the text, then the words of each of
/// its tokens that FTS5 keeps whole but that are several words (`addModifiers` → `addModifiers add
/// modifiers`, `src/TypeSpec.java` → `src/TypeSpec.java type spec`). `None` when FTS5 already cuts
/// the text into its words (`to_vec_pretty`, `src/de.rs`): the column holds the text alone.
/// Without this a camelCase name's words counted only in the chunk's text, a snake_case name's in
/// its weighted name and path columns too.
pub fn keyword_terms(text: &str) -> Option<String> {
    let mut out = String::new();
    for token in text.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()) {
        let words = split_identifier(token);
        if words.len() > 1 {
            for w in words {
                out.push(' ');
                out.push_str(&w);
            }
        }
    }
    (!out.is_empty()).then(|| format!("{text}{out}"))
}

/// Identifier-like tokens of a text (letters, digits, `_`, `$`), in order, with repeats.
pub fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).filter(|t| !t.is_empty())
}

/// The document indexed by FTS5 for a chunk: its text, then the parts of every compound identifier
/// and of the path, so both `getUserData` and "user data" match.
pub fn fts_document(chunk: &Chunk) -> String {
    let mut out = String::with_capacity(chunk.text.len() * 2);
    out.push_str(&chunk.text);
    out.push('\n');
    let mut seen = std::collections::HashSet::new();
    let path_words = split_identifier(&chunk.path);
    for ident in identifiers(&chunk.text).chain(chunk.metadata.symbol_name.as_deref()) {
        let parts = split_identifier(ident);
        if parts.len() > 1 && seen.insert(ident.to_string()) {
            out.push_str(&parts.join(" "));
            out.push(' ');
        }
    }
    out.push('\n');
    out.push_str(&path_words.join(" "));
    out
}

/// What the embedder sees for a chunk: path, symbol / heading breadcrumbs, then the text.
pub fn embedding_text(chunk: &Chunk) -> String {
    let mut out = format!("{} ({})\n", chunk.path, chunk.language);
    if !chunk.metadata.heading_path.is_empty() {
        out.push_str(&chunk.metadata.heading_path.join(" > "));
        out.push('\n');
    }
    if let Some(symbol) = &chunk.metadata.symbol_name {
        match &chunk.metadata.parent_symbol {
            Some(parent) => out.push_str(&format!("{} {parent}.{symbol}\n", chunk.chunk_type.as_str())),
            None => out.push_str(&format!("{} {symbol}\n", chunk.chunk_type.as_str())),
        }
    }
    out.push_str(&chunk.text);
    out
}

#[cfg(test)]
mod tests {
    use super::{keyword_terms, split_identifier};

    #[test]
    fn splits_identifiers() {
        assert_eq!(split_identifier("getUserData"), ["get", "user", "data"]);
        assert_eq!(split_identifier("HTTPServer_config"), ["http", "server", "config"]);
        assert_eq!(split_identifier("src/user-service.ts"), ["src", "user", "service", "ts"]);
        assert_eq!(split_identifier("parse2json"), ["parse", "2", "json"]);
        assert_eq!(split_identifier("__"), Vec::<String>::new());
    }

    #[test]
    fn words_fts5_keeps_whole_are_added_beside_the_text() {
        assert_eq!(keyword_terms("addModifiers").as_deref(), Some("addModifiers add modifiers"));
        assert_eq!(keyword_terms("HTTPServer").as_deref(), Some("HTTPServer http server"));
        assert_eq!(keyword_terms("Config.loadAll").as_deref(), Some("Config.loadAll load all"));
        assert_eq!(
            keyword_terms("src/main/java/com/x/TypeSpec.java").as_deref(),
            Some("src/main/java/com/x/TypeSpec.java type spec")
        );
        assert_eq!(keyword_terms("to_vec_pretty"), None);
        assert_eq!(keyword_terms("src/value/de.rs"), None);
        assert_eq!(keyword_terms("Parse"), None);
        assert_eq!(keyword_terms(""), None);
    }
}
