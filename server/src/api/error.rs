use app::backend::ServiceError;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Map, Value};

/// An error as clients see it: a status and `{"error", "message", "field", ...details}`.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub field: Option<String>,
    pub details: Map<String, Value>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into(), field: None, details: Map::new() }
    }

    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    fn detail(mut self, key: &str, value: Value) -> Self {
        self.details.insert(key.into(), value);
        self
    }

    pub fn not_found(what: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", format!("{what} not found"))
    }

    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "sign in, or send a valid API token as `Authorization: Bearer <token>`",
        )
    }

    pub fn invalid(field: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        let field = field.into();
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid", format!("{field}: {reason}")).field(field)
    }
}

impl From<ServiceError> for ApiError {
    fn from(err: ServiceError) -> Self {
        let message = err.public_message();
        match err {
            ServiceError::Invalid(field) => Self::invalid(field.field, field.reason),
            ServiceError::Unauthenticated => Self::unauthorized(),
            ServiceError::NotFound(what) => Self::not_found(what),
            ServiceError::Forbidden(_) => Self::new(StatusCode::FORBIDDEN, "forbidden", message),
            ServiceError::CapacityExceeded { peak_used, capacity, next_free } => {
                Self::new(StatusCode::CONFLICT, "capacity_exceeded", message)
                    .detail("peak_used", json!(peak_used))
                    .detail("capacity", json!(capacity))
                    .detail("next_free", json!(next_free))
            }
            ServiceError::QuotaExceeded(refusal) => Self::new(StatusCode::CONFLICT, "quota_exceeded", message)
                .detail("limit", json!(refusal.limit))
                .detail("allowed", json!(refusal.allowed))
                .detail("used", json!(refusal.used))
                .detail("left", json!(refusal.left))
                .detail("week_start", json!(refusal.week.map(|w| w.start))),
            ServiceError::CapacityBelowBooked { booked, bookings, .. } => {
                Self::new(StatusCode::CONFLICT, "capacity_below_booked", message)
                    .field("kinds")
                    .detail("booked", json!(booked))
                    .detail("bookings", json!(bookings))
            }
            ServiceError::IllegalTransition(illegal) => {
                Self::new(StatusCode::CONFLICT, "illegal_transition", message).detail("state", json!(illegal.from))
            }
            ServiceError::Conflict { code, field, .. } => {
                let err = Self::new(StatusCode::CONFLICT, code, message);
                match field {
                    Some(field) => err.field(field),
                    None => err,
                }
            }
            ServiceError::Unavailable => Self::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message),
            ServiceError::Database(_) | ServiceError::Internal(_) => {
                Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = Map::new();
        body.insert("error".into(), json!(self.code));
        body.insert("message".into(), json!(self.message));
        body.insert("field".into(), json!(self.field));
        body.extend(self.details);
        let mut response = (self.status, Json(Value::Object(body))).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            retry_after(&mut response);
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// Seconds a client should wait before retrying, sent as `Retry-After`.
const RETRY_AFTER_SECONDS: &str = "2";

/// Tells the client when to try again (every 503: the API's, a page's, an outage's).
pub fn retry_after(response: &mut Response) {
    response.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from_static(RETRY_AFTER_SECONDS));
}
