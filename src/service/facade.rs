//! The facade's public calls, each handed to the part that owns it.
//!
//! Shorthands for programs that hold a key and make one call with it:
//! `service.search_jobs(&key, query, held)` is
//! `service.caller(&key)?.search_jobs(query, held)`, with a refusal's quota state dropped. A
//! program that makes several calls for one key, or needs the quota of a refusal (the HTTP
//! layer does), keeps the [`Caller`](super::Caller) instead.

use std::sync::Arc;

use super::{
    CompanyDetail, CompanyPage, CompanyQuery, DeferredCompaction, Held, IndexOrigin, IngestOutcome,
    JobDetail, JobListingsService, JobPage, Metered, NewKey, NewWebhook, QuotaState, Read,
    ServiceResult, UnseenClosed, WebhookChange, WebhookCreation, WebhookHealth,
};
use crate::domain::{
    ApiKey, ApiKeyRecord, BillingStatus, Company, CompanyId, Delivery, IdempotencyKey, Job, JobId,
    KeyId, NewJob, PerPage, Plan, Subscription, SubscriptionStatus, UsageReport, WebhookId,
};
use crate::query::JobQuery;
use crate::store::{JobStore, Pruned};
use chrono::{DateTime, Utc};

/// Each shorthand: authenticate `key`, then make the caller's call of the same name.
macro_rules! shorthands {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {
        impl JobListingsService {
            $(
                $(#[$doc])*
                pub async fn $name(&self, key: &ApiKey $(, $arg: $ty)*) -> ServiceResult<Metered<$out>> {
                    Ok(self.caller(key)?.$name($($arg),*).await?)
                }
            )*
        }
    };
}

shorthands! {
    /// [`Caller::search_jobs`](super::Caller::search_jobs) for `key`.
    search_jobs(query: JobQuery, held: Held) -> Read<JobPage>;
    /// [`Caller::get_job`](super::Caller::get_job) for `key`.
    get_job(id: JobId, held: Held) -> Read<JobDetail>;
    /// [`Caller::similar_jobs`](super::Caller::similar_jobs) for `key`.
    similar_jobs(id: JobId, per_page: PerPage, held: Held) -> Read<JobPage>;
    /// [`Caller::list_companies`](super::Caller::list_companies) for `key`.
    list_companies(query: CompanyQuery, held: Held) -> Read<CompanyPage>;
    /// [`Caller::get_company`](super::Caller::get_company) for `key`.
    get_company(id: CompanyId, held: Held) -> Read<CompanyDetail>;
    /// [`Caller::create_webhook`](super::Caller::create_webhook) for `key`.
    create_webhook(new: NewWebhook) -> Subscription;
    /// [`Caller::create_webhook_idempotent`](super::Caller::create_webhook_idempotent) for `key`.
    create_webhook_idempotent(new: NewWebhook, idempotency_key: IdempotencyKey) -> WebhookCreation;
    /// [`Caller::list_webhooks`](super::Caller::list_webhooks) for `key`.
    list_webhooks() -> Vec<Subscription>;
    /// [`Caller::get_webhook`](super::Caller::get_webhook) for `key`.
    get_webhook(id: WebhookId) -> Subscription;
    /// [`Caller::webhook_deliveries`](super::Caller::webhook_deliveries) for `key`.
    webhook_deliveries(id: WebhookId) -> Vec<Delivery>;
    /// [`Caller::update_webhook`](super::Caller::update_webhook) for `key`.
    update_webhook(id: WebhookId, change: WebhookChange) -> Subscription;
    /// [`Caller::delete_webhook`](super::Caller::delete_webhook) for `key`.
    delete_webhook(id: WebhookId) -> ();
    /// [`Caller::test_webhook`](super::Caller::test_webhook) for `key`.
    test_webhook(id: WebhookId) -> Delivery;
}

impl JobListingsService {
    /// [`Caller::usage`](super::Caller::usage) for `key`: the usage report alone.
    pub async fn usage(&self, key: &ApiKey) -> ServiceResult<UsageReport> {
        Ok(self.caller(key)?.usage().await?.value)
    }

    /// [`Caller::quota`](super::Caller::quota) for `key`.
    pub async fn quota(&self, key: &ApiKey) -> ServiceResult<QuotaState> {
        self.caller(key)?.quota().await
    }
}

/// The catalog's calls: companies, jobs, the search index.
impl JobListingsService {
    /// Adds or updates companies. Their jobs' company names follow on the jobs' next ingest.
    pub async fn upsert_companies(&self, companies: Vec<Company>) -> ServiceResult<()> {
        self.inner.catalog.upsert_companies(companies).await
    }

    /// Adds or updates one company.
    pub async fn upsert_company(&self, company: Company) -> ServiceResult<()> {
        self.inner.catalog.upsert_company(company).await
    }

    /// Whether a company with this id is stored: for loaders that report what they created and
    /// what they updated. Not metered (an operator's call, not a customer's).
    pub fn has_company(&self, id: CompanyId) -> bool {
        self.inner.catalog.has_company(id)
    }

    /// How many companies are stored. Not metered.
    pub fn company_count(&self) -> usize {
        self.inner.catalog.company_count()
    }

    /// Adds or updates one job; see [`JobListingsService::upsert_jobs`].
    pub async fn upsert_job(&self, job: impl Into<NewJob>) -> ServiceResult<IngestOutcome> {
        self.inner
            .catalog
            .upsert_job(&self.inner.subscriptions, job)
            .await
    }

    /// Adds or updates jobs in one durable write. Each job's company must already exist. A job
    /// that becomes active for the first time logs a `job.new` event in the same transaction
    /// (when any subscription is active), one per job whatever the number of subscriptions:
    /// the delivery worker fans it out to the matching ones. All or nothing: one invalid job
    /// rejects the batch. A stored [`Job`] converts into the [`NewJob`] taken.
    pub async fn upsert_jobs(
        &self,
        jobs: Vec<impl Into<NewJob>>,
    ) -> ServiceResult<Vec<IngestOutcome>> {
        self.inner
            .catalog
            .upsert_jobs(&self.inner.subscriptions, jobs)
            .await
    }

    /// Adds or updates jobs as [`JobListingsService::upsert_jobs`] does, searchable at once,
    /// but durable only once [`JobListingsService::flush_jobs`] (or a later durable write)
    /// returns: for streams of batches that pay for durability once, at the end, before they
    /// acknowledge anything. A crash before then may lose the latest batches, never part of
    /// one.
    pub async fn upsert_jobs_deferred(
        &self,
        jobs: Vec<impl Into<NewJob>>,
    ) -> ServiceResult<Vec<IngestOutcome>> {
        self.inner
            .catalog
            .upsert_jobs_deferred(&self.inner.subscriptions, jobs)
            .await
    }

    /// Makes every job write so far durable.
    pub async fn flush_jobs(&self) -> ServiceResult<()> {
        self.inner.catalog.flush_jobs().await
    }

    /// Closes a job: it stays on record but is no longer searchable. A closed job is
    /// returned as it is, unchanged.
    pub async fn close_job(&self, id: JobId) -> ServiceResult<Job> {
        self.inner
            .catalog
            .close_job(&self.inner.subscriptions, id)
            .await
    }

    /// Closes the active jobs the crawler last sent strictly before `before` (their
    /// `last_seen_at`), reposts included, or on a `dry_run` only counts them. Each closing
    /// is a `job.closed`, as [`JobListingsService::close_job`] makes it.
    pub async fn close_unseen_jobs(
        &self,
        before: DateTime<Utc>,
        dry_run: bool,
    ) -> ServiceResult<UnseenClosed> {
        self.inner
            .catalog
            .close_unseen(&self.inner.subscriptions, before, dry_run)
            .await
    }

    /// Holds off index compaction until the returned guard is finished or dropped: for
    /// loading many jobs with [`JobListingsService::upsert_jobs`], which would otherwise
    /// compact the index every few percent of growth when the jobs come in no particular
    /// order. Searches stay exact meanwhile; [`DeferredCompaction::finish`] compacts once at
    /// the end. ([`JobListingsService::import_jobs`] needs none: it compacts once itself.)
    pub fn defer_index_compaction(&self) -> DeferredCompaction {
        self.inner.catalog.defer_index_compaction()
    }
    /// Deletes a job for good: from the store, durably, and from the search index at once,
    /// so no search answered after this returns lists it, and reading it answers not found.
    /// Unlike [`JobListingsService::close_job`], nothing of it stays on record.
    ///
    /// Webhook deliveries already made for it are still sent (each event carries its own copy
    /// of the job); a `job.new` not yet fanned out is sent to no one. On a shared store the
    /// other replicas drop it from their indexes as they follow the change feed.
    ///
    /// An unknown id is [`ServiceError::NotFound`](super::ServiceError::NotFound).
    pub async fn delete_job(&self, id: JobId) -> ServiceResult<()> {
        self.inner
            .catalog
            .delete_job(&self.inner.subscriptions, id)
            .await
    }

    /// Deletes a company, durably, and from the catalog at once.
    ///
    /// Refused with [`ServiceError::CompanyHasJobs`](super::ServiceError::CompanyHasJobs) while any active job names it: delete
    /// or close those first. Closed jobs do not hold it back: they stay on record with the
    /// company's name as it was when they were written, and a job's detail then shows no
    /// company record (`JobDetail::company` is `None`). Such a job can be written again
    /// only once its company is added again.
    ///
    /// An unknown id is [`ServiceError::NotFound`](super::ServiceError::NotFound). On a shared store the check is this
    /// replica's: another replica that has not yet seen the deletion may still take a job
    /// for the company meanwhile (it is then shown without a company record, as a closed one
    /// is).
    pub async fn delete_company(&self, id: CompanyId) -> ServiceResult<()> {
        self.inner.catalog.delete_company(id).await
    }
    /// Saves the search index to the store, so the next start loads it instead of indexing
    /// every job again; [`JobListingsService::shutdown`] does this, and the service every
    /// [`ServiceConfig::index_snapshot_interval`]. Does nothing when the store's snapshot
    /// already reflects every job, or the store keeps none (returns whether it saved one).
    /// Job writes wait while the index is copied out, not while the copy is written;
    /// searches never wait.
    ///
    /// [`ServiceConfig::index_snapshot_interval`]: super::ServiceConfig::index_snapshot_interval
    pub async fn save_index_snapshot(&self) -> ServiceResult<bool> {
        self.inner.catalog.save_index_snapshot().await
    }

    /// How the search index was made ready when the service started.
    pub fn index_origin(&self) -> IndexOrigin {
        self.inner.catalog.index_origin()
    }

    /// One stored job, active or closed, as stored.
    pub async fn stored_job(&self, id: JobId) -> ServiceResult<Arc<Job>> {
        self.inner.catalog.stored_job(id).await
    }

    /// One stored company.
    pub fn stored_company(&self, id: CompanyId) -> ServiceResult<Arc<Company>> {
        self.inner.catalog.stored_company(id)
    }
}

/// Access's calls: keys and their usage.
impl JobListingsService {
    /// Issues a key. The key itself is returned only here; the service keeps its hash.
    ///
    /// A billing anchor after now is refused: the key's first calls would fall in no period
    /// that has begun.
    pub async fn create_key(&self, new: NewKey) -> ServiceResult<(ApiKey, ApiKeyRecord)> {
        self.inner.access.create_key(new).await
    }

    /// Every issued key record, oldest first.
    pub fn list_keys(&self) -> Vec<ApiKeyRecord> {
        self.inner.access.list_keys()
    }

    /// Revokes a key for good.
    pub async fn revoke_key(&self, id: KeyId) -> ServiceResult<ApiKeyRecord> {
        self.inner.access.revoke_key(id).await
    }

    /// Sets a key's billing status (only `active` keys are accepted).
    pub async fn set_billing_status(
        &self,
        id: KeyId,
        status: BillingStatus,
    ) -> ServiceResult<ApiKeyRecord> {
        self.inner.access.set_billing_status(id, status).await
    }

    /// Moves a key to another plan; its usage in the current period is kept.
    pub async fn set_plan(&self, id: KeyId, plan: Plan) -> ServiceResult<ApiKeyRecord> {
        self.inner.access.set_plan(id, plan).await
    }

    /// One issued key's record (never the key itself: only its hash is kept).
    pub fn key_record(&self, id: KeyId) -> ServiceResult<ApiKeyRecord> {
        self.inner.access.key_record(id)
    }

    /// A key's usage in its current billing period, as its owner's `GET /usage` reports it.
    pub async fn key_usage(&self, id: KeyId) -> ServiceResult<UsageReport> {
        self.inner.access.key_usage(id).await
    }
}

/// The subscriptions' calls: every key's webhooks and the outbox.
impl JobListingsService {
    /// Removes deliveries settled longer ago than the retention window
    /// ([`DeliveryConfig::retention`](super::DeliveryConfig::retention)) and events created
    /// before it, and the log entries every subscription has been given; runs every
    /// `prune_interval`. Works in small batches off the async threads, so tenants' requests
    /// never wait behind it.
    pub async fn prune_outbox(&self) -> ServiceResult<Pruned> {
        self.inner.subscriptions.prune_outbox().await
    }
    /// Fans the outbox log out to the subscriptions now, until every one is caught up or
    /// holds its window of pending deliveries; returns how many deliveries it made. The
    /// delivery worker does this on its own; without a notifier (nothing sends), logged
    /// events wait in the log until this is called or a server with one runs.
    pub async fn fan_out_now(&self) -> ServiceResult<usize> {
        let inner = &self.inner;
        let jobs: Arc<dyn JobStore> = inner.catalog.store.clone();
        inner.subscriptions.fan_out_now(&inner.access, &jobs).await
    }

    /// Every webhook subscription of every key, oldest first, with its pending deliveries.
    pub async fn all_webhooks(&self) -> ServiceResult<Vec<WebhookHealth>> {
        self.inner.subscriptions.all_webhooks().await
    }

    /// One subscription with its pending deliveries.
    pub async fn webhook_health(&self, id: WebhookId) -> ServiceResult<WebhookHealth> {
        self.inner.subscriptions.webhook_health(id).await
    }

    /// Enables or disables any key's subscription, as its owner's `PATCH` does: a disabled one
    /// is queued nothing and its pending deliveries fail; enabled again, its failure streak
    /// starts over.
    pub async fn set_webhook_status(
        &self,
        id: WebhookId,
        status: SubscriptionStatus,
    ) -> ServiceResult<WebhookHealth> {
        self.inner
            .subscriptions
            .set_webhook_status(id, status)
            .await
    }
}
