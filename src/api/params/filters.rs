//! The filters of job searches, each declared once: its parameter (name, description,
//! schema), how a query string's value of it sets a [`JobFilter`], and how a filter's setting
//! is written back as that value. `GET /jobs` and `GET /changes` read their filters through
//! this table, the OpenAPI document and the MCP tools list them from it, and the typed client
//! sends a [`JobFilter`] with it; a test holds reading to be the inverse of writing.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::json;

use super::{parse_instant, Params};
use crate::api::error::ApiError;
use crate::api::openapi::{Form, In, Param};
use crate::domain::{CompanyId, Confidence, Country, Currency, DomainError, DomainTag, Seniority};
use crate::query::{JobFilter, Near, Reposts};

/// A filter parameter of job searches.
pub(crate) struct FilterParam {
    /// Its declaration in the OpenAPI document.
    pub(crate) param: Param,
    /// Sets the filter from the query's value of it, if given.
    read: fn(&Params, JobFilter) -> Result<JobFilter, ApiError>,
    /// The filter's setting as the parameter's value, if it is set.
    #[cfg_attr(not(any(feature = "client", test)), allow(dead_code))]
    write: fn(&JobFilter) -> Option<String>,
}

/// Every filter of `GET /jobs` and `GET /changes`, in the order the document lists them.
pub(crate) const FILTERS: &[FilterParam] = &[
    FilterParam {
        param: Param {
        component: None,
        name: "domain",
        at: In::Query,
        required: false,
        description: "Comma-separated domain tags (any matches), case-insensitive. The vocabulary is open; typical tags: engineering, ai, design, product, data, devops, security, marketing, sales, finance, operations, research. `facets=domain` lists the tags in use with their counts; a tag no active job has gives a warning in `meta.warnings`.",
        brief: "Domain tags (any), e.g. engineering, ai.",
        schema: || json!({"type": "string", "pattern": "^( *[A-Za-z0-9._+-]{0,40} *)(,( *[A-Za-z0-9._+-]{0,40} *))*$"}),
        form: Form::List,
        example: None,
        examples: &[("one", "ai"), ("several", "ai,engineering")],
    },
        read: |params, filter| {
            let mut domains = params.list("domain", DomainTag::parse)?;
            domains.sort();
            domains.dedup();
            Ok(filter.domains(domains))
        },
        write: |filter| list(filter.domains.iter().map(DomainTag::as_str)),
    },
    FilterParam {
        param: Param {
        component: None,
        name: "seniority",
        at: In::Query,
        required: false,
        description: "Comma-separated seniority levels (any matches), case-insensitive. The vocabulary is open; typical levels: intern, junior, mid, senior, staff, principal, lead, manager, director. `facets=seniority` lists the levels in use with their counts; a level no active job has gives a warning in `meta.warnings`.",
        brief: "Seniority levels (any), e.g. senior, staff.",
        schema: || json!({"type": "string", "pattern": "^( *[A-Za-z0-9._+-]{0,40} *)(,( *[A-Za-z0-9._+-]{0,40} *))*$"}),
        form: Form::List,
        example: None,
        examples: &[("one", "senior"), ("several", "senior,staff")],
    },
        read: |params, filter| {
            let mut levels = params.list("seniority", Seniority::parse)?;
            levels.sort();
            levels.dedup();
            Ok(filter.seniority(levels))
        },
        write: |filter| list(filter.seniority.iter().map(Seniority::as_str)),
    },
    FilterParam {
        param: Param {
        component: None,
        name: "remote_only",
        at: In::Query,
        required: false,
        description: "When true, only remote jobs. `true` or `false` in any case, or `1` or `0`.",
        brief: "true: remote jobs only.",
        schema: || json!({"type": "boolean"}),
        form: Form::Exploded,
        example: None,
        examples: &[],
    },
        read: |params, filter| Ok(filter.remote_only(params.bool("remote_only")?.unwrap_or(false))),
        write: |filter| filter.remote_only.then(|| "true".to_owned()),
    },
    FilterParam {
        param: Param {
        component: None,
        name: "company",
        at: In::Query,
        required: false,
        description: "Text search on the company name. Control characters other than tabs and line breaks (such as %00) are refused.",
        brief: "Words all in the company name.",
        schema: || json!({"type": "string", "maxLength": 500, "pattern": "^[^\\u0000-\\u0008\\u000E-\\u001F\\u007F-\\u0084\\u0086-\\u009F]*$"}),
        form: Form::Exploded,
        example: None,
        examples: &[],
    },
        read: |params, filter| {
            Ok(match params.text("company")? {
                Some(text) => filter.with_company(text),
                None => filter,
            })
        },
        write: |filter| words(&filter.company_words),
    },
    FilterParam {
        param: Param {
        component: None,
        name: "company_id",
        at: In::Query,
        required: false,
        description:
            "Only this company's jobs: all of them, paged (the company detail lists at most 100).",
        brief: "Only this company's jobs.",
        schema: || json!({"type": "string", "format": "uuid"}),
        form: Form::Exploded,
        example: None,
        examples: &[],
    },
        read: |params, filter| {
            // Given, it must be an id: `company_id=` is an error, as the schema's `uuid`
            // format says, not a search over every company.
            let id = params
                .one("company_id")
                .map(|v| CompanyId::parse(v).map_err(|e| DomainError::new("company_id", e.reason)))
                .transpose()?;
            Ok(filter.company_id(id))
        },
        write: |filter| filter.company_id.map(|id| id.to_string()),
    },
    FilterParam {
        param: Param {
        component: None,
        name: "q",
        at: In::Query,
        required: false,
        description: "Free-text search. Control characters other than tabs and line breaks (such as %00) are refused.",
        brief: "Words all in the role, company name or post.",
        schema: || json!({"type": "string", "maxLength": 500, "pattern": "^[^\\u0000-\\u0008\\u000E-\\u001F\\u007F-\\u0084\\u0086-\\u009F]*$"}),
        form: Form::Exploded,
        example: None,
        examples: &[],
    },
        read: |params, filter| {
            Ok(match params.text("q")? {
                Some(text) => filter.with_q(text),
                None => filter,
            })
        },
        write: |filter| words(&filter.q_words),
    },
    FilterParam {
        param: Param {
        component: None,
        name: "min_confidence",
        at: In::Query,
        required: false,
        description: "Minimum extraction confidence between 0 and 1.",
        brief: "Least extraction confidence.",
        schema: || json!({"type": "number", "minimum": 0, "maximum": 1}),
        form: Form::Exploded,
        example: None,
        examples: &[],
    },
        read: |params, filter| {
            let min = params.one("min_confidence").map(Confidence::parse).transpose()?;
            Ok(filter.min_confidence(min))
        },
        write: |filter| filter.min_confidence.map(|c| c.get().to_string()),
    },
    FilterParam {
        param: Param {
        component: None,
        name: "posted_after",
        at: In::Query,
        required: false,
        description: "Only jobs posted after this instant: an RFC 3339 date-time (an offset may also be written without its colon, +0200; send + as %2B; a second written :60 is the next minute's start) or a YYYY-MM-DD date (its midnight UTC).",
        brief: "Posted after this date or RFC 3339 time.",
        schema: || json!({"type": "string", "anyOf": [{"format": "date-time"}, {"format": "date"}]}),
        form: Form::Exploded,
        example: None,
        examples: &[],
    },
        read: |params, filter| Ok(filter.posted_after(instant(params, "posted_after")?)),
        write: |filter| instant_value(filter.posted_after),
    },
    FilterParam {
        param: Param {
            component: None,
            name: "country",
            at: In::Query,
            required: false,
            description: "Comma-separated ISO 3166-1 alpha-2 country codes (any matches), case-insensitive: jobs with a place (`places`) in one of them.",
            brief: "ISO country codes (any), e.g. DE,FR.",
            schema: || json!({"type": "string", "pattern": "^( *([A-Za-z]{2})? *)(,( *([A-Za-z]{2})? *))*$"}),
            form: Form::List,
            example: None,
            examples: &[("one", "DE"), ("several", "DE,FR")],
        },
        read: |params, filter| {
            let mut countries = params.list("country", |c| {
                Country::parse_code(c).map_err(|e| DomainError::new("country", e.reason))
            })?;
            countries.sort();
            countries.dedup();
            Ok(filter.countries(countries))
        },
        write: |filter| list(filter.countries.iter().map(Country::as_str)),
    },
    FilterParam {
        param: Param {
            component: None,
            name: "near",
            at: In::Query,
            required: false,
            description: "LAT,LON in degrees, such as 52.52,13.40: jobs with a place whose coordinates lie within `radius_km` of it (great-circle distance on a sphere of radius 6,371.0088 km).",
            brief: "\"LAT,LON\": a place within radius_km.",
            schema: || json!({"type": "string", "pattern": "^( *[-+]?(90(\\.0+)?|[1-8]?[0-9](\\.[0-9]+)?) *, *[-+]?(180(\\.0+)?|(1[0-7][0-9]|[1-9]?[0-9])(\\.[0-9]+)?) *)?$"}),
            form: Form::Exploded,
            example: Some("52.52,13.40"),
            examples: &[],
        },
        read: |params, filter| {
            let Some(raw) = params.filter("near") else {
                if params.one("radius_km").is_some() {
                    return Err(DomainError::new(
                        "radius_km",
                        "needs near=LAT,LON, the centre it is measured from",
                    )
                    .into());
                }
                return Ok(filter);
            };
            let radius = params
                .one("radius_km")
                .map(|r| {
                    r.trim().parse().map_err(|_| {
                        DomainError::new("radius_km", "must be a number of kilometres from 1 to 1000")
                    })
                })
                .transpose()?;
            Ok(filter.near(read_near(raw, radius)?))
        },
        write: |filter| filter.near.map(|n| format!("{},{}", n.lat, n.lon)),
    },
    FilterParam {
        param: Param {
            component: None,
            name: "radius_km",
            at: In::Query,
            required: false,
            description: "The radius of `near` in kilometres, 1 to 1000; default 50. Only with `near`.",
            brief: "Radius of near, km.",
            schema: || json!({"type": "number", "minimum": 1, "maximum": 1000, "default": 50}),
            form: Form::Exploded,
            example: None,
            examples: &[],
        },
        // Read with `near`.
        read: |_, filter| Ok(filter),
        write: |filter| filter.near.map(|n| n.radius_km.to_string()),
    },
    FilterParam {
        param: Param {
            component: None,
            name: "remote_from",
            at: In::Query,
            required: false,
            description: "An ISO 3166-1 alpha-2 country code: remote jobs whose `remote_regions` hold it or `worldwide` (a remote job that names no region does not match).",
            brief: "ISO country: remote jobs open to people there.",
            schema: || json!({"type": "string", "pattern": "^( *[A-Za-z]{2} *)?$"}),
            form: Form::Exploded,
            example: Some("DE"),
            examples: &[],
        },
        read: |params, filter| {
            let country = params
                .filter("remote_from")
                .map(|c| Country::parse_code(c).map_err(|e| DomainError::new("remote_from", e.reason)))
                .transpose()?;
            Ok(filter.remote_from(country))
        },
        write: |filter| filter.remote_from.map(|c| c.as_str().to_owned()),
    },
    FilterParam {
        param: Param {
            component: None,
            name: "min_salary",
            at: In::Query,
            required: false,
            description: "Jobs paid in `salary_currency` (required with it) whose yearly upper bound is at least this: the salary's `max`, else its `min`, times 2,080 for `hour`, 260 for `day`, 52 for `week`, 12 for `month`, 1 for `year`. Jobs without a salary, or paid in another currency, do not match (no exchange rates).",
            brief: "Least yearly pay in salary_currency (needed).",
            schema: || json!({"type": "integer", "minimum": 0}),
            form: Form::Exploded,
            example: Some("80000"),
            examples: &[],
        },
        read: |params, filter| {
            // Given, it must be a number: `min_salary=` is a 400, as for every number.
            let amount = params.one("min_salary");
            let currency = params.filter("salary_currency");
            let amount = amount
                .map(|a| {
                    a.trim().parse::<u64>().map_err(|_| {
                        DomainError::new("min_salary", "must be a whole number of at least 0, such as 80000")
                    })
                })
                .transpose()?;
            Ok(match salary_floor(amount, currency)? {
                Some((Some(amount), currency)) => filter.min_salary(Some((amount, currency))),
                Some((None, currency)) => filter.salary_currency(Some(currency)),
                None => filter,
            })
        },
        write: |filter| filter.salary_currency.and(filter.min_salary).map(|a| a.to_string()),
    },
    FilterParam {
        param: Param {
            component: None,
            name: "salary_currency",
            at: In::Query,
            required: false,
            description: "An ISO 4217 currency code, any case, such as EUR: jobs paid in it, with an amount a year can be worked out from (see `min_salary`, which needs it).",
            brief: "ISO 4217 code, e.g. EUR: paid in it.",
            schema: || json!({"type": "string", "pattern": "^( *[A-Za-z]{3} *)?$"}),
            form: Form::Exploded,
            example: Some("EUR"),
            examples: &[],
        },
        // Read with `min_salary`.
        read: |_, filter| Ok(filter),
        write: |filter| filter.salary_currency.map(|c| c.as_str().to_owned()),
    },
    FilterParam {
        param: Param {
            component: None,
            name: "seen_after",
            at: In::Query,
            required: false,
            description: "Only jobs the crawler last sent after this instant (`last_seen_at`), whether or not they changed: an RFC 3339 date-time or a YYYY-MM-DD date (its midnight UTC), read as `posted_after` is.",
            brief: "Last seen after this time.",
            schema: || json!({"type": "string", "anyOf": [{"format": "date-time"}, {"format": "date"}]}),
            form: Form::Exploded,
            example: None,
            examples: &[],
        },
        read: |params, filter| Ok(filter.seen_after(instant(params, "seen_after")?)),
        write: |filter| instant_value(filter.seen_after),
    },
    FilterParam {
        param: Param {
            component: None,
            name: "reposts",
            at: In::Query,
            required: false,
            description: "`hide` (the default): one job per group of copies, its canonical job (the earliest posted open copy; it lists the others in `reposts`). `include`: every copy, each repost naming its canonical job in `repost_of`. Totals and facets count what is listed.",
            brief: "hide (default) or include reposts.",
            schema: || json!({"type": "string", "enum": ["hide", "include"], "default": "hide"}),
            form: Form::Exploded,
            example: None,
            examples: &[],
        },
        read: |params, filter| {
            let reposts = params
                .one("reposts")
                .map(|v| {
                    Reposts::parse(v.trim()).ok_or_else(|| {
                        DomainError::new("reposts", "must be `hide` or `include`")
                    })
                })
                .transpose()?;
            Ok(filter.reposts(reposts.unwrap_or_default()))
        },
        write: |filter| {
            (filter.reposts != Reposts::Hide).then(|| filter.reposts.as_str().to_owned())
        },
    },
];

/// An instant parameter's value, if given ([`parse_instant`]).
fn instant(params: &Params, name: &'static str) -> Result<Option<DateTime<Utc>>, DomainError> {
    params.one(name).map(|v| parse_instant(name, v)).transpose()
}

/// An instant as the parameter's value: RFC 3339, as many fraction digits as it has.
fn instant_value(at: Option<DateTime<Utc>>) -> Option<String> {
    at.map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, true))
}

/// The filters' parameters, for the endpoints' declarations.
pub(crate) const FILTER_PARAMS: [&Param; FILTERS.len()] = {
    let mut params = [&FILTERS[0].param; FILTERS.len()];
    let mut i = 0;
    while i < FILTERS.len() {
        params[i] = &FILTERS[i].param;
        i += 1;
    }
    params
};

/// A `near` centre as `LAT,LON` in degrees, with a radius in km (`None`: the default), as
/// queries and saved searches take it.
pub(crate) fn read_near(raw: &str, radius_km: Option<f64>) -> Result<Near, DomainError> {
    let centre = raw
        .split_once(',')
        .and_then(|(lat, lon)| Some((lat.trim().parse().ok()?, lon.trim().parse().ok()?)));
    let Some((lat, lon)) = centre else {
        return Err(DomainError::new(
            "near",
            "must be LAT,LON in degrees, such as 52.52,13.40",
        ));
    };
    Near::new(lat, lon, radius_km.unwrap_or(Near::DEFAULT_RADIUS_KM))
}

/// A currency, and maybe a yearly pay floor in it (which needs the currency), as queries and
/// saved searches take them.
pub(crate) fn salary_floor(
    amount: Option<u64>,
    currency: Option<&str>,
) -> Result<Option<(Option<u64>, Currency)>, DomainError> {
    match (amount, currency) {
        (None, None) => Ok(None),
        (Some(_), None) => Err(DomainError::new(
            "salary_currency",
            "is required with min_salary: an ISO 4217 code such as EUR",
        )),
        (amount, Some(currency)) => Ok(Some((amount, Currency::parse(currency)?))),
    }
}

/// The filter a query string's parameters set.
pub(crate) fn read_filter(params: &Params) -> Result<JobFilter, ApiError> {
    FILTERS
        .iter()
        .try_fold(JobFilter::default(), |filter, f| (f.read)(params, filter))
}

/// The parameters that set `filter`, with their values, in the order of [`FILTERS`]: what
/// [`read_filter`] reads back into `filter`.
#[cfg_attr(not(any(feature = "client", test)), allow(dead_code))]
pub(crate) fn filter_pairs(filter: &JobFilter) -> Vec<(&'static str, String)> {
    FILTERS
        .iter()
        .filter_map(|f| (f.write)(filter).map(|value| (f.param.name, value)))
        .collect()
}

#[cfg_attr(not(any(feature = "client", test)), allow(dead_code))]
/// A list's entries as a comma list, if there are any.
fn list<'a>(entries: impl Iterator<Item = &'a str>) -> Option<String> {
    let joined = entries.collect::<Vec<_>>().join(",");
    (!joined.is_empty()).then_some(joined)
}

#[cfg_attr(not(any(feature = "client", test)), allow(dead_code))]
/// Search words as text that reads back into the same words, if there are any.
fn words(words: &[String]) -> Option<String> {
    (!words.is_empty()).then(|| words.join(" "))
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};
    use proptest::prelude::*;

    use super::*;
    use crate::api::params::JOB_QUERY;

    /// A filter as the parser leaves one: lists sorted without repeats, words normalized.
    fn filter() -> impl Strategy<Value = JobFilter> {
        let labels = || proptest::collection::btree_set("[a-z0-9][a-z0-9._+-]{0,12}", 0..4);
        let text = || proptest::option::of("[ -~]{0,40}|[a-zé ü!]{0,20}");
        let countries = ["DE", "FR", "US", "BR", "JP", "NZ", "FJ"];
        let country = move || proptest::sample::select(countries.to_vec());
        (
            (labels(), labels(), any::<bool>(), text(), text()),
            (
                proptest::option::of(any::<u128>()),
                proptest::option::of(0.0..=1.0f64),
                // Instants RFC 3339 writes: the years 0000 to 9999.
                proptest::option::of(-62_167_219_200i64..253_402_300_799),
                0..1_000_000_000u32,
            ),
            (
                proptest::collection::btree_set(country(), 0..3),
                proptest::option::of((-90.0..=90.0f64, -180.0..=180.0f64, 1.0..=1_000.0f64)),
                proptest::option::of(country()),
                proptest::option::of((proptest::option::of(any::<u64>()), "[A-Za-z]{3}")),
            ),
            (
                proptest::option::of(-62_167_219_200i64..253_402_300_799),
                any::<bool>(),
            ),
        )
            .prop_map(
                |((domains, levels, remote, q, company), (id, min, at, nanos), places, fresh)| {
                    let (countries, near, remote_from, pay) = places;
                    let (seen, include) = fresh;
                    let filter = JobFilter::default()
                        .domains(domains.iter().filter_map(|d| DomainTag::parse(d).ok()))
                        .seniority(levels.iter().filter_map(|s| Seniority::parse(s).ok()))
                        .remote_only(remote)
                        .company_id(id.and_then(|id| {
                            CompanyId::parse(&uuid::Uuid::from_u128(id).to_string()).ok()
                        }))
                        .min_confidence(min.and_then(|m| Confidence::new(m).ok()))
                        .posted_after(at.and_then(|s| DateTime::<Utc>::from_timestamp(s, nanos)))
                        .countries(countries.iter().filter_map(|c| Country::parse(c).ok()))
                        .near(near.and_then(|(lat, lon, r)| Near::new(lat, lon, r).ok()))
                        .remote_from(remote_from.and_then(|c| Country::parse(c).ok()))
                        .seen_after(seen.and_then(|s| DateTime::<Utc>::from_timestamp(s, nanos)))
                        .reposts(if include {
                            Reposts::Include
                        } else {
                            Reposts::Hide
                        });
                    let mut filter = match pay {
                        Some((Some(amount), c)) => {
                            filter.min_salary(Currency::parse(&c).ok().map(|c| (amount, c)))
                        }
                        Some((None, c)) => filter.salary_currency(Currency::parse(&c).ok()),
                        None => filter,
                    };
                    filter.domains.sort();
                    filter.domains.dedup();
                    filter.seniority.sort();
                    filter.seniority.dedup();
                    if let Some(q) = q.filter(|q| !q.trim().is_empty()) {
                        filter = filter.with_q(&q);
                    }
                    if let Some(company) = company.filter(|c| !c.trim().is_empty()) {
                        filter = filter.with_company(&company);
                    }
                    filter
                },
            )
    }

    proptest! {
        /// What the typed client sends for a filter is read back as that filter: writing is
        /// the inverse of reading, for every filter the table declares.
        #[test]
        fn a_filter_written_as_parameters_reads_back_the_same(filter in filter()) {
            let query = url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(filter_pairs(&filter))
                .finish();
            let params = Params::parse(Some(&query), &JOB_QUERY).map_err(|e| {
                TestCaseError::fail(format!("{query}: {e:?}"))
            })?;
            let read = read_filter(&params).map_err(|e| {
                TestCaseError::fail(format!("{query}: {e:?}"))
            })?;
            prop_assert_eq!(read, filter, "{}", query);
        }
    }

    #[test]
    fn every_filter_is_a_query_parameter_of_the_search_and_of_the_feed() {
        for f in FILTERS {
            assert!(crate::api::JOB_PARAMS.contains(&f.param.name));
            assert!(crate::api::CHANGE_PARAMS.contains(&f.param.name));
        }
    }
}
