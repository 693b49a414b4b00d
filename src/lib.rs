//! The edgerag Cloudflare Worker: the HTTP API (`/v1/*`, `/health`), the queue consumer that runs
//! the ingestion stages (fetch → chunk → embed → index), and the D1 / Vectorize / Workers AI glue.
//! Static assets (the preview page) are served by the platform; `wrangler.toml` routes only the
//! API paths to this code.
//!
//! | module | job |
//! | --- | --- |
//! | [`routes`] | HTTP routing and handlers |
//! | [`api`] | request / response types (→ `schemas/`) |
//! | [`ingest`] | paths, ignore rules, tar.gz reading |
//! | [`pipeline`] | queue stages, staging, job lifecycle and completion |
//! | [`search`] | the search ports over D1 / vectors / models |
//! | [`status`] | a repository's status and the repository list (HTTP and MCP) |
//! | [`repo_tools`] | the agent's read tools over one repository — symbols, references, line reads, files, outlines, grep, map, impact — through one table (HTTP and MCP) |
//! | [`store`] | typed D1 access; [`store::Stores`] routes each namespace to its database |
//! | `embed`, `vector`, `model_clients` | embedders, vector indexes, text generator / reranker (the ports' adapters) |
//! | [`bindings`], [`config`] | binding names, environment variables, configuration |
//! | [`auth`], [`ratelimit`] | who may do what (scoped keys, signed-in users), per-key rate limits |
//! | [`oauth`], [`signin`], [`github`] | sign-in: the OAuth 2.1 rules (pure), the flows, the GitHub adapter |
//! | [`background`] | work a request starts and does not wait for (`waitUntil`) |
//! | [`webhooks`] | GitHub webhook signatures and payloads (pure) |
//! | [`ledger`] | what each invocation used of Cloudflare's limits (`src/limits.json`) |
//!
//! Modules import downward only, by the levels of `ARCHITECTURE.md`'s table (HTTP → work →
//! stores / adapters → foundations → the pure crates); the `layering` test below checks the code
//! against that table.

pub mod admission;
pub mod api;
pub mod auth;
pub mod background;
pub mod bindings;
pub mod config;
pub mod embed;
pub mod error;
pub mod github;
pub mod http;
pub mod ingest;
pub mod keyword_copy;
pub mod ledger;
pub mod log;
pub mod model_clients;
pub mod oauth;
pub mod pipeline;
pub mod random;
pub mod ratelimit;
pub mod repo_tools;
pub mod routes;
pub mod search;
pub mod signin;
pub mod status;
pub mod store;
pub mod time;
pub mod vector;
pub mod webhooks;

use worker::{event, Context, Env, Request, Response, Result};

#[event(fetch)]
async fn fetch(#[allow(unused_mut)] mut req: Request, env: Env, ctx: Context) -> Result<Response> {
    #[cfg(feature = "test-hooks")]
    if let Some(response) = routes::test_hooks::unrecorded(&req, &env) {
        return response;
    }
    // Test routes (`/__test/*`) do a test's work in bulk: recorded apart from the API's requests.
    let kind = if req.path().starts_with("/__test/") { "test" } else { "http" };
    let invocation =
        ledger::begin(kind, ledger::http_label(&format!("{:?}", req.method()).to_uppercase(), &req.path()));
    // Everything the request does is charged to it alone.
    invocation.scope().within(respond(req, env, ctx, invocation.clone())).await
}

async fn respond(
    #[allow(unused_mut)] mut req: Request,
    env: Env,
    ctx: Context,
    invocation: ledger::Invocation,
) -> Result<Response> {
    // The test build's routes (`/__test/*`), each handler reading the body only of its own paths.
    #[cfg(feature = "test-hooks")]
    if let Some(response) = routes::test_hooks::handle(&mut req, &env).await {
        return response;
    }
    Ok(routes::handle(req, env, background::Background::new(ctx, invocation)).await)
}

/// The Cron Trigger (`[triggers] crons`): resume quiet jobs, replace stalled ones, start queued
/// fetches and re-sync repositories whose sync interval elapsed. Errors are logged: a failed run
/// is simply done again by the next one.
#[event(scheduled)]
async fn scheduled(event: worker::ScheduledEvent, env: Env, _ctx: worker::ScheduleContext) {
    let invocation = ledger::begin("scheduled", "scheduled".into());
    let run = invocation.scope().within(pipeline::sync::scheduled(&env, event.schedule())).await;
    if let Err(e) = run {
        log::error("scheduled_run_failed", &[("cron", &event.cron()), ("detail", &e.to_string())]);
    }
}

/// The layering rule, checked on the source: every `crate::<module>` a module names is on a lower
/// level, or on its own level (adapters, foundations) without the two naming each other.
#[cfg(test)]
mod layering {
    use std::collections::BTreeSet;

    /// Level of each top-level module: a module may name only modules of a lower level, or of
    /// its own level when that level is 2 or 1 (adapters and foundations use each other).
    const LEVELS: &[(&str, u8)] = &[
        ("routes", 4),
        ("pipeline", 3),
        ("search", 3),
        ("status", 3),
        ("repo_tools", 3),
        ("signin", 3),
        ("store", 2),
        ("embed", 2),
        ("vector", 2),
        ("keyword_copy", 2),
        ("ingest", 2),
        ("model_clients", 2),
        ("ratelimit", 2),
        ("github", 2),
        ("admission", 1),
        ("api", 1),
        ("auth", 1),
        ("oauth", 1),
        ("random", 1),
        ("webhooks", 1),
        ("bindings", 1),
        ("config", 1),
        ("error", 1),
        ("http", 1),
        ("time", 1),
        ("background", 1),
        ("log", 1),
        ("ledger", 1),
    ];

    fn level(module: &str) -> Option<u8> {
        LEVELS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
    }

    /// `(from, to)` for every `crate::to` named in `from`'s files.
    fn edges() -> BTreeSet<(String, String)> {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut out = BTreeSet::new();
        let mut stack = vec![src.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
                let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let rel = path.strip_prefix(&src).unwrap_or(&path);
                let top = rel.iter().next().and_then(|c| c.to_str()).unwrap_or("").trim_end_matches(".rs");
                if top == "lib" || path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
                let mut rest = text.as_str();
                while let Some(i) = rest.find("crate::") {
                    rest = &rest[i + "crate::".len()..];
                    let name: String =
                        rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    if level(&name).is_some() && name != top {
                        out.insert((top.to_string(), name));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn worker_modules_import_downward_only() {
        let edges = edges();
        assert!(
            edges.contains(&("routes".into(), "pipeline".into())),
            "the scan found no imports: {edges:?}"
        );
        for (from, to) in &edges {
            let (Some(a), Some(b)) = (level(from), level(to)) else {
                panic!("module {from} or {to} has no level in LEVELS");
            };
            assert!(a > b || (a == b && a <= 2), "{from} (level {a}) must not import {to} (level {b})");
            assert!(!edges.contains(&(to.clone(), from.clone())), "{from} and {to} import each other");
        }
    }

    fn read(path: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// `(module, level)` of every module named in `ARCHITECTURE.md`'s level table: the names in
    /// backquotes of each row's modules cell, outside parentheses (which name parts of a module),
    /// a folder's `/` dropped.
    fn documented_levels() -> BTreeSet<(String, u8)> {
        let text = read("ARCHITECTURE.md");
        let table = text
            .lines()
            .skip_while(|l| !l.starts_with("| level | modules |"))
            .skip(2)
            .take_while(|l| l.starts_with('|'));
        let mut out = BTreeSet::new();
        for row in table {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let level: u8 = cells[1]
                .split(' ')
                .next()
                .and_then(|l| l.parse().ok())
                .unwrap_or_else(|| panic!("ARCHITECTURE.md: a level table row without a level: {row}"));
            let mut modules = String::new();
            let mut depth = 0usize;
            for c in cells[2].chars() {
                match c {
                    '(' => depth += 1,
                    ')' => depth = depth.saturating_sub(1),
                    _ if depth == 0 => modules.push(c),
                    _ => {}
                }
            }
            for (i, name) in modules.split('`').enumerate() {
                if i % 2 == 1 {
                    out.insert((name.trim_end_matches('/').to_string(), level));
                }
            }
        }
        assert!(!out.is_empty(), "ARCHITECTURE.md has no level table (`| level | modules | job |`)");
        out
    }

    #[test]
    fn the_level_table_in_architecture_md_is_the_one_checked_here() {
        let checked: BTreeSet<(String, u8)> = LEVELS.iter().map(|(m, l)| (m.to_string(), *l)).collect();
        let documented = documented_levels();
        let only_here: Vec<_> = checked.difference(&documented).collect();
        let only_there: Vec<_> = documented.difference(&checked).collect();
        assert!(
            only_here.is_empty() && only_there.is_empty(),
            "ARCHITECTURE.md's level table and LEVELS disagree: only in LEVELS {only_here:?}, only in \
             ARCHITECTURE.md {only_there:?}"
        );
    }

    #[test]
    fn every_module_of_the_crate_has_a_level() {
        let text = read("src/lib.rs");
        let declared: BTreeSet<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("pub mod ").or_else(|| l.strip_prefix("mod ")))
            .filter_map(|l| l.strip_suffix(';'))
            .collect();
        let levelled: BTreeSet<&str> = LEVELS.iter().map(|(m, _)| *m).collect();
        assert_eq!(declared, levelled, "the modules of src/lib.rs and LEVELS");
    }
}
