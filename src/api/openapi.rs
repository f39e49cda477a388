//! The OpenAPI 3.1 document, served at `GET /api/v1/openapi.json`. A test checks that it
//! names exactly the routes and parameters the router serves.

/// The OpenAPI document as JSON text.
pub const OPENAPI_JSON: &str = include_str!("openapi.json");
