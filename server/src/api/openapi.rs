//! The OpenAPI description of v1: a checked-in JSON file, completed here
//! from the code where a list would otherwise be copied by hand (the time
//! zones Berth accepts). Tests check that it and the router list the same
//! operations; `.ci/contract.sh` fuzzes the server against it.

use serde_json::Value;
use std::sync::OnceLock;

const DOCUMENT: &str = include_str!("openapi.json");

pub fn document() -> &'static Value {
    static SERVED: OnceLock<Value> = OnceLock::new();
    SERVED.get_or_init(|| {
        // The file is parsed in tests, so a broken edit cannot ship.
        let mut doc: Value = serde_json::from_str(DOCUMENT).unwrap_or(Value::Null);
        if let Some(zone) = doc.pointer_mut("/components/schemas/TimeZone").and_then(Value::as_object_mut) {
            zone.remove("x-berth-enum");
            // Exactly what `str::parse::<chrono_tz::Tz>` accepts.
            let names = chrono_tz::TZ_VARIANTS.iter().map(|tz| Value::from(tz.name())).collect();
            zone.insert("enum".into(), Value::Array(names));
        }
        doc
    })
}
