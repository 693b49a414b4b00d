//! GitHub repositories kept fresh by themselves: their registration and webhook deliveries (in the
//! catalog database, [`crate::store::Stores::catalog`]) and fetches queued behind a namespace's
//! active job (in the namespace's database, next to its jobs).
use serde::Deserialize;

use super::{Db, StoreResult};
use crate::store::args;

/// A registered repository. `webhook_secret` never leaves the worker: views do not carry it.
#[derive(Debug, Clone, Deserialize)]
pub struct GithubRepoRow {
    pub namespace: String,
    pub owner: String,
    pub name: String,
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    pub webhook_secret: Option<String>,
    pub sync_interval_minutes: Option<i64>,
    pub last_sync_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// The GitHub App installation the repository came from (migration 0201).
    #[serde(default)]
    pub installation_id: Option<i64>,
}

/// What an index request registers. `None` keeps what was registered before (so a plain re-index
/// does not drop the webhook secret or the schedule).
pub struct Registration<'a> {
    pub namespace: &'a str,
    pub owner: &'a str,
    pub name: &'a str,
    pub git_ref: Option<&'a str>,
    pub webhook_secret: Option<&'a str>,
    pub sync_interval_minutes: Option<u32>,
}

pub async fn register(db: &Db, r: &Registration<'_>, now: &str) -> StoreResult<()> {
    db.run(
        "INSERT INTO github_repos (namespace, owner, name, ref, webhook_secret, sync_interval_minutes, \
           last_sync_at, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?7) \
         ON CONFLICT(namespace) DO UPDATE SET ref = ?4, \
           webhook_secret = COALESCE(?5, webhook_secret), \
           sync_interval_minutes = COALESCE(?6, sync_interval_minutes), \
           last_sync_at = ?7, updated_at = ?7",
        &args![
            r.namespace,
            r.owner,
            r.name,
            r.git_ref,
            r.webhook_secret,
            r.sync_interval_minutes.map(i64::from),
            now
        ],
    )
    .await?;
    Ok(())
}

/// The registration of `owner/name`, matched without regard to ASCII case (GitHub's names are
/// case-insensitive and its payloads spell them as the repository's canonical name).
pub async fn find(db: &Db, owner: &str, name: &str) -> StoreResult<Option<GithubRepoRow>> {
    db.first(
        "SELECT * FROM github_repos WHERE lower(owner) = lower(?) AND lower(name) = lower(?) \
         ORDER BY namespace LIMIT 1",
        &args![owner, name],
    )
    .await
}

pub async fn get(db: &Db, namespace: &str) -> StoreResult<Option<GithubRepoRow>> {
    db.first("SELECT * FROM github_repos WHERE namespace = ?", &args![namespace]).await
}

/// Registrations with a sync interval, oldest sync first.
pub async fn scheduled(db: &Db) -> StoreResult<Vec<GithubRepoRow>> {
    db.all(
        "SELECT * FROM github_repos WHERE sync_interval_minutes IS NOT NULL AND sync_interval_minutes > 0 \
         ORDER BY COALESCE(last_sync_at, ''), namespace",
        &[],
    )
    .await
}

pub async fn touch_synced(db: &Db, namespace: &str, now: &str) -> StoreResult<()> {
    db.run("UPDATE github_repos SET last_sync_at = ? WHERE namespace = ?", &args![now, namespace]).await?;
    Ok(())
}

/// Register a repository an installation of the GitHub App can reach (its default branch, no
/// per-repository webhook secret: the app's deliveries are signed with the app's secret).
pub async fn register_installed(
    db: &Db,
    namespace: &str,
    owner: &str,
    name: &str,
    installation: i64,
    now: &str,
) -> StoreResult<()> {
    db.run(
        "INSERT INTO github_repos (namespace, owner, name, installation_id, last_sync_at, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?5) \
         ON CONFLICT(namespace) DO UPDATE SET installation_id = ?4, last_sync_at = ?5, updated_at = ?5",
        &args![namespace, owner, name, installation, now],
    )
    .await?;
    Ok(())
}

pub async fn unregister(db: &Db, namespace: &str) -> StoreResult<()> {
    db.run("DELETE FROM github_repos WHERE namespace = ?", &args![namespace]).await?;
    Ok(())
}

/// Record a delivery; `false` when that delivery id was already recorded (a redelivery).
pub async fn record_delivery(
    db: &Db,
    id: &str,
    namespace: &str,
    event: &str,
    outcome: &str,
    now: &str,
) -> StoreResult<bool> {
    let changed = db
        .run(
            "INSERT OR IGNORE INTO webhook_deliveries (id, namespace, event, outcome, received_at) \
             VALUES (?, ?, ?, ?, ?)",
            &args![id, namespace, event, outcome, now],
        )
        .await?;
    Ok(changed == 1)
}

pub async fn set_delivery_outcome(db: &Db, id: &str, outcome: &str) -> StoreResult<()> {
    db.run("UPDATE webhook_deliveries SET outcome = ? WHERE id = ?", &args![outcome, id]).await?;
    Ok(())
}

/// Forget a delivery whose handling failed, so GitHub's redelivery is handled again.
pub async fn forget_delivery(db: &Db, id: &str) -> StoreResult<()> {
    db.run("DELETE FROM webhook_deliveries WHERE id = ?", &args![id]).await?;
    Ok(())
}

/// Forget deliveries received before `before` (GitHub redelivers within days, not months).
pub async fn prune_deliveries(db: &Db, before: &str) -> StoreResult<usize> {
    db.run("DELETE FROM webhook_deliveries WHERE received_at < ?", &args![before]).await
}

/// A fetch waiting for the namespace's active job.
#[derive(Debug, Clone, Deserialize)]
pub struct PendingFetch {
    pub namespace: String,
    pub owner: String,
    pub name: String,
    #[serde(rename = "ref")]
    pub git_ref: Option<String>,
    pub trigger: String,
    pub after_job: String,
    pub requested_at: String,
}

/// Queue a fetch behind `after_job`; a later request for the same namespace replaces the earlier
/// one (one fetch of the newest state covers both).
pub async fn queue_fetch(db: &Db, p: &PendingFetch) -> StoreResult<()> {
    db.run(
        "INSERT INTO pending_fetches (namespace, owner, name, ref, trigger, after_job, requested_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
         ON CONFLICT(namespace) DO UPDATE SET ref = ?4, trigger = ?5, after_job = ?6, requested_at = ?7",
        &args![
            p.namespace.as_str(),
            p.owner.as_str(),
            p.name.as_str(),
            &p.git_ref,
            p.trigger.as_str(),
            p.after_job.as_str(),
            p.requested_at.as_str()
        ],
    )
    .await?;
    Ok(())
}

pub async fn pending_fetch(db: &Db, namespace: &str) -> StoreResult<Option<PendingFetch>> {
    db.first("SELECT * FROM pending_fetches WHERE namespace = ?", &args![namespace]).await
}

pub async fn pending_fetches(db: &Db) -> StoreResult<Vec<PendingFetch>> {
    db.all("SELECT * FROM pending_fetches ORDER BY requested_at, namespace", &[]).await
}

/// Take the queued fetch exactly as it was read: `true` only for the one caller that removed it
/// (a newer request in between replaced the row, and is taken by the next look).
pub async fn take_fetch(db: &Db, p: &PendingFetch) -> StoreResult<bool> {
    let changed = db
        .run(
            "DELETE FROM pending_fetches WHERE namespace = ? AND requested_at = ? AND after_job = ?",
            &args![p.namespace.as_str(), p.requested_at.as_str(), p.after_job.as_str()],
        )
        .await?;
    Ok(changed == 1)
}

/// Every active job of a database (the scheduled run looks at each).
pub async fn active_jobs(db: &Db) -> StoreResult<Vec<super::jobs::JobRow>> {
    db.all("SELECT * FROM repo_rag_index_job WHERE status IN ('QUEUED', 'RUNNING') ORDER BY queued_at", &[])
        .await
}
