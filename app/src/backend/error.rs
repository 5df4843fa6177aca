use crate::model::Window;
use crate::rules::state_machine::IllegalTransition;
use crate::rules::FieldError;
use uuid::Uuid;

/// What a service call can refuse with. Transports map each variant to a
/// status; `Database` is logged and never shown.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error(transparent)]
    Invalid(#[from] FieldError),
    /// Nobody is signed in (or the session or token has expired).
    #[error("sign in first")]
    Unauthenticated,
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error("{0}")]
    Forbidden(&'static str),
    #[error("not enough free capacity: {peak_used} of {capacity} units are already booked at the busiest moment of this window")]
    CapacityExceeded { peak_used: i32, capacity: i32, next_free: Option<Window> },
    #[error("{}", .0.explain())]
    QuotaExceeded(crate::rules::quota::QuotaRefusal),
    #[error("kind {kind}: {booked} units are booked at once, more than the new capacity of {capacity}")]
    CapacityBelowBooked { kind: String, capacity: i32, booked: i32, bookings: Vec<Uuid> },
    #[error(transparent)]
    IllegalTransition(#[from] IllegalTransition),
    #[error("{reason}")]
    Conflict { code: &'static str, field: Option<String>, reason: String },
    /// PostgreSQL cannot be reached (down, restarting, failing over): the
    /// client should retry shortly. Answered as 503.
    #[error("the database cannot be reached; try again in a few seconds")]
    Unavailable,
    #[error("database error")]
    Database(#[source] sqlx::Error),
    /// A failure with no client-side cause; logged where it happens.
    #[error("internal error: {0}")]
    Internal(&'static str),
}

impl From<sqlx::Error> for ServiceError {
    /// Named constraints are part of the contract: the ones a client can break
    /// become client errors, everything else stays an internal error.
    fn from(err: sqlx::Error) -> Self {
        if is_unavailable(&err) {
            tracing::warn!(error = %err, "the database cannot be reached");
            return Self::Unavailable;
        }
        if let Some(db) = err.as_database_error() {
            match db.constraint() {
                Some("pool_name_key") => {
                    return Self::Conflict {
                        code: "duplicate",
                        field: Some("name".into()),
                        reason: "a pool with this name exists".into(),
                    }
                }
                Some("cluster_name_key") => {
                    return Self::Conflict {
                        code: "duplicate",
                        field: Some("name".into()),
                        reason: "a cluster with this name exists".into(),
                    }
                }
                Some("booking_one_open_extension") => {
                    return Self::Conflict {
                        code: "extension_pending",
                        field: Some("end".into()),
                        reason: "an extension of this booking already awaits an admin's decision".into(),
                    }
                }
                Some("tenant_slug_key") => {
                    return Self::Conflict {
                        code: "duplicate",
                        field: Some("slug".into()),
                        reason: "a tenant with this slug exists".into(),
                    }
                }
                Some("tenant_slug_format") => {
                    return Self::Invalid(FieldError::new(
                        "slug",
                        "must be lowercase letters, digits and dashes, at most 40 characters",
                    ))
                }
                Some("app_user_email_key") => {
                    return Self::Conflict {
                        code: "duplicate",
                        field: Some("email".into()),
                        reason: "a user with this email exists".into(),
                    }
                }
                _ => {}
            }
        }
        Self::Database(err)
    }
}

/// No connection, or the server is shutting down or starting (SQLSTATE
/// class 08, 57P01–57P03): nothing the request did, so nothing to log as a bug.
pub fn is_unavailable(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) | sqlx::Error::Tls(_) => true,
        sqlx::Error::Database(db) => {
            db.code().is_some_and(|code| code.starts_with("08") || matches!(code.as_ref(), "57P01" | "57P02" | "57P03"))
        }
        _ => false,
    }
}

impl ServiceError {
    /// Text safe to show anyone: database errors are replaced and logged.
    pub fn public_message(&self) -> String {
        match self {
            Self::Database(err) => {
                tracing::error!(error = %err, "database error");
                "internal error; it has been logged".to_string()
            }
            Self::Internal(what) => {
                tracing::error!(what, "internal error");
                "internal error; it has been logged".to_string()
            }
            other => other.to_string(),
        }
    }
}

impl ServiceError {
    /// The field a refusal says is wrong, with its reason, for the form to
    /// mark beside the input ("{label} {reason}"). A conflict's reason is a
    /// sentence about the world, not the input: it stays in the notice.
    pub fn field_error(&self) -> Option<FieldError> {
        match self {
            Self::Invalid(field) => Some(field.clone()),
            _ => None,
        }
    }

    /// The HTTP status every transport answers with; the REST API and the
    /// server fns agree on it.
    pub fn status(&self) -> u16 {
        match self {
            Self::Invalid(_) => 422,
            Self::Unauthenticated => 401,
            Self::Forbidden(_) => 403,
            Self::NotFound(_) => 404,
            Self::CapacityExceeded { .. }
            | Self::QuotaExceeded(_)
            | Self::CapacityBelowBooked { .. }
            | Self::IllegalTransition(_)
            | Self::Conflict { .. } => 409,
            Self::Unavailable => 503,
            Self::Database(_) | Self::Internal(_) => 500,
        }
    }
}

impl ServiceError {
    /// A refusal the person can act on — a state that no longer allows it,
    /// a field to correct, capacity that is taken — rather than a failure
    /// of sign-in, permission, lookup or the server. Pages show the first
    /// kind beside what was done (a notice) and fail with the second.
    pub fn can_be_acted_on(&self) -> bool {
        !(matches!(self.status(), 401 | 403 | 404) || self.status() >= 500)
    }
}

pub type ServiceResult<T> = Result<T, ServiceError>;

/// The one admin check of every service: `refusal` says what the others
/// may not do (a 403 with it).
impl crate::model::Principal {
    pub fn require_admin(&self, refusal: &'static str) -> ServiceResult<()> {
        match self.is_admin() {
            true => Ok(()),
            false => Err(ServiceError::Forbidden(refusal)),
        }
    }
}
