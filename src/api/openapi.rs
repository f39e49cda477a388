//! The OpenAPI 3.1 document, served at `GET /api/v1/openapi.json`. The tests below keep it in
//! step with the router: same paths, same methods, same query parameters.

// The documents are still served from the JSON files until their paths are generated too;
// then these schemas replace the files' (the test in it holds the two to each other).
#[cfg_attr(not(test), allow(dead_code))]
mod components;

/// The OpenAPI document as JSON text.
pub const OPENAPI_JSON: &str = include_str!("openapi.json");

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::OPENAPI_JSON;
    use crate::api::params::{COMPANY_PARAMS, JOB_PARAMS};
    use crate::api::routes::ROUTES;

    fn doc() -> Value {
        serde_json::from_str(OPENAPI_JSON).unwrap_or(Value::Null)
    }

    #[test]
    fn the_document_is_openapi_3_1() {
        assert_eq!(doc()["openapi"], "3.1.0");
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
            .flat_map(|(path, methods, _)| {
                methods
                    .split(", ")
                    .map(move |m| ((*path).to_owned(), m.to_owned()))
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
