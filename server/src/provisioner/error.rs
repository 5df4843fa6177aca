//! What a worker pass fails with: one enum, as kube-rs's controller-rs has
//! it, so a failure is counted by its kind (`metric_label`) and the worker
//! page says what went wrong without a chain of context strings.

/// A pass that could not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The API server refused a request or did not answer.
    #[error("the cluster: {0}")]
    Kube(#[from] kube::Error),
    /// PostgreSQL could not be read or written.
    #[error("the database: {0}")]
    Database(#[from] sqlx::Error),
    /// A service of the portal's refused (its public message: never a
    /// database's text).
    #[error("{0}")]
    Service(String),
    /// An object the worker builds could not be written as JSON.
    #[error("an object could not be serialised: {0}")]
    Serialize(#[from] serde_json::Error),
    /// The domain workspaces would be published under is not the one the
    /// cluster's policies guard (`guarded_domain`).
    #[error("{0}")]
    UnguardedDomain(String),
}

impl From<app::backend::ServiceError> for WorkerError {
    fn from(err: app::backend::ServiceError) -> Self {
        WorkerError::Service(err.public_message())
    }
}

impl WorkerError {
    /// The `error` label of `berth_worker_pass_errors_total`.
    pub fn metric_label(&self) -> &'static str {
        match self {
            WorkerError::Kube(_) => "kube",
            WorkerError::Database(_) => "database",
            WorkerError::Service(_) => "service",
            WorkerError::Serialize(_) => "serialize",
            WorkerError::UnguardedDomain(_) => "unguarded_domain",
        }
    }
}

pub type WorkerResult<T> = Result<T, WorkerError>;

/// Why a starting session waits for its home or model cache: no failure of
/// the pass, an answer the session's steps show (homes.rs finds it,
/// reconcile.rs reports it).
pub struct HomeBusy(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_failure_has_its_label() {
        let service = WorkerError::from(app::backend::ServiceError::NotFound("pool"));
        assert_eq!((service.metric_label(), service.to_string().as_str()), ("service", "pool not found"));
        let json = WorkerError::from(serde_json::from_str::<u8>("x").unwrap_err());
        assert_eq!(json.metric_label(), "serialize");
        let db = WorkerError::from(sqlx::Error::PoolTimedOut);
        assert_eq!(db.metric_label(), "database");
    }
}
