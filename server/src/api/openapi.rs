//! The OpenAPI description of v1, kept as a checked-in JSON file; a test
//! checks that it and the router list the same operations.

use serde_json::Value;

const DOCUMENT: &str = include_str!("openapi.json");

pub fn document() -> Value {
    // The file is parsed in tests, so a broken edit cannot ship.
    serde_json::from_str(DOCUMENT).unwrap_or(Value::Null)
}
