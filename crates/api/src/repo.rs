//! The repository a request's JSON object names: one reader of owner and name for the search
//! bodies, the index status tool and the repository tools, so that what the access check reads
//! is what the handler reads.
use serde_json::{Map, Value};

/// The keys that name a repository's owner and its name, each list in the order it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RepoKeys {
    pub owner: &'static [&'static str],
    pub name: &'static [&'static str],
}

impl RepoKeys {
    /// A search body: `owner` / `name`, else their aliases `repoOwner` / `repoName` (the search
    /// request reads the field before its alias).
    pub const SEARCH: RepoKeys = RepoKeys { owner: &["owner", "repoOwner"], name: &["name", "repoName"] };
    /// The index status tool: `repoOwner` / `repoName`, else `owner` / `name`.
    pub const STATUS: RepoKeys = RepoKeys { owner: &["repoOwner", "owner"], name: &["repoName", "name"] };
    /// The navigation and repository tools: `repoOwner` / `repoName` only (their `name` is a
    /// symbol's).
    pub const TOOLS: RepoKeys = RepoKeys { owner: &["repoOwner"], name: &["repoName"] };
}

/// The owner and the name `args` gives under `keys`. Each is the first of its keys present, read
/// when it is a string, trimmed; a blank one is absent.
pub fn named_repo(args: &Map<String, Value>, keys: RepoKeys) -> (Option<String>, Option<String>) {
    let part = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| args.get(*k))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    (part(keys.owner), part(keys.name))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn read(args: Value, keys: RepoKeys) -> (Option<String>, Option<String>) {
        named_repo(args.as_object().unwrap(), keys)
    }

    fn both(o: &str, n: &str) -> (Option<String>, Option<String>) {
        (Some(o.into()), Some(n.into()))
    }

    #[test]
    fn parts_are_trimmed_and_blank_ones_are_absent() {
        assert_eq!(read(json!({"owner": " acme ", "name": "app\n"}), RepoKeys::SEARCH), both("acme", "app"));
        assert_eq!(read(json!({"owner": "  ", "name": "app"}), RepoKeys::SEARCH), (None, Some("app".into())));
        assert_eq!(read(json!({"owner": 5, "name": null}), RepoKeys::SEARCH), (None, None));
        assert_eq!(read(json!({}), RepoKeys::STATUS), (None, None));
    }

    #[test]
    fn each_caller_reads_its_own_keys_in_its_own_order() {
        let args = json!({"owner": "a", "name": "b", "repoOwner": "c", "repoName": "d"});
        assert_eq!(read(args.clone(), RepoKeys::SEARCH), both("a", "b"));
        assert_eq!(read(args.clone(), RepoKeys::STATUS), both("c", "d"));
        assert_eq!(read(args, RepoKeys::TOOLS), both("c", "d"));
        assert_eq!(read(json!({"repoOwner": "a", "repoName": "b"}), RepoKeys::SEARCH), both("a", "b"));
        assert_eq!(read(json!({"owner": "a", "name": "b"}), RepoKeys::STATUS), both("a", "b"));
        assert_eq!(read(json!({"owner": "a", "name": "slugify"}), RepoKeys::TOOLS), (None, None));
        // The first key present decides, even when it is not a string.
        assert_eq!(read(json!({"owner": 1, "repoOwner": "a", "name": "b"}), RepoKeys::SEARCH).0, None);
    }
}
