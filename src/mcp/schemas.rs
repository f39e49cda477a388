//! The tools' definitions: names, descriptions for a model, and input and output JSON
//! schemas. The schemas are read from the OpenAPI document the REST API serves, so a tool
//! takes what its endpoint takes and answers what it answers, with the same parameter
//! descriptions (formats, limits, the known vocabulary values); only what a model needs
//! beyond them is written here.

use std::sync::{Arc, OnceLock};

use http::Method;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Map, Value};

use crate::api::{openapi_json, CHANGE_PARAMS, COMPANY_PARAMS, JOB_PARAMS, PAGE_PARAMS};
use crate::domain::Plan;

/// One tool and the endpoint it calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ToolSpec {
    /// The tool's name.
    pub(crate) name: &'static str,
    /// What it does, for a model.
    pub(crate) description: &'static str,
    /// The endpoint's method.
    pub(crate) method: Method,
    /// The endpoint's path pattern in the OpenAPI document.
    pub(crate) path: &'static str,
    /// Arguments sent as comma-separated lists, typed as arrays of strings for a model.
    pub(crate) lists: &'static [&'static str],
    /// The endpoint's query parameters in REST's order, which the query is sent in (so the
    /// answer's `links` are those of the same REST call).
    pub(crate) params: &'static [&'static str],
    /// Whether it only reads.
    pub(crate) read_only: bool,
    /// The lowest plan whose keys may call it; a key of a lower plan is not shown it.
    pub(crate) plan: Plan,
}

impl ToolSpec {
    /// Whether the path carries the `{id}` argument.
    pub(crate) fn takes_id(&self) -> bool {
        self.path.contains("{id}")
    }
}

/// How filters combine, said once for every tool that filters.
const FILTER_RULE: &str = "Filters combine with AND across parameters; a list parameter \
(several values) matches a job holding ANY of its values (OR within). Text matching is by \
whole words, case-insensitive. Every parameter is optional.";

/// Every tool, in the order a model meets them.
pub(crate) const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "search_jobs",
        description: "Search active job listings, newest first, one page at a time. Returns \
            the matching jobs (id, role, company_name, company_id, domains, seniority, remote, \
            location, salary, posted_at, confidence, description), the total count and page \
            info, and optional facet counts. Filters combine with AND across parameters; a \
            list parameter (several values) matches a job holding ANY of its values (OR \
            within). Text matching is by whole words, case-insensitive. Every parameter is \
            optional; none lists every active job. Use the ids in the results with get_job \
            and the company_id with get_company. Ask for facets=[\"domain\",\"seniority\"] to \
            learn which labels exist and how many jobs hold each. Each call counts one call \
            against the monthly quota.",
        method: Method::GET,
        path: "/api/v1/jobs",
        lists: &["domain", "seniority", "facets", "fields"],
        params: JOB_PARAMS,
        read_only: true,
        plan: Plan::Developer,
    },
    ToolSpec {
        name: "get_job",
        description: "Read one job listing by its id (a UUID taken from search_jobs results \
            or a company's active_jobs), with the hiring company's enrichment data. Closed \
            jobs are still found by id. Counts one call.",
        method: Method::GET,
        path: "/api/v1/jobs/{id}",
        lists: &[],
        params: &[],
        read_only: true,
        plan: Plan::Developer,
    },
    ToolSpec {
        name: "list_companies",
        description: "List companies that have active jobs, by name, one page at a time: \
            id, name, web domain, funding stage, blurb and number of active jobs. Filter by \
            funding_stage; ask for facets=[\"funding_stage\"] to learn which stages exist \
            with their counts. Counts one call.",
        method: Method::GET,
        path: "/api/v1/companies",
        lists: &["facets"],
        params: COMPANY_PARAMS,
        read_only: true,
        plan: Plan::Developer,
    },
    ToolSpec {
        name: "get_company",
        description: "Read one company by its id (a UUID from list_companies, or the \
            company_id of a job) with its enrichment data and its newest active jobs (at most \
            100; search_jobs with company_id pages through all of them). Counts one call.",
        method: Method::GET,
        path: "/api/v1/companies/{id}",
        lists: &[],
        params: &[],
        read_only: true,
        plan: Plan::Developer,
    },
    ToolSpec {
        name: "follow_changes",
        description: "Stay in sync with the listings without searching again: the job \
            changes since a cursor, oldest first. Each event is job.new (became active), \
            job.updated (changed), job.closed (no longer active) or job.deleted (removed; job \
            is null), with the job as it then was and its own cursor. Call first with \
            after=\"now\" for the cursor to start from, then again with after set to the \
            answer's next_cursor; has_more=true means more events wait now, false means poll \
            again later. Takes the filters of search_jobs (applied to the job as of each \
            event, closed or not). A cursor older than 30 days is refused with \
            cursor_expired: start again with after=\"now\" and a search. Counts one call.",
        method: Method::GET,
        path: "/api/v1/changes",
        lists: &["domain", "seniority"],
        params: CHANGE_PARAMS,
        read_only: true,
        plan: Plan::Developer,
    },
    ToolSpec {
        name: "get_usage",
        description: "The API key's usage in the current billing period: plan, calls used, \
            calls remaining, monthly quota and the period's start. Free: not counted as a \
            call.",
        method: Method::GET,
        path: "/api/v1/usage",
        lists: &[],
        params: &[],
        read_only: true,
        plan: Plan::Developer,
    },
    ToolSpec {
        name: "create_webhook",
        description: "Register a webhook: the server POSTs each new job matching the filters \
            to callback_url (an https URL), signed per Standard Webhooks. Needs the Agent Pro \
            plan or higher (a lower plan is refused with plan_upgrade_required). The answer \
            holds the signing secret (whsec_…) this once only: keep it to verify deliveries. \
            Counts one call.",
        method: Method::POST,
        path: "/api/v1/webhooks",
        lists: &[],
        params: &[],
        read_only: false,
        plan: Plan::LOWEST_WITH_WEBHOOKS,
    },
    ToolSpec {
        name: "list_webhooks",
        description: "List this API key's webhooks, oldest first, one page at a time (without \
            their secrets). Only Agent Pro keys and higher can register webhooks, so a lower plan's \
            list is empty. Counts one call.",
        method: Method::GET,
        path: "/api/v1/webhooks",
        lists: &[],
        params: PAGE_PARAMS,
        read_only: true,
        plan: Plan::LOWEST_WITH_WEBHOOKS,
    },
    ToolSpec {
        name: "delete_webhook",
        description: "Delete one of this API key's webhooks by its id (from create_webhook or \
            list_webhooks); nothing more is delivered to it. An id that is not one of this \
            key's webhooks is not_found. Counts one call.",
        method: Method::DELETE,
        path: "/api/v1/webhooks/{id}",
        lists: &[],
        params: &[],
        read_only: false,
        plan: Plan::LOWEST_WITH_WEBHOOKS,
    },
];

/// The tool of this name.
pub(crate) fn spec(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The tools a key of `plan` may call, as MCP lists them; every tool when the plan is not
/// known (the server then refuses what the plan does not include, as REST does).
pub(crate) fn tools_for(plan: Option<Plan>) -> Vec<Tool> {
    TOOLS
        .iter()
        .zip(tools())
        .filter(|(spec, _)| plan.is_none_or(|plan| plan >= spec.plan))
        .map(|(_, tool)| tool.clone())
        .collect()
}

/// Every tool as MCP lists it, built once.
pub(crate) fn tools() -> &'static [Tool] {
    static TOOLS_LISTED: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS_LISTED.get_or_init(|| {
        let openapi: Value = serde_json::from_str(openapi_json()).unwrap_or(Value::Null);
        TOOLS.iter().map(|spec| tool(&openapi, spec)).collect()
    })
}

fn tool(openapi: &Value, spec: &ToolSpec) -> Tool {
    let operation = &openapi["paths"][spec.path][spec.method.as_str().to_ascii_lowercase()];
    let description = if spec.lists.is_empty() || spec.name == "search_jobs" {
        spec.description.to_owned()
    } else {
        format!("{} {FILTER_RULE}", spec.description)
    };
    let mut tool = Tool::new(
        spec.name,
        description,
        Arc::new(input_schema(openapi, operation, spec)),
    )
    .with_raw_output_schema(Arc::new(output_schema(openapi, operation)))
    .with_annotations(
        ToolAnnotations::new()
            .read_only(spec.read_only)
            .destructive(spec.method == Method::DELETE),
    );
    tool.title = Some(spec.name.replace('_', " "));
    tool
}

/// The arguments: the endpoint's query and path parameters (not its headers), each with its
/// OpenAPI description and schema; for `POST`, the body's fields.
fn input_schema(openapi: &Value, operation: &Value, spec: &ToolSpec) -> JsonObject {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let parameters = operation["parameters"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for parameter in parameters.iter().map(|p| resolve(openapi, p)) {
        let (Some(name), Some(place)) = (parameter["name"].as_str(), parameter["in"].as_str())
        else {
            continue;
        };
        if place != "query" && place != "path" {
            continue;
        }
        let about = parameter["description"].as_str().unwrap_or_default();
        let schema = if spec.lists.contains(&name) {
            let about = about.replacen("Comma-separated ", "", 1);
            json!({
                "type": "array",
                "items": { "type": "string", "maxLength": 40 },
                "description": format!("A list of values; {about}"),
            })
        } else {
            let mut schema = inline(openapi, &parameter["schema"], 0);
            if let Some(object) = schema.as_object_mut() {
                let about = if place == "path" {
                    format!("{about} Take it from an earlier tool's results.")
                } else {
                    about.to_owned()
                };
                object.insert("description".into(), Value::String(about));
            }
            schema
        };
        if parameter["required"].as_bool() == Some(true) {
            required.push(Value::String(name.to_owned()));
        }
        properties.insert(name.to_owned(), schema);
    }
    if spec.method == Method::POST {
        let body = inline(
            openapi,
            &operation["requestBody"]["content"]["application/json"]["schema"],
            0,
        );
        if let Some(fields) = body["properties"].as_object() {
            properties.extend(fields.clone());
        }
        if let Some(needed) = body["required"].as_array() {
            required.extend(needed.iter().cloned());
        }
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.insert("additionalProperties".into(), json!(false));
    schema
}

/// What a successful call answers: the JSON schema of the endpoint's 2xx JSON body. An
/// endpoint that answers without a body (`DELETE`) answers `{"id", "deleted"}` as a tool.
fn output_schema(openapi: &Value, operation: &Value) -> JsonObject {
    let responses = operation["responses"].as_object();
    let body = responses
        .into_iter()
        .flatten()
        .find(|(status, _)| status.starts_with('2'))
        .map(|(_, r)| resolve(openapi, r)["content"]["application/json"]["schema"].clone())
        .filter(|s| !s.is_null());
    let mut schema = match body {
        Some(schema) => inline(openapi, &schema, 0),
        None => deleted_schema(),
    };
    // MCP wants an object at the root; `allOf` schemas (a job with its company) are one.
    if let Some(object) = schema.as_object_mut() {
        object.entry("type").or_insert_with(|| json!("object"));
        return object.clone();
    }
    JsonObject::new()
}

/// The answer of a tool whose endpoint answers `204 No Content`.
fn deleted_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": { "type": "string", "format": "uuid", "description": "The deleted resource's id." },
            "deleted": { "type": "boolean", "const": true },
        },
        "required": ["id", "deleted"],
    })
}

/// A `$ref` to the OpenAPI document's components, followed; anything else as it is.
fn resolve<'v>(openapi: &'v Value, value: &'v Value) -> &'v Value {
    match value["$ref"].as_str() {
        Some(pointer) => openapi
            .pointer(pointer.trim_start_matches('#'))
            .unwrap_or(value),
        None => value,
    }
}

/// A schema with every `$ref` replaced by what it names, so the tool's schema stands alone.
/// The document's schemas do not refer to themselves; the bound on `$ref`s followed in one
/// branch keeps a future one that does from recursing without end. Nesting without a `$ref`
/// is not bounded: the document is finite.
fn inline(openapi: &Value, schema: &Value, refs_followed: usize) -> Value {
    match schema {
        Value::Object(object) if object.contains_key("$ref") => {
            if refs_followed >= 16 {
                return json!({});
            }
            inline(openapi, resolve(openapi, schema), refs_followed + 1)
        }
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(k, v)| (k.clone(), inline(openapi, v, refs_followed)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| inline(openapi, v, refs_followed))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_shown_the_tools_it_may_call() {
        let names =
            |plan| -> Vec<String> { tools_for(plan).iter().map(|t| t.name.to_string()).collect() };
        let webhooks = ["create_webhook", "list_webhooks", "delete_webhook"];
        let developer = names(Some(Plan::Developer));
        assert_eq!(developer.len(), TOOLS.len() - webhooks.len());
        assert!(webhooks.iter().all(|w| !developer.contains(&w.to_string())));
        for plan in [Some(Plan::AgentPro), Some(Plan::Enterprise), None] {
            assert_eq!(names(plan).len(), TOOLS.len(), "{plan:?}");
        }
    }

    #[test]
    fn every_tool_has_an_object_input_and_output_schema_without_refs() {
        assert_eq!(tools().len(), TOOLS.len());
        for tool in tools() {
            assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
            let output = tool.output_schema.as_ref().expect("an output schema");
            assert_eq!(output["type"], "object", "{}", tool.name);
            let text = serde_json::to_string(&tool).expect("serialises");
            assert!(!text.contains("$ref"), "{} keeps a $ref", tool.name);
            let output = Value::Object((**output).clone());
            assert!(
                required_lists_name_fields(&output),
                "{}: a `required` list holds something other than field names",
                tool.name
            );
        }
    }

    /// Whether every `required` list in a schema, however deep, holds only names: a schema
    /// cut short by inlining holds `{}` there, which clients refuse.
    fn required_lists_name_fields(schema: &Value) -> bool {
        match schema {
            Value::Object(object) => {
                object
                    .iter()
                    .all(|(key, value)| match (key.as_str(), value) {
                        ("required", Value::Array(names)) => names.iter().all(Value::is_string),
                        _ => required_lists_name_fields(value),
                    })
            }
            Value::Array(items) => items.iter().all(required_lists_name_fields),
            _ => true,
        }
    }

    #[test]
    fn search_jobs_takes_every_get_jobs_parameter_and_lists_as_arrays() {
        let search = &tools()[0];
        let properties = search.input_schema["properties"]
            .as_object()
            .expect("properties");
        for name in crate::api::JOB_PARAMS {
            assert!(properties.contains_key(*name), "search_jobs lacks {name}");
        }
        assert_eq!(properties["domain"]["type"], "array");
        assert!(properties["domain"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("engineering")));
        assert_eq!(properties["per_page"]["maximum"], 50);
    }

    #[test]
    fn id_tools_require_the_id_and_create_webhook_its_callback() {
        for name in ["get_job", "get_company", "delete_webhook"] {
            let tool = tools().iter().find(|t| t.name == name).expect(name);
            assert_eq!(tool.input_schema["required"], json!(["id"]), "{name}");
        }
        let create = tools()
            .iter()
            .find(|t| t.name == "create_webhook")
            .expect("create_webhook");
        assert!(create.input_schema["properties"]["callback_url"].is_object());
    }
}
