//! `POST /v1/webhooks/github`: GitHub push webhooks. Authenticated by `X-Hub-Signature-256`
//! against the repository's secret (set by `POST /v1/repos/{owner}/{name}/index`
//! `{webhookSecret}`), not by API keys. A verified push to the tracked ref re-indexes it through
//! the same path as the API ([`crate::pipeline::sync::request_fetch`]); a redelivered
//! `X-GitHub-Delivery` is answered `duplicate` and does nothing.
use worker::{Env, Request, Response};

use crate::api::{WebhookOutcome, WebhookResponse};
use crate::config::Config;
use crate::error::ApiError;
use crate::http::{content_type, read_body, reply, ApiResult};
use crate::pipeline::lifecycle::Repo;
use crate::pipeline::sync::{self, Fetch, Trigger};
use crate::pipeline::Ctx;
use crate::store::github;
use crate::store::jobs;
use crate::store::Stores;
use crate::webhooks::{self, AppDecision, Decision, Payload, SignatureError};

/// GitHub caps webhook payloads at 25 MB.
const MAX_PAYLOAD_BYTES: usize = 25 * 1024 * 1024;

fn header(req: &Request, name: &str) -> Option<String> {
    req.headers().get(name).ok().flatten().map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

pub async fn github(req: &mut Request, env: &Env, cfg: &Config) -> ApiResult<Response> {
    let event = header(req, "x-github-event").ok_or_else(|| {
        ApiError::bad_request(
            "WEBHOOK_EVENT_MISSING",
            "missing X-GitHub-Event header (send GitHub webhooks here)",
        )
    })?;
    let delivery = header(req, "x-github-delivery").ok_or_else(|| {
        ApiError::bad_request("WEBHOOK_DELIVERY_MISSING", "missing X-GitHub-Delivery header")
    })?;
    if delivery.len() > 128 {
        return Err(ApiError::bad_request("WEBHOOK_DELIVERY_INVALID", "X-GitHub-Delivery is over 128 bytes"));
    }
    let signature = header(req, "x-hub-signature-256").ok_or_else(|| {
        ApiError::new(
            401,
            "WEBHOOK_SIGNATURE_MISSING",
            "missing X-Hub-Signature-256 header: set a secret on the GitHub webhook",
        )
    })?;
    let ct = content_type(req);
    if ct != "application/json" {
        return Err(ApiError::new(
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            format!("set the GitHub webhook's content type to application/json (got {ct:?})"),
        ));
    }
    let body = read_body(req, MAX_PAYLOAD_BYTES).await?;
    let payload: Payload = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request("INVALID_JSON", format!("the payload is not JSON: {e}")))?;
    // The GitHub App's deliveries are signed with the app's secret, not a repository's.
    if let (Some(installation), Some(secret)) =
        (payload.installation.as_ref().map(|i| i.id), cfg.github_app_webhook_secret.as_deref())
    {
        let delivery = Delivery { event: &event, id: &delivery, signature: &signature, body: &body };
        return app_delivery(env, &delivery, &payload, installation, secret).await;
    }
    let (owner, name) = payload.repository().ok_or_else(|| {
        ApiError::bad_request(
            "WEBHOOK_NO_REPOSITORY",
            "the payload names no repository (repository.full_name)",
        )
    })?;
    let stores = Stores::from_env(env)?;
    let catalog = stores.catalog().clone();
    let Some(registered) = github::find(&catalog, &owner, &name).await? else {
        return Err(ApiError::not_found(
            "REPO_NOT_REGISTERED",
            format!("{owner}/{name} is not registered: POST /v1/repos/{owner}/{name}/index first"),
        ));
    };
    let Some(secret) = registered.webhook_secret.as_deref() else {
        return Err(ApiError::new(
            403,
            "WEBHOOK_NOT_CONFIGURED",
            format!("{owner}/{name} has no webhook secret: set webhookSecret on its index request"),
        ));
    };
    match webhooks::verify(secret.as_bytes(), &body, &signature) {
        Ok(()) => {}
        Err(SignatureError::Malformed) => {
            return Err(ApiError::new(
                401,
                "WEBHOOK_SIGNATURE_INVALID",
                "X-Hub-Signature-256 is not `sha256=<64 hex digits>`",
            ))
        }
        Err(SignatureError::Mismatch) => {
            return Err(ApiError::new(
                401,
                "WEBHOOK_SIGNATURE_INVALID",
                "X-Hub-Signature-256 does not match the payload under the repository's secret",
            ))
        }
    }
    let namespace = registered.namespace.clone();
    let answer = |outcome, reason: Option<String>, job| WebhookResponse {
        delivery: delivery.clone(),
        event: event.clone(),
        namespace: namespace.clone(),
        outcome,
        reason,
        job,
        repositories: Vec::new(),
    };
    let now = crate::time::now_iso();
    if !github::record_delivery(&catalog, &delivery, &namespace, &event, "received", &now).await? {
        let reason = format!("delivery {delivery} was handled before");
        return reply(200, &answer(WebhookOutcome::Duplicate, Some(reason), None));
    }
    let reason = match webhooks::decide(&event, &payload, registered.git_ref.as_deref()) {
        Decision::Ignore(reason) => reason,
        Decision::Fetch => {
            let repo =
                Repo { owner: &registered.owner, name: &registered.name, namespace: namespace.clone() };
            let fetched = async {
                let ctx = Ctx::for_namespace(env, &namespace, true).await?;
                let (job, fetch) =
                    sync::request_fetch(&ctx, &repo, registered.git_ref.as_deref(), Trigger::Webhook).await?;
                Ok::<_, ApiError>((jobs::load_view(&ctx.db, &job).await?, fetch))
            }
            .await;
            let (view, fetch) = match fetched {
                Ok(done) => done,
                Err(e) => {
                    // Let GitHub's redelivery of this delivery be handled again.
                    github::forget_delivery(&catalog, &delivery).await?;
                    return Err(e);
                }
            };
            let outcome = match fetch {
                Fetch::Started => WebhookOutcome::Queued,
                Fetch::Joined => WebhookOutcome::Joined,
                Fetch::QueuedAfter => WebhookOutcome::QueuedAfter,
            };
            let label = match outcome {
                WebhookOutcome::Joined => "joined",
                WebhookOutcome::QueuedAfter => "queuedAfter",
                _ => "queued",
            };
            github::set_delivery_outcome(&catalog, &delivery, label).await?;
            crate::log::info(
                "webhook_push",
                &[("namespace", &namespace), ("delivery", &delivery), ("outcome", label), ("job", &view.id)],
            );
            return reply(202, &answer(outcome, None, Some(view)));
        }
    };
    github::set_delivery_outcome(&catalog, &delivery, "ignored").await?;
    reply(200, &answer(WebhookOutcome::Ignored, Some(reason), None))
}

/// One delivery's headers and body.
struct Delivery<'a> {
    event: &'a str,
    id: &'a str,
    signature: &'a str,
    body: &'a [u8],
}

fn signature_error(e: SignatureError, whose: &str) -> ApiError {
    let message = match e {
        SignatureError::Malformed => "X-Hub-Signature-256 is not `sha256=<64 hex digits>`".to_string(),
        SignatureError::Mismatch => format!("X-Hub-Signature-256 does not match the payload under {whose}"),
    };
    ApiError::new(401, "WEBHOOK_SIGNATURE_INVALID", message)
}

/// A delivery of the GitHub App (`installation`, `installation_repositories`, `push`): verified
/// with `GITHUB_APP_WEBHOOK_SECRET`, recorded once per `X-GitHub-Delivery`, then repositories
/// are added (registered with their installation, indexed), removed (deleted from the index) or
/// re-fetched.
async fn app_delivery(
    env: &Env,
    d: &Delivery<'_>,
    payload: &Payload,
    installation: i64,
    secret: &str,
) -> ApiResult<Response> {
    webhooks::verify(secret.as_bytes(), d.body, d.signature)
        .map_err(|e| signature_error(e, "the app's webhook secret"))?;
    let stores = Stores::from_env(env)?;
    let catalog = stores.catalog().clone();
    let scope = format!("installation:{installation}");
    let answer = |outcome, reason: Option<String>, job, repositories: Vec<String>| WebhookResponse {
        delivery: d.id.to_string(),
        event: d.event.to_string(),
        namespace: scope.clone(),
        outcome,
        reason,
        job,
        repositories,
    };
    let now = crate::time::now_iso();
    if !github::record_delivery(&catalog, d.id, &scope, d.event, "received", &now).await? {
        let reason = format!("delivery {} was handled before", d.id);
        return reply(200, &answer(WebhookOutcome::Duplicate, Some(reason), None, Vec::new()));
    }
    let handled = async {
        match webhooks::decide_app(d.event, payload) {
            AppDecision::Add(repos) => {
                let mut names = Vec::new();
                for (owner, name) in repos {
                    if crate::http::check_repo_part("owner", &owner).is_err()
                        || crate::http::check_repo_part("name", &name).is_err()
                    {
                        continue;
                    }
                    let namespace = crate::store::namespaces::namespace_id(&owner, &name);
                    github::register_installed(&catalog, &namespace, &owner, &name, installation, &now)
                        .await?;
                    let ctx = Ctx::for_namespace(env, &namespace, true).await?;
                    let repo = Repo { owner: &owner, name: &name, namespace: namespace.clone() };
                    sync::request_fetch(&ctx, &repo, None, Trigger::Webhook).await?;
                    names.push(format!("{owner}/{name}"));
                }
                crate::log::info(
                    "app_repositories_added",
                    &[("installation", &scope), ("count", &names.len().to_string())],
                );
                Ok::<_, ApiError>((202, answer(WebhookOutcome::Added, None, None, names), "added"))
            }
            AppDecision::Remove(repos) => {
                let mut names = Vec::new();
                for (owner, name) in repos {
                    let namespace = crate::store::namespaces::namespace_id(&owner, &name);
                    let registered = github::get(&catalog, &namespace).await?;
                    // Only what this installation added: a repository indexed by other means stays.
                    if registered.as_ref().and_then(|r| r.installation_id) != Some(installation) {
                        continue;
                    }
                    let ctx = Ctx::for_namespace(env, &namespace, false).await?;
                    crate::pipeline::remove::repository(&ctx, &namespace).await?;
                    github::unregister(&catalog, &namespace).await?;
                    names.push(format!("{owner}/{name}"));
                }
                crate::log::info(
                    "app_repositories_removed",
                    &[("installation", &scope), ("count", &names.len().to_string())],
                );
                Ok((200, answer(WebhookOutcome::Removed, None, None, names), "removed"))
            }
            AppDecision::Push => {
                let Some((owner, name)) = payload.repository() else {
                    return Ok((
                        200,
                        answer(
                            WebhookOutcome::Ignored,
                            Some("the push names no repository".into()),
                            None,
                            Vec::new(),
                        ),
                        "ignored",
                    ));
                };
                let Some(registered) = github::find(&catalog, &owner, &name).await? else {
                    let reason = format!("{owner}/{name} is not indexed");
                    return Ok((
                        200,
                        answer(WebhookOutcome::Ignored, Some(reason), None, Vec::new()),
                        "ignored",
                    ));
                };
                match webhooks::decide("push", payload, registered.git_ref.as_deref()) {
                    Decision::Ignore(reason) => {
                        Ok((200, answer(WebhookOutcome::Ignored, Some(reason), None, Vec::new()), "ignored"))
                    }
                    Decision::Fetch => {
                        let namespace = registered.namespace.clone();
                        let ctx = Ctx::for_namespace(env, &namespace, true).await?;
                        let repo = Repo {
                            owner: &registered.owner,
                            name: &registered.name,
                            namespace: namespace.clone(),
                        };
                        let (job, fetch) =
                            sync::request_fetch(&ctx, &repo, registered.git_ref.as_deref(), Trigger::Webhook)
                                .await?;
                        let view = jobs::load_view(&ctx.db, &job).await?;
                        let (outcome, label) = match fetch {
                            Fetch::Started => (WebhookOutcome::Queued, "queued"),
                            Fetch::Joined => (WebhookOutcome::Joined, "joined"),
                            Fetch::QueuedAfter => (WebhookOutcome::QueuedAfter, "queuedAfter"),
                        };
                        Ok((202, answer(outcome, None, Some(view), vec![format!("{owner}/{name}")]), label))
                    }
                }
            }
            AppDecision::Ignore(reason) => {
                Ok((200, answer(WebhookOutcome::Ignored, Some(reason), None, Vec::new()), "ignored"))
            }
        }
    }
    .await;
    match handled {
        Ok((status, body, label)) => {
            github::set_delivery_outcome(&catalog, d.id, label).await?;
            reply(status, &body)
        }
        Err(e) => {
            // Let GitHub's redelivery of this delivery be handled again.
            github::forget_delivery(&catalog, d.id).await?;
            Err(e)
        }
    }
}
