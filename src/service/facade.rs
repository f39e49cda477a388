//! Shorthands for programs that hold a key and make one call with it:
//! `service.search_jobs(&key, query, held)` is
//! `service.caller(&key)?.search_jobs(query, held)`, with a refusal's quota state dropped. A program that makes several calls for one key, or needs
//! the quota of a refusal (the HTTP layer does), keeps the [`Caller`](super::Caller) instead.

use super::{
    CompanyDetail, CompanyPage, CompanyQuery, Held, JobDetail, JobListingsService, JobPage,
    Metered, NewWebhook, QuotaState, Read, ServiceResult, WebhookChange, WebhookCreation,
};
use crate::domain::{
    ApiKey, CompanyId, Delivery, IdempotencyKey, JobId, Subscription, UsageReport, WebhookId,
};
use crate::query::JobQuery;

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
