//! The tools' definitions: names, descriptions for a model, and input and output JSON
//! schemas. The schemas are read from the OpenAPI document the REST API serves, so a tool
//! takes what its endpoint takes and answers what it answers, with the same parameter
//! descriptions (formats, limits, the known vocabulary values); only what a model needs
//! beyond them is written here.

use std::sync::{Arc, OnceLock};

use http::Method;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Map, Value};

use crate::api::{
    openapi_json, CHANGE_PARAMS, COMPANY_PARAMS, JOB_PARAMS, PAGE_PARAMS, SIMILAR_PARAMS,
};
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
const FILTER_RULE: &str = "Filters AND together; a list matches any of its values; words \
match whole, in any case.";

/// Every tool, in the order a model meets them.
pub(crate) const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "search_jobs",
        description: "Active job listings, a page at a time, newest first or (sort=relevance) best match for q first. fields keeps answers small. Use ids with get_job or similar_jobs. One call.",
        method: Method::GET,
        path: "/api/v1/jobs",
        lists: &["domain", "seniority", "country", "facets", "fields"],
        params: JOB_PARAMS,
        read_only: true,
        plan: Plan::Developer,
    },
    ToolSpec {
        name: "get_job",
        description: "One job by id, closed ones too, with its company. One call.",
        method: Method::GET,
        path: "/api/v1/jobs/{id}",
        lists: &[],
        params: &[],
        read_only: true,
        plan: Plan::Developer,
    },
    ToolSpec {
        name: "similar_jobs",
        description: "Active jobs most like one by id, best first; never its copies. One call.",
        method: Method::GET,
        path: "/api/v1/jobs/{id}/similar",
        lists: &[],
        params: SIMILAR_PARAMS,
        read_only: true,
        plan: Plan::Developer,
    },
    ToolSpec {
        name: "list_companies",
        description: "Companies with active jobs, a page at a time; facets=[\"funding_stage\"] counts by stage. One call.",
        method: Method::GET,
        path: "/api/v1/companies",
        lists: &["facets"],
        params: COMPANY_PARAMS,
        read_only: true,
        plan: Plan::Developer,
    },
    ToolSpec {
        name: "get_company",
        description: "One company by id with its newest 100 active jobs (search_jobs with company_id has all). One call.",
        method: Method::GET,
        path: "/api/v1/companies/{id}",
        lists: &[],
        params: &[],
        read_only: true,
        plan: Plan::Developer,
    },
    ToolSpec {
        name: "follow_changes",
        description: "Job changes since a cursor, oldest first (job.new, .updated, .closed, .deleted). Start with after=\"now\", then pass next_cursor; has_more=false: poll later. Filters as in search_jobs. One call.",
        method: Method::GET,
        path: "/api/v1/changes",
        lists: &["domain", "seniority", "country"],
        params: CHANGE_PARAMS,
        read_only: true,
        plan: Plan::Developer,
    },
    ToolSpec {
        name: "get_usage",
        description: "This key's plan, calls used and left this period. Free.",
        method: Method::GET,
        path: "/api/v1/usage",
        lists: &[],
        params: &[],
        read_only: true,
        plan: Plan::Developer,
    },
    ToolSpec {
        name: "create_webhook",
        description: "POSTs each new matching job to callback_url (https), signed per Standard Webhooks; filters as in search_jobs. Agent Pro or higher. The secret (whsec_…) is shown only here. One call.",
        method: Method::POST,
        path: "/api/v1/webhooks",
        lists: &[],
        params: &[],
        read_only: false,
        plan: Plan::LOWEST_WITH_WEBHOOKS,
    },
    ToolSpec {
        name: "list_webhooks",
        description: "This key's webhooks, oldest first, without secrets. One call.",
        method: Method::GET,
        path: "/api/v1/webhooks",
        lists: &[],
        params: PAGE_PARAMS,
        read_only: true,
        plan: Plan::LOWEST_WITH_WEBHOOKS,
    },
    ToolSpec {
        name: "delete_webhook",
        description: "Delete this key's webhook by id. One call.",
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
    // Said once, where the filters are described; the others point to `search_jobs`.
    let description = if spec.params == JOB_PARAMS {
        format!("{} {FILTER_RULE}", spec.description)
    } else {
        spec.description.to_owned()
    };
    // Whether a tool destroys is said of those that change something only.
    let annotations = match spec.read_only {
        true => ToolAnnotations::new().read_only(true),
        false => ToolAnnotations::new()
            .read_only(false)
            .destructive(spec.method == Method::DELETE),
    };
    Tool::new(
        spec.name,
        description,
        Arc::new(input_schema(openapi, operation, spec)),
    )
    .with_raw_output_schema(Arc::new(output_schema(openapi, operation)))
    .with_annotations(annotations)
}

/// The arguments: the endpoint's query and path parameters (not its headers), each with its
/// one-line description for a model (`x-brief`) and its type, bounds and choices; for `POST`,
/// the body's fields. A filter of `search_jobs` is described there only: the other tools
/// that take it say they take its filters, and every listing holds `search_jobs`.
fn input_schema(openapi: &Value, operation: &Value, spec: &ToolSpec) -> JsonObject {
    let search = search_briefs(openapi);
    let described_in_search = |name: &str| spec.name != "search_jobs" && search.contains_key(name);
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
        let mut schema = if spec.lists.contains(&name) {
            json!({"type": "array", "items": {"type": "string"}})
        } else {
            compact(&inline(openapi, &parameter["schema"], 0))
        };
        if !described_in_search(name) {
            described(&mut schema, brief(parameter));
        }
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
        for (name, field) in body["properties"].as_object().into_iter().flatten() {
            let mut schema = compact(field);
            if !described_in_search(name) {
                described(&mut schema, brief(field));
            }
            properties.insert(name.clone(), schema);
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
    schema
}

/// The one line for a model a parameter or field declares, else its description.
fn brief(declared: &Value) -> &str {
    declared["x-brief"]
        .as_str()
        .or_else(|| declared["description"].as_str())
        .unwrap_or_default()
}

/// The one-line descriptions of the search parameters, by name.
fn search_briefs(openapi: &Value) -> std::collections::HashMap<&str, &str> {
    let parameters = openapi["paths"]["/api/v1/jobs"]["get"]["parameters"].as_array();
    parameters
        .into_iter()
        .flatten()
        .map(|p| resolve(openapi, p))
        .filter_map(|p| Some((p["name"].as_str()?, brief(p))))
        .collect()
}

fn described(schema: &mut Value, about: &str) {
    if let (Some(object), false) = (schema.as_object_mut(), about.is_empty()) {
        object.insert("description".into(), about.into());
    }
}

/// What a model needs of a value's schema to fill it in: its type, the format of a string,
/// bounds and choices. Descriptions, patterns, lengths and the formats of numbers are left
/// out, and null (which leaves a field out) from the types: the server checks the rest and
/// its refusal says what to fix.
fn compact(schema: &Value) -> Value {
    const KEPT: &[&str] = &["enum", "const", "minimum", "maximum", "default"];
    let Some(object) = schema.as_object() else {
        return json!({});
    };
    // An optional value is one of its type or null: its type. (Choices of form under a
    // type, such as a date-time or a date, leave the type.)
    if let (None, Some(Value::Array(choices))) = (
        object.get("type"),
        object.get("anyOf").or_else(|| object.get("oneOf")),
    ) {
        if let Some(one) = choices.iter().find(|c| c["type"] != "null") {
            return compact(one);
        }
    }
    let mut out = Map::new();
    let kind = match object.get("type") {
        Some(Value::Array(kinds)) => kinds.iter().find(|k| *k != "null").cloned(),
        kind => kind.cloned(),
    };
    if let Some(kind) = kind {
        if kind == "string" {
            if let Some(format) = object.get("format") {
                out.insert("format".into(), format.clone());
            }
        }
        out.insert("type".into(), kind);
    }
    for key in KEPT {
        if let Some(value) = object.get(*key) {
            out.insert((*key).into(), value.clone());
        }
    }
    if let Some(items) = object.get("items") {
        out.insert("items".into(), compact(items));
    }
    Value::Object(out)
}

/// What a successful call answers, as a shape: the fields of the endpoint's 2xx JSON body
/// and their types (the text beside the answer and the fields themselves say the rest;
/// a deeper schema repeated a job's fields in five tools' listings). An endpoint that
/// answers without a body (`DELETE`) answers `{"id", "deleted"}` as a tool.
fn output_schema(openapi: &Value, operation: &Value) -> JsonObject {
    let responses = operation["responses"].as_object();
    let body = responses
        .into_iter()
        .flatten()
        .find(|(status, _)| status.starts_with('2'))
        .map(|(_, r)| resolve(openapi, r)["content"]["application/json"]["schema"].clone())
        .filter(|s| !s.is_null());
    let Some(body) = body.map(|schema| inline(openapi, &schema, 0)) else {
        return deleted_schema();
    };
    let Value::Object(mut object) = shape(&body, 1) else {
        return JsonObject::new();
    };
    // MCP wants an object at the root.
    object.insert("type".into(), json!("object"));
    object
}

/// A schema cut to its fields and their types, `depth` levels of fields deep. The fields of
/// `allOf` parts (a job with its company) are merged.
fn shape(schema: &Value, depth: usize) -> Value {
    let Some(object) = schema.as_object() else {
        return json!({});
    };
    // One of several: whichever types they are (a value or null), or anything.
    if let (None, Some(Value::Array(choices))) = (
        object.get("type"),
        object.get("anyOf").or_else(|| object.get("oneOf")),
    ) {
        let mut kinds = Vec::new();
        for choice in choices {
            match &choice["type"] {
                Value::String(kind) => kinds.push(Value::String(kind.clone())),
                Value::Array(more) => kinds.extend(more.iter().cloned()),
                _ => return json!({}),
            }
        }
        kinds.dedup();
        return nullable_or(json!({ "type": kinds }));
    }
    let mut out = Map::new();
    if let Some(kind) = object.get("type") {
        if kind.as_array().is_some() {
            return nullable_or(json!({ "type": kind }));
        }
        out.insert("type".into(), kind.clone());
    }
    if let Some(items) = object.get("items").filter(|_| depth > 0) {
        out.insert("items".into(), shape(items, depth));
    }
    let mut fields = Map::new();
    let parts = object.get("allOf").and_then(Value::as_array);
    for part in std::iter::once(schema).chain(parts.into_iter().flatten()) {
        let properties = part["properties"].as_object().into_iter().flatten();
        if depth > 0 {
            fields.extend(properties.map(|(k, v)| (k.clone(), shape(v, depth - 1))));
        }
    }
    if !fields.is_empty() {
        out.entry("type").or_insert_with(|| json!("object"));
        out.insert("properties".into(), Value::Object(fields));
    }
    Value::Object(out)
}

/// A field that may be null as any value (`{}`): its type beside `null` is the field's
/// name's to tell, and the listing every agent holds stays small.
fn nullable_or(kinds: Value) -> Value {
    match kinds["type"].as_array() {
        Some(kinds) if kinds.iter().any(|k| k == "null") => json!({}),
        _ => kinds,
    }
}

/// The answer of a tool whose endpoint answers `204 No Content`.
fn deleted_schema() -> JsonObject {
    let schema = json!({
        "type": "object",
        "properties": {
            "id": { "type": "string", "format": "uuid" },
            "deleted": { "type": "boolean", "const": true },
        },
        "required": ["id", "deleted"],
    });
    match schema {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
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

    /// Every agent holds the listing in its context before its first call: it stays under
    /// 10 KB, and every argument is described once, in its tool or in `search_jobs`.
    #[test]
    fn the_listing_is_small_and_describes_every_argument_once() {
        let listed = serde_json::to_string(&json!({ "tools": tools() })).expect("serialises");
        assert!(
            listed.len() < 10_000,
            "tools/list holds {} bytes",
            listed.len()
        );
        let search = &tools()[0].input_schema["properties"];
        for tool in tools() {
            let properties = tool.input_schema["properties"]
                .as_object()
                .expect("properties");
            for (name, schema) in properties {
                let described = |s: &Value| s["description"].as_str().is_some_and(|d| d.len() > 8);
                let own = described(schema);
                let in_search = tool.name != "search_jobs" && described(&search[name]);
                assert!(
                    own != in_search,
                    "{}.{name}: described {own}, in search {in_search}",
                    tool.name
                );
            }
            assert!(
                !listed.contains("%2B"),
                "no percent-encoding advice for a model"
            );
        }
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
