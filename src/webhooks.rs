//! GitHub webhooks, the pure part: the `X-Hub-Signature-256` check (HMAC-SHA256 of the raw body
//! under the repository's secret, compared in constant time), the few payload fields edgerag
//! reads, and what a delivery asks for. The route (`routes::webhooks`) does the I/O around it.
use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;

/// Why a signature was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureError {
    /// Not `sha256=<64 hex digits>`.
    Malformed,
    /// Well-formed but not the HMAC of this body under this secret.
    Mismatch,
}

/// `sha256=<hex>` as GitHub sends it, for `body` under `secret` (tests and clients sign with it).
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    format!("sha256={}", hex::encode(mac(secret, body).finalize().into_bytes()))
}

fn mac(secret: &[u8], body: &[u8]) -> Hmac<Sha256> {
    // HMAC accepts keys of any length; `new_from_slice` cannot fail for it.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).unwrap_or_else(|_| unreachable!());
    mac.update(body);
    mac
}

/// Check `header` (the `X-Hub-Signature-256` value) against `body` under `secret`. The digest
/// comparison is `hmac`'s constant-time `verify_slice`.
pub fn verify(secret: &[u8], body: &[u8], header: &str) -> Result<(), SignatureError> {
    let hex_digest = header.trim().strip_prefix("sha256=").ok_or(SignatureError::Malformed)?;
    if hex_digest.len() != 64 {
        return Err(SignatureError::Malformed);
    }
    let digest = hex::decode(hex_digest).map_err(|_| SignatureError::Malformed)?;
    mac(secret, body).verify_slice(&digest).map_err(|_| SignatureError::Mismatch)
}

/// The payload fields edgerag reads (every event GitHub sends for a repository has `repository`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Payload {
    #[serde(default)]
    pub repository: Option<RepositoryField>,
    /// Push: the full ref pushed (`refs/heads/main`, `refs/tags/v1`).
    #[serde(default, rename = "ref")]
    pub git_ref: Option<String>,
    /// Push: the ref was deleted.
    #[serde(default)]
    pub deleted: bool,
    /// Push: the commit the ref points to now.
    #[serde(default)]
    pub after: Option<String>,
    /// The GitHub App's deliveries: what happened (`created`, `added`, …) and to which installation.
    #[serde(default)]
    pub action: Option<String>,
    #[serde(default)]
    pub installation: Option<InstallationField>,
    /// `installation` events: the repositories of the installation.
    #[serde(default)]
    pub repositories: Vec<RepositoryRef>,
    /// `installation_repositories` events.
    #[serde(default)]
    pub repositories_added: Vec<RepositoryRef>,
    #[serde(default)]
    pub repositories_removed: Vec<RepositoryRef>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct InstallationField {
    pub id: i64,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct RepositoryRef {
    #[serde(default)]
    pub full_name: String,
}

/// What a verified delivery of the GitHub App asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppDecision {
    /// Register and index these repositories (`owner`, `name`).
    Add(Vec<(String, String)>),
    /// Remove these repositories from the index.
    Remove(Vec<(String, String)>),
    /// A push: decided like a repository webhook's ([`decide`]).
    Push,
    Ignore(String),
}

fn pairs(repos: &[RepositoryRef]) -> Vec<(String, String)> {
    repos
        .iter()
        .filter_map(|r| r.full_name.split_once('/'))
        .filter(|(o, n)| !o.is_empty() && !n.is_empty())
        .map(|(o, n)| (o.to_string(), n.to_string()))
        .collect()
}

/// The decision for the app's event `event` with `payload`.
pub fn decide_app(event: &str, payload: &Payload) -> AppDecision {
    match (event, payload.action.as_deref().unwrap_or("")) {
        ("installation", "created" | "unsuspend" | "new_permissions_accepted") => {
            AppDecision::Add(pairs(&payload.repositories))
        }
        ("installation", "deleted" | "suspend") => AppDecision::Remove(pairs(&payload.repositories)),
        ("installation_repositories", "added") => AppDecision::Add(pairs(&payload.repositories_added)),
        ("installation_repositories", "removed") => AppDecision::Remove(pairs(&payload.repositories_removed)),
        ("push", _) => AppDecision::Push,
        ("ping", _) => AppDecision::Ignore("ping: the app's webhook is set up".into()),
        (event, action) => AppDecision::Ignore(format!("event `{event}` ({action}) is not handled")),
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct RepositoryField {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub full_name: Option<String>,
    #[serde(default)]
    pub owner: Option<OwnerField>,
    #[serde(default)]
    pub default_branch: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct OwnerField {
    #[serde(default)]
    pub login: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
}

impl Payload {
    /// `(owner, name)` of the repository the delivery is about.
    pub fn repository(&self) -> Option<(String, String)> {
        let repo = self.repository.as_ref()?;
        if let Some((owner, name)) = repo.full_name.as_deref().and_then(|f| f.split_once('/')) {
            if !owner.is_empty() && !name.is_empty() {
                return Some((owner.to_string(), name.to_string()));
            }
        }
        let owner = repo.owner.as_ref().and_then(|o| o.login.clone().or_else(|| o.name.clone()))?;
        Some((owner, repo.name.clone()?))
    }
}

/// Whether a push to `pushed` (a full ref) moves the tracked ref: `tracked` as registered (a
/// branch, tag or full ref; `None` = the default branch, named by the payload).
pub fn tracks(tracked: Option<&str>, default_branch: Option<&str>, pushed: &str) -> bool {
    let Some(wanted) = tracked.or(default_branch) else { return false };
    pushed == wanted
        || pushed.strip_prefix("refs/heads/") == Some(wanted)
        || pushed.strip_prefix("refs/tags/") == Some(wanted)
}

/// What a verified delivery asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Re-index the tracked ref.
    Fetch,
    /// Nothing to do; the reason is told to GitHub (its delivery log shows it).
    Ignore(String),
}

/// The decision for event `event` (the `X-GitHub-Event` header) with `payload`, for a repository
/// tracking `tracked`.
pub fn decide(event: &str, payload: &Payload, tracked: Option<&str>) -> Decision {
    match event {
        "push" => {}
        "ping" => return Decision::Ignore("ping: the webhook is set up".into()),
        other => return Decision::Ignore(format!("event `{other}` is not handled (only `push`)")),
    }
    let Some(pushed) = payload.git_ref.as_deref() else {
        return Decision::Ignore("the push names no ref".into());
    };
    let default_branch = payload.repository.as_ref().and_then(|r| r.default_branch.as_deref());
    if !tracks(tracked, default_branch, pushed) {
        let wanted = tracked.or(default_branch).unwrap_or("the default branch");
        return Decision::Ignore(format!("{pushed} is not the tracked ref ({wanted})"));
    }
    if payload.deleted {
        return Decision::Ignore(format!("{pushed} was deleted; the index is kept"));
    }
    Decision::Fetch
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"It's a Secret to Everybody";
    const BODY: &[u8] = b"Hello, World!";

    #[test]
    fn the_signature_matches_githubs_documented_example() {
        // The example of GitHub's "Validating webhook deliveries" page.
        let expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        assert_eq!(sign(SECRET, BODY), expected);
        assert_eq!(verify(SECRET, BODY, expected), Ok(()));
    }

    #[test]
    fn a_wrong_secret_body_or_digest_is_a_mismatch() {
        let good = sign(SECRET, BODY);
        assert_eq!(verify(b"another secret", BODY, &good), Err(SignatureError::Mismatch));
        assert_eq!(verify(SECRET, b"Hello, World?", &good), Err(SignatureError::Mismatch));
        let mut flipped = good.clone();
        flipped.replace_range(good.len() - 1.., "0");
        assert_eq!(verify(SECRET, BODY, &flipped), Err(SignatureError::Mismatch));
    }

    #[test]
    fn a_signature_that_is_not_sha256_hex_is_malformed() {
        let digest = &sign(SECRET, BODY)["sha256=".len()..];
        for header in [
            "",
            digest,
            &format!("sha1={digest}"),
            &format!("sha256={}", &digest[..63]),
            &format!("sha256={}zz", &digest[..62]),
        ] {
            assert_eq!(verify(SECRET, BODY, header), Err(SignatureError::Malformed), "{header:?}");
        }
    }

    fn push(git_ref: &str, default_branch: &str) -> Payload {
        serde_json::from_value(serde_json::json!({
            "ref": git_ref,
            "after": "0123",
            "repository": {"name": "widgets", "full_name": "Acme/widgets", "owner": {"login": "Acme"},
                           "default_branch": default_branch},
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn installation_events_add_and_remove_their_repositories() {
        let p =
            |v: serde_json::Value| -> Payload { serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}")) };
        let created = p(serde_json::json!({"action": "created", "installation": {"id": 7},
            "repositories": [{"full_name": "acme/a"}, {"full_name": "bad"}]}));
        assert_eq!(created.installation.as_ref().map(|i| i.id), Some(7));
        assert_eq!(decide_app("installation", &created), AppDecision::Add(vec![("acme".into(), "a".into())]));
        let deleted = p(serde_json::json!({"action": "deleted", "repositories": [{"full_name": "acme/a"}]}));
        assert_eq!(
            decide_app("installation", &deleted),
            AppDecision::Remove(vec![("acme".into(), "a".into())])
        );
        let removed =
            p(serde_json::json!({"action": "removed", "repositories_removed": [{"full_name": "acme/b"}]}));
        assert_eq!(
            decide_app("installation_repositories", &removed),
            AppDecision::Remove(vec![("acme".into(), "b".into())])
        );
        assert_eq!(decide_app("push", &Payload::default()), AppDecision::Push);
        assert!(matches!(decide_app("issues", &Payload::default()), AppDecision::Ignore(_)));
    }

    #[test]
    fn the_repository_comes_from_full_name_or_owner_and_name() {
        assert_eq!(push("refs/heads/main", "main").repository(), Some(("Acme".into(), "widgets".into())));
        let p: Payload = serde_json::from_str(r#"{"repository":{"name":"n","owner":{"name":"o"}}}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.repository(), Some(("o".into(), "n".into())));
        assert_eq!(Payload::default().repository(), None);
    }

    #[test]
    fn a_push_to_the_tracked_branch_tag_or_default_branch_fetches() {
        assert_eq!(decide("push", &push("refs/heads/main", "main"), None), Decision::Fetch);
        assert_eq!(decide("push", &push("refs/heads/dev", "main"), Some("dev")), Decision::Fetch);
        assert_eq!(decide("push", &push("refs/tags/v1", "main"), Some("v1")), Decision::Fetch);
        assert_eq!(decide("push", &push("refs/heads/dev", "main"), Some("refs/heads/dev")), Decision::Fetch);
    }

    #[test]
    fn other_refs_events_and_deletions_are_ignored_with_a_reason() {
        let ignored = |d: Decision| match d {
            Decision::Ignore(reason) => reason,
            Decision::Fetch => panic!("expected Ignore"),
        };
        assert_eq!(
            ignored(decide("push", &push("refs/heads/dev", "main"), None)),
            "refs/heads/dev is not the tracked ref (main)"
        );
        assert_eq!(
            ignored(decide("push", &push("refs/heads/main", "main"), Some("release"))),
            "refs/heads/main is not the tracked ref (release)"
        );
        assert!(ignored(decide("ping", &Payload::default(), None)).starts_with("ping"));
        assert_eq!(
            ignored(decide("issues", &push("refs/heads/main", "main"), None)),
            "event `issues` is not handled (only `push`)"
        );
        let mut gone = push("refs/heads/main", "main");
        gone.deleted = true;
        assert!(ignored(decide("push", &gone, None)).contains("deleted"));
        assert!(ignored(decide("push", &Payload::default(), None)).contains("no ref"));
    }
}
