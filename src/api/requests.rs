//! The request bodies of the public API, as clients write them and the server reads them:
//! one type for each, which the typed client serializes, the server deserializes (then
//! checks field by field, to name what is wrong) and the OpenAPI document describes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::views::WebhookEventType;
use crate::domain::{ChangeKind, Country, Currency, DomainTag, Seniority, SubscriptionStatus};
use crate::query::Near;

/// Request body for creating a webhook. Unknown fields are rejected with 400.
///
/// Read as it is sent, then validated field by field: the schema says what validation takes.
/// Fields left `None` take the defaults (all domains, any seniority, remote and on-site jobs,
/// `job.new` only).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "NewWebhook")]
#[non_exhaustive]
pub struct NewWebhook {
    /// HTTPS URL that will receive deliveries. Plain http and private/loopback addresses are
    /// accepted only in local development mode.
    // Left out or null is refused as "is required" by the server.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(required, with = "String", url, length(max = 2048))]
    #[schemars(extend("x-brief" = "The https URL each matching job is POSTed to."))]
    #[schemars(regex(pattern = "^[Hh][Tt][Tt][Pp][Ss]?://"))]
    pub callback_url: Option<String>,
    /// Domain tags to subscribe to; each 1-40 characters of letters, digits, '-', '_', '.',
    /// '+'. Empty (the default) means all domains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<Label>>", length(max = 50), extend("default" = []))]
    #[schemars(extend("x-brief" = "Domain tags; a job with any is sent (none: all)."))]
    pub domain_filters: Option<Vec<String>>,
    /// Deliver only remote jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false))]
    pub remote_only: Option<bool>,
    /// Optional saved search: seniority levels (any of).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<Label>>", length(max = 50))]
    pub seniority: Option<Vec<String>>,
    /// Optional saved search: words that must all appear in role, company name or post text.
    /// Control characters other than tabs and line breaks are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<SearchText>")]
    pub q: Option<String>,
    /// Optional saved search: words that must all appear in the company name. Control
    /// characters other than tabs and line breaks are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<SearchText>")]
    pub company: Option<String>,
    /// Optional saved search: minimum classification confidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 1))]
    pub min_confidence: Option<f64>,
    /// Saved search: ISO 3166-1 alpha-2 country codes, any case; a place in any of them (as
    /// `GET /jobs`'s `country`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<CountryCode>>", length(max = 50))]
    pub country: Option<Vec<String>>,
    /// Saved search: `LAT,LON` in degrees; a place within `radius_km` of it (as `GET /jobs`'s
    /// `near`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<NearText>")]
    pub near: Option<String>,
    /// Saved search: the radius of `near` in km, 1 to 1000 (default 50); only with `near`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000))]
    pub radius_km: Option<f64>,
    /// Saved search: an ISO 3166-1 alpha-2 country code; remote jobs open to applicants living
    /// there (as `GET /jobs`'s `remote_from`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<CountryCode>")]
    pub remote_from: Option<String>,
    /// Saved search: the lowest yearly pay, in `salary_currency` (required with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_salary: Option<u64>,
    /// Saved search: the ISO 4217 currency of `min_salary` (required with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<CurrencyCode>")]
    pub salary_currency: Option<String>,
    /// The events to send: any of `job.new`, `job.updated` and `job.closed`. Left out, empty
    /// or null: `["job.new"]` only, as before there was a choice. A `job.updated` or
    /// `job.closed` delivery carries the job as it is when the event is sent, with the same
    /// filters applied (a closed job for `job.closed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<WebhookEventType>>", length(max = 50))]
    #[schemars(extend("x-brief" = "Events to send: job.new (default), job.updated, job.closed."))]
    pub event_types: Option<Vec<String>>,
}

impl NewWebhook {
    /// A subscription to every new job, delivered to `callback_url`.
    pub fn new(callback_url: impl Into<String>) -> Self {
        Self {
            callback_url: Some(callback_url.into()),
            ..Self::default()
        }
    }

    /// Sets the domain tags wanted.
    #[must_use]
    pub fn domain_filters(mut self, tags: impl IntoIterator<Item = DomainTag>) -> Self {
        self.domain_filters = Some(labels(tags, DomainTag::as_str));
        self
    }

    /// Sets `remote_only`.
    #[must_use]
    pub fn remote_only(mut self, remote_only: bool) -> Self {
        self.remote_only = Some(remote_only);
        self
    }

    /// Sets the seniority levels wanted.
    #[must_use]
    pub fn seniority(mut self, levels: impl IntoIterator<Item = Seniority>) -> Self {
        self.seniority = Some(labels(levels, Seniority::as_str));
        self
    }

    /// Sets the words every delivered job must contain.
    #[must_use]
    pub fn q(mut self, words: impl Into<String>) -> Self {
        self.q = Some(words.into());
        self
    }

    /// Sets the words every delivered job's company name must contain.
    #[must_use]
    pub fn company(mut self, words: impl Into<String>) -> Self {
        self.company = Some(words.into());
        self
    }

    /// Sets the lowest confidence delivered.
    #[must_use]
    pub fn min_confidence(mut self, min: f64) -> Self {
        self.min_confidence = Some(min);
        self
    }

    /// Sets the countries a delivered job has a place in (any of them).
    #[must_use]
    pub fn country(mut self, countries: impl IntoIterator<Item = Country>) -> Self {
        self.country = Some(labels(countries, |c| c.as_str()));
        self
    }

    /// Sets the circle a delivered job has a place in.
    #[must_use]
    pub fn near(mut self, near: Near) -> Self {
        self.near = Some(format!("{},{}", near.lat, near.lon));
        self.radius_km = Some(near.radius_km);
        self
    }

    /// Sets the country remote applicants live in.
    #[must_use]
    pub fn remote_from(mut self, country: Country) -> Self {
        self.remote_from = Some(country.as_str().to_owned());
        self
    }

    /// Sets the lowest yearly pay, in `currency`.
    #[must_use]
    pub fn min_salary(mut self, yearly: u64, currency: Currency) -> Self {
        self.min_salary = Some(yearly);
        self.salary_currency = Some(currency.as_str().to_owned());
        self
    }

    /// Sets the events to deliver.
    #[must_use]
    pub fn event_types(mut self, kinds: impl IntoIterator<Item = ChangeKind>) -> Self {
        self.event_types = Some(labels(kinds, |k| k.as_str()));
        self
    }
}

/// Request body for changing a webhook: every field is optional, a field left out stays as
/// it is, and null sets a filter back to what creating leaves it at (all domains, any
/// seniority, no words, no lowest confidence, remote and on-site jobs). Unknown fields are
/// rejected with 400.
///
/// In Rust, `None` leaves a field out and `Some(None)` sends null.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "WebhookPatch")]
#[non_exhaustive]
pub struct WebhookPatch {
    /// HTTPS URL that will receive deliveries. Plain http and private/loopback addresses are
    /// accepted only in local development mode.
    // Null is refused: a subscription always has a URL.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "String", url, length(max = 2048))]
    #[schemars(regex(pattern = "^[Hh][Tt][Tt][Pp][Ss]?://"))]
    pub callback_url: Option<Option<String>>,
    /// Domain tags to subscribe to; each 1-40 characters of letters, digits, '-', '_', '.',
    /// '+'. Empty means all domains.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<Vec<Label>>", length(max = 50))]
    pub domain_filters: Option<Option<Vec<String>>>,
    /// Deliver only remote jobs.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<bool>")]
    pub remote_only: Option<Option<bool>>,
    /// Optional saved search: seniority levels (any of).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<Vec<Label>>", length(max = 50))]
    pub seniority: Option<Option<Vec<String>>>,
    /// Optional saved search: words that must all appear in role, company name or post text.
    /// Control characters other than tabs and line breaks are refused.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<SearchText>")]
    pub q: Option<Option<String>>,
    /// Optional saved search: words that must all appear in the company name. Control
    /// characters other than tabs and line breaks are refused.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<SearchText>")]
    pub company: Option<Option<String>>,
    /// Optional saved search: minimum classification confidence.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<f64>", range(min = 0, max = 1))]
    pub min_confidence: Option<Option<f64>>,
    /// Saved search: ISO 3166-1 alpha-2 country codes, any case; a place in any of them (as
    /// `GET /jobs`'s `country`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<Vec<CountryCode>>", length(max = 50))]
    pub country: Option<Option<Vec<String>>>,
    /// Saved search: `LAT,LON` in degrees; a place within `radius_km` of it (as `GET /jobs`'s
    /// `near`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<NearText>")]
    pub near: Option<Option<String>>,
    /// Saved search: the radius of `near` in km, 1 to 1000 (default 50); only with `near`.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<f64>", range(min = 1, max = 1000))]
    pub radius_km: Option<Option<f64>>,
    /// Saved search: an ISO 3166-1 alpha-2 country code; remote jobs open to applicants living
    /// there (as `GET /jobs`'s `remote_from`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<CountryCode>")]
    pub remote_from: Option<Option<String>>,
    /// Saved search: the lowest yearly pay, in `salary_currency` (required with it).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<u64>")]
    pub min_salary: Option<Option<u64>>,
    /// Saved search: the ISO 4217 currency of `min_salary` (required with it).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<CurrencyCode>")]
    pub salary_currency: Option<Option<String>>,
    /// The events to send: any of `job.new`, `job.updated` and `job.closed`. Empty or null:
    /// `["job.new"]` only.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<Vec<WebhookEventType>>", length(max = 50))]
    pub event_types: Option<Option<Vec<String>>>,
    /// `active` enables a disabled webhook again, with the same id and secret (its failure
    /// streak starts over); `disabled` stops it: while disabled, new jobs are not queued for
    /// it and its pending deliveries fail.
    // Null is refused: a subscription is either.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "SubscriptionStatus")]
    pub status: Option<Option<SubscriptionStatus>>,
}

impl WebhookPatch {
    /// Changes nothing, until fields are set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets a new callback URL.
    #[must_use]
    pub fn callback_url(mut self, url: impl Into<String>) -> Self {
        self.callback_url = Some(Some(url.into()));
        self
    }

    /// Sets new domain tags; `None` sets all domains again.
    #[must_use]
    pub fn domain_filters(mut self, tags: Option<Vec<DomainTag>>) -> Self {
        self.domain_filters = Some(tags.map(|t| labels(t, DomainTag::as_str)));
        self
    }

    /// Sets `remote_only`; `None` sets it back to remote and on-site jobs.
    #[must_use]
    pub fn remote_only(mut self, remote_only: Option<bool>) -> Self {
        self.remote_only = Some(remote_only);
        self
    }

    /// Sets new seniority levels; `None` sets any level again.
    #[must_use]
    pub fn seniority(mut self, levels: Option<Vec<Seniority>>) -> Self {
        self.seniority = Some(levels.map(|l| labels(l, Seniority::as_str)));
        self
    }

    /// Sets new words; `None` removes them.
    #[must_use]
    pub fn q(mut self, words: Option<String>) -> Self {
        self.q = Some(words);
        self
    }

    /// Sets new company words; `None` removes them.
    #[must_use]
    pub fn company(mut self, words: Option<String>) -> Self {
        self.company = Some(words);
        self
    }

    /// Sets a new lowest confidence; `None` removes it.
    #[must_use]
    pub fn min_confidence(mut self, min: Option<f64>) -> Self {
        self.min_confidence = Some(min);
        self
    }

    /// Sets the events to deliver from now on; `None` is `job.new` only again.
    #[must_use]
    pub fn event_types(mut self, kinds: Option<Vec<ChangeKind>>) -> Self {
        self.event_types = Some(kinds.map(|k| labels(k, |k| k.as_str())));
        self
    }

    /// Sets new countries; `None` is anywhere again.
    #[must_use]
    pub fn country(mut self, countries: Option<Vec<Country>>) -> Self {
        self.country = Some(countries.map(|c| labels(c, |c| c.as_str())));
        self
    }

    /// Sets a new circle; `None` removes it.
    #[must_use]
    pub fn near(mut self, near: Option<Near>) -> Self {
        self.near = Some(near.map(|n| format!("{},{}", n.lat, n.lon)));
        self.radius_km = Some(near.map(|n| n.radius_km));
        self
    }

    /// Sets a new country remote applicants live in; `None` removes it.
    #[must_use]
    pub fn remote_from(mut self, country: Option<Country>) -> Self {
        self.remote_from = Some(country.map(|c| c.as_str().to_owned()));
        self
    }

    /// Sets a new lowest yearly pay and its currency; `None` removes them.
    #[must_use]
    pub fn min_salary(mut self, floor: Option<(u64, Currency)>) -> Self {
        self.min_salary = Some(floor.map(|(yearly, _)| yearly));
        self.salary_currency = Some(floor.map(|(_, c)| c.as_str().to_owned()));
        self
    }

    /// Disables the subscription, or enables it again.
    #[must_use]
    pub fn status(mut self, status: SubscriptionStatus) -> Self {
        self.status = Some(Some(status));
        self
    }
}

/// Labels as a body lists them.
fn labels<T>(items: impl IntoIterator<Item = T>, name: impl Fn(&T) -> &str) -> Vec<String> {
    items.into_iter().map(|i| name(&i).to_owned()).collect()
}

/// A label as a filter takes it: a domain tag or a seniority level.
#[derive(JsonSchema)]
#[schemars(inline)]
#[allow(dead_code)] // A schema only: labels are read as strings, then parsed.
struct Label(
    #[schemars(length(min = 1, max = 40), regex(pattern = "^[A-Za-z0-9._+-]{1,40}$"))] String,
);

/// A country as a saved search takes it: an ISO 3166-1 alpha-2 code, any case.
#[derive(JsonSchema)]
#[schemars(inline)]
#[allow(dead_code)] // A schema only: the code is read as a string, then checked.
struct CountryCode(#[schemars(regex(pattern = "^ *[A-Za-z]{2} *$"))] String);

/// A currency as a saved search takes it: an ISO 4217 code, any case.
#[derive(JsonSchema)]
#[schemars(inline)]
#[allow(dead_code)] // A schema only: the code is read as a string, then checked.
struct CurrencyCode(#[schemars(regex(pattern = "^ *[A-Za-z]{3} *$"))] String);

/// A `near` centre as a saved search takes it: `LAT,LON` in degrees.
#[derive(JsonSchema)]
#[schemars(inline)]
#[allow(dead_code)] // A schema only: the text is read as a string, then checked.
struct NearText(
    #[schemars(regex(pattern = "^ *-?[0-9]+(\\.[0-9]+)? *, *-?[0-9]+(\\.[0-9]+)? *$"))] String,
);

/// Saved-search text, checked as the `q` and `company` query parameters are.
#[derive(JsonSchema)]
#[schemars(inline)]
#[allow(dead_code)] // A schema only: the text is read as a string, then checked.
struct SearchText(
    #[schemars(
        length(max = 500),
        regex(pattern = "^[^\\u0000-\\u0008\\u000E-\\u001F\\u007F-\\u0084\\u0086-\\u009F]*$")
    )]
    String,
);

/// A field that is present, `null` or not: serde reads a missing one as `None` by default.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}
