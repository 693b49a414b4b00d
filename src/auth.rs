//! Who may do what: the one authorization decision every HTTP route and MCP tool goes through.
//! Pure (no I/O): the router resolves the bearer token to a [`Principal`] (the `API_TOKEN`, a
//! scoped key looked up in D1, or nobody), asks [`need_for`] what the route needs, and calls
//! [`authorize`]. Handlers that see several namespaces (global search, the repository list, a job
//! by id) filter with [`Principal::may`].
//!
//! A route declares its scope in [`need_for`]. Routes shaped `/v1/repos/{owner}/{name}/...` get a
//! default without declaring anything: `GET` reads that repository, every other method writes it.
//! Any other route not listed there is refused to scoped keys without the `admin` scope.
//!
//! Key tokens look like `erk_<id>_<secret>`: the id finds the row, the BLAKE3 hash of the secret
//! is compared in constant time (the secret itself is never stored nor logged).
pub use edgerag_api::repo::RepoKeys;

/// What a key may do. `admin` implies `write` and `read`; `write` does not imply `read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    Read,
    Write,
    Admin,
}

impl Scope {
    pub fn parse(s: &str) -> Option<Scope> {
        match s {
            "read" => Some(Scope::Read),
            "write" => Some(Scope::Write),
            "admin" => Some(Scope::Admin),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Admin => "admin",
        }
    }
}

/// `owner/*`, `owner/name`, or `*` (every namespace). Matching ignores ASCII case, as GitHub does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamespacePattern {
    owner: Option<String>,
    name: Option<String>,
}

fn valid_part(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s != "."
        && s != ".."
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

impl NamespacePattern {
    pub fn parse(s: &str) -> Result<NamespacePattern, String> {
        if s == "*" {
            return Ok(NamespacePattern { owner: None, name: None });
        }
        let Some((owner, name)) = s.split_once('/') else {
            return Err(format!("namespace pattern {s:?} is not `owner/*`, `owner/name` or `*`"));
        };
        if !valid_part(owner) || !(name == "*" || valid_part(name)) {
            return Err(format!("namespace pattern {s:?} is not `owner/*`, `owner/name` or `*`"));
        }
        Ok(NamespacePattern { owner: Some(owner.to_string()), name: (name != "*").then(|| name.to_string()) })
    }

    pub fn matches(&self, owner: &str, name: &str) -> bool {
        let eq = |want: &Option<String>, got: &str| want.as_ref().is_none_or(|w| w.eq_ignore_ascii_case(got));
        eq(&self.owner, owner) && eq(&self.name, name)
    }
}

impl std::fmt::Display for NamespacePattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.owner, &self.name) {
            (None, _) => f.write_str("*"),
            (Some(o), None) => write!(f, "{o}/*"),
            (Some(o), Some(n)) => write!(f, "{o}/{n}"),
        }
    }
}

/// A live (not revoked) key: what its row grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub id: String,
    pub scopes: Vec<Scope>,
    pub patterns: Vec<NamespacePattern>,
}

impl Grant {
    fn has(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope) || self.scopes.contains(&Scope::Admin)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// No `Authorization` header.
    Anonymous,
    /// The deployment's `API_TOKEN`: everything.
    Root,
    Key(Grant),
    /// A person or agent signed in with GitHub (an OAuth access token).
    User(User),
}

/// A signed-in user: what GitHub said they may pull when the token was issued (or last
/// refreshed), and whether they hold the `admin` scope (only logins named in `OAUTH_ADMINS` can).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub login: String,
    /// The token's grant (the rate limit and the audit log name the user by login).
    pub grant_id: String,
    pub admin: bool,
    /// Lower-case `owner/name` of every repository the user may pull.
    pub repos: Vec<String>,
}

impl User {
    fn may_pull(&self, owner: &str, name: &str) -> bool {
        let key = format!("{}/{}", owner.to_ascii_lowercase(), name.to_ascii_lowercase());
        self.repos.contains(&key)
    }

    /// The id the rate limit and the audit log use.
    pub fn audit_id(&self) -> String {
        format!("user:{}", self.login)
    }
}

/// The deployment's switches the decision depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// `PUBLIC_READS`: anonymous requests may read.
    pub public_reads: bool,
    /// `API_TOKEN` is set (without it the deployment refuses anonymous writes as disabled).
    pub writes_enabled: bool,
}

impl Principal {
    /// Whether this caller may use `scope` on `owner/name`.
    pub fn may(&self, scope: Scope, owner: &str, name: &str, policy: Policy) -> bool {
        match self {
            Principal::Root => true,
            Principal::Anonymous => scope == Scope::Read && policy.public_reads,
            Principal::Key(g) => g.has(scope) && g.patterns.iter().any(|p| p.matches(owner, name)),
            Principal::User(u) => u.admin || (scope == Scope::Read && u.may_pull(owner, name)),
        }
    }

    /// Whether this caller may manage the deployment (keys, audit, every repository).
    pub fn is_admin(&self) -> bool {
        match self {
            Principal::Anonymous => false,
            Principal::Root => true,
            Principal::Key(g) => g.has(Scope::Admin),
            Principal::User(u) => u.admin,
        }
    }

    /// The key id for the audit log (`api-token` for the deployment's token, `user:<login>` for
    /// a signed-in user).
    pub fn audit_id(&self) -> String {
        match self {
            Principal::Anonymous => "anonymous".into(),
            Principal::Root => "api-token".into(),
            Principal::Key(g) => g.id.clone(),
            Principal::User(u) => u.audit_id(),
        }
    }
}

/// An authorized caller: who, under which policy. Handlers that see several namespaces filter
/// with [`Access::may_read`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    pub who: Principal,
    pub policy: Policy,
}

impl Access {
    pub fn may_read(&self, owner: &str, name: &str) -> bool {
        self.who.may(Scope::Read, owner, name, self.policy)
    }

    /// [`Access::may_read`] on a namespace id (`repo:<owner>/<name>`); other ids only for the
    /// API token.
    pub fn may_read_namespace(&self, namespace: &str) -> bool {
        match split_namespace(namespace) {
            Some((owner, name)) => self.may_read(owner, name),
            None => self.who == Principal::Root,
        }
    }

    /// The decision for one more need (an MCP tool call, a repository named in a body).
    pub fn check(&self, need: &Need) -> Result<(), Denied> {
        authorize(&self.who, need, self.policy)
    }
}

/// `repo:<owner>/<name>` → `(owner, name)`.
pub fn split_namespace(namespace: &str) -> Option<(&str, &str)> {
    namespace.strip_prefix("repo:")?.split_once('/')
}

/// The repository a body (HTTP or MCP arguments) names under `keys`, when it names both parts:
/// the search bodies' `owner`/`repoOwner` and `name`/`repoName`, or the index status tool's
/// (read as the handler reads them, [`edgerag_api::repo::named_repo`]).
pub fn named_repo(body: &serde_json::Value, keys: RepoKeys) -> Option<(String, String)> {
    match edgerag_api::repo::named_repo(body.as_object()?, keys) {
        (Some(owner), Some(name)) => Some((owner, name)),
        _ => None,
    }
}

/// Which namespace a request touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// One repository.
    Repo { owner: String, name: String },
    /// Several or unknown until the handler looks: the handler filters with [`Principal::may`].
    Each,
    /// No namespace at all (stateless chunking).
    Nothing,
}

/// What a route (or MCP tool) needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// Anyone (health; webhooks carry their own signature).
    Open,
    Read(Target),
    Write(Target),
    Admin,
    /// A route [`need_for`] does not know: the API token, anonymous `GET` under `PUBLIC_READS`
    /// (a missing route still answers 404), or an admin key.
    Undeclared {
        get: bool,
    },
}

/// Why a request was refused: status and stable code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

fn denied(status: u16, code: &'static str, message: impl Into<String>) -> Denied {
    Denied { status, code, message: message.into() }
}

fn missing() -> Denied {
    denied(401, "UNAUTHORIZED", "missing `Authorization: Bearer <token>` header")
}

/// The decision. `Ok` means the handler may run; list-like targets are filtered by the handler.
pub fn authorize(who: &Principal, need: &Need, policy: Policy) -> Result<(), Denied> {
    let scope_denied = |g: &Grant, scope: Scope| {
        denied(403, "SCOPE_FORBIDDEN", format!("key {} lacks the `{}` scope", g.id, scope.as_str()))
    };
    let scoped = |scope: Scope, target: &Target| -> Result<(), Denied> {
        match who {
            Principal::Root => Ok(()),
            Principal::Anonymous => match scope {
                Scope::Read if policy.public_reads => Ok(()),
                Scope::Write | Scope::Admin if !policy.writes_enabled => Err(denied(
                    403,
                    "WRITES_DISABLED",
                    "this deployment has no API_TOKEN secret; writes are disabled",
                )),
                _ => Err(missing()),
            },
            Principal::User(u) if u.admin => Ok(()),
            Principal::User(u) => match (scope, target) {
                (Scope::Read, Target::Repo { owner, name }) if !u.may_pull(owner, name) => Err(denied(
                    403,
                    "NAMESPACE_FORBIDDEN",
                    format!("GitHub does not let {} pull {owner}/{name}", u.login),
                )),
                (Scope::Read, _) => Ok(()),
                _ => Err(denied(
                    403,
                    "SCOPE_FORBIDDEN",
                    format!("{} may only read (`{}` needs an admin sign-in)", u.login, scope.as_str()),
                )),
            },
            Principal::Key(g) if !g.has(scope) => Err(scope_denied(g, scope)),
            Principal::Key(g) => match target {
                Target::Repo { owner, name } if !g.patterns.iter().any(|p| p.matches(owner, name)) => {
                    Err(denied(
                        403,
                        "NAMESPACE_FORBIDDEN",
                        format!("key {} may not {} {owner}/{name}", g.id, scope.as_str()),
                    ))
                }
                _ => Ok(()),
            },
        }
    };
    match need {
        Need::Open => Ok(()),
        Need::Read(t) => scoped(Scope::Read, t),
        Need::Write(t) => scoped(Scope::Write, t),
        Need::Admin => scoped(Scope::Admin, &Target::Nothing),
        Need::Undeclared { get } => match who {
            Principal::Anonymous if *get => scoped(Scope::Read, &Target::Nothing),
            Principal::Key(g) if !g.has(Scope::Admin) => Err(denied(
                403,
                "SCOPE_FORBIDDEN",
                format!("key {} may not use this route (it declares no scope; needs `admin`)", g.id),
            )),
            Principal::User(u) if !u.admin => Err(denied(
                403,
                "SCOPE_FORBIDDEN",
                format!("{} may not use this route (it declares no scope; needs `admin`)", u.login),
            )),
            _ => scoped(Scope::Admin, &Target::Nothing),
        },
    }
}

/// The route table's scopes: what `method` on the (percent-decoded) path `segments` needs.
pub fn need_for(method: &str, segments: &[&str]) -> Need {
    let repo = |o: &str, n: &str| Target::Repo { owner: o.to_string(), name: n.to_string() };
    let by_method =
        |t: Target| if method == "GET" || method == "HEAD" { Need::Read(t) } else { Need::Write(t) };
    match segments {
        ["health"] => Need::Open,
        ["v1", "webhooks", "github"] => Need::Open,
        // Sign-in: metadata, registration, the authorization flow; each checks its own input.
        [".well-known", "oauth-protected-resource" | "oauth-authorization-server", ..] | ["oauth", ..] => {
            Need::Open
        }
        ["v1", "chunk"] => Need::Read(Target::Nothing),
        ["v1", "repos"] => Need::Read(Target::Each),
        ["v1", "me"] => Need::Read(Target::Nothing),
        ["v1", "jobs", _] => Need::Read(Target::Each),
        ["v1", "search", ..] => Need::Read(Target::Each),
        ["mcp"] => Need::Read(Target::Each),
        ["v1", "keys", ..] | ["v1", "audit"] => Need::Admin,
        // Reads that take their arguments as a JSON body.
        ["v1", "repos", owner, name, "grep" | "map" | "impact"] => Need::Read(repo(owner, name)),
        ["v1", "repos", owner, name, ..] => by_method(repo(owner, name)),
        _ => Need::Undeclared { get: method == "GET" },
    }
}

/// Prefix of every key token.
pub const KEY_PREFIX: &str = "erk_";

/// `erk_<id>_<secret>` → `(id, secret)`; `None` for anything else.
pub fn split_token(token: &str) -> Option<(&str, &str)> {
    let rest = token.strip_prefix(KEY_PREFIX)?;
    let (id, secret) = rest.split_once('_')?;
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hex(id, 16) && hex(secret, 64)).then_some((id, secret))
}

/// The stored form of a secret: BLAKE3, hex.
pub fn hash_secret(secret: &str) -> String {
    blake3::hash(secret.as_bytes()).to_hex().to_string()
}

/// Whether `secret` hashes to `stored` (hex); the comparison is BLAKE3's constant-time `Hash` eq.
pub fn secret_matches(secret: &str, stored: &str) -> bool {
    match blake3::Hash::from_hex(stored) {
        Ok(h) => blake3::hash(secret.as_bytes()) == h,
        Err(_) => false,
    }
}

/// Constant-time equality of two byte strings (length is not secret).
pub fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A fixed-window rate decision: `Some(retry_after_seconds)` when `count` (this window's requests,
/// this one included) is over `limit`. `limit == 0` turns limiting off.
pub fn over_limit(count: u64, limit: u64, now_s: u64, window_s: u64) -> Option<u64> {
    (limit > 0 && count > limit).then(|| window_s - now_s % window_s)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const OPEN: Policy = Policy { public_reads: true, writes_enabled: true };
    const CLOSED: Policy = Policy { public_reads: false, writes_enabled: true };

    fn key(scopes: &[Scope], patterns: &[&str]) -> Principal {
        Principal::Key(Grant {
            id: "k1".into(),
            scopes: scopes.to_vec(),
            patterns: patterns.iter().map(|p| NamespacePattern::parse(p).unwrap()).collect(),
        })
    }

    fn code(r: Result<(), Denied>) -> Option<&'static str> {
        r.err().map(|d| d.code)
    }

    #[test]
    fn patterns_parse_and_match_ignoring_case() {
        let p = NamespacePattern::parse("a/*").unwrap();
        assert!(p.matches("a", "x") && p.matches("A", "y") && !p.matches("b", "x") && !p.matches("ab", "x"));
        let p = NamespacePattern::parse("a/x").unwrap();
        assert!(p.matches("a", "X") && !p.matches("a", "y"));
        assert!(NamespacePattern::parse("*").unwrap().matches("any", "thing"));
        for bad in ["", "a", "a/", "/x", "a/b/c", "*/x", "a b/c", "../x", "a/.."] {
            assert!(NamespacePattern::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(NamespacePattern::parse("a/*").unwrap().to_string(), "a/*");
    }

    #[test]
    fn a_key_for_one_owner_is_refused_on_another() {
        let k = key(&[Scope::Read, Scope::Write], &["a/*"]);
        for method in ["GET", "POST", "DELETE", "PUT"] {
            assert_eq!(authorize(&k, &need_for(method, &["v1", "repos", "a", "x", "files"]), CLOSED), Ok(()));
            assert_eq!(
                code(authorize(&k, &need_for(method, &["v1", "repos", "b", "x", "files"]), CLOSED)),
                Some("NAMESPACE_FORBIDDEN"),
                "{method}"
            );
        }
        assert!(k.may(Scope::Read, "a", "x", CLOSED) && !k.may(Scope::Read, "b", "x", CLOSED));
    }

    #[test]
    fn scopes_are_checked_and_admin_implies_the_others() {
        let reader = key(&[Scope::Read], &["*"]);
        let write = need_for("POST", &["v1", "repos", "a", "x", "index"]);
        assert_eq!(code(authorize(&reader, &write, CLOSED)), Some("SCOPE_FORBIDDEN"));
        assert_eq!(code(authorize(&reader, &Need::Admin, CLOSED)), Some("SCOPE_FORBIDDEN"));
        let writer = key(&[Scope::Write], &["*"]);
        assert_eq!(
            code(authorize(&writer, &need_for("GET", &["v1", "repos"]), CLOSED)),
            Some("SCOPE_FORBIDDEN")
        );
        let admin = key(&[Scope::Admin], &["a/*"]);
        assert_eq!(authorize(&admin, &write, CLOSED), Ok(()));
        assert_eq!(authorize(&admin, &need_for("POST", &["v1", "keys"]), CLOSED), Ok(()));
        assert_eq!(authorize(&Principal::Root, &Need::Admin, CLOSED), Ok(()));
    }

    #[test]
    fn anonymous_reads_follow_public_reads_and_writes_need_a_token() {
        let read = need_for("GET", &["v1", "repos", "a", "x", "status"]);
        let write = need_for("DELETE", &["v1", "repos", "a", "x"]);
        assert_eq!(authorize(&Principal::Anonymous, &read, OPEN), Ok(()));
        assert_eq!(code(authorize(&Principal::Anonymous, &read, CLOSED)), Some("UNAUTHORIZED"));
        assert_eq!(code(authorize(&Principal::Anonymous, &write, OPEN)), Some("UNAUTHORIZED"));
        let no_token = Policy { public_reads: true, writes_enabled: false };
        assert_eq!(code(authorize(&Principal::Anonymous, &write, no_token)), Some("WRITES_DISABLED"));
        assert_eq!(authorize(&Principal::Anonymous, &need_for("GET", &["health"]), CLOSED), Ok(()));
        assert_eq!(code(authorize(&Principal::Anonymous, &Need::Admin, OPEN)), Some("UNAUTHORIZED"));
        // A scoped key stays scoped even on a public deployment.
        assert!(!key(&[Scope::Read], &["a/*"]).may(Scope::Read, "b", "x", OPEN));
    }

    #[test]
    fn routes_added_later_get_a_scope_by_their_shape() {
        let k = key(&[Scope::Read, Scope::Write], &["a/*"]);
        // Repository-shaped routes (documents, tags, symbols, ...) need nothing declared.
        let doc_put = need_for("PUT", &["v1", "repos", "b", "x", "documents", "d1"]);
        assert_eq!(code(authorize(&k, &doc_put, CLOSED)), Some("NAMESPACE_FORBIDDEN"));
        assert_eq!(
            need_for("GET", &["v1", "repos", "a", "x", "symbols"]),
            Need::Read(Target::Repo { owner: "a".into(), name: "x".into() })
        );
        // A search posted as a body is still a read: a read-only key may grep its repositories.
        let reader = key(&[Scope::Read], &["a/*"]);
        assert_eq!(authorize(&reader, &need_for("POST", &["v1", "repos", "a", "x", "grep"]), CLOSED), Ok(()));
        assert_eq!(
            code(authorize(&reader, &need_for("POST", &["v1", "repos", "b", "x", "grep"]), CLOSED)),
            Some("NAMESPACE_FORBIDDEN")
        );
        // Anything else is refused to non-admin keys until need_for lists it.
        let other = need_for("POST", &["v1", "plans"]);
        assert_eq!(code(authorize(&k, &other, CLOSED)), Some("SCOPE_FORBIDDEN"));
        assert_eq!(authorize(&Principal::Root, &other, CLOSED), Ok(()));
        assert_eq!(authorize(&Principal::Anonymous, &need_for("GET", &["nope"]), OPEN), Ok(()));
        assert_eq!(code(authorize(&Principal::Anonymous, &other, OPEN)), Some("UNAUTHORIZED"));
    }

    #[test]
    fn tokens_split_and_secrets_compare_by_hash() {
        let secret = "ab".repeat(32);
        let token = format!("erk_0123456789abcdef_{secret}");
        assert_eq!(split_token(&token), Some(("0123456789abcdef", secret.as_str())));
        for bad in ["", "erk_", "erk_01_ab", "dev-token", &format!("erk_0123456789abcdeg_{secret}")] {
            assert_eq!(split_token(bad), None, "{bad}");
        }
        let stored = hash_secret(&secret);
        assert_ne!(stored, secret);
        assert!(secret_matches(&secret, &stored));
        assert!(!secret_matches(&"cd".repeat(32), &stored));
        assert!(!secret_matches(&secret, "not-hex"));
        assert!(same(b"abc", b"abc") && !same(b"abc", b"abd") && !same(b"abc", b"ab"));
    }

    #[test]
    fn access_reads_namespace_ids_and_named_repositories() {
        let access = Access { who: key(&[Scope::Read], &["a/*"]), policy: CLOSED };
        assert!(access.may_read_namespace("repo:a/x") && !access.may_read_namespace("repo:b/x"));
        assert!(!access.may_read_namespace("doc:whatever"));
        let body = serde_json::json!({"repoOwner": "b", "name": "x", "rawQuery": "q"});
        assert_eq!(named_repo(&body, RepoKeys::SEARCH), Some(("b".into(), "x".into())));
        assert_eq!(named_repo(&serde_json::json!({"owner": "b"}), RepoKeys::SEARCH), None);
        let padded = serde_json::json!({"owner": " b ", "name": "x "});
        assert_eq!(named_repo(&padded, RepoKeys::SEARCH), Some(("b".into(), "x".into())));
    }

    #[test]
    fn a_signed_in_user_reads_what_github_lets_them_pull_and_nothing_more() {
        let user = |admin| {
            Principal::User(User {
                login: "alice".into(),
                grant_id: "g".into(),
                admin,
                repos: vec!["acme/app".into()],
            })
        };
        let alice = user(false);
        let read = |o: &str, n: &str| need_for("GET", &["v1", "repos", o, n, "status"]);
        assert_eq!(authorize(&alice, &read("Acme", "App"), CLOSED), Ok(()));
        assert_eq!(code(authorize(&alice, &read("acme", "other"), CLOSED)), Some("NAMESPACE_FORBIDDEN"));
        assert_eq!(
            code(authorize(&alice, &need_for("POST", &["v1", "repos", "acme", "app", "index"]), CLOSED)),
            Some("SCOPE_FORBIDDEN")
        );
        assert_eq!(
            code(authorize(&alice, &need_for("GET", &["v1", "keys"]), CLOSED)),
            Some("SCOPE_FORBIDDEN")
        );
        assert_eq!(
            code(authorize(&alice, &need_for("POST", &["v1", "plans"]), CLOSED)),
            Some("SCOPE_FORBIDDEN")
        );
        assert_eq!(authorize(&alice, &need_for("POST", &["mcp"]), CLOSED), Ok(()));
        assert!(alice.may(Scope::Read, "acme", "app", CLOSED) && !alice.may(Scope::Read, "acme", "x", OPEN));
        let admin = user(true);
        assert!(admin.is_admin() && !alice.is_admin() && Principal::Root.is_admin());
        assert_eq!(authorize(&alice, &need_for("GET", &["v1", "me"]), CLOSED), Ok(()));
        assert_eq!(authorize(&admin, &need_for("POST", &["v1", "keys"]), CLOSED), Ok(()));
        assert!(admin.may(Scope::Write, "any", "repo", CLOSED));
        assert_eq!(
            authorize(&Principal::Anonymous, &need_for("GET", &["oauth", "authorize"]), CLOSED),
            Ok(())
        );
        assert_eq!(
            authorize(
                &Principal::Anonymous,
                &need_for("GET", &[".well-known", "oauth-authorization-server"]),
                CLOSED
            ),
            Ok(())
        );
    }

    #[test]
    fn a_fixed_window_refuses_past_the_limit_until_the_window_ends() {
        assert_eq!(over_limit(10, 10, 125, 60), None);
        assert_eq!(over_limit(11, 10, 125, 60), Some(55));
        assert_eq!(over_limit(1_000, 0, 125, 60), None);
    }
}
