use super::{cpu, memory, typed, ImageCache, MANAGED_BY};
use k8s_openapi::api::apps::v1::DaemonSet;
use serde_json::json;

pub const IMAGE_CACHE: &str = "berth-image-cache";

/// In Berth's own `namespace`: pre-pulls `images` onto every node the selector picks: each image is an
/// init container that exits at once (the pull is the point), then a pause
/// container keeps the pod, and so the images, in place. Runs as nobody, so
/// it works whatever user an image declares.
pub fn image_cache_daemon_set(namespace: &str, cache: &ImageCache, images: &[String]) -> DaemonSet {
    let labels = json!({ MANAGED_BY.0: MANAGED_BY.1, "app.kubernetes.io/name": IMAGE_CACHE });
    let resources = json!({ "requests": { "cpu": cpu(10), "memory": memory(16) }, "limits": { "cpu": cpu(100), "memory": memory(64) } });
    let hardened = json!({ "allowPrivilegeEscalation": false, "capabilities": { "drop": ["ALL"] } });
    let pulls: Vec<_> = images
        .iter()
        .enumerate()
        .map(|(i, image)| {
            json!({
                "name": format!("pull-{i}"),
                "image": image,
                "imagePullPolicy": "IfNotPresent",
                "command": ["sh", "-c", "exit 0"],
                "resources": resources,
                "securityContext": hardened,
            })
        })
        .collect();
    typed(json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": { "name": IMAGE_CACHE, "namespace": namespace, "labels": labels },
        "spec": {
            "selector": { "matchLabels": { "app.kubernetes.io/name": IMAGE_CACHE } },
            "updateStrategy": { "type": "RollingUpdate", "rollingUpdate": { "maxUnavailable": "25%" } },
            "template": {
                "metadata": { "labels": labels },
                "spec": {
                    "nodeSelector": cache.node_selector,
                    // GPU nodes are commonly tainted so only GPU work lands there.
                    "tolerations": [{ "key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule" }],
                    "automountServiceAccountToken": false,
                    "securityContext": { "runAsNonRoot": true, "runAsUser": 65534, "seccompProfile": { "type": "RuntimeDefault" } },
                    "initContainers": pulls,
                    "containers": [{
                        "name": "pause",
                        "image": cache.pause_image,
                        "resources": resources,
                        "securityContext": hardened,
                    }],
                },
            },
        },
    }))
}
