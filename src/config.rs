//! Worker configuration from `wrangler.toml` vars and secrets, read once per invocation.
//!
//! | var | default | meaning |
//! | --- | --- | --- |
//! | `API_TOKEN` (secret) | unset ⇒ writes refused | bearer token for write endpoints |
//! | `PUBLIC_READS` | `false` | reads without a token (local development sets `true`) |
//! | `GITHUB_API_URL` | `https://api.github.com` | GitHub REST base URL (tests use 127.0.0.1) |
//! | `GITHUB_TOKEN` (secret) | unset | sent as `Authorization: Bearer` to GitHub |
//! | `MAX_ATTEMPTS` | `5` | deliveries of a stage message before the job fails |
//! | `RETRY_BASE_DELAY_SECONDS` | `2` | backoff base: `base × 2^(attempt-1)` seconds |
//! | `MAX_UPLOAD_BYTES` | 32 MiB | largest upload / chunk request body |
//! | `MAX_TARBALL_BYTES` | 64 MiB | largest GitHub tarball (compressed) |
//! | `MAX_ARCHIVE_BYTES` | 512 MiB | most bytes unpacked from one archive (gzip-bomb guard) |
//! | `MAX_FILE_BYTES` | 1 MiB | larger files are skipped (`FILE_TOO_LARGE`) |
//! | `FILES_PER_MESSAGE` | `50` | files per chunk/embed/index message (also capped at 2 MB of files) |
//! | `JOB_STALL_SECONDS` | `1800` | an active job without stage activity for this long is failed (`STALLED`) when a new request comes |
//! | `JOB_RESUME_SECONDS` | `120` | an active job quiet for this long gets its unfinished work re-sent (by a joining request or the scheduled run) |
//! | `RATE_LIMIT_PER_MINUTE` | `600` | requests per minute per scoped key when no `RATE_LIMITER` binding exists (`0`: off) |
//! | `GRAPH_PAGE_BYTES` | 4 MB | stored file graphs (JSON), or their stored definitions, read per statement by a job's cross-file resolution (the rows stay in JS and are parsed one at a time; a page's parsed graphs are held beside the namespace's definitions) |
//! | `BATCH_D1_STATEMENTS` | the D1 query budget (500) | a queue invocation's own D1 statements stay under this: a batch hands its remaining messages to new ones, an index message splits its range, a job's end hands its rest to a follow-up message |
//! | `DELIVER_TWICE` | `false` | fault injection: every stage message is sent twice |
//! | `GITHUB_CLIENT_ID` | unset ⇒ no sign-in | the GitHub App's (or OAuth app's) client id: people and agents sign in with GitHub |
//! | `GITHUB_CLIENT_SECRET` (secret) | unset ⇒ no sign-in | its client secret |
//! | `GITHUB_OAUTH_URL` | `https://github.com` | where GitHub's sign-in pages are (tests use 127.0.0.1) |
//! | `OAUTH_ADMINS` | empty | comma-separated GitHub logins that may sign in with the `admin` scope |
//! | `OAUTH_ACCESS_TOKEN_SECONDS` | `900` | lifetime of a sign-in's access tokens (the repositories GitHub lets the user pull are asked again at each refresh) |
//! | `OAUTH_REFRESH_TOKEN_SECONDS` | 30 days | lifetime of a sign-in (its refresh tokens rotate) |
//! | `GITHUB_APP_ID` (secret) | unset | the GitHub App's id: tarballs of the repositories it is installed on are fetched with installation tokens |
//! | `GITHUB_APP_PRIVATE_KEY` (secret) | unset | the app's private key (PEM, PKCS#1 or PKCS#8; line breaks may be `\n`) |
//! | `GITHUB_APP_WEBHOOK_SECRET` (secret) | unset | the app's webhook secret: installation and push events of the app are verified with it |
//! | `PUBLIC_URL` | the request's origin | the deployment's origin as clients see it (issuer and resource identifiers) |
use std::ops::RangeInclusive;

use worker::Env;

#[derive(Debug, Clone)]
pub struct Config {
    pub api_token: Option<String>,
    pub public_reads: bool,
    pub github_api_url: String,
    pub github_token: Option<String>,
    pub max_attempts: u32,
    pub retry_base_delay_seconds: u32,
    pub max_upload_bytes: usize,
    pub max_tarball_bytes: usize,
    pub max_archive_bytes: u64,
    pub max_file_bytes: usize,
    pub files_per_message: usize,
    pub graph_page_bytes: usize,
    pub batch_d1_statements: f64,
    pub job_stall_seconds: u64,
    pub job_resume_seconds: u64,
    pub deliver_twice: bool,
    pub rate_limit_per_minute: u64,
    pub oauth: OAuthConfig,
    pub github_app_id: Option<String>,
    pub github_app_private_key: Option<String>,
    pub github_app_webhook_secret: Option<String>,
}

/// Sign-in with GitHub (see [`crate::oauth`]). Enabled when both client id and secret are set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthConfig {
    pub github_client_id: Option<String>,
    pub github_client_secret: Option<String>,
    pub github_oauth_url: String,
    pub admins: Vec<String>,
    pub access_token_seconds: u64,
    pub refresh_token_seconds: u64,
    pub public_url: Option<String>,
}

impl Default for OAuthConfig {
    fn default() -> Self {
        OAuthConfig {
            github_client_id: None,
            github_client_secret: None,
            github_oauth_url: "https://github.com".into(),
            admins: Vec::new(),
            access_token_seconds: 900,
            refresh_token_seconds: 30 * 24 * 3600,
            public_url: None,
        }
    }
}

impl OAuthConfig {
    /// `(client id, client secret)` when sign-in is configured.
    pub fn github_client(&self) -> Option<(&str, &str)> {
        Some((self.github_client_id.as_deref()?, self.github_client_secret.as_deref()?))
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            api_token: None,
            public_reads: false,
            github_api_url: "https://api.github.com".into(),
            github_token: None,
            max_attempts: 5,
            retry_base_delay_seconds: 2,
            max_upload_bytes: 32 * 1024 * 1024,
            max_tarball_bytes: 64 * 1024 * 1024,
            max_archive_bytes: 512 * 1024 * 1024,
            max_file_bytes: 1024 * 1024,
            files_per_message: 50,
            graph_page_bytes: 4_000_000,
            batch_d1_statements: crate::ledger::budget("d1Statements").unwrap_or(500.0),
            job_stall_seconds: 1800,
            job_resume_seconds: 120,
            deliver_twice: false,
            rate_limit_per_minute: 600,
            oauth: OAuthConfig::default(),
            github_app_id: None,
            github_app_private_key: None,
            github_app_webhook_secret: None,
        }
    }
}

impl Config {
    pub fn from_env(env: &Env) -> Config {
        Config::from_lookup(|name| crate::bindings::var(env, name))
    }

    /// Build from any name → value lookup (the worker's env, or a map in tests).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Config {
        let d = Config::default();
        let num = |name: &str, default: u64| -> u64 {
            get(name).and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(default)
        };
        let flag = |name: &str, default: bool| -> bool {
            match get(name).map(|v| v.trim().to_ascii_lowercase()) {
                Some(v) if ["true", "1", "yes", "on"].contains(&v.as_str()) => true,
                Some(v) if ["false", "0", "no", "off"].contains(&v.as_str()) => false,
                _ => default,
            }
        };
        Config {
            api_token: get("API_TOKEN").filter(|t| !t.is_empty()),
            public_reads: flag("PUBLIC_READS", d.public_reads),
            github_api_url: get("GITHUB_API_URL")
                .filter(|u| !u.is_empty())
                .map(|u| u.trim_end_matches('/').to_string())
                .unwrap_or(d.github_api_url),
            github_token: get("GITHUB_TOKEN").filter(|t| !t.is_empty()),
            max_attempts: num("MAX_ATTEMPTS", d.max_attempts.into()).clamp(1, 100) as u32,
            retry_base_delay_seconds: num("RETRY_BASE_DELAY_SECONDS", d.retry_base_delay_seconds.into())
                .min(3600) as u32,
            max_upload_bytes: num("MAX_UPLOAD_BYTES", d.max_upload_bytes as u64) as usize,
            max_tarball_bytes: num("MAX_TARBALL_BYTES", d.max_tarball_bytes as u64) as usize,
            max_archive_bytes: num("MAX_ARCHIVE_BYTES", d.max_archive_bytes),
            max_file_bytes: num("MAX_FILE_BYTES", d.max_file_bytes as u64) as usize,
            files_per_message: num("FILES_PER_MESSAGE", d.files_per_message as u64).clamp(1, 500) as usize,
            graph_page_bytes: num("GRAPH_PAGE_BYTES", d.graph_page_bytes as u64).max(1) as usize,
            batch_d1_statements: num("BATCH_D1_STATEMENTS", d.batch_d1_statements as u64) as f64,
            job_stall_seconds: num("JOB_STALL_SECONDS", d.job_stall_seconds).max(1),
            job_resume_seconds: num("JOB_RESUME_SECONDS", d.job_resume_seconds).max(1),
            deliver_twice: flag("DELIVER_TWICE", d.deliver_twice),
            rate_limit_per_minute: num("RATE_LIMIT_PER_MINUTE", d.rate_limit_per_minute),
            oauth: OAuthConfig {
                github_client_id: get("GITHUB_CLIENT_ID").filter(|t| !t.trim().is_empty()),
                github_client_secret: get("GITHUB_CLIENT_SECRET").filter(|t| !t.is_empty()),
                github_oauth_url: get("GITHUB_OAUTH_URL")
                    .filter(|u| !u.trim().is_empty())
                    .map(|u| u.trim().trim_end_matches('/').to_string())
                    .unwrap_or(d.oauth.github_oauth_url),
                admins: get("OAUTH_ADMINS")
                    .unwrap_or_default()
                    .split(',')
                    .map(|a| a.trim().to_string())
                    .filter(|a| !a.is_empty())
                    .collect(),
                access_token_seconds: num("OAUTH_ACCESS_TOKEN_SECONDS", d.oauth.access_token_seconds)
                    .clamp(1, 86_400),
                refresh_token_seconds: num("OAUTH_REFRESH_TOKEN_SECONDS", d.oauth.refresh_token_seconds)
                    .max(60),
                public_url: get("PUBLIC_URL")
                    .map(|u| u.trim().trim_end_matches('/').to_string())
                    .filter(|u| u.starts_with("https://") || u.starts_with("http://")),
            },
            github_app_id: get("GITHUB_APP_ID").map(|v| v.trim().to_string()).filter(|v| !v.is_empty()),
            github_app_private_key: get("GITHUB_APP_PRIVATE_KEY").filter(|v| !v.trim().is_empty()),
            github_app_webhook_secret: get("GITHUB_APP_WEBHOOK_SECRET").filter(|v| !v.is_empty()),
        }
    }

    /// `(app id, private key PEM)` when the GitHub App is configured.
    pub fn github_app(&self) -> Option<(&str, &str)> {
        Some((self.github_app_id.as_deref()?, self.github_app_private_key.as_deref()?))
    }

    /// Delay before the next delivery after `attempt` failed deliveries (1-based), capped at 1 h.
    pub fn retry_delay_seconds(&self, attempt: u32) -> u32 {
        let exp = attempt.saturating_sub(1).min(16);
        self.retry_base_delay_seconds.saturating_mul(1 << exp).min(3600)
    }
}

/// A whole-number setting that must lie in `range`: `Ok(None)` when unset or blank, else the
/// number, or the sentence that says what `name` must be (the caller says what happens instead).
pub fn whole_number(
    name: &str,
    raw: Option<&str>,
    range: RangeInclusive<u32>,
) -> Result<Option<u32>, String> {
    match raw.map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => v.parse::<u32>().ok().filter(|n| range.contains(n)).map(Some).ok_or_else(|| {
            format!("{name} must be a whole number in {}..={}, not {v:?}", range.start(), range.end())
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn whole_numbers_in_a_range() {
        assert_eq!(whole_number("N", None, 0..=5), Ok(None));
        assert_eq!(whole_number("N", Some("  "), 0..=5), Ok(None));
        assert_eq!(whole_number("N", Some(" 5 "), 0..=5), Ok(Some(5)));
        assert_eq!(
            whole_number("N", Some("0"), 1..=5),
            Err("N must be a whole number in 1..=5, not \"0\"".into())
        );
        for bad in ["6", "-1", "2.5", "two", "99999999999"] {
            assert!(whole_number("N", Some(bad), 0..=5).is_err(), "{bad}");
        }
    }

    fn cfg(pairs: &[(&str, &str)]) -> Config {
        let map: HashMap<String, String> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_and_overrides() {
        let c = cfg(&[]);
        // Private unless asked: a missing or unreadable PUBLIC_READS never opens reads.
        assert_eq!((c.max_attempts, c.public_reads, c.api_token.clone()), (5, false, None));
        assert!(!cfg(&[("PUBLIC_READS", "maybe")]).public_reads);
        assert!(cfg(&[("PUBLIC_READS", "true")]).public_reads);
        let c = cfg(&[
            ("API_TOKEN", "t"),
            ("PUBLIC_READS", "false"),
            ("GITHUB_API_URL", "http://127.0.0.1:9/"),
            ("RETRY_BASE_DELAY_SECONDS", "0"),
            ("MAX_ATTEMPTS", "nonsense"),
        ]);
        assert_eq!(c.api_token.as_deref(), Some("t"));
        assert!(!c.public_reads);
        assert_eq!(c.github_api_url, "http://127.0.0.1:9");
        assert_eq!(c.max_attempts, 5);
        assert_eq!(c.retry_delay_seconds(3), 0);
    }

    #[test]
    fn sign_in_needs_both_client_id_and_secret() {
        assert_eq!(cfg(&[("GITHUB_CLIENT_ID", "Iv1.x")]).oauth.github_client(), None);
        let c = cfg(&[
            ("GITHUB_CLIENT_ID", "Iv1.x"),
            ("GITHUB_CLIENT_SECRET", "s"),
            ("OAUTH_ADMINS", " carol, ,dave "),
            ("GITHUB_OAUTH_URL", "http://127.0.0.1:9/"),
        ]);
        assert_eq!(c.oauth.github_client(), Some(("Iv1.x", "s")));
        assert_eq!(c.oauth.admins, ["carol", "dave"]);
        assert_eq!(c.oauth.github_oauth_url, "http://127.0.0.1:9");
        assert_eq!(c.oauth.access_token_seconds, 900);
    }

    #[test]
    fn the_resume_delay_defaults_to_two_minutes_and_is_at_least_a_second() {
        assert_eq!(cfg(&[]).job_resume_seconds, 120);
        assert_eq!(cfg(&[("JOB_RESUME_SECONDS", "5")]).job_resume_seconds, 5);
        assert_eq!(cfg(&[("JOB_RESUME_SECONDS", "0")]).job_resume_seconds, 1);
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let c = cfg(&[("RETRY_BASE_DELAY_SECONDS", "2")]);
        let delays: Vec<u32> = (1..=5).map(|a| c.retry_delay_seconds(a)).collect();
        assert_eq!(delays, [2, 4, 8, 16, 32]);
        assert_eq!(c.retry_delay_seconds(40), 3600);
    }
}
