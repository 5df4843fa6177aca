//! Compiled, never run: only its build time is measured.
fn main() {
    let value: serde_json::Value = serde_json::json!({ "reference": true });
    let pattern = regex::Regex::new("ref").unwrap();
    tokio::runtime::Runtime::new().unwrap().block_on(async { println!("{}", pattern.is_match(&value.to_string())) });
}
