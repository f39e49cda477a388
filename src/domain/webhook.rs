use std::fmt;

use base64::Engine;
use chrono::{DateTime, Utc};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use url::Url;

use super::truncate;
use super::{
    ChangeKind, Confidence, Country, Currency, DeliveryId, DomainError, DomainTag, EventId, JobId,
    KeyId, Seniority, WebhookId,
};
use crate::query::Near;

/// The conditions of places and pay a saved search may hold, as `GET /jobs` takes them:
/// `country`, `near` (with its radius), `remote_from`, and `min_salary` with
/// `salary_currency` (both or neither). Every field is empty by default: no condition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlacesAndPay {
    /// A place in any of these countries (empty: anywhere).
    #[serde(default)]
    pub country: Vec<Country>,
    /// A place with coordinates within this circle.
    #[serde(default)]
    pub near: Option<Near>,
    /// Remote jobs whose remote regions hold this country or `worldwide`.
    #[serde(default)]
    pub remote_from: Option<Country>,
    /// Paid at least this much a year in `salary_currency`.
    #[serde(default)]
    pub min_salary: Option<u64>,
    /// The currency of `min_salary`.
    #[serde(default)]
    pub salary_currency: Option<Currency>,
}

impl PlacesAndPay {
    /// Whether it holds no condition.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// A callback URL: absolute `http` or `https`, with a host, no credentials, no fragment.
///
/// Form only: whether plain http or private addresses are allowed is the delivery policy's call.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CallbackUrl(Url);

impl CallbackUrl {
    /// The longest URL accepted.
    pub const MAX_LEN: usize = 2048;

    /// Parses and checks the form of a callback URL.
    pub fn parse(raw: &str) -> Result<Self, DomainError> {
        let bad =
            |why: &str| DomainError::new("callback_url", format!("`{}` {why}", truncate(raw)));
        if raw.len() > Self::MAX_LEN {
            return Err(DomainError::new(
                "callback_url",
                format!("must be at most {} characters", Self::MAX_LEN),
            ));
        }
        // The URL standard reads `https:///x`, `https:x` and `https:\\x` as if `x` were the
        // host; a callback is taken only as written in full, `scheme://host/...`.
        let after_scheme = raw
            .trim()
            .split_once(':')
            .and_then(|(_, rest)| rest.strip_prefix("//"));
        match after_scheme {
            None => return Err(bad("is not an absolute URL; use https://host/path")),
            Some(rest) if rest.starts_with(['/', '\\']) => {
                return Err(bad(
                    "has no host; write it in full, such as https://example.com/hooks",
                ))
            }
            Some(_) => {}
        }
        let url = Url::parse(raw.trim()).map_err(|e| {
            bad(&format!(
                "is not an absolute URL ({e}); use https://host/path"
            ))
        })?;
        if url.scheme() != "https" && url.scheme() != "http" {
            return Err(bad(
                "must use https (or plain http, where the server allows it: local-development mode)",
            ));
        }
        if url.host().is_none() {
            return Err(bad("has no host"));
        }
        if url.port() == Some(0) {
            return Err(bad("has port 0, which nothing can listen on"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad("must not carry credentials; sign-in data goes in the path or is verified by the signature"));
        }
        if url.fragment().is_some() {
            return Err(bad("must not have a #fragment"));
        }
        // Normalising percent-encodes; the stored form must also fit, or it could not be read
        // back.
        if url.as_str().len() > Self::MAX_LEN {
            return Err(DomainError::new(
                "callback_url",
                format!(
                    "must be at most {} characters once percent-encoded",
                    Self::MAX_LEN
                ),
            ));
        }
        Ok(Self(url))
    }

    /// The parsed URL.
    pub fn url(&self) -> &Url {
        &self.0
    }

    /// The URL as text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Debug for CallbackUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CallbackUrl({})", self.0)
    }
}

impl TryFrom<String> for CallbackUrl {
    type Error = DomainError;
    fn try_from(raw: String) -> Result<Self, Self::Error> {
        Self::parse(&raw)
    }
}

impl From<CallbackUrl> for String {
    fn from(u: CallbackUrl) -> String {
        u.0.into()
    }
}

/// A subscription's signing secret, `whsec_` + base64 of 24 random bytes (Standard Webhooks).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WebhookSecret(String);

impl WebhookSecret {
    /// Makes a new random secret.
    pub fn generate() -> Self {
        let mut bytes = [0u8; 24];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        Self(format!(
            "whsec_{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        ))
    }

    /// A secret from its text (as stored or as given by an operator).
    pub fn new(secret: String) -> Self {
        Self(secret)
    }

    /// The secret in clear, for showing it once and for signing.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WebhookSecret(whsec_[redacted])")
    }
}

/// The `Idempotency-Key` a client sends with `POST /webhooks`, so that a retry of a request
/// whose answer was lost finds the subscription the first one registered instead of
/// registering another: 1 to 255 visible ASCII characters, opaque (a UUID is a good choice).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// The longest key accepted.
    pub const MAX_LEN: usize = 255;

    /// Checks a key's form.
    pub fn parse(raw: &str) -> Result<Self, DomainError> {
        if raw.is_empty() || raw.len() > Self::MAX_LEN {
            return Err(DomainError::new(
                "Idempotency-Key",
                format!("must be 1 to {} characters", Self::MAX_LEN),
            ));
        }
        if !raw.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(DomainError::new(
                "Idempotency-Key",
                "must be visible ASCII characters without spaces, such as a UUID",
            ));
        }
        Ok(Self(raw.to_owned()))
    }

    /// The key as sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for IdempotencyKey {
    type Error = DomainError;
    fn try_from(raw: String) -> Result<Self, Self::Error> {
        Self::parse(&raw)
    }
}

impl From<IdempotencyKey> for String {
    fn from(key: IdempotencyKey) -> String {
        key.0
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether a subscription receives deliveries.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(inline)]
#[serde(rename_all = "snake_case")]
pub enum SubscriptionStatus {
    /// Receives deliveries.
    #[default]
    Active,
    /// Stopped after a 410 or days of failures; see `disabled_reason`.
    Disabled,
}

/// A webhook subscription, owned by one API key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Subscription {
    /// The subscription's identifier.
    pub id: WebhookId,
    /// The key that registered it; only that key sees it.
    pub owner: KeyId,
    /// Where notifications are POSTed.
    pub callback_url: CallbackUrl,
    /// Domain tags to match; empty means every domain.
    pub domain_filters: Vec<DomainTag>,
    /// Only remote jobs when true.
    pub remote_only: bool,
    /// Saved search: any of these seniority levels (empty: any).
    #[serde(default)]
    pub seniority: Vec<Seniority>,
    /// Saved search: every word must be a word of the role, company name or post text.
    #[serde(default)]
    pub q: Option<String>,
    /// Saved search: every word must be a word of the company name.
    #[serde(default)]
    pub company: Option<String>,
    /// Saved search: confidence at least this.
    #[serde(default)]
    pub min_confidence: Option<Confidence>,
    /// Saved search: places and pay.
    #[serde(flatten)]
    pub places: PlacesAndPay,
    /// The events sent to it: any of `job.new`, `job.updated` and `job.closed`, sorted and
    /// without repeats; `job.new` only unless it opted into more (and for subscriptions made
    /// before there was a choice).
    #[serde(default = "ChangeKind::webhook_default")]
    pub event_types: Vec<ChangeKind>,
    /// The signing secret.
    pub secret: WebhookSecret,
    /// Active or disabled.
    #[serde(default)]
    pub status: SubscriptionStatus,
    /// Why the subscription was disabled.
    #[serde(default)]
    pub disabled_reason: Option<String>,
    /// When it was registered.
    pub created_at: DateTime<Utc>,
    /// When a delivery last succeeded.
    #[serde(default)]
    pub last_success_at: Option<DateTime<Utc>>,
    /// When a delivery last failed.
    #[serde(default)]
    pub last_failure_at: Option<DateTime<Utc>>,
    /// What the last failure was.
    #[serde(default)]
    pub last_failure_reason: Option<String>,
    /// When deliveries started failing without a success since; cleared by a success.
    #[serde(default)]
    pub failing_since: Option<DateTime<Utc>>,
    /// When it was last enabled again after being disabled. Deliveries of events from before
    /// then were pending while it was disabled, and fail instead of being sent late.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled_again_at: Option<DateTime<Utc>>,
    /// The `Idempotency-Key` it was registered with: the same key and request from the same
    /// API key answer with this subscription for as long as it exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<IdempotencyKey>,
    /// A digest of the fields first asked for with `idempotency_key`, so that a replay is
    /// compared with that request rather than with the subscription as changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_request: Option<String>,
}

/// How far a delivery has got.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[schemars(inline)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// Waiting for its next attempt.
    #[default]
    Pending,
    /// A 2xx answer was received.
    Succeeded,
    /// Every attempt failed, or the subscription went away.
    Failed,
}

/// One event's delivery to one subscription.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Delivery {
    /// The delivery's identifier.
    pub id: DeliveryId,
    /// The event delivered.
    pub event_id: EventId,
    /// The receiving subscription.
    pub webhook_id: WebhookId,
    /// Pending, succeeded or failed.
    pub status: DeliveryStatus,
    /// Attempts made so far.
    pub attempts: u32,
    /// When the next attempt is due.
    pub next_attempt_at: DateTime<Utc>,
    /// What the last attempt got.
    #[serde(default)]
    pub last_error: Option<String>,
    /// Every attempt so far, oldest first.
    #[serde(default)]
    pub history: Vec<DeliveryAttempt>,
    /// The delivered event's type, such as `job.new` (absent on deliveries stored before it
    /// was kept with them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_type: Option<String>,
    /// When the delivery was queued, with its event (absent, as `event_type`, on older ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<DateTime<Utc>>,
}

impl Delivery {
    /// When the delivery settled: its last attempt, or when it was queued (or else due) for
    /// one that failed without an attempt. What retention counts from.
    pub fn settled_at(&self) -> DateTime<Utc> {
        self.history
            .last()
            .map(|a| a.at)
            .or(self.created_at)
            .unwrap_or(self.next_attempt_at)
    }
}

/// One attempt to deliver.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeliveryAttempt {
    /// When the attempt started.
    pub at: DateTime<Utc>,
    /// The receiver's HTTP status, when it answered.
    pub status_code: Option<u16>,
    /// How long the attempt took, in milliseconds.
    pub latency_ms: u64,
    /// Why it failed, when it did.
    pub error: Option<String>,
}

/// An event (`job.new`, `webhook.test`) with the deliveries it owes; a `job.new` event is
/// written with its job in one transaction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutboxEvent {
    /// The event's identifier (the `webhook-id` header).
    pub id: EventId,
    /// The event type, such as `job.new`.
    #[serde(rename = "type")]
    pub kind: String,
    /// When the event happened.
    pub created_at: DateTime<Utc>,
    /// The event's payload: for `job.new`, the job as it was when it became active.
    pub data: serde_json::Value,
    /// One pending delivery per matching subscription.
    pub deliveries: Vec<Delivery>,
}

/// An event a job write raises (such as `job.new`), appended to the outbox log in the same
/// transaction as the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobEvent {
    /// The event's identifier: the `webhook-id` every delivery of it carries.
    pub id: EventId,
    /// The event type, such as `job.new`.
    pub kind: String,
    /// When it happened.
    pub created_at: DateTime<Utc>,
}

/// An entry of the outbox log, as read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedEvent {
    /// Its position: log positions increase in commit order, from 1.
    pub position: u64,
    /// The job it is about.
    pub job_id: JobId,
    /// The event.
    pub event: JobEvent,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idempotency_keys_are_1_to_255_visible_ascii_characters() {
        for good in ["a", "order-4711", "\"quoted\"", &"k".repeat(255)] {
            let key = IdempotencyKey::parse(good).expect(good);
            assert_eq!(key.as_str(), good);
        }
        for bad in ["", "with space", "tab\there", "é", &"k".repeat(256)] {
            let e = IdempotencyKey::parse(bad).expect_err(bad);
            assert_eq!(e.field, "Idempotency-Key");
        }
    }

    #[test]
    fn callback_urls_need_a_scheme_and_host_and_no_credentials() {
        assert!(CallbackUrl::parse("https://hooks.example.com/jobs").is_ok());
        let ftp = CallbackUrl::parse("ftp://example.com")
            .err()
            .map(|e| e.reason);
        // Both schemes it may take are named: plain http is one in local-development mode.
        assert!(
            ftp.as_deref()
                .is_some_and(|r| r.contains("https") && r.contains("or plain http")),
            "{ftp:?}"
        );
        assert!(CallbackUrl::parse("not a url").is_err());
        assert!(CallbackUrl::parse("https://user:pw@example.com/").is_err());
        assert!(CallbackUrl::parse("https://example.com/#x").is_err());
        assert!(CallbackUrl::parse(&format!("https://e.com/{}", "a".repeat(3000))).is_err());
    }

    #[test]
    fn callback_urls_must_write_their_host_in_full_with_a_usable_port() {
        for raw in [
            "https:///x",
            "https:x",
            "https:\\\\x",
            "http:////x/y",
            "https:/x",
            // A `://` later on does not make up for the missing one.
            "https:hooks.example.com/a?next=https://b",
            "https:\\\\hooks.example.com/a?u=://z",
            "https:/hooks.example.com/://",
            "https://example.com:0/x",
            "https://[2001:4860::1]:00/x",
        ] {
            let e = CallbackUrl::parse(raw).err().map(|e| e.reason);
            assert!(
                e.as_deref()
                    .is_some_and(|r| ["host", "absolute", "port 0"].iter().any(|w| r.contains(w))),
                "{raw}: {e:?}"
            );
        }
        for (raw, stored) in [
            (
                " HTTPS://Hooks.Example.com/a ",
                "https://hooks.example.com/a",
            ),
            (
                "https://hooks.example.com:8443/a?next=https://b",
                "https://hooks.example.com:8443/a?next=https://b",
            ),
        ] {
            let kept = CallbackUrl::parse(raw).map(|u| u.as_str().to_owned());
            assert_eq!(kept.ok().as_deref(), Some(stored), "{raw}");
        }
    }

    #[test]
    fn secrets_look_like_standard_webhooks_secrets_and_hide_in_debug() {
        let s = WebhookSecret::generate();
        assert!(s.expose().starts_with("whsec_"));
        assert!(!format!("{s:?}").contains(&s.expose()[6..]));
    }
}
