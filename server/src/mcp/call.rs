//! A tool's call as the REST request it stands for: path parameters filled
//! in, query and header parameters set, the rest of the arguments as its
//! JSON body, and the caller's identity attached as the identity layer
//! would have.

use super::schema::{self, Place};
use super::tools::Tool;
use app::backend::accounts::identity::Identity;
use app::model::field_words as words;
use axum::body::Body;
use axum::http::{header, Request};
use serde_json::{Map, Value};

/// The request, or a sentence saying which argument cannot be used.
pub fn request(
    doc: &Value,
    tool: &Tool,
    arguments: Map<String, Value>,
    who: Identity,
) -> Result<Request<Body>, String> {
    let (method, fixed) = tool.operation();
    let operation = tool.path_for(&arguments);
    let mut rest = arguments;
    let mut path = operation.to_string();
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in tool.fixed {
        query.append_pair(name, value);
    }
    let mut builder = Request::builder().method(tool.method.clone());
    for (parameter, _, required) in schema::parameters(doc, &method, operation, &fixed) {
        let Some(value) = rest.remove(&parameter.argument) else {
            if required {
                return Err(format!("{} is needed.", words(&parameter.argument)));
            }
            continue;
        };
        let text = match value {
            Value::String(text) => text,
            Value::Number(_) | Value::Bool(_) => value.to_string(),
            _ => return Err(format!("{} must be a string, a number or true/false.", words(&parameter.argument))),
        };
        match parameter.place {
            Place::Path => {
                let segment = url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
                path = path.replace(&format!("{{{}}}", parameter.name), &segment);
            }
            Place::Query => {
                query.append_pair(&parameter.name, &text);
            }
            Place::Header => builder = builder.header(parameter.name.as_str(), text),
        }
    }
    let query = query.finish();
    let uri = match query.is_empty() {
        true => format!("/api/v1{path}"),
        false => format!("/api/v1{path}?{query}"),
    };
    let body = match schema::body(doc, &method, operation) {
        Some(_) => {
            builder = builder.header(header::CONTENT_TYPE, "application/json");
            Body::from(Value::Object(rest).to_string())
        }
        None => match rest.keys().next() {
            Some(unknown) => return Err(format!("{} is not an argument of {}.", words(unknown), tool.name)),
            None => Body::empty(),
        },
    };
    let mut request = builder.uri(uri).body(body).map_err(|_| "An argument cannot be sent as given.".to_string())?;
    request.extensions_mut().insert(who);
    Ok(request)
}
