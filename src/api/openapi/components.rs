//! The `components.schemas` of the two OpenAPI documents, generated from the types that are
//! sent and read: a schema cannot say other than what the code does.
//!
//! Answers are described as they are serialized and request bodies as they are deserialized
//! (the two differ where a field has a default), each by its own generator; a type that is
//! both, such as a job, is one component per direction in the admin document (`Job`, read
//! back as `JobRecord`). Some answers are written by hand for speed (a search page around
//! cached jobs, a job's detail, the change feed); each has a type whose serde form is the
//! same bytes, held to it by a test beside the writer, and the schema comes from that type.

use schemars::generate::{Contract, SchemaSettings};
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{json, Map, Value};

use crate::api::admin::bodies as admin;
use crate::api::admin::wire;
use crate::api::error::Problem;
use crate::api::error_code::ErrorCode;
use crate::api::handlers::health::HealthView;
use crate::api::requests::{NewWebhook, WebhookPatch};
use crate::api::views::{ChangeEvent, ChangePage};
use crate::api::views::{
    CompanyDetail, CompanyFacets, CompanyList, CompanySummary, DeliveryList, FacetList, FacetValue,
    JobDetail, JobFacets, JobList, Links, Pagination, WarningView, Webhook, WebhookCreated,
    WebhookList,
};
use crate::domain::{
    Company, Delivery, DeliveryAttempt, Enrichment, Job, SalaryRange, UsageReport,
};
use crate::query::JobFilter;
use crate::service::ServiceStats;

/// Where OpenAPI keeps schemas that others refer to.
const SCHEMAS: &str = "/components/schemas";

/// Codes only the admin listener answers with (its token, its operations).
const ADMIN_ONLY: &[ErrorCode] = &[
    ErrorCode::MissingAdminToken,
    ErrorCode::InvalidAdminToken,
    ErrorCode::CompanyHasJobs,
    ErrorCode::BackupInProgress,
    ErrorCode::TooManyUploads,
    ErrorCode::Unsupported,
    ErrorCode::InsufficientStorage,
];

/// Codes only the public listener answers with (keys, plans, quotas, webhooks, the feed and
/// content negotiation of cached answers).
const PUBLIC_ONLY: &[ErrorCode] = &[
    ErrorCode::MissingApiKey,
    ErrorCode::InvalidApiKey,
    ErrorCode::BillingInactive,
    ErrorCode::PlanUpgradeRequired,
    ErrorCode::WebhookLimitReached,
    ErrorCode::IdempotencyKeyReused,
    ErrorCode::WebhookDisabled,
    ErrorCode::CursorExpired,
    ErrorCode::QuotaExceeded,
    ErrorCode::RateLimited,
    ErrorCode::NotAcceptable,
];

/// Codes only `/mcp` answers with, which neither document describes.
const MCP_ONLY: &[ErrorCode] = &[ErrorCode::TooManySessions, ErrorCode::TooManyStreams];

/// Builds one document's schemas: the answers' components by their serde form, the request
/// bodies' by what deserializing takes.
struct Components {
    answers: SchemaGenerator,
    requests: SchemaGenerator,
    out: Map<String, Value>,
    /// Names under which the request generator's components go, where a type is read in a
    /// form of its own (`Job` as `JobRecord`).
    request_names: &'static [(&'static str, &'static str)],
}

impl Components {
    fn new(request_names: &'static [(&'static str, &'static str)]) -> Self {
        let settings = |contract| {
            SchemaSettings::draft2020_12().with(|s| {
                s.definitions_path = SCHEMAS.into();
                s.meta_schema = None;
                s.contract = contract;
            })
        };
        Self {
            answers: settings(Contract::Serialize).into_generator(),
            requests: settings(Contract::Deserialize).into_generator(),
            out: Map::new(),
            request_names,
        }
    }

    /// `name` is the schema of `T` as sent.
    fn answer<T: JsonSchema + ?Sized>(&mut self, name: &str) -> &mut Map<String, Value> {
        let mut schema = T::json_schema(&mut self.answers).to_value();
        as_sent(&mut schema);
        self.insert(name, schema)
    }

    /// `name` is the schema of `T` as read.
    fn request<T: JsonSchema + ?Sized>(&mut self, name: &str) -> &mut Map<String, Value> {
        let mut schema = T::json_schema(&mut self.requests).to_value();
        as_read(&mut schema);
        rename_refs(&mut schema, self.request_names);
        self.insert(name, schema)
    }

    fn insert(&mut self, name: &str, mut schema: Value) -> &mut Map<String, Value> {
        // A title is the first line of a doc comment: the component's name says it better.
        if let Some(object) = schema.as_object_mut() {
            object.remove("title");
        }
        self.out.insert(name.to_owned(), schema);
        match self.out.get_mut(name) {
            Some(Value::Object(object)) => object,
            _ => unreachable!("a derived schema is an object"),
        }
    }

    /// The components, with those the types refer to.
    fn finish(mut self) -> Map<String, Value> {
        let referred = [
            (self.answers.take_definitions(true), &[][..], true),
            (
                self.requests.take_definitions(true),
                self.request_names,
                false,
            ),
        ];
        for (definitions, names, sent) in referred {
            for (name, mut schema) in definitions {
                if sent {
                    as_sent(&mut schema);
                } else {
                    as_read(&mut schema);
                }
                rename_refs(&mut schema, names);
                if let Some(object) = schema.as_object_mut() {
                    object.remove("title");
                }
                let name = renamed(&name, names).to_owned();
                self.out.entry(name).or_insert(schema);
            }
        }
        self.out
    }
}

/// An answer as it is sent. A member that may be left out is one skipped when empty
/// (`None`, `[]`): where it is sent it has a value, so its schema does not admit null; but
/// not in an object marked `x-fields-asked` (a job of a search page, whose fields `fields`
/// may leave out, and which are sent as they are, null or not). And the defaults
/// deserializing would fill in say nothing of what is sent.
fn as_sent(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            let required = names_of(object.get("required"));
            let asked = object.get("x-fields-asked") == Some(&json!(true));
            if let Some(Value::Object(properties)) = object.get_mut("properties") {
                for (name, member) in properties.iter_mut() {
                    if !required.contains(name) && !asked {
                        drop_null(member);
                    }
                    if let Some(member) = member.as_object_mut() {
                        member.remove("default");
                    }
                }
            }
            object.values_mut().for_each(as_sent);
        }
        Value::Array(items) => items.iter_mut().for_each(as_sent),
        _ => {}
    }
}

/// A request body as it is read. A time left out is the time it is read, which no document
/// can give as a default.
fn as_read(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if object.get("format") == Some(&json!("date-time")) {
                if let Some(Value::String(_)) = object.get("default") {
                    object.remove("default");
                }
            }
            object.values_mut().for_each(as_read);
        }
        Value::Array(items) => items.iter_mut().for_each(as_read),
        _ => {}
    }
}

fn names_of(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// `["T", "null"]` as `"T"`, `anyOf: [X, null]` as `X`.
fn drop_null(member: &mut Value) {
    let Some(object) = member.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            object.insert("type".to_owned(), only);
        }
    }
    let alternatives = object.get("anyOf").and_then(Value::as_array).cloned();
    if let Some(alternatives) = alternatives {
        let mut kept: Vec<Value> = alternatives
            .into_iter()
            .filter(|a| a.get("type") != Some(&json!("null")))
            .collect();
        if kept.len() == 1 {
            object.remove("anyOf");
            if let Some(Value::Object(only)) = kept.pop() {
                for (key, value) in only {
                    object.entry(key).or_insert(value);
                }
            }
        } else {
            object.insert("anyOf".to_owned(), Value::Array(kept));
        }
    }
}

fn renamed<'a>(name: &'a str, names: &[(&'static str, &'a str)]) -> &'a str {
    names
        .iter()
        .find(|(from, _)| *from == name)
        .map_or(name, |(_, to)| to)
}

/// Points every `$ref` to a renamed component at its new name.
fn rename_refs(schema: &mut Value, names: &[(&'static str, &'static str)]) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                match (key.as_str(), value) {
                    ("$ref", Value::String(target)) => {
                        if let Some(name) = target.strip_prefix("#/components/schemas/") {
                            let name = renamed(name, names);
                            *target = format!("#/components/schemas/{name}");
                        }
                    }
                    (_, value) => rename_refs(value, names),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rename_refs(v, names)),
        _ => {}
    }
}

/// `Problem`'s `code`: the error table's codes that this listener answers with.
fn problem_codes(object: &mut Map<String, Value>, other_listener_only: &[ErrorCode]) {
    let codes: Vec<&str> = ErrorCode::ALL
        .iter()
        .filter(|c| !other_listener_only.contains(c) && !MCP_ONLY.contains(c))
        .map(|c| c.as_str())
        .collect();
    if let Some(code) = object
        .get_mut("properties")
        .and_then(|p| p.get_mut("code"))
        .and_then(Value::as_object_mut)
    {
        code.insert("enum".to_owned(), json!(codes));
    }
}

fn describe(object: &mut Map<String, Value>, description: &str) {
    object.insert("description".to_owned(), json!(description));
}

/// The `components.schemas` of the public API's document (`/api/v1`).
pub(crate) fn public_schemas() -> Map<String, Value> {
    let mut c = Components::new(&[]);
    c.answer::<SalaryRange>("SalaryRange");
    c.answer::<Job>("Job");
    c.answer::<Enrichment>("Enrichment");
    c.answer::<Company>("Company");
    c.answer::<CompanySummary>("CompanySummary");
    c.answer::<JobDetail>("JobDetail");
    c.answer::<CompanyDetail>("CompanyDetail");
    c.answer::<Pagination>("Pagination");
    c.answer::<Links>("Links");
    c.answer::<JobFilter>("JobFilters");
    describe(
        c.answer::<JobList>("JobList"),
        "A page of job search results.",
    );
    describe(
        c.answer::<CompanyList>("CompanyList"),
        "A page of companies.",
    );
    c.answer::<Webhook>("Webhook");
    c.answer::<WebhookCreated>("WebhookCreated");
    describe(
        c.answer::<WebhookList>("WebhookList"),
        "A page of the webhooks belonging to the calling API key, oldest first.",
    );
    c.request::<NewWebhook>("NewWebhook");
    c.request::<WebhookPatch>("WebhookPatch");
    c.answer::<Delivery>("Delivery");
    describe(
        c.answer::<DeliveryList<'_>>("DeliveryList"),
        "A page of the 100 most recent deliveries of a webhook, latest scheduled attempt first.",
    );
    c.answer::<UsageReport>("UsageReport");
    problem_codes(c.answer::<Problem>("Problem"), ADMIN_ONLY);
    c.answer::<DeliveryAttempt>("DeliveryAttempt");
    c.answer::<FacetValue>("FacetValue");
    c.answer::<FacetList>("FacetList");
    c.answer::<JobFacets>("JobFacets");
    c.answer::<CompanyFacets>("CompanyFacets");
    c.answer::<WarningView>("Warning");
    c.answer::<ChangeEvent>("ChangeEvent");
    c.answer::<ChangePage<crate::domain::Job, crate::query::JobFilter>>("ChangePage");
    c.finish()
}

/// The `components.schemas` of the admin API's document (`/admin/v1`).
pub(crate) fn admin_schemas() -> Map<String, Value> {
    let mut c = Components::new(&[
        ("Job", "JobRecord"),
        ("Company", "CompanyRecord"),
        ("SalaryRange", "SalaryRangeInput"),
        ("Enrichment", "EnrichmentInput"),
    ]);
    c.answer::<SalaryRange>("SalaryRange");
    c.answer::<Job>("Job");
    c.answer::<Enrichment>("Enrichment");
    c.answer::<Company>("Company");
    for (record, line) in [("JobRecord", "JobLine"), ("CompanyRecord", "CompanyLine")] {
        let schema = match record {
            "JobRecord" => c.request::<Job>(record),
            _ => c.request::<Company>(record),
        };
        // `PUT /admin/v1/{jobs,companies}/{id}` takes the path's id when the body has none;
        // a bulk line must have it.
        if let Some(Value::Array(required)) = schema.get_mut("required") {
            required.retain(|r| r != "id");
        }
        c.out.insert(
            line.to_owned(),
            json!({
                "description": format!("A line of a bulk upload: a `{record}` with its `id`."),
                "allOf": [
                    { "$ref": format!("#/components/schemas/{record}") },
                    { "required": ["id"] }
                ]
            }),
        );
    }
    c.request::<SalaryRange>("SalaryRangeInput");
    c.request::<Enrichment>("EnrichmentInput");
    // An import line names only the record's fields, at every level but `enrichment.extra`:
    // the reader refuses any other (a misspelt one would be lost).
    for name in [
        "JobRecord",
        "CompanyRecord",
        "SalaryRangeInput",
        "EnrichmentInput",
    ] {
        if let Some(Value::Object(schema)) = c.out.get_mut(name) {
            schema.insert("additionalProperties".to_owned(), json!(false));
        }
    }
    c.answer::<crate::service::LineError>("LineError");
    describe(
        c.answer::<crate::service::BulkReport>("JobBulkReport"),
        "What a bulk upload of jobs wrote and refused.",
    );
    let companies = c.answer::<crate::service::BulkReport>("CompanyBulkReport");
    describe(
        companies,
        "What a bulk upload of companies wrote and refused.",
    );
    // Companies are announced to no one: their report never has `announced`.
    if let Some(Value::Object(properties)) = companies.get_mut("properties") {
        properties.remove("announced");
    }
    c.request::<wire::CompanyLookup>("CompanyLookup");
    c.answer::<wire::LookedUp>("CompanyLookupResult");
    c.answer::<wire::AdminKey>("Key");
    c.out.insert(
        "IssuedKey".to_owned(),
        json!({
            "description": "A key just issued: its record with the key, shown only now.",
            "allOf": [{ "$ref": "#/components/schemas/Key" }, { "required": ["key"] }]
        }),
    );
    describe(
        c.answer::<wire::DataList<wire::AdminKey>>("KeyList"),
        "Every issued key, revoked ones too, oldest first; not paged.",
    );
    c.request::<wire::NewKeyRequest>("NewKey");
    c.request::<wire::KeyChange>("KeyPatch");
    c.answer::<UsageReport>("UsageReport");
    c.answer::<admin::WebhookHealthView>("Webhook");
    describe(
        c.answer::<wire::DataList<admin::WebhookHealthView>>("WebhookList"),
        "Every subscription of every key, oldest first; not paged.",
    );
    c.request::<admin::StatusChange>("WebhookStatus");
    c.answer::<HealthView<'_>>("Health");
    let problem = c.answer::<Problem>("Problem");
    problem_codes(problem, PUBLIC_ONLY);
    // `links` comes only with an expired change feed cursor, which is the public API's.
    if let Some(Value::Object(properties)) = problem.get_mut("properties") {
        properties.remove("links");
    }
    c.request::<wire::CloseUnseen>("CloseUnseen");
    c.answer::<wire::UnseenClosedView>("UnseenClosed");
    c.request::<wire::BackupRequest>("BackupRequest");
    c.answer::<wire::BackupWritten>("Backup");
    describe(
        c.answer::<ServiceStats>("Stats"),
        "The service's state in numbers, read from memory (never a scan of the store).",
    );
    c.finish()
}

#[cfg(test)]
mod tests {
    use super::{admin_schemas, public_schemas};

    #[test]
    fn the_schemas_are_the_same_every_time() {
        assert_eq!(public_schemas(), public_schemas());
        assert_eq!(admin_schemas(), admin_schemas());
    }
}
