//! The CEL of every admission policy in `deploy/policies/`, evaluated by a
//! CEL interpreter against what Berth renders and what a hostile tenant
//! could send: at least ten admitted and ten refused requests per policy.

use crate::policy;
use crate::policy::session;

use policy::{Policy, Request};
use serde_json::{json, Value};
use server::provisioner::manifests::{self, Cluster, Session};
use session::{session, USER};

const WORKER: &str = "system:serviceaccount:berth:berth-worker";
const MIG: &str = "nvidia.com/mig-1g.24gb";

/// Pool A: MIG slices on nodes `pool=a` of product H100.
fn mine() -> Session {
    session(
        "team-a",
        "0f0e0d0c-0b0a-4908-8706-050403020100",
        MIG,
        &[("berth.io/pool", "a"), ("nvidia.com/gpu.product", "H100")],
    )
}

/// Someone else's session in pool B (whole GPUs on `pool=b`).
fn theirs() -> Session {
    session("team-b", "aaaabbbb-0b0a-4908-8706-050403020100", "nvidia.com/gpu", &[("berth.io/pool", "b")])
}

fn cluster() -> Cluster {
    Cluster { domain: "gpu.example.org".into(), ..Cluster::default() }
}

fn namespace_of(session: &Session) -> Value {
    serde_json::to_value(manifests::namespace(session, &cluster())).unwrap()
}

/// A namespace that is not Berth's.
fn foreign_namespace(name: &str) -> Value {
    json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name, "labels": { "kubernetes.io/metadata.name": name } } })
}

fn my_host() -> String {
    manifests::host(&mine(), &cluster())
}

fn ingress(hosts: &[&str]) -> Value {
    let rules: Vec<Value> = hosts
        .iter()
        .map(|h| {
            let mut rule = json!({ "http": { "paths": [{ "path": "/", "pathType": "Exact",
                "backend": { "service": { "name": "evil", "port": { "number": 80 } } } }] } });
            if !h.is_empty() {
                rule["host"] = json!(h);
            }
            rule
        })
        .collect();
    json!({ "apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": { "name": "mine" }, "spec": { "rules": rules } })
}

fn route(host: Option<&str>, wildcard: Option<&str>) -> Value {
    let mut spec = json!({ "to": { "kind": "Service", "name": "workspace" } });
    if let Some(host) = host {
        spec["host"] = json!(host);
    }
    if let Some(wildcard) = wildcard {
        spec["wildcardPolicy"] = json!(wildcard);
    }
    json!({ "apiVersion": "route.openshift.io/v1", "kind": "Route", "metadata": { "name": "mine" }, "spec": spec })
}

fn pod(node_selector: Value, resources: Value) -> Value {
    let mut spec = json!({ "containers": [{ "name": "main", "image": "python:3.12", "resources": resources }] });
    if !node_selector.is_null() {
        spec["nodeSelector"] = node_selector;
    }
    json!({ "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "p" }, "spec": spec })
}

fn pool_a() -> Value {
    json!({ "berth.io/pool": "a", "nvidia.com/gpu.product": "H100" })
}

/// The pod the workspace Deployment makes, as the ReplicaSet controller sends it.
fn workspace_pod(session: &Session) -> Value {
    let deployment = serde_json::to_value(manifests::deployment(session, &cluster())).unwrap();
    json!({ "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "workspace-1" }, "spec": deployment["spec"]["template"]["spec"] })
}

fn named(kind: &str, api_version: &str, name: &str) -> Value {
    json!({ "apiVersion": api_version, "kind": kind, "metadata": { "name": name } })
}

/// Runs every case; each denial must carry `reason` in one of its messages.
fn check(policy: &Policy, allowed: Vec<(&str, Request)>, denied: Vec<(&str, Request, &str)>) {
    assert!(allowed.len() >= 10 && denied.len() >= 10, "at least ten cases each way");
    for (case, request) in allowed {
        assert_eq!(policy.admit(&request), Ok(()), "should be admitted: {case}");
    }
    for (case, request, reason) in denied {
        match policy.admit(&request) {
            Ok(()) => panic!("should be refused: {case}"),
            Err(messages) => {
                assert!(messages.iter().any(|m| m.contains(reason)), "{case}: expected `{reason}` in {messages:?}")
            }
        }
    }
}

#[test]
fn a_session_publishes_only_its_own_host_and_names_under_it() {
    let policy = Policy::load("policies/berth-session-hosts.yaml");
    let ns = namespace_of(&mine());
    let own = my_host();
    let sub = format!("api.{own}");
    let wildcard = format!("*.{own}");
    let their_host = manifests::host(&theirs(), &cluster());
    let ing = |hosts: &[&str]| Request::create("networking.k8s.io", "ingresses", USER, &ns, ingress(hosts));
    let rt = |host: Option<&str>, wildcard: Option<&str>| {
        Request::create("route.openshift.io", "routes", USER, &ns, route(host, wildcard))
    };
    let rendered_ingress = serde_json::to_value(manifests::ingress(&mine(), &cluster())).unwrap();
    let mut with_tls = ingress(&[&own]);
    with_tls["spec"]["tls"] = json!([{ "hosts": [own.clone(), sub.clone()] }]);
    let mut bad_tls = ingress(&[&own]);
    bad_tls["spec"]["tls"] = json!([{ "hosts": [their_host.clone()] }]);
    let mut default_backend = ingress(&[&own]);
    default_backend["spec"]["defaultBackend"] = json!({ "service": { "name": "evil", "port": { "number": 80 } } });
    let mut snippet = ingress(&[&own]);
    snippet["metadata"]["annotations"] =
        json!({ "nginx.ingress.kubernetes.io/server-snippet": "location / { proxy_pass http://evil; }" });
    let mut annotated = ingress(&[&own]);
    annotated["metadata"]["annotations"] = json!({ "nginx.ingress.kubernetes.io/proxy-body-size": "1g" });
    let mut no_rules = ingress(&[]);
    no_rules["spec"]["defaultBackend"] = json!({ "service": { "name": "evil", "port": { "number": 80 } } });
    let unannotated = json!({ "metadata": { "name": "x", "labels": { "berth.io/booking": "b" } } });
    let service = |spec: Value| {
        let object = json!({ "apiVersion": "v1", "kind": "Service", "metadata": { "name": "s" }, "spec": spec });
        Request::create("", "services", USER, &ns, object)
    };
    let rendered_service = serde_json::to_value(manifests::service(&mine())).unwrap();

    check(
        &policy,
        vec![
            (
                "the worker's own Ingress",
                Request::create("networking.k8s.io", "ingresses", WORKER, &ns, rendered_ingress),
            ),
            ("the session's host", ing(&[&own])),
            ("a name under it", ing(&[&sub])),
            ("a wildcard under it", ing(&[&wildcard])),
            ("several of its names", ing(&[&own, &sub])),
            ("TLS for its names", Request::create("networking.k8s.io", "ingresses", USER, &ns, with_tls)),
            ("other annotations", Request::create("networking.k8s.io", "ingresses", USER, &ns, annotated)),
            ("an update keeping the host", ing(&[&own]).with_operation("UPDATE")),
            ("a Route for its host", rt(Some(&own), None)),
            ("a Route under it, no wildcard", rt(Some(&sub), Some("None"))),
            ("the worker's Route", {
                let mut openshift = cluster();
                openshift.expose = manifests::Expose::Route;
                Request::create("route.openshift.io", "routes", WORKER, &ns, manifests::route(&mine(), &openshift))
            }),
            ("an Ingress outside Berth's namespaces", {
                Request::create("networking.k8s.io", "ingresses", USER, &foreign_namespace("web"), ingress(&["x.org"]))
            }),
            ("deleting an Ingress", ing(&["evil.org"]).with_operation("DELETE")),
            ("the workspace Service", Request::create("", "services", WORKER, &ns, rendered_service)),
            ("a ClusterIP Service of the user's", service(json!({ "type": "ClusterIP", "ports": [{ "port": 80 }] }))),
        ],
        vec![
            ("another session's host", ing(&[&their_host]), "only berth-team-a-0f0e0d0c.gpu.example.org"),
            ("another session's host beside its own", ing(&[&own, &their_host]), "needs a host"),
            ("the portal's host", ing(&["berth.gpu.example.org"]), "or a name under it"),
            ("a wildcard over the domain", ing(&["*.gpu.example.org"]), "or a name under it"),
            ("a look-alike suffix", ing(&[&format!("x{own}")]), "or a name under it"),
            ("a rule without a host (every host)", ing(&[""]), "needs a host"),
            (
                "only a default backend",
                Request::create("networking.k8s.io", "ingresses", USER, &ns, no_rules),
                "default backend",
            ),
            (
                "a default backend beside its host",
                Request::create("networking.k8s.io", "ingresses", USER, &ns, default_backend),
                "default backend",
            ),
            (
                "TLS for another host",
                Request::create("networking.k8s.io", "ingresses", USER, &ns, bad_tls),
                "TLS hosts",
            ),
            (
                "a configuration snippet",
                Request::create("networking.k8s.io", "ingresses", USER, &ns, snippet),
                "snippet",
            ),
            ("an update to another host", ing(&[&their_host]).with_operation("UPDATE"), "or a name under it"),
            ("a Route for another host", rt(Some(&their_host), None), "spec.host"),
            ("a Route without a host", rt(None, None), "spec.host"),
            ("a Route with a subdomain wildcard", rt(Some(&own), Some("Subdomain")), "wildcard"),
            (
                "a namespace Berth has not annotated",
                Request::create("networking.k8s.io", "ingresses", USER, &unannotated, ingress(&[&own])),
                "berth.io/host",
            ),
        ],
    );
}

#[test]
fn session_pods_stay_on_their_pools_nodes_with_the_booked_kind() {
    let policy = Policy::load("policies/berth-session-placement.yaml");
    let ns = namespace_of(&mine());
    let create = |object: Value| Request::create("", "pods", USER, &ns, object);
    let mig = json!({ "limits": { MIG: "1", "cpu": "1" } });
    let plain = json!({ "requests": { "cpu": "1", "memory": "1Gi" } });
    let mut extra_labels = pool_a();
    extra_labels["zone"] = json!("eu-1");
    let mut inference = mine();
    inference.interactive = false;
    let no_selector_session = session("team-c", "cccccccc-0b0a-4908-8706-050403020100", MIG, &[]);
    let mut init_gpu = pod(pool_a(), plain.clone());
    init_gpu["spec"]["initContainers"] =
        json!([{ "name": "warm", "image": "x", "resources": { "limits": { "nvidia.com/gpu": "1" } } }]);
    let mut pinned = pod(pool_a(), plain.clone());
    pinned["spec"]["nodeName"] = json!("gpu-node-b-1");
    let mut half = pool_a();
    half.as_object_mut().unwrap().remove("nvidia.com/gpu.product");

    let tolerating = |tolerations: Value| {
        let mut pod = pod(pool_a(), plain.clone());
        pod["spec"]["tolerations"] = tolerations;
        pod
    };
    check(
        &policy,
        vec![
            (
                "the API server's own not-ready tolerations",
                create(tolerating(json!([{ "key": "node.kubernetes.io/not-ready", "operator": "Exists",
                    "effect": "NoExecute", "tolerationSeconds": 300 }]))),
            ),
            (
                "the workspace pod",
                Request::create(
                    "",
                    "pods",
                    "system:serviceaccount:kube-system:replicaset-controller",
                    &ns,
                    workspace_pod(&mine()),
                ),
            ),
            ("the inference workspace pod", create(workspace_pod(&inference))),
            ("a pod on the pool's nodes with the booked kind", create(pod(pool_a(), mig.clone()))),
            (
                "requests of the booked kind",
                create(pod(pool_a(), json!({ "requests": { MIG: "1" }, "limits": { MIG: "1" } }))),
            ),
            ("a CPU-only pod", create(pod(pool_a(), plain.clone()))),
            ("a pod without resources", create(pod(pool_a(), json!({})))),
            ("more labels than the pool's", create(pod(extra_labels, mig.clone()))),
            (
                "hugepages (no domain)",
                create(pod(pool_a(), json!({ "limits": { "hugepages-2Mi": "1Gi", "memory": "1Gi" } }))),
            ),
            (
                "a GPU pod outside Berth's namespaces",
                Request::create(
                    "",
                    "pods",
                    USER,
                    &foreign_namespace("ml"),
                    pod(Value::Null, json!({ "limits": { "nvidia.com/gpu": "8" } })),
                ),
            ),
            ("another pool's session with its own selector", {
                Request::create("", "pods", USER, &namespace_of(&theirs()), workspace_pod(&theirs()))
            }),
        ],
        vec![
            ("a pod without the pool's selector", create(pod(Value::Null, mig.clone())), "node selector"),
            (
                "a pod with another pool's selector",
                create(pod(json!({ "berth.io/pool": "b" }), mig.clone())),
                "node selector",
            ),
            ("a pod with half the selector", create(pod(half, mig.clone())), "node selector"),
            (
                "a pod with the right key, wrong value",
                create(pod(json!({ "berth.io/pool": "a", "nvidia.com/gpu.product": "A100" }), mig.clone())),
                "node selector",
            ),
            ("a pod pinned to a node", create(pinned), "nodeName"),
            (
                "a whole GPU in a MIG session",
                create(pod(pool_a(), json!({ "limits": { "nvidia.com/gpu": "1" } }))),
                "may not ask for other GPUs",
            ),
            (
                "a whole GPU in requests",
                create(pod(pool_a(), json!({ "requests": { "nvidia.com/gpu": "1" } }))),
                "may not ask for other GPUs",
            ),
            (
                "another MIG profile",
                create(pod(pool_a(), json!({ "limits": { "nvidia.com/mig-3g.48gb": "1" } }))),
                "may not ask for other GPUs",
            ),
            (
                "a shared GPU",
                create(pod(pool_a(), json!({ "limits": { "nvidia.com/gpu.shared": "1" } }))),
                "may not ask for other GPUs",
            ),
            (
                "an AMD GPU",
                create(pod(pool_a(), json!({ "limits": { "amd.com/gpu": "1" } }))),
                "may not ask for other GPUs",
            ),
            ("a GPU in an init container", create(init_gpu), "may not ask for other GPUs"),
            ("pool B's workspace in pool A's namespace", create(workspace_pod(&theirs())), "node selector"),
            (
                "a pool without a selector",
                Request::create("", "pods", USER, &namespace_of(&no_selector_session), pod(Value::Null, mig.clone())),
                "no node selector",
            ),
            ("a toleration of everything", create(tolerating(json!([{ "operator": "Exists" }]))), "pool's tolerations"),
            (
                "a toleration the pool does not have",
                create(tolerating(json!([{ "key": "node-role.kubernetes.io/control-plane", "operator": "Exists" }]))),
                "pool's tolerations",
            ),
        ],
    );
}

#[test]
fn inside_a_session_only_the_worker_writes_the_guard_rails() {
    let policy = Policy::load("policies/berth-session-guardrails.yaml");
    let ns = namespace_of(&mine());
    let objects: Vec<Value> = manifests::all(&mine(), &cluster(), "t").into_iter().collect();
    let rendered = |kind: &str| objects.iter().find(|o| o["kind"] == kind).unwrap().clone();
    let allow_all = json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": { "name": "allow-all" },
        "spec": { "podSelector": {}, "policyTypes": ["Egress"], "egress": [{}] },
    });
    let access = named("Secret", "v1", manifests::ACCESS_SECRET);
    let as_user = |group, resource, object: Value| Request::create(group, resource, USER, &ns, object);

    check(
        &policy,
        vec![
            (
                "the worker's network policy",
                Request::create("networking.k8s.io", "networkpolicies", WORKER, &ns, rendered("NetworkPolicy")),
            ),
            ("the worker's quota", Request::create("", "resourcequotas", WORKER, &ns, rendered("ResourceQuota"))),
            ("the worker's limit range", Request::create("", "limitranges", WORKER, &ns, rendered("LimitRange"))),
            ("the worker's role", Request::create("rbac.authorization.k8s.io", "roles", WORKER, &ns, rendered("Role"))),
            (
                "the worker's binding",
                Request::create("rbac.authorization.k8s.io", "rolebindings", WORKER, &ns, rendered("RoleBinding")),
            ),
            ("the worker's access secret", Request::create("", "secrets", WORKER, &ns, rendered("Secret"))),
            ("the user's own secret", as_user("", "secrets", named("Secret", "v1", "hf-token"))),
            (
                "the user updating their secret",
                as_user("", "secrets", named("Secret", "v1", "hf-token")).with_operation("UPDATE"),
            ),
            ("namespace cleanup deleting the policy", {
                Request::create(
                    "networking.k8s.io",
                    "networkpolicies",
                    "system:serviceaccount:kube-system:namespace-controller",
                    &ns,
                    rendered("NetworkPolicy"),
                )
                .with_operation("DELETE")
            }),
            (
                "a network policy outside Berth's namespaces",
                Request::create(
                    "networking.k8s.io",
                    "networkpolicies",
                    USER,
                    &foreign_namespace("web"),
                    allow_all.clone(),
                ),
            ),
            ("the user's config map", as_user("", "configmaps", named("ConfigMap", "v1", "settings"))),
            (
                "the worker's home claim",
                Request::create("", "persistentvolumeclaims", WORKER, &ns, rendered("PersistentVolumeClaim")),
            ),
            (
                "the user's own volume claim",
                as_user("", "persistentvolumeclaims", named("PersistentVolumeClaim", "v1", "scratch")),
            ),
            ("the volume binder updating a claim", {
                let claim = named("PersistentVolumeClaim", "v1", "berth-home");
                Request::create(
                    "",
                    "persistentvolumeclaims",
                    "system:serviceaccount:kube-system:persistent-volume-binder",
                    &ns,
                    claim,
                )
                .with_operation("UPDATE")
            }),
        ],
        vec![
            (
                "an allow-all network policy by the user",
                as_user("networking.k8s.io", "networkpolicies", allow_all.clone()),
                "guard rails",
            ),
            (
                "the user changing berth-egress",
                as_user("networking.k8s.io", "networkpolicies", rendered("NetworkPolicy")).with_operation("UPDATE"),
                "guard rails",
            ),
            (
                "the user deleting berth-egress",
                as_user("networking.k8s.io", "networkpolicies", rendered("NetworkPolicy")).with_operation("DELETE"),
                "guard rails",
            ),
            (
                "the user raising the quota",
                as_user("", "resourcequotas", rendered("ResourceQuota")).with_operation("UPDATE"),
                "guard rails",
            ),
            (
                "a second quota by the user",
                as_user("", "resourcequotas", named("ResourceQuota", "v1", "more")),
                "guard rails",
            ),
            ("the user's limit range", as_user("", "limitranges", named("LimitRange", "v1", "mine")), "guard rails"),
            (
                "the user's role",
                as_user("rbac.authorization.k8s.io", "roles", named("Role", "rbac.authorization.k8s.io/v1", "all")),
                "guard rails",
            ),
            (
                "the user's role binding",
                as_user(
                    "rbac.authorization.k8s.io",
                    "rolebindings",
                    named("RoleBinding", "rbac.authorization.k8s.io/v1", "me"),
                ),
                "guard rails",
            ),
            (
                "the user replacing the access token",
                as_user("", "secrets", access.clone()).with_operation("UPDATE"),
                "guard rails",
            ),
            (
                "the user deleting the access secret",
                as_user("", "secrets", access.clone()).with_operation("DELETE"),
                "guard rails",
            ),
            ("the user recreating the access secret", as_user("", "secrets", access), "guard rails"),
            (
                "the user deleting the model cache (its room would become theirs)",
                as_user("", "persistentvolumeclaims", named("PersistentVolumeClaim", "v1", "berth-model-cache"))
                    .with_operation("DELETE"),
                "guard rails",
            ),
            (
                "the user deleting their kept model cache",
                as_user(
                    "",
                    "persistentvolumeclaims",
                    named("PersistentVolumeClaim", "v1", "cache-00000000-0000-4000-8000-0000000000a1"),
                )
                .with_operation("DELETE"),
                "guard rails",
            ),
            (
                "the user growing their home",
                as_user("", "persistentvolumeclaims", named("PersistentVolumeClaim", "v1", "berth-home"))
                    .with_operation("UPDATE"),
                "guard rails",
            ),
            (
                "another service account",
                Request::create(
                    "networking.k8s.io",
                    "networkpolicies",
                    "system:serviceaccount:berth-team-a-0f0e0d0c:default",
                    &ns,
                    allow_all,
                ),
                "guard rails",
            ),
        ],
    );
}

#[test]
fn the_worker_writes_only_inside_berths_session_namespaces() {
    let policy = Policy::load("policies/berth-worker-scope.yaml");
    let ns = namespace_of(&mine());
    let objects: Vec<Value> = manifests::all(&mine(), &cluster(), "t").into_iter().collect();
    let by_worker =
        |group, resource, namespace: &Value, object: Value| Request::create(group, resource, WORKER, namespace, object);
    let cluster_scoped = Value::Null;
    let kube_system = foreign_namespace("kube-system");
    let berth = foreign_namespace("berth");
    let secret = named("Secret", "v1", "stolen");
    let mut adopted = foreign_namespace("team-data");
    adopted["metadata"]["labels"]["berth.io/booking"] = json!("0f0e0d0c-0b0a-4908-8706-050403020100");
    let adopt = Request {
        old_object: foreign_namespace("team-data"),
        operation: "UPDATE",
        ..by_worker("", "namespaces", &cluster_scoped, adopted)
    };

    let mut allowed: Vec<(&str, Request)> = vec![
        ("creating the session namespace", by_worker("", "namespaces", &cluster_scoped, ns.clone())),
        ("updating it", by_worker("", "namespaces", &cluster_scoped, ns.clone()).with_operation("UPDATE")),
        ("deleting it", by_worker("", "namespaces", &cluster_scoped, ns.clone()).with_operation("DELETE")),
        (
            "anyone else writing a secret in kube-system",
            Request::create("", "secrets", "admin", &kube_system, secret.clone()),
        ),
    ];
    let groups = [
        ("ResourceQuota", "", "resourcequotas"),
        ("LimitRange", "", "limitranges"),
        ("RoleBinding", "rbac.authorization.k8s.io", "rolebindings"),
        ("Role", "rbac.authorization.k8s.io", "roles"),
        ("NetworkPolicy", "networking.k8s.io", "networkpolicies"),
        ("ConfigMap", "", "configmaps"),
        ("Secret", "", "secrets"),
        ("Deployment", "apps", "deployments"),
        ("Ingress", "networking.k8s.io", "ingresses"),
    ];
    for (kind, group, resource) in groups {
        let object = objects.iter().find(|o| o["kind"] == kind).unwrap().clone();
        allowed.push(("the worker applying a session object", by_worker(group, resource, &ns, object)));
    }
    check(
        &policy,
        allowed,
        vec![
            (
                "a secret in kube-system",
                by_worker("", "secrets", &kube_system, secret.clone()),
                "only inside session namespaces",
            ),
            (
                "a secret in Berth's own namespace",
                by_worker("", "secrets", &berth, secret.clone()),
                "only inside session namespaces",
            ),
            (
                "reading out by rewriting a secret elsewhere",
                by_worker("", "secrets", &foreign_namespace("team-data"), secret).with_operation("UPDATE"),
                "only inside session namespaces",
            ),
            (
                "a role in kube-system",
                by_worker(
                    "rbac.authorization.k8s.io",
                    "roles",
                    &kube_system,
                    named("Role", "rbac.authorization.k8s.io/v1", "r"),
                ),
                "only inside session namespaces",
            ),
            (
                "a role binding in default",
                by_worker(
                    "rbac.authorization.k8s.io",
                    "rolebindings",
                    &foreign_namespace("default"),
                    named("RoleBinding", "rbac.authorization.k8s.io/v1", "b"),
                ),
                "only inside session namespaces",
            ),
            (
                "a deployment elsewhere",
                by_worker("apps", "deployments", &foreign_namespace("web"), named("Deployment", "apps/v1", "d")),
                "only inside session namespaces",
            ),
            (
                "a network policy elsewhere",
                by_worker(
                    "networking.k8s.io",
                    "networkpolicies",
                    &foreign_namespace("web"),
                    named("NetworkPolicy", "networking.k8s.io/v1", "n"),
                ),
                "only inside session namespaces",
            ),
            (
                "a config map elsewhere",
                by_worker("", "configmaps", &kube_system, named("ConfigMap", "v1", "coredns")).with_operation("UPDATE"),
                "only inside session namespaces",
            ),
            (
                "creating a namespace without a booking label",
                by_worker("", "namespaces", &cluster_scoped, foreign_namespace("scratch")),
                "only namespaces labelled",
            ),
            (
                "deleting a namespace that is not Berth's",
                by_worker("", "namespaces", &cluster_scoped, foreign_namespace("kube-system")).with_operation("DELETE"),
                "only namespaces labelled",
            ),
            ("adopting a namespace by labelling it", adopt, "only namespaces labelled"),
        ],
    );
}
