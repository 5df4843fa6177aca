use super::{meta, typed, Session};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use serde_json::json;

/// Binds the session's user and co-owners, inside the session namespace, to
/// a role. The subjects list is replaced whole, so a co-owner who is removed
/// (or an owner who left the tenant or was disabled) loses access at the
/// next pass.
fn user_binding(session: &Session, name: &str, role_kind: &str, role: &str) -> RoleBinding {
    typed(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": meta(session, name),
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role },
        "subjects": subjects(session),
    }))
}

/// The session's holders (owner and co-owners) as RBAC subjects.
pub fn subjects(session: &Session) -> Vec<serde_json::Value> {
    let user = |name: &String| json!({ "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name });
    super::holders(session).iter().map(user).collect()
}

/// Berth's ClusterRole for session users (`deploy/rbac/berth-session-user.yaml`):
/// workloads, exec, logs, services, storage and their own ingresses, but not
/// the guard rails (network policies, quota, limits, RBAC, the namespace).
pub const SESSION_USER_ROLE: &str = "berth-session-user";

/// The binding earlier versions made to the built-in `admin` ClusterRole;
/// the worker deletes it where it still exists (a roleRef cannot change).
pub const RETIRED_BINDING: &str = "berth-session-admin";

/// The user works inside their session's namespace only (a RoleBinding of
/// the ClusterRole, so nothing outside it).
pub fn session_user_binding(session: &Session) -> RoleBinding {
    user_binding(session, SESSION_USER_ROLE, "ClusterRole", SESSION_USER_ROLE)
}

/// Reading the quota (and its usage) without being able to change it.
pub fn quota_reader_role(session: &Session) -> Role {
    typed(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": meta(session, "berth-quota-reader"),
        "rules": [{ "apiGroups": [""], "resources": ["resourcequotas", "limitranges"], "verbs": ["get", "list", "watch"] }],
    }))
}

pub fn quota_reader_binding(session: &Session) -> RoleBinding {
    user_binding(session, "berth-quota-reader", "Role", "berth-quota-reader")
}

/// The Secret holding the workspace's access token.
pub const ACCESS_SECRET: &str = "berth-workspace-access";

/// The workspace's access token: random per session, created once, read
/// back only to open the workspace for its owner; never stored by Berth.
pub fn access_secret(session: &Session, token: &str) -> Secret {
    typed(json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": meta(session, ACCESS_SECRET),
        "type": "Opaque",
        "stringData": { "token": token },
    }))
}
