use super::{cpu, memory, typed, ImageCache, MANAGED_BY};
use k8s_openapi::api::apps::v1::DaemonSet;
use serde_json::json;

pub const IMAGE_CACHE: &str = "berth-image-cache";

/// Whether the cache may pull `image`: pinned by digest (`…@sha256:<64 hex>`,
/// so what runs is what was approved, not what a tag points at today) and
/// from one of `registries`. An image without a registry host is Docker
/// Hub's (`docker.io/`, `docker.io/library/` for one-word names).
pub fn cacheable(image: &str, registries: &[String]) -> bool {
    let Some((name, digest)) = image.rsplit_once("@sha256:") else {
        return false;
    };
    let hex = digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let first = name.split('/').next().unwrap_or_default();
    let hosted = name.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let full = match (hosted, name.contains('/')) {
        (true, _) => name.to_string(),
        (false, true) => format!("docker.io/{name}"),
        (false, false) => format!("docker.io/library/{name}"),
    };
    hex && registries.iter().any(|registry| full.starts_with(&format!("{}/", registry.trim_end_matches('/'))))
}

/// In Berth's own `namespace`: pre-pulls those of `images` the cache may
/// pull (`cacheable`) onto every node the selector picks: each image is an
/// init container that exits at once (the pull is the point), then a pause
/// container keeps the pod, and so the images, in place. Runs as nobody,
/// under its own rightless ServiceAccount, so it works whatever user an
/// image declares and an image's code gets no credentials.
pub fn image_cache_daemon_set(namespace: &str, cache: &ImageCache, images: &[String]) -> DaemonSet {
    let labels = json!({ MANAGED_BY.0: MANAGED_BY.1, "app.kubernetes.io/name": IMAGE_CACHE });
    let resources = json!({ "requests": { "cpu": cpu(10), "memory": memory(16) }, "limits": { "cpu": cpu(100), "memory": memory(64) } });
    let hardened = json!({ "allowPrivilegeEscalation": false, "capabilities": { "drop": ["ALL"] } });
    let pulls: Vec<_> = images
        .iter()
        .filter(|image| cacheable(image, &cache.registries))
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
                    "serviceAccountName": IMAGE_CACHE,
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
