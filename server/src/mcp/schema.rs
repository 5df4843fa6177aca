//! A tool's input schema, read from the REST operation it stands for in the
//! OpenAPI document (`api/openapi.json`): its path and query parameters,
//! its `Idempotency-Key` header as `idempotency_key`, and its JSON body's
//! properties, as one object. One source for REST and MCP: a field added to
//! the API is an argument of its tool, with the same bounds.

use serde_json::{Map, Value};

/// A named argument of an operation and where the request carries it.
pub struct Parameter {
    pub argument: String,
    pub name: String,
    pub place: Place,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Path,
    Query,
    Header,
}

fn operation<'a>(doc: &'a Value, method: &str, path: &str) -> Option<&'a Value> {
    doc.pointer(&format!("/paths/{}/{method}", path.replace('~', "~0").replace('/', "~1")))
}

/// The operation's parameters; `fixed` ones (set by the tool itself) left out.
pub fn parameters(doc: &Value, method: &str, path: &str, fixed: &[&str]) -> Vec<(Parameter, Value, bool)> {
    let list = operation(doc, method, path).and_then(|op| op["parameters"].as_array()).cloned().unwrap_or_default();
    list.into_iter()
        .filter_map(|p| {
            let name = p["name"].as_str()?.to_string();
            let place = match p["in"].as_str()? {
                "path" => Place::Path,
                "query" => Place::Query,
                "header" => Place::Header,
                _ => return None,
            };
            let argument = name.to_ascii_lowercase().replace('-', "_");
            if fixed.contains(&argument.as_str()) {
                return None;
            }
            let mut schema = p["schema"].clone();
            if let (Some(description), Some(object)) = (p["description"].as_str(), schema.as_object_mut()) {
                object.insert("description".into(), description.into());
            }
            let required = p["required"].as_bool().unwrap_or(false);
            Some((Parameter { argument, name, place }, schema, required))
        })
        .collect()
}

/// The JSON body's schema (its `$ref` followed), if the operation takes one.
pub fn body(doc: &Value, method: &str, path: &str) -> Option<Value> {
    let schema = operation(doc, method, path)?.pointer("/requestBody/content/application~1json/schema")?;
    Some(resolved(doc, schema).clone())
}

fn resolved<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str().and_then(|r| r.strip_prefix('#')) {
        Some(pointer) => doc.pointer(pointer).unwrap_or(schema),
        None => schema,
    }
}

/// The tool's input schema: every parameter and body property as one object.
pub fn input(doc: &Value, method: &str, path: &str, fixed: &[&str]) -> Map<String, Value> {
    let (mut properties, mut required) = (Map::new(), Vec::new());
    for (parameter, schema, needed) in parameters(doc, method, path, fixed) {
        if needed {
            required.push(Value::from(parameter.argument.clone()));
        }
        properties.insert(parameter.argument, schema);
    }
    if let Some(body) = body(doc, method, path) {
        for (name, schema) in body["properties"].as_object().cloned().unwrap_or_default() {
            properties.insert(name, schema);
        }
        required.extend(body["required"].as_array().cloned().unwrap_or_default());
    }
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("required".into(), Value::Array(required));
    schema.insert("additionalProperties".into(), false.into());
    // The components it names, under `$defs` where a JSON Schema looks.
    let mut defs = Map::new();
    let mut value = Value::Object(schema);
    relink(doc, &mut value, &mut defs);
    if !defs.is_empty() {
        value["$defs"] = Value::Object(defs);
    }
    match value {
        Value::Object(schema) => schema,
        _ => Map::new(),
    }
}

/// One input for two operations (a tool that stands for either): every
/// argument of both, required where both require it.
pub fn either(mut one: Map<String, Value>, other: Map<String, Value>) -> Map<String, Value> {
    let required_by = |schema: &Map<String, Value>| schema["required"].as_array().cloned().unwrap_or_default();
    let (theirs, mut required) = (required_by(&other), required_by(&one));
    required.retain(|name| theirs.contains(name));
    one.insert("required".into(), Value::Array(required));
    for key in ["properties", "$defs"] {
        let Some(Value::Object(more)) = other.get(key).cloned() else { continue };
        let Value::Object(mine) = one.entry(key).or_insert_with(|| Value::Object(Map::new())) else { continue };
        for (name, schema) in more {
            mine.entry(name).or_insert(schema);
        }
    }
    one
}

/// Points `#/components/schemas/X` at `#/$defs/X`, copying each component
/// (and those it names) into `defs` once.
fn relink(doc: &Value, value: &mut Value, defs: &mut Map<String, Value>) {
    match value {
        Value::Object(object) => {
            if let Some(name) =
                object.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/schemas/"))
            {
                let name = name.to_string();
                object.insert("$ref".into(), format!("#/$defs/{name}").into());
                if !defs.contains_key(&name) {
                    let mut component = doc["components"]["schemas"][&name].clone();
                    defs.insert(name.clone(), Value::Null);
                    relink(doc, &mut component, defs);
                    defs.insert(name, component);
                }
            }
            for child in object.values_mut() {
                relink(doc, child, defs);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| relink(doc, item, defs)),
        _ => {}
    }
}
