//! Target `search_request`: the search request parser (`edgerag_search::sanitize`: alias mapping,
//! the typed deserialize, normalization) on any JSON body, for each of the four tools.
//!
//! Invariants: deterministic; either a typed request that is within every documented bound or an
//! error with one of the parser's stable codes and a 400 status (never a 409/503, which belong to
//! later stages), with a message. Bodies that are not JSON are the HTTP layer's `INVALID_JSON` and
//! are not this target's concern.
use edgerag_search::filters::compile_glob;
use edgerag_search::profile::ProfileRegistry;
use edgerag_search::request::SearchMode;
use edgerag_search::sanitize::{
    sanitize, SanitizedRequest, MAX_CONVERSATION_CHARS, MAX_PATH_GLOBS, MAX_QUERY_CHARS, MAX_TAGS,
    PLACEHOLDERS,
};
use serde_json::Value;

const CODES: [&str; 4] = ["INVALID_REQUEST", "UNKNOWN_FIELD", "TUNING_PARAMETER_REJECTED", "EMPTY_QUERY"];

pub fn check(data: &[u8]) {
    let Ok(body) = serde_json::from_slice::<Value>(data) else { return };
    let profiles = ProfileRegistry::default();
    for mode in [SearchMode::Repo, SearchMode::Simple, SearchMode::Global, SearchMode::SimpleGlobal] {
        let result = sanitize(mode, &body, &profiles);
        assert_eq!(result, sanitize(mode, &body, &profiles), "{mode:?}: not deterministic");
        match result {
            Ok(request) => check_request(mode, &request, &profiles),
            Err(e) => {
                assert!(CODES.contains(&e.code()), "{mode:?}: code {} from the parser", e.code());
                assert_eq!(e.http_status(), 400, "{mode:?}: {e}");
                assert!(!e.to_string().trim().is_empty());
            }
        }
    }
}

fn check_request(mode: SearchMode, r: &SanitizedRequest, profiles: &ProfileRegistry) {
    assert_eq!(r.mode, mode);
    let q = &r.raw_query;
    assert!(!q.is_empty() && q.chars().count() <= MAX_QUERY_CHARS, "rawQuery {q:?}");
    assert_eq!(q.split_whitespace().collect::<Vec<_>>().join(" "), *q, "rawQuery not collapsed");
    assert!(!q.chars().any(char::is_control), "control char in rawQuery");
    assert!(profiles.get(&r.profile).is_some(), "profile {:?} does not exist", r.profile);
    assert_eq!(r.owner.is_some(), r.name.is_some(), "owner without name");
    for part in [&r.owner, &r.name].into_iter().flatten() {
        assert!(part.len() <= 100 && part != "." && part != "..", "repository part {part:?}");
        assert!(part.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)), "{part:?}");
    }
    if mode.is_simple() {
        assert!(r.owner.is_none() && r.filters.paths.is_empty() && r.instructions_template.is_none());
    }
    if mode.is_global() {
        assert!(r.owner.is_none(), "a global search names a repository");
    }
    let f = &r.filters;
    assert!(f.paths.len() <= MAX_PATH_GLOBS && f.tags.len() <= MAX_TAGS);
    for (i, p) in f.paths.iter().enumerate() {
        assert!(!p.is_empty() && !p.starts_with('/') && !p.starts_with("./"), "glob {p:?}");
        assert!(compile_glob(p).is_ok(), "glob {p:?} does not compile");
        assert!(!f.paths[..i].contains(p), "glob {p:?} twice");
    }
    for (i, t) in f.tags.iter().enumerate() {
        assert!(!t.is_empty() && t.trim() == t && !f.tags[..i].contains(t), "tag {t:?}");
    }
    let mut total = 0;
    for t in &r.conversation {
        assert!(["user", "assistant", "system"].contains(&t.role.as_str()), "role {:?}", t.role);
        assert!(!t.content.is_empty() && t.content.trim() == t.content);
        total += t.content.chars().count();
    }
    assert!(total <= MAX_CONVERSATION_CHARS, "{total} conversation chars kept");
    if let Some(template) = &r.instructions_template {
        let mut rest = template.as_str();
        while let Some(open) = rest.find("{{") {
            let Some(close) = rest[open..].find("}}") else { break };
            let name = rest[open + 2..open + close].trim();
            assert!(PLACEHOLDERS.contains(&name), "unknown placeholder {name:?} kept in {template:?}");
            rest = &rest[open + close + 2..];
        }
    }
}
