use chrono::{DateTime, Utc};

use super::metrics::StoreWrite;
use super::{CallResult, Caller, Metered, ServiceError, ServiceResult, Subscriptions};
use crate::domain::{
    CallbackUrl, ChangeKind, Confidence, Country, Currency, Delivery, DomainTag, IdempotencyKey,
    KeyId, PlacesAndPay, Seniority, Subscription, SubscriptionStatus, WebhookId, WebhookSecret,
};
use crate::query::Near;

/// What a caller asks for when registering a webhook. Besides the spec's `domain_filters` and
/// `remote_only`, a subscription may carry the other `GET /jobs` filters as a saved search.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct NewWebhook {
    /// Where notifications are POSTed.
    pub callback_url: CallbackUrl,
    /// Domain tags to match; empty means every domain.
    pub domain_filters: Vec<DomainTag>,
    /// Only remote jobs when true.
    pub remote_only: bool,
    /// Any of these seniority levels (empty: any).
    pub seniority: Vec<Seniority>,
    /// Every word must be a word of the role, company name or post text.
    pub q: Option<String>,
    /// Every word must be a word of the company name.
    pub company: Option<String>,
    /// Confidence at least this.
    pub min_confidence: Option<Confidence>,
    /// Places and pay, as `GET /jobs` takes them.
    pub places: PlacesAndPay,
    /// The events to send (see [`Subscription::event_types`]); empty is the default,
    /// `job.new` only.
    pub event_types: Vec<ChangeKind>,
}

setters!(NewWebhook {
    places: PlacesAndPay,
    domain_filters: Vec<DomainTag>,
    remote_only: bool,
    seniority: Vec<Seniority>,
    event_types: Vec<ChangeKind>,
});
setters!(@some NewWebhook {
    q: String,
    company: String,
    min_confidence: Confidence,
});

impl NewWebhook {
    /// A subscription to every new job, sent to `callback_url`.
    pub fn new(callback_url: CallbackUrl) -> Self {
        Self {
            callback_url,
            domain_filters: Vec::new(),
            remote_only: false,
            seniority: Vec::new(),
            q: None,
            company: None,
            min_confidence: None,
            places: PlacesAndPay::default(),
            event_types: Vec::new(),
        }
    }
}

/// What [`JobListingsService::update_webhook`](super::JobListingsService::update_webhook) changes in a subscription; a field left `None`
/// stays as it is.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct WebhookChange {
    /// A new callback URL.
    pub callback_url: Option<CallbackUrl>,
    /// New domain tags (empty: every domain).
    pub domain_filters: Option<Vec<DomainTag>>,
    /// Whether only remote jobs are sent.
    pub remote_only: Option<bool>,
    /// New seniority levels (empty: any).
    pub seniority: Option<Vec<Seniority>>,
    /// The events to send from now on (empty: the default, `job.new` only).
    pub event_types: Option<Vec<ChangeKind>>,
    /// New `q` words; `Some(None)` clears them.
    pub q: Option<Option<String>>,
    /// New company words; `Some(None)` clears them.
    pub company: Option<Option<String>>,
    /// A new lowest confidence; `Some(None)` clears it.
    pub min_confidence: Option<Option<Confidence>>,
    /// New countries (empty: anywhere).
    pub country: Option<Vec<Country>>,
    /// A new circle; `Some(None)` clears it.
    pub near: Option<Option<Near>>,
    /// A new country remote applicants live in; `Some(None)` clears it.
    pub remote_from: Option<Option<Country>>,
    /// A new currency, with or without a yearly pay floor in it; `Some(None)` clears both.
    pub min_salary: Option<Option<(Option<u64>, Currency)>>,
    /// `Active` enables a disabled subscription again (its failure streak starts over);
    /// `Disabled` stops it: meanwhile new jobs are not queued for it and its pending
    /// deliveries fail.
    pub status: Option<SubscriptionStatus>,
}

setters!(@some WebhookChange {
    callback_url: CallbackUrl,
    domain_filters: Vec<DomainTag>,
    remote_only: bool,
    seniority: Vec<Seniority>,
    event_types: Vec<ChangeKind>,
    q: Option<String>,
    company: Option<String>,
    min_confidence: Option<Confidence>,
    country: Vec<Country>,
    near: Option<Near>,
    remote_from: Option<Country>,
    min_salary: Option<(Option<u64>, Currency)>,
    status: SubscriptionStatus,
});

impl WebhookChange {
    /// Applies the change as of `now`; `disabled_because` is kept as the reason of a change to
    /// `Disabled`.
    pub(super) fn apply_to(
        self,
        sub: &mut Subscription,
        now: DateTime<Utc>,
        disabled_because: &str,
    ) {
        if let Some(url) = self.callback_url {
            sub.callback_url = url;
        }
        if let Some(domains) = self.domain_filters {
            sub.domain_filters = sorted_unique(domains);
        }
        if let Some(remote_only) = self.remote_only {
            sub.remote_only = remote_only;
        }
        if let Some(levels) = self.seniority {
            sub.seniority = sorted_unique(levels);
        }
        if let Some(kinds) = self.event_types {
            sub.event_types = event_types(kinds);
        }
        if let Some(q) = self.q {
            sub.q = q;
        }
        if let Some(company) = self.company {
            sub.company = company;
        }
        if let Some(min_confidence) = self.min_confidence {
            sub.min_confidence = min_confidence;
        }
        if let Some(countries) = self.country {
            sub.places.country = sorted_unique(countries);
        }
        if let Some(near) = self.near {
            sub.places.near = near;
        }
        if let Some(country) = self.remote_from {
            sub.places.remote_from = country;
        }
        if let Some(floor) = self.min_salary {
            sub.places.min_salary = floor.and_then(|(amount, _)| amount);
            sub.places.salary_currency = floor.map(|(_, currency)| currency);
        }
        match self.status {
            Some(SubscriptionStatus::Active) if sub.status != SubscriptionStatus::Active => {
                sub.status = SubscriptionStatus::Active;
                sub.disabled_reason = None;
                sub.failing_since = None;
                sub.enabled_again_at = Some(now);
            }
            Some(SubscriptionStatus::Disabled) if sub.status != SubscriptionStatus::Disabled => {
                sub.status = SubscriptionStatus::Disabled;
                sub.disabled_reason = Some(disabled_because.to_owned());
            }
            _ => {}
        }
    }
}

/// A digest of the fields a registration asks for (lists sorted and without repeats), to
/// tell a replay of it from another request under the same idempotency key.
fn request_digest(sub: &Subscription) -> String {
    use base64::Engine;
    use sha2::{Digest, Sha256};
    let asked = serde_json::json!([
        sub.callback_url,
        sub.domain_filters,
        sub.remote_only,
        sub.seniority,
        sub.q,
        sub.company,
        sub.min_confidence,
    ]);
    // Only when not the default, so digests of registrations from before there was a
    // choice stay what they were.
    let asked = match sub.event_types == ChangeKind::webhook_default() {
        true => asked,
        false => serde_json::json!([asked, sub.event_types]),
    };
    let asked = match sub.places.is_empty() {
        true => asked,
        false => serde_json::json!([asked, sub.places]),
    };
    base64::engine::general_purpose::STANDARD.encode(Sha256::digest(asked.to_string().as_bytes()))
}

/// The events a subscription asks for, sorted and without repeats; none asked is the default.
fn event_types(kinds: Vec<ChangeKind>) -> Vec<ChangeKind> {
    match kinds.is_empty() {
        true => ChangeKind::webhook_default(),
        false => sorted_unique(kinds),
    }
}

/// A subscription's list filters are kept sorted and without repeats, so that equal filters
/// compare equal.
fn sorted_unique<T: Ord>(mut labels: Vec<T>) -> Vec<T> {
    labels.sort();
    labels.dedup();
    labels
}

/// What [`Caller::create_webhook_idempotent`] did.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct WebhookCreation {
    /// The subscription, with its signing secret.
    pub subscription: Subscription,
    /// An earlier request with the same idempotency key registered it; this one registered
    /// nothing.
    pub replayed: bool,
}

impl Caller {
    /// Registers a webhook subscription (Agent Pro or higher). The returned subscription carries
    /// its signing secret, which is shown to the caller only now.
    pub async fn create_webhook(&self, new: NewWebhook) -> CallResult<Subscription> {
        let created = self.register_webhook(new, None).await?;
        Ok(Metered {
            value: created.value.subscription,
            quota: created.quota,
        })
    }

    /// [`Caller::create_webhook`] under an idempotency key: the first request with
    /// `idempotency_key` registers a subscription; a repeat of it from the same API key (the
    /// same fields) answers with that subscription, secret included, for as long as it exists,
    /// so a client whose answer was lost can retry without registering twice. The same key
    /// with different fields is refused with [`ServiceError::IdempotencyKeyReused`].
    pub async fn create_webhook_idempotent(
        &self,
        new: NewWebhook,
        idempotency_key: IdempotencyKey,
    ) -> CallResult<WebhookCreation> {
        self.register_webhook(new, Some(idempotency_key)).await
    }

    async fn register_webhook(
        &self,
        new: NewWebhook,
        idempotency_key: Option<IdempotencyKey>,
    ) -> CallResult<WebhookCreation> {
        let subscriptions = &self.subscriptions;
        let allowed = self
            .require_webhooks()
            .and_then(|()| subscriptions.check_callback(&new.callback_url));
        if let Err(e) = allowed {
            return Err(self.refused(e).await);
        }
        self.metered(|| subscriptions.register(self.key_id(), new, idempotency_key))
            .await
    }

    /// The caller's webhook subscriptions, oldest first.
    pub async fn list_webhooks(&self) -> CallResult<Vec<Subscription>> {
        self.metered(|| async { Ok(self.subscriptions.owned_by(self.key_id())) })
            .await
    }

    /// One of the caller's subscriptions; another key's is reported as not found.
    pub async fn get_webhook(&self, id: WebhookId) -> CallResult<Subscription> {
        self.metered(|| async { self.subscriptions.own_webhook(self.key_id(), id) })
            .await
    }

    /// Recent deliveries of one of the caller's subscriptions, newest first.
    pub async fn webhook_deliveries(&self, id: WebhookId) -> CallResult<Vec<Delivery>> {
        self.metered(|| self.subscriptions.deliveries_of(self.key_id(), id))
            .await
    }

    /// Changes one of the caller's subscriptions (Agent Pro or higher): its callback URL, its
    /// filters, or its status, which enables a disabled subscription again without a new id or
    /// secret. Its secret and delivery history stay.
    pub async fn update_webhook(
        &self,
        id: WebhookId,
        change: WebhookChange,
    ) -> CallResult<Subscription> {
        let subscriptions = &self.subscriptions;
        let allowed = self
            .require_webhooks()
            .and_then(|()| match &change.callback_url {
                Some(url) => subscriptions.check_callback(url),
                None => Ok(()),
            });
        if let Err(e) = allowed {
            return Err(self.refused(e).await);
        }
        self.metered(|| subscriptions.change(self.key_id(), id, change))
            .await
    }

    /// Deletes one of the caller's subscriptions; its pending deliveries are dropped.
    pub async fn delete_webhook(&self, id: WebhookId) -> CallResult<()> {
        self.metered(|| self.subscriptions.delete(self.key_id(), id))
            .await
    }
}

impl Subscriptions {
    /// Whether the service may send to `url` (its callback policy).
    fn check_callback(&self, url: &CallbackUrl) -> ServiceResult<()> {
        Ok(self.shared.config.callback_policy.check(url)?)
    }

    /// Registers `owner`'s subscription, or answers the one registered before under the
    /// same idempotency key with the same fields.
    async fn register(
        &self,
        owner: KeyId,
        new: NewWebhook,
        idempotency_key: Option<IdempotencyKey>,
    ) -> ServiceResult<WebhookCreation> {
        // Under the key's lock: two racing creations must not both see room, nor both
        // miss a subscription registered with their idempotency key.
        let _writer = self.writes.lock(owner.0).await;
        let mut asked = Subscription {
            id: WebhookId::new_random(),
            owner,
            callback_url: new.callback_url,
            domain_filters: new.domain_filters,
            remote_only: new.remote_only,
            seniority: new.seniority,
            q: new.q,
            company: new.company,
            min_confidence: new.min_confidence,
            places: PlacesAndPay {
                country: sorted_unique(new.places.country),
                ..new.places
            },
            event_types: event_types(new.event_types),
            secret: WebhookSecret::generate(),
            status: SubscriptionStatus::Active,
            disabled_reason: None,
            created_at: self.shared.now(),
            last_success_at: None,
            last_failure_at: None,
            last_failure_reason: None,
            failing_since: None,
            enabled_again_at: None,
            idempotency_key,
            idempotency_request: None,
        };
        asked.domain_filters = sorted_unique(asked.domain_filters);
        asked.seniority = sorted_unique(asked.seniority);
        if asked.idempotency_key.is_some() {
            asked.idempotency_request = Some(request_digest(&asked));
        }
        if let Some(earlier) = self.registered_with_same_key(&asked)? {
            return Ok(WebhookCreation {
                subscription: earlier,
                replayed: true,
            });
        }
        let max = self.shared.config.max_webhooks_per_key;
        let owned = self
            .read_webhooks()
            .values()
            .filter(|w| w.owner == owner)
            .count();
        if owned >= max {
            return Err(ServiceError::LimitReached(format!(
                "a key may hold at most {max} webhook subscriptions; delete one first"
            )));
        }
        self.store_webhook(&asked).await?;
        self.write_webhooks().insert(asked.id, asked.clone());
        tracing::info!(webhook_id = %asked.id, key_id = %owner, "webhook registered");
        Ok(WebhookCreation {
            subscription: asked,
            replayed: false,
        })
    }

    /// `owner`'s subscriptions, oldest first.
    fn owned_by(&self, owner: KeyId) -> Vec<Subscription> {
        let mut own: Vec<Subscription> = self
            .read_webhooks()
            .values()
            .filter(|w| w.owner == owner)
            .cloned()
            .collect();
        own.sort_by_key(|w| (w.created_at, w.id));
        own
    }

    /// Recent deliveries of `owner`'s subscription `id`, newest first.
    async fn deliveries_of(&self, owner: KeyId, id: WebhookId) -> ServiceResult<Vec<Delivery>> {
        self.own_webhook(owner, id)?;
        Ok(self.store.deliveries_of(id, 100).await?)
    }

    /// Applies `change` to `owner`'s subscription `id`.
    async fn change(
        &self,
        owner: KeyId,
        id: WebhookId,
        change: WebhookChange,
    ) -> ServiceResult<Subscription> {
        let _writer = self.writes.lock(id.0).await;
        let mut sub = self.own_webhook(owner, id)?;
        change.apply_to(&mut sub, self.shared.now(), "disabled through the API");
        self.store_webhook(&sub).await?;
        self.write_webhooks().insert(sub.id, sub.clone());
        tracing::info!(webhook_id = %sub.id, status = ?sub.status, "webhook changed");
        Ok(sub)
    }

    /// Deletes `owner`'s subscription `id`; its pending deliveries are dropped.
    async fn delete(&self, owner: KeyId, id: WebhookId) -> ServiceResult<()> {
        self.own_webhook(owner, id)?;
        let _writer = self.writes.lock(id.0).await;
        // The deletion fails what it holds pending; counted before, as it is gone after.
        let pending = self.store.pending_count(id).await?;
        if self
            .shared
            .timed_write(StoreWrite::Webhooks, self.store.delete_webhook(id))
            .await?
        {
            self.shared
                .stats
                .add_pending(-i64::try_from(pending).unwrap_or(0));
        }
        self.write_webhooks().remove(&id);
        self.test_pings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
        tracing::info!(webhook_id = %id, "webhook deleted");
        Ok(())
    }
}

impl Subscriptions {
    /// The caller's subscription registered with `asked`'s idempotency key, if any, when it
    /// was asked for with the same fields: those of the first request, whatever a `PATCH`
    /// changed since.
    fn registered_with_same_key(
        &self,
        asked: &Subscription,
    ) -> ServiceResult<Option<Subscription>> {
        let Some(key) = &asked.idempotency_key else {
            return Ok(None);
        };
        let webhooks = self.read_webhooks();
        let Some(earlier) = webhooks
            .values()
            .find(|w| w.owner == asked.owner && w.idempotency_key.as_ref() == Some(key))
        else {
            return Ok(None);
        };
        let same = match &earlier.idempotency_request {
            Some(first) => asked.idempotency_request.as_ref() == Some(first),
            // Registered before the request was kept: its fields are all there is.
            None => request_digest(earlier) == request_digest(asked),
        };
        if same {
            Ok(Some(earlier.clone()))
        } else {
            Err(ServiceError::IdempotencyKeyReused {
                key: key.clone(),
                webhook: earlier.id,
            })
        }
    }

    /// `owner`'s subscription `id`; another key's is reported as not found.
    pub(super) fn own_webhook(&self, owner: KeyId, id: WebhookId) -> ServiceResult<Subscription> {
        self.read_webhooks()
            .get(&id)
            .filter(|w| w.owner == owner)
            .cloned()
            .ok_or(ServiceError::NotFound {
                resource: "webhook",
            })
    }
}
