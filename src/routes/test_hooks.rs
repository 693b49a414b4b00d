//! The test build's routes (`/__test/*`, cargo feature `test-hooks`, served only with
//! `EDGERAG_TEST_ROUTES=1`): one router over the handlers each area keeps beside the code it
//! checks. Every handler answers only its own paths; a path none of them takes goes on to the
//! API's router ([`super::handle`]), as before the test build.
//!
//! | path | handler |
//! | --- | --- |
//! | `/__test/ledger` | [`crate::ledger::handle`], before the request is recorded ([`unrecorded`]) |
//! | `/__test/faults/*` | [`crate::pipeline::faults::handle`] |
//! | `/__test/graph/*` | [`crate::pipeline::graph_check::handle`] |
//! | `/__test/vectors/*`, `/__test/embed` | [`crate::vector::test_routes::handle`] |
//! | `/__test/search/*` | [`crate::search::suite::handle`] |
//! | `/__test/repo-tools/*` | [`crate::repo_tools::suite::handle`] |
//! | `/__test/oauth/*` | [`crate::signin::handle_test`] |
use worker::{Env, Request, Response, Result};

/// `/__test/ledger`: answered before the request's invocation is recorded, so that reading or
/// clearing the ledger does not show in it.
pub fn unrecorded(req: &Request, env: &Env) -> Option<Result<Response>> {
    crate::ledger::handle(req, env)
}

/// Every other test route, by the first segment after `/__test/`; `None` when the path is not
/// one (or test routes are off).
pub async fn handle(req: &mut Request, env: &Env) -> Option<Result<Response>> {
    let path = req.path();
    let area = path.strip_prefix("/__test/")?.split('/').next().unwrap_or_default();
    match area {
        "faults" => crate::pipeline::faults::handle(req, env).await,
        "graph" => crate::pipeline::graph_check::handle(req, env).await,
        "vectors" | "embed" => crate::vector::test_routes::handle(req, env).await,
        "search" => crate::search::suite::handle(req, env).await,
        "repo-tools" => crate::repo_tools::suite::handle(req, env).await,
        "oauth" => crate::signin::handle_test(req, env).await,
        _ => None,
    }
}
