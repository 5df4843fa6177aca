use super::{meta, typed, Cluster, Session};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use serde_json::{json, Value};

/// The container port name a session publishes through its Ingress or
/// Route: the workspace's port, and any serving pod's the user names so.
pub const PUBLISHED_PORT: &str = "http";

/// Isolation: nothing comes in but from inside the namespace and from the
/// ingress controller's namespace, and the controller reaches only ports
/// named `http` (what the session publishes), not every port of every pod;
/// nothing goes out but inside the namespace, to cluster DNS, and to the
/// configured proxy.
pub fn network_policies(session: &Session, cluster: &Cluster) -> Vec<NetworkPolicy> {
    let same_namespace = json!({ "podSelector": {} });
    let ingress_controller = json!({
        "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": cluster.ingress_namespace } }
    });
    let dns = json!({
        "to": [{
            "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": "kube-system" } },
            "podSelector": { "matchLabels": { "k8s-app": "kube-dns" } },
        }],
        "ports": [{ "protocol": "UDP", "port": 53 }, { "protocol": "TCP", "port": 53 }],
    });
    let mut egress = vec![json!({ "to": [same_namespace.clone()] }), dns];
    if let Some(proxy) = &cluster.proxy {
        egress.push(json!({
            "to": [{ "ipBlock": { "cidr": proxy.cidr } }],
            "ports": [{ "protocol": "TCP", "port": proxy.port }],
        }));
    }
    vec![
        typed(json!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": meta(session, "berth-ingress"),
            "spec": {
                "podSelector": {},
                "policyTypes": ["Ingress"],
                "ingress": [
                    { "from": [same_namespace] },
                    { "from": [ingress_controller], "ports": [{ "protocol": "TCP", "port": PUBLISHED_PORT }] },
                ],
            },
        })),
        typed(json!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": meta(session, "berth-egress"),
            "spec": { "podSelector": {}, "policyTypes": ["Egress"], "egress": egress },
        })),
    ]
}

/// Proxy settings for the workspace's environment (empty without a proxy,
/// so the workspace's `envFrom` always finds the map).
pub fn proxy_config_map(session: &Session, cluster: &Cluster) -> ConfigMap {
    let data = match &cluster.proxy {
        Some(proxy) => json!({
            "HTTP_PROXY": proxy.http, "HTTPS_PROXY": proxy.https, "NO_PROXY": proxy.no_proxy,
            "http_proxy": proxy.http, "https_proxy": proxy.https, "no_proxy": proxy.no_proxy,
        }),
        // No `data` at all rather than an empty one: the API server drops an
        // empty map, and the worker would then find drift every pass.
        None => Value::Null,
    };
    let mut config_map = json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(session, "berth-proxy") });
    if !data.is_null() {
        config_map["data"] = data;
    }
    typed(config_map)
}
