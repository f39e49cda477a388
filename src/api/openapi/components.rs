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
use crate::api::error::Problem;
use crate::api::error_code::ErrorCode;
use crate::api::handlers::changes::{ChangeEventView, ChangePage};
use crate::api::handlers::health::HealthView;
use crate::api::handlers::{NewWebhookBody, WebhookPatchBody};
use crate::api::views::{
    CompanyDetailView, CompanyFacets, CompanyList, CompanySummaryView, DeliveryList, FacetList,
    FacetValue, JobDetailView, JobFacets, JobList, Links, Pagination, WarningView,
    WebhookCreatedView, WebhookList, WebhookView,
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
/// (`None`, `[]`): where it is sent it has a value, so its schema does not admit null. And
/// the defaults deserializing would fill in say nothing of what is sent.
fn as_sent(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            let required = names_of(object.get("required"));
            if let Some(Value::Object(properties)) = object.get_mut("properties") {
                for (name, member) in properties.iter_mut() {
                    if !required.contains(name) {
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
    c.answer::<CompanySummaryView<'_>>("CompanySummary");
    c.answer::<JobDetailView<'_>>("JobDetail");
    c.answer::<CompanyDetailView<'_>>("CompanyDetail");
    c.answer::<Pagination>("Pagination");
    c.answer::<Links>("Links");
    c.answer::<JobFilter>("JobFilters");
    describe(
        c.answer::<JobList<'_>>("JobList"),
        "A page of job search results.",
    );
    describe(
        c.answer::<CompanyList<'_>>("CompanyList"),
        "A page of companies.",
    );
    c.answer::<WebhookView<'_>>("Webhook");
    c.answer::<WebhookCreatedView<'_>>("WebhookCreated");
    describe(
        c.answer::<WebhookList<'_>>("WebhookList"),
        "A page of the webhooks belonging to the calling API key, oldest first.",
    );
    c.request::<NewWebhookBody>("NewWebhook");
    c.request::<WebhookPatchBody>("WebhookPatch");
    c.answer::<Delivery>("Delivery");
    describe(
        c.answer::<DeliveryList<'_>>("DeliveryList"),
        "A page of the 100 most recent deliveries of a webhook, latest scheduled attempt first.",
    );
    c.answer::<UsageReport>("UsageReport");
    problem_codes(c.answer::<Problem>("Problem"), ADMIN_ONLY);
    c.answer::<DeliveryAttempt>("DeliveryAttempt");
    c.answer::<FacetValue<'_>>("FacetValue");
    c.answer::<FacetList<'_>>("FacetList");
    c.answer::<JobFacets<'_>>("JobFacets");
    c.answer::<CompanyFacets<'_>>("CompanyFacets");
    c.answer::<WarningView>("Warning");
    c.answer::<ChangeEventView<'_>>("ChangeEvent");
    c.answer::<ChangePage<'_>>("ChangePage");
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
    c.answer::<admin::LineError>("LineError");
    describe(
        c.answer::<admin::Report>("JobBulkReport"),
        "What a bulk upload of jobs wrote and refused.",
    );
    let companies = c.answer::<admin::Report>("CompanyBulkReport");
    describe(
        companies,
        "What a bulk upload of companies wrote and refused.",
    );
    // Companies are announced to no one: their report never has `announced`.
    if let Some(Value::Object(properties)) = companies.get_mut("properties") {
        properties.remove("announced");
    }
    c.request::<admin::Lookup>("CompanyLookup");
    c.answer::<admin::LookedUp>("CompanyLookupResult");
    c.answer::<admin::KeyView<'_>>("Key");
    c.out.insert(
        "IssuedKey".to_owned(),
        json!({
            "description": "A key just issued: its record with the key, shown only now.",
            "allOf": [{ "$ref": "#/components/schemas/Key" }, { "required": ["key"] }]
        }),
    );
    describe(
        c.answer::<admin::DataList<admin::KeyView<'_>>>("KeyList"),
        "Every issued key, revoked ones too, oldest first; not paged.",
    );
    c.request::<admin::NewKeyBody>("NewKey");
    c.request::<admin::KeyChange>("KeyPatch");
    c.answer::<UsageReport>("UsageReport");
    c.answer::<admin::WebhookHealthView<'_>>("Webhook");
    describe(
        c.answer::<admin::DataList<admin::WebhookHealthView<'_>>>("WebhookList"),
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
    c.request::<admin::BackupTo>("BackupRequest");
    c.answer::<admin::BackupView>("Backup");
    describe(
        c.answer::<ServiceStats>("Stats"),
        "The service's state in numbers, read from memory (never a scan of the store).",
    );
    c.finish()
}

#[cfg(test)]
mod tests {
    //! The generated schemas against the hand-kept documents, structurally: the same
    //! components, properties, required members, types and nullability, enums, formats, refs,
    //! bounds and closed objects. Descriptions may differ.

    use std::collections::BTreeSet;

    use serde_json::{Map, Value};

    use super::{admin_schemas, public_schemas};
    const OPENAPI_JSON: &str = include_str!("../openapi.json");
    const ADMIN_OPENAPI_JSON: &str = include_str!("../admin/openapi.json");

    fn hand_kept(document: &str) -> Map<String, Value> {
        let doc: Value = serde_json::from_str(document).unwrap_or(Value::Null);
        doc["components"]["schemas"]
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    /// One document's schemas, to look `$ref`s up in.
    struct Doc<'a>(&'a Map<String, Value>);

    impl Doc<'_> {
        /// A schema with its `allOf` parts merged in, each `$ref` part read from the
        /// document: properties and required members as one object has them.
        fn merged(&self, schema: &Value) -> Value {
            let Some(parts) = schema.get("allOf").and_then(Value::as_array) else {
                return schema.clone();
            };
            let mut out = schema.clone();
            let Some(object) = out.as_object_mut() else {
                return out;
            };
            object.remove("allOf");
            for part in parts {
                let part = match ref_name(part) {
                    Some(name) => self.merged(self.0.get(name).unwrap_or(&Value::Null)),
                    None => self.merged(part),
                };
                for (key, value) in part.as_object().into_iter().flatten() {
                    match (key.as_str(), object.get_mut(key)) {
                        ("properties", Some(Value::Object(mine))) => {
                            for (k, v) in value.as_object().into_iter().flatten() {
                                mine.entry(k.clone()).or_insert_with(|| v.clone());
                            }
                        }
                        ("required", Some(Value::Array(mine))) => {
                            mine.extend(value.as_array().cloned().unwrap_or_default());
                        }
                        (_, Some(_)) => {}
                        (_, None) => {
                            object.insert(key.clone(), value.clone());
                        }
                    }
                }
            }
            out
        }
    }

    fn ref_name(schema: &Value) -> Option<&str> {
        schema["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix("#/components/schemas/"))
    }

    /// A schema's shape: its types (`"ref:X"` for a reference) and whether null is one.
    fn shape(schema: &Value) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        if let Some(name) = ref_name(schema) {
            out.insert(format!("ref:{name}"));
        }
        match &schema["type"] {
            Value::String(t) => {
                out.insert(t.clone());
            }
            Value::Array(ts) => out.extend(ts.iter().filter_map(Value::as_str).map(str::to_owned)),
            _ => {}
        }
        for key in ["anyOf", "oneOf"] {
            for alternative in schema[key].as_array().into_iter().flatten() {
                // An enum of `const`s is one string type, not alternatives.
                if alternative.get("const").is_some() {
                    out.insert("string".to_owned());
                } else {
                    out.extend(shape(alternative));
                }
            }
        }
        // An integer is a number too; `number` in the hand-kept one admits both.
        out
    }

    fn enum_values(schema: &Value) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = schema["enum"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|v| !v.is_null())
            .map(Value::to_string)
            .collect();
        for key in ["anyOf", "oneOf"] {
            for alternative in schema[key].as_array().into_iter().flatten() {
                if let Some(c) = alternative.get("const") {
                    out.insert(c.to_string());
                }
                out.extend(enum_values(alternative));
            }
        }
        out
    }

    fn names(value: &Value) -> BTreeSet<String> {
        match value {
            Value::Object(o) => o.keys().cloned().collect(),
            Value::Array(a) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => BTreeSet::new(),
        }
    }

    /// What the hand-kept schema says that the generated one does not, at `at`.
    fn differences(
        at: &str,
        hand: &Value,
        hand_doc: &Doc<'_>,
        generated: &Value,
        gen_doc: &Doc<'_>,
        out: &mut Vec<String>,
    ) {
        let (hand, generated) = (hand_doc.merged(hand), gen_doc.merged(generated));
        let (hand_shape, gen_shape) = (shape(&hand), shape(&generated));
        if !hand_shape.is_empty() && hand_shape != gen_shape {
            out.push(format!(
                "{at}: type {hand_shape:?} here, {gen_shape:?} generated"
            ));
        }
        let (hand_enum, gen_enum) = (enum_values(&hand), enum_values(&generated));
        if hand_enum != gen_enum {
            out.push(format!(
                "{at}: enum {hand_enum:?} here, {gen_enum:?} generated"
            ));
        }
        for key in [
            "format",
            "minimum",
            "maximum",
            "minItems",
            "maxItems",
            "minLength",
            "maxLength",
            "maxProperties",
            "pattern",
        ] {
            let (mine, theirs) = (bound(&hand, key), bound(&generated, key));
            if mine.is_some() && mine != theirs {
                out.push(format!("{at}: {key} {mine:?} here, {theirs:?} generated"));
            }
        }
        if hand["additionalProperties"] == Value::Bool(false)
            && generated["additionalProperties"] != Value::Bool(false)
        {
            out.push(format!("{at}: closed here, open generated"));
        }
        if hand["properties"].is_object() || generated["properties"].is_object() {
            let (mine, theirs) = (names(&hand["properties"]), names(&generated["properties"]));
            if mine != theirs {
                out.push(format!(
                    "{at}: properties {mine:?} here, {theirs:?} generated"
                ));
            }
            let (mine, theirs) = (names(&hand["required"]), names(&generated["required"]));
            if mine != theirs {
                out.push(format!(
                    "{at}: required {mine:?} here, {theirs:?} generated"
                ));
            }
            for (name, schema) in hand["properties"].as_object().into_iter().flatten() {
                if let Some(other) = generated["properties"].get(name) {
                    let at = format!("{at}.{name}");
                    differences(&at, schema, hand_doc, other, gen_doc, out);
                }
            }
        }
        for key in ["items", "additionalProperties"] {
            if hand[key].is_object() {
                let at = format!("{at}[{key}]");
                differences(&at, &hand[key], hand_doc, &generated[key], gen_doc, out);
            }
        }
        // A nullable one written as `anyOf: [X, null]`: compare X with X.
        let inner = |s: &Value| {
            ["anyOf", "oneOf"]
                .iter()
                .flat_map(|k| s[*k].as_array().cloned().unwrap_or_default())
                .find(|a| a["type"] != "null" && a.get("const").is_none())
        };
        if let (Some(mine), Some(theirs)) = (inner(&hand), inner(&generated)) {
            if ref_name(&mine).is_none() {
                differences(at, &mine, hand_doc, &theirs, gen_doc, out);
            }
        }
    }

    /// A bound or format, on the schema or on the non-null alternative of a nullable one.
    fn bound(schema: &Value, key: &str) -> Option<Value> {
        let number = |v: &Value| match v.as_f64() {
            Some(n) => Value::from(n),
            None => v.clone(),
        };
        schema.get(key).map(number).or_else(|| {
            ["anyOf", "oneOf"]
                .iter()
                .flat_map(|k| schema[*k].as_array().cloned().unwrap_or_default())
                .find_map(|a| a.get(key).map(number))
        })
    }

    fn compare(document: &str, generated: &Map<String, Value>) -> Vec<String> {
        let hand = hand_kept(document);
        let mut out = Vec::new();
        let (mine, theirs) = (
            names(&Value::Object(hand.clone())),
            names(&Value::Object(generated.clone())),
        );
        if mine != theirs {
            out.push(format!("components {mine:?} here, {theirs:?} generated"));
        }
        let (hand_doc, gen_doc) = (Doc(&hand), Doc(generated));
        for (name, schema) in &hand {
            if let Some(other) = generated.get(name) {
                differences(name, schema, &hand_doc, other, &gen_doc, &mut out);
            }
        }
        out
    }

    fn refs(schema: &Value, out: &mut BTreeSet<String>) {
        match schema {
            Value::Object(o) => {
                out.extend(ref_name(schema).map(str::to_owned));
                o.values().for_each(|v| refs(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }

    #[test]
    fn every_reference_names_a_component_of_its_document() {
        for schemas in [public_schemas(), admin_schemas()] {
            let mut named = BTreeSet::new();
            refs(&Value::Object(schemas.clone()), &mut named);
            let missing: Vec<_> = named.iter().filter(|n| !schemas.contains_key(*n)).collect();
            assert!(missing.is_empty(), "{missing:?}");
        }
    }

    #[test]
    fn the_schemas_are_the_same_every_time() {
        assert_eq!(public_schemas(), public_schemas());
        assert_eq!(admin_schemas(), admin_schemas());
    }

    #[test]
    #[ignore = "prints the generated schemas"]
    fn print() {
        let all = serde_json::json!({"public": public_schemas(), "admin": admin_schemas()});
        println!("{}", serde_json::to_string_pretty(&all).unwrap_or_default());
    }

    #[test]
    fn the_public_schemas_generated_from_the_types_say_what_the_document_says() {
        let differences = compare(OPENAPI_JSON, &public_schemas());
        assert!(differences.is_empty(), "{}", differences.join("\n"));
    }

    #[test]
    fn the_admin_schemas_generated_from_the_types_say_what_the_document_says() {
        let differences = compare(ADMIN_OPENAPI_JSON, &admin_schemas());
        assert!(differences.is_empty(), "{}", differences.join("\n"));
    }
}
