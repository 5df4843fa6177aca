//! Extractors that turn bad input into the API's error shape: which field,
//! and why, instead of axum's plain-text rejections.

use super::error::ApiError;
use crate::state::AppState;
use app::backend::ServiceError;
use app::rules::FieldError;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::{header, request::Parts, StatusCode};
use serde::de::DeserializeOwned;
use uuid::Uuid;

/// A JSON body. An empty body counts as `{}`, so actions whose fields are all
/// optional can be posted bare.
pub struct ApiJson<T>(pub T);

/// serde's messages name the offending field in backticks ("unknown field `x`").
fn quoted_name(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(&message[start..start + len])
}

/// Where in the input an error is, as a field path such as `kinds[0].capacity`.
fn field_of(path: &str, message: &str) -> String {
    let named = (message.starts_with("unknown field") || message.starts_with("missing field"))
        .then(|| quoted_name(message))
        .flatten();
    match (path, named) {
        (".", Some(name)) => name.to_string(),
        (".", None) => "body".to_string(),
        // For an unknown field the path already ends with its name.
        (path, Some(name)) if path == name || path.ends_with(&format!(".{name}")) => path.to_string(),
        (path, Some(name)) => format!("{path}.{name}"),
        (path, None) => path.to_string(),
    }
}

fn without_position(message: &str) -> &str {
    message.split(" at line ").next().unwrap_or(message)
}

impl<T: DeserializeOwned> FromRequest<AppState> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        let json_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.starts_with("application/json"));
        if json_type == Some(false) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "send JSON with `Content-Type: application/json`",
            ));
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "payload_too_large",
                    format!("request bodies are limited to {} bytes", super::BODY_LIMIT),
                )
            } else {
                ApiError::new(StatusCode::BAD_REQUEST, "bad_request", "the request body could not be read")
            }
        })?;
        let text: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) { b"{}" } else { &bytes };
        // Syntax first (including trailing text), then shape, so the two kinds
        // of mistake get their own status.
        let mut value: serde_json::Value = serde_json::from_slice(text).map_err(|err| {
            let message = without_position(&err.to_string()).to_string();
            ApiError::new(StatusCode::BAD_REQUEST, "malformed_json", format!("the body is not valid JSON: {message}"))
        })?;
        if let Some(field) = nul_at(&value, String::new()) {
            return Err(ApiError::invalid(field, "text must not contain the NUL character"));
        }
        integral_numbers_as_integers(&mut value);
        serde_path_to_error::deserialize(value).map(ApiJson).map_err(|err| {
            let path = err.path().to_string();
            let message = err.into_inner().to_string();
            ApiError::invalid(field_of(&path, &message), message)
        })
    }
}

/// JSON has one number type: `179.0` is the integer 179 to JSON Schema (and
/// so to the OpenAPI document), but serde refuses it for an `i32`. Whole
/// numbers written with a fraction become integers; other floats stay as
/// they are, and `f64` fields take integers anyway.
fn integral_numbers_as_integers(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Number(number) => {
            if let Some(float) = number.as_f64().filter(|_| number.is_f64()) {
                // i64's range as floats: -2^63 inclusive to 2^63 exclusive, both exact.
                const TWO_TO_63: f64 = 9_223_372_036_854_775_808.0;
                if float.fract() == 0.0 && (-TWO_TO_63..TWO_TO_63).contains(&float) {
                    *value = Value::from(float as i64);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_numbers_as_integers),
        Value::Object(fields) => fields.values_mut().for_each(integral_numbers_as_integers),
        _ => {}
    }
}

/// The path (`a.b[2]`) of the first string, or key, holding U+0000:
/// PostgreSQL's text cannot store it, so it is refused before it gets there.
fn nul_at(value: &serde_json::Value, path: String) -> Option<String> {
    let named = |path: &str| if path.is_empty() { "body".to_string() } else { path.to_string() };
    match value {
        serde_json::Value::String(text) => text.contains('\0').then(|| named(&path)),
        serde_json::Value::Array(items) => {
            items.iter().enumerate().find_map(|(i, item)| nul_at(item, format!("{path}[{i}]")))
        }
        serde_json::Value::Object(fields) => fields.iter().find_map(|(key, item)| {
            let inner = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            if key.contains('\0') {
                return Some(named(&path));
            }
            nul_at(item, inner)
        }),
        _ => None,
    }
}

/// The name (NULs removed) of the first `application/x-www-form-urlencoded`
/// argument holding U+0000: a query string, or a server fn's form body.
pub fn form_argument_with_nul(encoded: &[u8]) -> Option<String> {
    form_urlencoded::parse(encoded)
        .find(|(k, v)| k.contains('\0') || v.contains('\0'))
        .map(|(k, _)| k.replace('\0', ""))
}

/// Query parameters, with the failing parameter named.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or("");
        // As in bodies: PostgreSQL's text cannot hold U+0000.
        if let Some(name) = form_argument_with_nul(query.as_bytes()) {
            return Err(ApiError::invalid(name, "text must not contain the NUL character"));
        }
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(de).map(ApiQuery).map_err(|err| {
            let path = err.path().to_string();
            let message = err.into_inner().to_string();
            ApiError::invalid(field_of(&path, &message), message)
        })
    }
}

/// An id in the path; one that is not a UUID names nothing, so it is a 404.
pub struct PathId(pub Uuid);

impl<S: Send + Sync> FromRequestParts<S> for PathId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Path(raw) =
            Path::<String>::from_request_parts(parts, state).await.map_err(|_| ApiError::not_found("resource"))?;
        raw.parse().map(PathId).map_err(|_| ApiError::not_found("resource"))
    }
}

/// The `Idempotency-Key` header, when sent: a request repeated with the
/// same key gets the first answer (`admission::idempotency`).
pub struct IdempotencyKey(pub Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for IdempotencyKey {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        let Some(value) = parts.headers.get("idempotency-key") else { return Ok(IdempotencyKey(None)) };
        let text = value.to_str().ok().map(str::trim).filter(|v| (1..=255).contains(&v.len())).ok_or_else(|| {
            ApiError::from(ServiceError::from(FieldError::new(
                "Idempotency-Key",
                "must be 1 to 255 visible ASCII characters",
            )))
        })?;
        Ok(IdempotencyKey(Some(text.to_string())))
    }
}
