//! A small blocking client for the edgerag HTTP API (ureq): requests and answers typed by the API
//! contract (`edgerag-api`), errors that keep the server's stable code, and the `--server` /
//! `--token` options every networked command shares.
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;

use edgerag_api::ErrorBody;

const DEFAULT_SERVER: &str = "http://127.0.0.1:8787";

/// `--server` and `--token`, flattened into each command that talks to a server.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Server options")]
pub struct ServerArgs {
    /// edgerag base URL.
    ///
    /// Defaults to $EDGERAG_URL, then $EDGERAG_SERVER, then http://127.0.0.1:8787 (the local dev
    /// server started by scripts/dev.sh).
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// Bearer token for writes, or for reads when the server does not allow public reads.
    ///
    /// Defaults to $EDGERAG_TOKEN. The local dev server accepts dev-token.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
}

impl ServerArgs {
    /// The options with the environment's defaults filled in (`env` is `std::env::var` outside
    /// tests).
    pub fn resolve(&self, env: impl Fn(&str) -> Option<String>) -> (String, Option<String>) {
        let non_empty = |v: Option<String>| v.filter(|s| !s.is_empty());
        let server = non_empty(self.server.clone())
            .or_else(|| non_empty(env("EDGERAG_URL")))
            .or_else(|| non_empty(env("EDGERAG_SERVER")))
            .unwrap_or_else(|| DEFAULT_SERVER.to_string());
        let token = non_empty(self.token.clone()).or_else(|| non_empty(env("EDGERAG_TOKEN")));
        (server, token)
    }

    pub fn client(&self) -> Client {
        let (server, token) = self.resolve(|k| std::env::var(k).ok());
        Client::new(&server, token)
    }
}

/// `OWNER/NAME`, parsed by clap from `--repo` or a positional.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    pub owner: String,
    pub name: String,
}

impl FromStr for Repo {
    type Err = String;

    fn from_str(value: &str) -> Result<Repo, String> {
        match value.split_once('/') {
            Some((o, n)) if !o.is_empty() && !n.is_empty() && !n.contains('/') => {
                Ok(Repo { owner: o.into(), name: n.into() })
            }
            _ => Err(format!("expected OWNER/NAME, got {value:?}")),
        }
    }
}

impl fmt::Display for Repo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

#[derive(Debug)]
pub enum ClientError {
    /// The server answered with an error status and (usually) `{error: {code, message}}`.
    Api { status: u16, code: String, message: String },
    /// No answer: connection refused, timeout, bad URL.
    Transport(String),
    /// An answer that is not the JSON we expect.
    Invalid(String),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Api { status, code, message } => write!(f, "{status} {code}: {message}"),
            ClientError::Transport(m) | ClientError::Invalid(m) => write!(f, "{m}"),
        }
    }
}

impl ClientError {
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Api { status, .. } => Some(*status),
            _ => None,
        }
    }
}

pub struct Client {
    base: String,
    token: Option<String>,
    agent: ureq::Agent,
}

impl Client {
    pub fn new(server: &str, token: Option<String>) -> Client {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(10))
            .timeout(Duration::from_secs(300))
            .build();
        Client { base: server.trim_end_matches('/').to_string(), token, agent }
    }

    pub fn server(&self) -> &str {
        &self.base
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn request(&self, method: &str, path: &str) -> ureq::Request {
        let mut req = self.agent.request(method, &self.url(path));
        if let Some(token) = &self.token {
            req = req.set("authorization", &format!("Bearer {token}"));
        }
        req
    }

    /// `GET path`, the body as text (for `--json`, which prints the server's answer unchanged).
    pub fn get_text(&self, path: &str) -> Result<String, ClientError> {
        text(self.request("GET", path).call())
    }

    /// `GET path?query`, the query's fields as parameters (each percent-encoded, absent ones
    /// left out), the body as text.
    pub fn get_query_text(&self, path: &str, query: &impl Serialize) -> Result<String, ClientError> {
        let mut req = self.request("GET", path);
        for (k, v) in query_pairs(query)? {
            req = req.query(&k, &v);
        }
        text(req.call())
    }

    pub fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        parse(&self.get_text(path)?)
    }

    /// `method path` with a JSON body, the answer as text.
    pub fn send_text(&self, method: &str, path: &str, body: &impl Serialize) -> Result<String, ClientError> {
        text(self.request(method, path).send_json(body))
    }

    pub fn send<T: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        body: &impl Serialize,
    ) -> Result<T, ClientError> {
        parse(&self.send_text(method, path, body)?)
    }
}

/// A query type's fields as URL parameters: strings as they are, numbers and booleans as written
/// in JSON; absent (`null` or skipped) fields are left out.
fn query_pairs(query: &impl Serialize) -> Result<Vec<(String, String)>, ClientError> {
    let invalid = || ClientError::Invalid("a query must be an object of plain values".into());
    let value = serde_json::to_value(query).map_err(|_| invalid())?;
    let serde_json::Value::Object(fields) = value else { return Err(invalid()) };
    fields
        .into_iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => Ok((k, s)),
            serde_json::Value::Number(_) | serde_json::Value::Bool(_) => Ok((k, v.to_string())),
            _ => Err(invalid()),
        })
        .collect()
}

/// Print a server's answer: its JSON unchanged with `json` (for scripts), else read into its type
/// and drawn by `render`.
pub fn print_answer<T: DeserializeOwned>(
    answer: Result<String, ClientError>,
    json: bool,
    render: impl FnOnce(&T) -> String,
) -> crate::Outcome {
    let failed = |e| crate::Failure::Failed(format!("{e}"));
    let text = answer.map_err(failed)?;
    if json {
        println!("{}", text.trim_end());
    } else {
        print!("{}", render(&parse(&text).map_err(failed)?));
    }
    Ok(())
}

pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T, ClientError> {
    serde_json::from_str(text)
        .map_err(|e| ClientError::Invalid(format!("unexpected answer from the server: {e}")))
}

fn text(result: Result<ureq::Response, ureq::Error>) -> Result<String, ClientError> {
    match result {
        Ok(response) => response
            .into_string()
            .map_err(|e| ClientError::Transport(format!("reading the answer failed: {e}"))),
        Err(ureq::Error::Status(status, response)) => {
            let body = response.into_string().unwrap_or_default();
            Err(match serde_json::from_str::<ErrorBody>(&body) {
                Ok(ErrorBody { error }) => {
                    ClientError::Api { status, code: error.code, message: error.message }
                }
                Err(_) => ClientError::Api {
                    status,
                    code: "HTTP_ERROR".into(),
                    message: if body.is_empty() { "(no message)".into() } else { body },
                },
            })
        }
        Err(ureq::Error::Transport(t)) => Err(ClientError::Transport(t.to_string())),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn repos_are_owner_slash_name() {
        assert_eq!("a/b".parse(), Ok(Repo { owner: "a".into(), name: "b".into() }));
        for bad in ["ab", "/b", "a/", "a/b/c"] {
            assert!(bad.parse::<Repo>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_server_comes_from_the_flag_then_the_environment_then_the_local_default() {
        let none = ServerArgs { server: None, token: None };
        assert_eq!(none.resolve(|_| None), (DEFAULT_SERVER.to_string(), None));
        let env = |k: &str| match k {
            "EDGERAG_URL" => Some(String::new()),
            "EDGERAG_SERVER" => Some("http://s:1".to_string()),
            "EDGERAG_TOKEN" => Some("t".to_string()),
            _ => None,
        };
        assert_eq!(none.resolve(env), ("http://s:1".to_string(), Some("t".to_string())));
        let flags = ServerArgs { server: Some("http://f:2".into()), token: Some("x".into()) };
        assert_eq!(flags.resolve(env), ("http://f:2".to_string(), Some("x".to_string())));
    }

    #[test]
    fn a_typed_query_becomes_its_parameters_without_the_absent_ones() {
        let query = edgerag_api::ListFilesQuery {
            prefix: Some("src/api".into()),
            language: Some("rust".into()),
            limit: Some(10),
            max_tokens: Some(500),
            ..Default::default()
        };
        let mut pairs = query_pairs(&query).unwrap();
        pairs.sort();
        let want = [("language", "rust"), ("limit", "10"), ("maxTokens", "500"), ("prefix", "src/api")];
        assert_eq!(pairs, want.map(|(k, v)| (k.to_string(), v.to_string())));
    }
}
