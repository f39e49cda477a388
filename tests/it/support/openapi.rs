//! OpenAPI documents as the tests read them: the operations a document holds, to compare with
//! a route table of the tests' own.

use std::collections::BTreeSet;

use serde_json::Value;

/// The methods an OpenAPI path item may hold operations for.
const OPERATIONS: &[&str] = &["get", "put", "post", "delete", "patch", "options", "head"];

/// Every operation `doc` documents: (path, method in capitals).
pub fn documented(doc: &Value) -> BTreeSet<(String, String)> {
    doc["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .expect("a path item")
                .keys()
                .filter(|m| OPERATIONS.contains(&m.as_str()))
                .map(move |m| (path.clone(), m.to_uppercase()))
        })
        .collect()
}

/// A route table, each path with its methods, as the (path, method) pairs of [`documented`].
pub fn routes(table: &[(&str, &[&str])]) -> BTreeSet<(String, String)> {
    table
        .iter()
        .flat_map(|(p, ms)| ms.iter().map(move |m| ((*p).to_owned(), (*m).to_owned())))
        .collect()
}
