//! Tags: labels set per upload or per file, stored with the file's chunks and vectors, and
//! matched by `filters.tags` in search. One definition of what a tag may be and of how a set of
//! tags is stored in a text column, for every writer and reader.
//!
//! A tag is 1–64 bytes of printable text without commas (the column separator) or surrounding
//! whitespace. A file carries at most [`MAX_TAGS_PER_FILE`]; its set is kept sorted and without
//! duplicates, so the same tags always store the same way (re-uploading a file with the same tags
//! is "unchanged", with other tags it is "changed").

/// Most tags one file may carry (upload tags and its own together).
pub const MAX_TAGS_PER_FILE: usize = 20;
/// Longest tag, in bytes.
pub const MAX_TAG_BYTES: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TagError {
    #[error(
        "tag {0:?} is empty, longer than {MAX_TAG_BYTES} bytes, or contains a comma or a control character"
    )]
    Invalid(String),
    #[error("at most {MAX_TAGS_PER_FILE} tags per file, got {0}")]
    TooMany(usize),
}

/// Whether `tag` is a valid tag as given (no trimming: `" api"` is refused, not rewritten).
pub fn is_valid(tag: &str) -> bool {
    !tag.is_empty()
        && tag.len() <= MAX_TAG_BYTES
        && tag.trim() == tag
        && !tag.chars().any(|c| c == ',' || c.is_control())
}

/// The normalised tag set of a file: every given tag checked, sorted, duplicates dropped.
pub fn normalize<'a>(tags: impl IntoIterator<Item = &'a str>) -> Result<Vec<String>, TagError> {
    let mut out: Vec<String> = Vec::new();
    for t in tags {
        if !is_valid(t) {
            return Err(TagError::Invalid(t.to_string()));
        }
        out.push(t.to_string());
    }
    out.sort();
    out.dedup();
    if out.len() > MAX_TAGS_PER_FILE {
        return Err(TagError::TooMany(out.len()));
    }
    Ok(out)
}

/// A comma-separated list as sent in a query parameter (`?tags=api,v2`); empty items are skipped.
pub fn parse_list(list: &str) -> Result<Vec<String>, TagError> {
    normalize(list.split(',').filter(|t| !t.is_empty()))
}

/// The stored form: `,a,b,` (empty for no tags), so that `instr(tags, ',a,')` matches whole tags.
pub fn to_column(tags: &[String]) -> String {
    if tags.is_empty() {
        String::new()
    } else {
        format!(",{},", tags.join(","))
    }
}

/// The tags of a stored column (the inverse of [`to_column`]).
pub fn from_column(column: &str) -> Vec<String> {
    column.split(',').filter(|t| !t.is_empty()).map(str::to_string).collect()
}

/// What to look for in a stored column to match `tag` exactly.
pub fn column_needle(tag: &str) -> String {
    format!(",{tag},")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_tag_set_is_sorted_and_deduplicated() {
        assert_eq!(normalize(["v2", "api", "v2"]).unwrap(), ["api", "v2"]);
    }

    #[test]
    fn empty_padded_comma_control_and_overlong_tags_are_refused() {
        for bad in ["", " api", "a,b", "a\nb", &"x".repeat(MAX_TAG_BYTES + 1)] {
            assert!(matches!(normalize([bad]), Err(TagError::Invalid(_))), "{bad:?} was accepted");
        }
        assert!(normalize(["x".repeat(MAX_TAG_BYTES).as_str()]).is_ok());
    }

    #[test]
    fn more_than_the_limit_of_distinct_tags_is_refused() {
        let many: Vec<String> = (0..=MAX_TAGS_PER_FILE).map(|i| format!("t{i}")).collect();
        assert_eq!(normalize(many.iter().map(String::as_str)), Err(TagError::TooMany(MAX_TAGS_PER_FILE + 1)));
    }

    #[test]
    fn a_query_parameter_list_skips_empty_items() {
        assert_eq!(parse_list("api,,docs,").unwrap(), ["api", "docs"]);
        assert_eq!(parse_list("").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn the_column_matches_whole_tags_only() {
        let column = to_column(&["api".into(), "v2".into()]);
        assert_eq!(column, ",api,v2,");
        assert!(column.contains(&column_needle("api")));
        assert!(!column.contains(&column_needle("ap")));
        assert_eq!(to_column(&[]), "");
    }

    proptest! {
        #[test]
        fn the_column_form_round_trips(tags in proptest::collection::vec("[a-z0-9:/._-]{1,12}", 0..8)) {
            let set = normalize(tags.iter().map(String::as_str)).unwrap();
            prop_assert_eq!(from_column(&to_column(&set)), set);
        }
    }
}
