//! A caller: one API key, checked once, whose calls are gated by its plan and metered
//! against its quota.
//!
//! The HTTP layer turns each request's key into a [`Caller`] with
//! [`JobListingsService::caller`] and makes the one call the request asks for through it.
//! Every answer carries the quota state its headers need: a [`Metered`] value, or a
//! [`Refused`] error with the quota as it stands after the refusal; an answer refused before
//! any call carries the quota as it stood when the key was checked
//! ([`Caller::quota_at_check`]).

use std::future::Future;
use std::sync::Arc;

use super::conditional::{Held, Read, Version};
use super::keys::KeyEntry;
use super::{
    Access, Catalog, JobListingsService, Metered, QuotaState, ServiceError, ServiceResult,
    Subscriptions,
};
use crate::domain::{ApiKey, KeyId, Plan};

/// A refused call of a valid key: why, and the key's quota after it (for the answer's
/// headers), when it could be read.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct Refused {
    /// Why the call was refused or failed.
    #[source]
    pub error: ServiceError,
    /// The caller's quota after the refusal: a refused call is never counted.
    pub quota: Option<QuotaState>,
}

impl From<Refused> for ServiceError {
    fn from(refused: Refused) -> Self {
        refused.error
    }
}

/// What a caller's call returns: the value with the quota after counting it, or a refusal.
pub type CallResult<T> = Result<Metered<T>, Refused>;

/// An authenticated API key. Cheap to clone; made by [`JobListingsService::caller`].
#[derive(Clone)]
pub struct Caller {
    /// Checks the key's rate and counts its calls.
    access: Arc<Access>,
    /// What the caller reads.
    pub(super) catalog: Arc<Catalog>,
    /// The caller's webhook subscriptions.
    pub(super) subscriptions: Arc<Subscriptions>,
    entry: Arc<KeyEntry>,
    /// Whether the request this caller serves took its rate-limit token already, when a
    /// frontend admitted it ([`Caller::rate_token_taken`]).
    rate_token_taken: bool,
    /// The key's meter when the key was checked: its period and the calls used in it
    /// ([`Caller::quota_at_check`]).
    checked: (u64, u64),
}

/// The key's id and plan; never its hash.
impl std::fmt::Debug for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caller")
            .field("key_id", &self.key_id())
            .field("plan", &self.plan())
            .finish_non_exhaustive()
    }
}

impl JobListingsService {
    /// Checks a key (issued by this service, not revoked, billing active) and returns the
    /// caller whose calls are then metered against it. Fails with
    /// [`ServiceError::InvalidKey`] or [`ServiceError::BillingInactive`].
    pub fn caller(&self, key: &ApiKey) -> ServiceResult<Caller> {
        let entry = self.inner.access.authenticate(key)?;
        Ok(Caller {
            access: self.inner.access.clone(),
            catalog: self.inner.catalog.clone(),
            subscriptions: self.inner.subscriptions.clone(),
            checked: entry.meter.snapshot(),
            entry,
            rate_token_taken: false,
        })
    }
}

impl Caller {
    /// The key record's id.
    pub fn key_id(&self) -> KeyId {
        self.entry.record.id
    }

    /// The key's plan.
    pub fn plan(&self) -> Plan {
        self.entry.record.plan
    }

    /// Fails with [`ServiceError::PlanUpgradeRequired`] unless the caller's plan includes
    /// webhooks.
    pub fn require_webhooks(&self) -> ServiceResult<()> {
        let plan = self.plan();
        if plan.includes_webhooks() {
            Ok(())
        } else {
            Err(ServiceError::PlanUpgradeRequired {
                required: Plan::LOWEST_WITH_WEBHOOKS,
                current: plan,
            })
        }
    }

    /// The caller's quota now, for the headers of an answer that is not counted. Not counted
    /// itself, nor rate limited.
    pub async fn quota(&self) -> ServiceResult<QuotaState> {
        Ok(self.access.usage_of(&self.entry).await?.1)
    }

    /// The caller's quota as it stood when its key was checked, read without I/O: for the
    /// headers of an answer refused before the service counted or read anything for it (a
    /// bad parameter, a path that does not exist), which carries the key's quota as every
    /// answer to a valid key does. With in-store metering it is the count this process last
    /// saw, exact unless other processes counted calls of the key since;
    /// [`Caller::quota`] reads the store.
    pub fn quota_at_check(&self) -> QuotaState {
        self.access.quota_at(&self.entry, self.checked)
    }

    /// `error`, with the quota as it stands, for a refusal before anything was counted.
    pub(super) async fn refused(&self, error: ServiceError) -> Refused {
        self.access.refused(&self.entry, error).await
    }

    /// Takes a token from the key's bucket when rate limits are configured: one per request
    /// of the key's, so it is held to its plan's rate whichever frontend the request came
    /// through. A frontend that answers requests of its own (the MCP endpoint's protocol
    /// messages) takes it here once per request, before anything else. Fails with
    /// [`ServiceError::RateLimited`]; nothing is counted against the quota either way.
    pub(crate) fn check_rate(&self) -> ServiceResult<()> {
        if self.rate_token_taken {
            return Ok(());
        }
        self.access.check_rate(&self.entry)
    }

    /// This caller for the call a request makes after [`Caller::check_rate`] took the
    /// request's token (an MCP tool call, made in this process for the MCP request that
    /// carries it): the call takes no second token, so one request is one token.
    #[cfg(feature = "mcp")]
    pub(crate) fn rate_token_taken(self) -> Self {
        Self {
            rate_token_taken: true,
            ..self
        }
    }

    /// Completes once the caller's key is no longer accepted: revoked, or its billing no
    /// longer active (changed in this process, or by another replica once the change reaches
    /// this one). For what outlives the request made with the key, an MCP event stream, which
    /// ends then.
    #[cfg(feature = "mcp")]
    pub(crate) fn lapsed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.entry.standing.lapsed()
    }

    /// The caller's usage report and quota, from one reading of the counter.
    pub(super) async fn usage_and_quota(
        &self,
    ) -> ServiceResult<(crate::domain::UsageReport, QuotaState)> {
        self.access.usage_of(&self.entry).await
    }

    /// Checks the rate limit, reserves one call, runs `work`, and counts the call only if it
    /// succeeds: with Q calls left, exactly Q succeed however many race.
    pub(super) async fn metered<T, F>(&self, work: impl FnOnce() -> F) -> CallResult<T>
    where
        F: Future<Output = ServiceResult<T>>,
    {
        if let Err(e) = self.check_rate() {
            return Err(self.refused(e).await);
        }
        self.counted(work).await
    }

    /// A read: checks the rate limit, runs `work`, and counts the call as
    /// [`Caller::metered`] does, unless the client holds the answer's version already
    /// ([`Held`]): then it is answered uncounted, even with the quota used up. A client that
    /// holds nothing ([`Held::Nothing`]) has its call reserved before the work, as any call;
    /// one that names what it holds has the work done first, so an answer it holds never
    /// touches the meter (with in-store metering, no write). A read has no effect to undo, so
    /// a refused reservation after it loses nothing but the work, and exactness holds: only
    /// what is counted is answered.
    pub(super) async fn read<T, F>(
        &self,
        held: &Held,
        work: impl FnOnce() -> F,
        version_of: impl FnOnce(&T) -> Version,
    ) -> CallResult<Read<T>>
    where
        F: Future<Output = ServiceResult<T>>,
    {
        let versioned = |value: T| {
            let version = version_of(&value);
            Read {
                value,
                version,
                held: false,
            }
        };
        if *held == Held::Nothing {
            return self
                .metered(|| async move { work().await.map(versioned) })
                .await;
        }
        if let Err(e) = self.check_rate() {
            return Err(self.refused(e).await);
        }
        let read = match work().await {
            Ok(value) => versioned(value),
            Err(e) => return Err(self.refused(e).await),
        };
        if held.holds(read.version) {
            return match self.quota().await {
                Ok(quota) => Ok(Metered {
                    value: Read { held: true, ..read },
                    quota,
                }),
                Err(error) => Err(Refused { error, quota: None }),
            };
        }
        self.counted(|| async move { Ok(read) }).await
    }

    /// Reserves one call, runs `work`, and counts the call only if it succeeds.
    async fn counted<T, F>(&self, work: impl FnOnce() -> F) -> CallResult<T>
    where
        F: Future<Output = ServiceResult<T>>,
    {
        self.access.counted(&self.entry, work).await
    }
}
