//! Every object of a session in the order the worker applies them, and
//! the preview its owner reads.

use super::{
    access_secret, ahead, deployment, ingress, kueue, limit_range, namespace, network_policies,
    persistent_volume_claims, proxy_config_map, quota_reader_binding, quota_reader_role, resource_quota, route,
    service, session_config, session_user_binding, Cluster, Expose, Session,
};

/// The objects as multi-document YAML (each document in JSON form, which is
/// YAML), with the access token replaced: a preview never holds a secret.
/// With `--scale-ahead`, the room held before the window comes last.
pub fn preview(session: &Session, cluster: &Cluster) -> String {
    let mut objects: Vec<_> = all(session, cluster, "<generated when the session starts>").into_iter().collect();
    if let Some(scale) = &cluster.scale_ahead {
        objects.extend(ahead::objects(session, cluster, scale));
    }
    objects
        .iter()
        .map(|object| serde_json::to_string_pretty(object).expect("JSON values serialize"))
        .collect::<Vec<_>>()
        .join("\n---\n")
        + "\n"
}

/// Every object of a session, in the order the worker applies them (the
/// namespace first, the workspace last), as JSON documents. The guard rails
/// come before the user's access: a pass that stops half-way (a refusal, a
/// crash) never leaves the user bound in a namespace without its quota or
/// network isolation.
pub fn all(session: &Session, cluster: &Cluster, access_token: &str) -> SessionObjects {
    fn value<T: serde::Serialize>(object: T) -> serde_json::Value {
        serde_json::to_value(object).expect("Kubernetes objects serialize")
    }
    let mut objects = vec![value(resource_quota(session, cluster)), value(limit_range(session))];
    // Kueue's quota is a guard rail too: before anyone is let in.
    if cluster.kueue {
        objects.extend([kueue::session_flavor(session), kueue::cluster_queue(session), kueue::local_queue(session)]);
    }
    objects.extend(network_policies(session, cluster).into_iter().map(value));
    objects.push(value(proxy_config_map(session, cluster)));
    objects.push(value(session_config(session)));
    objects.extend([
        value(quota_reader_role(session)),
        value(quota_reader_binding(session)),
        value(session_user_binding(session)),
    ]);
    if cluster.kueue {
        objects.extend([kueue::queue_reader_role(session), kueue::queue_reader_binding(session)]);
    }
    objects.extend(persistent_volume_claims(session, cluster).into_iter().map(value));
    objects.push(value(access_secret(session, access_token)));
    objects.push(value(deployment(session, cluster)));
    objects.push(value(service(session)));
    objects.push(match cluster.expose {
        Expose::Ingress => value(ingress(session, cluster)),
        Expose::Route => route(session, cluster),
    });
    SessionObjects { namespace: value(namespace(session, cluster)), inside: objects }
}

/// A session's objects: its namespace, and what the worker applies once
/// the namespace is there, in order.
pub struct SessionObjects {
    pub namespace: serde_json::Value,
    /// The namespace's objects (and the session's own cluster-scoped Kueue
    /// objects), the guard rails first and the workspace last.
    pub inside: Vec<serde_json::Value>,
}

impl SessionObjects {
    /// Every object in the order it is applied: the namespace first.
    pub fn iter(&self) -> impl Iterator<Item = &serde_json::Value> {
        std::iter::once(&self.namespace).chain(&self.inside)
    }
}

impl IntoIterator for SessionObjects {
    type Item = serde_json::Value;
    type IntoIter = std::iter::Chain<std::iter::Once<serde_json::Value>, std::vec::IntoIter<serde_json::Value>>;

    fn into_iter(self) -> Self::IntoIter {
        std::iter::once(self.namespace).chain(self.inside)
    }
}
