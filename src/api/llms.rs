//! `GET /llms.txt`: the API on one page of Markdown for language models and the agents built
//! on them (the llms.txt convention): what it is for, each endpoint with its parameters,
//! authentication, limits and error codes, and a link to the OpenAPI document. Served without
//! a key and not metered, like the OpenAPI document; the tests below keep it in step with the
//! router and with the error codes the OpenAPI document lists.

use bytes::Bytes;
use http::{Method, Request};

use super::error::ApiError;
use super::handlers::{no_params, Handled};
use super::routes::static_document;
use super::Reply;

/// The page's text.
pub const LLMS_TXT: &str = include_str!("llms.txt");

/// Where it is served: at the root, where agents look for it.
pub(crate) const PATH: &str = "/llms.txt";

const ALLOW: &str = "GET, HEAD, OPTIONS";

/// Answers a request for the page.
pub(crate) fn answer(req: &Request<Bytes>) -> Handled {
    match *req.method() {
        Method::OPTIONS => return Ok(Reply::options(ALLOW)),
        Method::GET | Method::HEAD => {}
        _ => return Err(ApiError::MethodNotAllowed { allow: ALLOW }.into()),
    }
    no_params(req)?;
    static TAG: std::sync::OnceLock<super::etag::ETag> = std::sync::OnceLock::new();
    Ok(static_document(
        req,
        &TAG,
        "llms.txt",
        LLMS_TXT,
        Some("text/markdown; charset=utf-8"),
    ))
}

#[cfg(test)]
mod tests {
    use super::LLMS_TXT;
    use crate::api::endpoints::ROUTES;
    use crate::api::openapi_json;

    #[test]
    fn it_names_every_endpoint_the_router_serves() {
        for route in ROUTES {
            // `GET|PATCH|DELETE /api/v1/webhooks/{id}` names a path once for its methods.
            assert!(LLMS_TXT.contains(route.path), "{} is missing", route.path);
        }
    }

    #[test]
    fn it_names_every_error_code_of_the_openapi_document() {
        let doc: serde_json::Value = serde_json::from_str(openapi_json()).expect("JSON");
        let codes = doc["components"]["schemas"]["Problem"]["properties"]["code"]["enum"]
            .as_array()
            .expect("the codes");
        assert!(codes.len() > 10);
        for code in codes {
            let code = code.as_str().expect("a code");
            assert!(LLMS_TXT.contains(&format!("`{code}`")), "{code} is missing");
        }
    }

    #[test]
    fn it_is_markdown_with_a_title_and_a_summary() {
        assert!(LLMS_TXT.starts_with("# "));
        assert!(LLMS_TXT.lines().any(|l| l.starts_with("> ")));
        assert!(LLMS_TXT.contains("(/api/v1/openapi.json)"));
    }
}
