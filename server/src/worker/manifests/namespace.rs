use super::{typed, Session, BOOKING_ANNOTATION};
use k8s_openapi::api::core::v1::Namespace;
use serde_json::json;

/// The session's namespace: Berth's labels, the booking annotation, and Pod
/// Security admission enforcing `baseline` (GPU workspace images need it)
/// while warning and auditing against `restricted`.
pub fn namespace(session: &Session) -> Namespace {
    let mut labels = session.labels();
    for mode in ["enforce", "warn", "audit"] {
        let level = if mode == "enforce" { "baseline" } else { "restricted" };
        labels.insert(format!("pod-security.kubernetes.io/{mode}"), level.to_string());
        labels.insert(format!("pod-security.kubernetes.io/{mode}-version"), "latest".to_string());
    }
    typed(json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": session.namespace(),
            "labels": labels,
            "annotations": { BOOKING_ANNOTATION: session.booking_id.to_string() },
        },
    }))
}
