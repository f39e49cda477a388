//! The OpenAPI 3.1 documents of the public and the admin API, made from the route tables:
//! each endpoint's method, path and [`Doc`], the parameters and answers it declares, and the
//! schemas of the types its bodies are.

pub(crate) mod admin;
mod components;
pub(crate) mod public;
pub(crate) mod spec;

use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use super::route_table::{Credential, Route, Verb};
pub use admin::admin_openapi_json;
pub use public::openapi_json;
pub(crate) use spec::{params_of, Answer, Content, Doc, Form, In, Param, RequestBody};
use spec::{Head, Header, Response};

/// Everything one API's document is made from.
pub(crate) struct ApiDoc<Op: 'static> {
    pub(crate) head: &'static Head,
    pub(crate) routes: &'static [Route<Op>],
    pub(crate) headers: &'static [Header],
    pub(crate) responses: &'static [Response],
    pub(crate) schemas: fn() -> Map<String, Value>,
    /// Whether keyed answers carry the rate limit's headers.
    pub(crate) rate_limited: bool,
    /// Whether `GET` answers are compressed, and so vary by `Accept-Encoding`.
    pub(crate) encoded: bool,
}

/// The headers the document gives an operation's successful answers.
fn answer_headers<Op>(
    api: &ApiDoc<Op>,
    route: &Route<Op>,
    verb: Verb,
    doc: &Doc,
) -> Vec<&'static str> {
    let takes = |name: &str| doc.params.iter().any(|p| p.name == name);
    let mut headers = Vec::new();
    if api.rate_limited && route.credential == Credential::Required {
        headers.extend([
            "X-RateLimit-Limit",
            "X-RateLimit-Remaining",
            "X-RateLimit-Reset",
            "RateLimit-Policy",
            "RateLimit",
        ]);
    }
    headers.push("X-Request-Id");
    if api.encoded && verb == Verb::Get {
        headers.extend(["Vary", "Content-Encoding"]);
    }
    if takes("If-None-Match") {
        headers.extend(["ETag", "Cache-Control"]);
    }
    if takes("Idempotency-Key") {
        headers.extend(["Location", "Idempotent-Replayed"]);
    }
    headers
}

/// An operation object.
fn operation<Op>(api: &ApiDoc<Op>, route: &Route<Op>, verb: Verb, doc: &Doc) -> Value {
    let headers = answer_headers(api, route, verb, doc);
    let mut responses = Map::new();
    for answer in doc.answers {
        responses.insert(answer.status.to_string(), answer.object(&headers));
    }
    for status in doc.errors {
        let name = api
            .responses
            .iter()
            .find(|r| r.status == *status)
            .map_or("InternalError", |r| r.name);
        responses.insert(status.to_string(), spec::reference("responses", name));
    }
    let mut object = json!({
        "operationId": doc.id,
        "tags": [doc.tag],
        "summary": doc.summary,
        "description": doc.description,
        "parameters": doc.params.iter().map(|p| p.listed()).collect::<Vec<_>>(),
        "responses": responses,
    });
    if let Some(body) = &doc.body {
        object["requestBody"] = body.object();
    }
    if route.credential == Credential::None {
        object["security"] = json!([]);
    }
    object
}

/// The document of one API.
pub(crate) fn document<Op>(api: &ApiDoc<Op>) -> Value {
    let mut paths = Map::new();
    let mut parameters = Map::new();
    for route in api.routes {
        let mut item = Map::new();
        for endpoint in route.endpoints {
            let doc = endpoint.doc;
            for param in doc.params {
                if let Some(name) = param.component {
                    parameters.insert(name.to_owned(), param.object());
                }
            }
            item.insert(
                endpoint.verb.as_str().to_ascii_lowercase(),
                operation(api, route, endpoint.verb, doc),
            );
        }
        paths.insert(route.path.to_owned(), item.into());
    }
    let head = api.head;
    let headers: Map<String, Value> = api
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_owned(),
                json!({ "description": h.description, "schema": (h.schema)() }),
            )
        })
        .collect();
    let responses: Map<String, Value> = api
        .responses
        .iter()
        .map(|r| (r.name.to_owned(), r.object()))
        .collect();
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": head.title,
            "version": head.version,
            "description": head.description,
        },
        "servers": (head.servers)(),
        "security": (head.security)(),
        "tags": head.tags.iter().map(|(name, description)| json!({ "name": name, "description": description })).collect::<Vec<_>>(),
        "paths": paths,
        "components": {
            "schemas": (api.schemas)(),
            "responses": responses,
            "parameters": parameters,
            "headers": headers,
            "securitySchemes": (head.security_schemes)(),
        },
    })
}

/// A document as JSON text, made once.
pub(crate) fn text_of<Op>(cell: &'static OnceLock<String>, api: &ApiDoc<Op>) -> &'static str {
    cell.get_or_init(|| document(api).to_string())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::openapi_json;
    use crate::api::endpoints::ROUTES;
    use crate::api::params::{COMPANY_PARAMS, JOB_PARAMS};

    fn doc() -> Value {
        serde_json::from_str(openapi_json()).unwrap_or(Value::Null)
    }

    #[test]
    fn the_document_is_openapi_3_1() {
        assert_eq!(doc()["openapi"], "3.1.0");
    }

    /// Every `$ref` of a document, as `(kind, name)`.
    fn references(value: &Value, out: &mut BTreeSet<(String, String)>) {
        match value {
            Value::Object(object) => {
                if let Some(r) = object.get("$ref").and_then(Value::as_str) {
                    let mut parts = r.trim_start_matches("#/components/").splitn(2, '/');
                    let kind = parts.next().unwrap_or_default().to_owned();
                    out.insert((kind, parts.next().unwrap_or_default().to_owned()));
                }
                object.values().for_each(|v| references(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| references(v, out)),
            _ => {}
        }
    }

    #[test]
    fn every_reference_of_each_document_names_one_of_its_components() {
        for text in [super::openapi_json(), super::admin_openapi_json()] {
            let doc: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            let mut named = BTreeSet::new();
            references(&doc, &mut named);
            assert!(named.len() > 20, "{named:?}");
            let missing: Vec<_> = named
                .iter()
                .filter(|(kind, name)| doc["components"][kind.as_str()][name.as_str()].is_null())
                .collect();
            assert!(missing.is_empty(), "{missing:?}");
        }
    }

    #[test]
    fn the_document_has_exactly_the_routes_and_methods_the_router_serves() {
        let doc = doc();
        let paths = doc["paths"].as_object().cloned().unwrap_or_default();
        let documented: BTreeSet<(String, String)> = paths
            .iter()
            .flat_map(|(path, item)| {
                item.as_object()
                    .into_iter()
                    .flat_map(|ops| ops.keys())
                    .filter(|m| ["get", "post", "put", "patch", "delete"].contains(&m.as_str()))
                    .map(move |m| (path.clone(), m.to_uppercase()))
            })
            .collect();
        let served: BTreeSet<(String, String)> = ROUTES
            .iter()
            .flat_map(|route| {
                route
                    .endpoints
                    .iter()
                    .map(|e| (route.path.to_owned(), e.verb.as_str().to_owned()))
            })
            .collect();
        assert_eq!(documented, served);
    }

    fn query_params(doc: &Value, path: &str) -> BTreeSet<String> {
        let resolve = |p: &Value| -> Value {
            match p["$ref"].as_str() {
                Some(r) => {
                    let name = r.rsplit('/').next().unwrap_or_default();
                    doc["components"]["parameters"][name].clone()
                }
                None => p.clone(),
            }
        };
        doc["paths"][path]["get"]["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .map(resolve)
            .filter(|p| p["in"] == "query")
            .filter_map(|p| p["name"].as_str().map(str::to_owned))
            .collect()
    }

    #[test]
    fn list_endpoints_document_exactly_the_parameters_they_accept() {
        let doc = doc();
        let jobs: BTreeSet<String> = JOB_PARAMS.iter().map(|s| (*s).to_owned()).collect();
        let companies: BTreeSet<String> = COMPANY_PARAMS.iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(query_params(&doc, "/api/v1/jobs"), jobs);
        assert_eq!(query_params(&doc, "/api/v1/companies"), companies);
    }
}
