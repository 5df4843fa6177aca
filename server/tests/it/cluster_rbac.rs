//! What the ClusterRoles in `deploy/rbac/` grant, verb by verb: the session
//! user's role (workloads yes, guard rails no), the worker's (no `escalate`,
//! `bind` only on Berth's two roles) and the portal's (one Secret name, `get`).

use serde_json::Value;

fn cluster_role(file: &str, name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!("{}/../deploy/rbac/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let role = serde_yaml_ng::Deserializer::from_str(&text)
        .map(|doc| {
            serde_json::to_value(<serde_yaml_ng::Value as serde::Deserialize>::deserialize(doc).unwrap()).unwrap()
        })
        .find(|doc| doc["kind"] == "ClusterRole" && doc["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{file} has no ClusterRole {name}"));
    role["rules"].as_array().unwrap().clone()
}

/// RBAC's own rule: some rule lists the group, the resource (with its
/// subresource), the verb, and either no resource names or this name.
fn allows(rules: &[Value], group: &str, resource: &str, verb: &str, name: Option<&str>) -> bool {
    let lists = |rule: &Value, field: &str, wanted: &str| {
        rule[field].as_array().is_some_and(|items| items.iter().any(|i| i == wanted || i == "*"))
    };
    rules.iter().any(|rule| {
        lists(rule, "apiGroups", group)
            && lists(rule, "resources", resource)
            && lists(rule, "verbs", verb)
            && match rule["resourceNames"].as_array() {
                None => true,
                Some(names) => name.is_some_and(|n| names.iter().any(|i| i == n)),
            }
    })
}

const ALL: [&str; 8] = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"];
const READ: [&str; 3] = ["get", "list", "watch"];
const WRITE: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];

#[test]
fn the_session_user_runs_workloads_but_cannot_touch_the_guard_rails() {
    let rules = cluster_role("berth-session-user.yaml", "berth-session-user");
    // (group, resource, verbs granted); every other verb of ALL is denied.
    let table: &[(&str, &str, &[&str])] = &[
        ("", "pods", &ALL),
        ("", "pods/exec", &["get", "create"]),
        ("", "pods/attach", &["get", "create"]),
        ("", "pods/portforward", &["get", "create"]),
        ("", "pods/log", &READ),
        ("", "services", &ALL),
        ("", "configmaps", &ALL),
        ("", "secrets", &ALL),
        ("", "persistentvolumeclaims", &ALL),
        ("", "serviceaccounts", &ALL),
        ("", "events", &READ),
        ("events.k8s.io", "events", &READ),
        ("apps", "deployments", &ALL),
        ("apps", "statefulsets", &ALL),
        ("apps", "replicasets", &ALL),
        ("apps", "deployments/scale", &ALL),
        ("batch", "jobs", &ALL),
        ("batch", "cronjobs", &ALL),
        ("autoscaling", "horizontalpodautoscalers", &ALL),
        ("metrics.k8s.io", "pods", &READ),
        ("networking.k8s.io", "ingresses", &["get", "list", "watch", "create", "update", "patch", "delete"]),
        ("route.openshift.io", "routes", &["get", "list", "watch", "create", "update", "patch", "delete"]),
        ("route.openshift.io", "routes/custom-host", &["get", "list", "watch", "create", "update", "patch", "delete"]),
        // The guard rails: nothing at all (the quota is read through the quota-reader Role).
        ("networking.k8s.io", "networkpolicies", &[]),
        ("", "resourcequotas", &[]),
        ("", "limitranges", &[]),
        ("", "namespaces", &[]),
        ("", "namespaces/finalize", &[]),
        ("rbac.authorization.k8s.io", "roles", &[]),
        ("rbac.authorization.k8s.io", "rolebindings", &[]),
        ("rbac.authorization.k8s.io", "clusterroles", &[]),
        ("", "nodes", &[]),
        ("", "serviceaccounts/token", &[]),
        ("", "pods/ephemeralcontainers", &[]),
        ("", "replicationcontrollers", &[]),
        ("apps", "daemonsets", &[]),
        ("policy", "poddisruptionbudgets", &[]),
        ("admissionregistration.k8s.io", "validatingadmissionpolicies", &[]),
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings", &[]),
    ];
    for (group, resource, granted) in table {
        for verb in ALL {
            let expected = granted.contains(&verb);
            assert_eq!(allows(&rules, group, resource, verb, None), expected, "{verb} {group}/{resource}");
        }
    }
    for verb in ["bind", "escalate", "impersonate"] {
        for (group, resource) in [("rbac.authorization.k8s.io", "clusterroles"), ("", "users"), ("", "serviceaccounts")]
        {
            assert!(!allows(&rules, group, resource, verb, None), "{verb} {resource}");
        }
    }
    // The access Secret is readable (RBAC cannot single it out for writes;
    // the berth-session-guardrails policy refuses those).
    assert!(allows(&rules, "", "secrets", "get", Some("berth-workspace-access")));
}

#[test]
fn the_worker_never_escalates_and_binds_only_berths_two_roles() {
    let rules = cluster_role("berth-worker.yaml", "berth-worker");
    for group in ["rbac.authorization.k8s.io"] {
        for resource in ["roles", "clusterroles"] {
            for name in
                [None, Some("admin"), Some("cluster-admin"), Some("berth-session-user"), Some("berth-quota-reader")]
            {
                assert!(!allows(&rules, group, resource, "escalate", name), "escalate {resource} {name:?}");
            }
        }
        assert!(allows(&rules, group, "clusterroles", "bind", Some("berth-session-user")));
        assert!(allows(&rules, group, "roles", "bind", Some("berth-quota-reader")));
        for (resource, name) in [("clusterroles", "admin"), ("clusterroles", "cluster-admin"), ("roles", "admin")] {
            assert!(!allows(&rules, group, resource, "bind", Some(name)), "bind {resource}/{name}");
        }
        assert!(!allows(&rules, group, "clusterroles", "bind", None), "bind without a name is any role");
        // It writes ClusterRoles and ClusterRoleBindings (each session's
        // reader of its ClusterQueue, `--kueue`), which RBAC cannot narrow
        // by name ahead of time: berth-worker-scope confines them, and
        // real_cluster_schedulers.rs attacks that as the worker. Without
        // `escalate` and `bind` (above) it still grants nothing it lacks.
        assert!(allows(&rules, group, "clusterroles", "create", None));
    }
    for verb in ["impersonate", "escalate"] {
        assert!(!allows(&rules, "", "users", verb, None) && !allows(&rules, "", "serviceaccounts", verb, None));
    }
    assert!(!allows(&rules, "", "pods/exec", "create", None), "the worker never runs commands in sessions");
    assert!(!allows(&rules, "", "nodes", "get", None));
}

#[test]
fn the_portal_reads_only_access_secrets_by_name() {
    let rules = cluster_role("berth-portal.yaml", "berth-portal");
    assert!(allows(&rules, "", "secrets", "get", Some("berth-workspace-access")));
    assert!(!allows(&rules, "", "secrets", "get", Some("db-password")));
    assert!(!allows(&rules, "", "secrets", "get", None));
    for verb in ["list", "watch"].into_iter().chain(WRITE) {
        assert!(!allows(&rules, "", "secrets", verb, Some("berth-workspace-access")), "{verb}");
    }
    for verb in READ {
        assert!(!allows(&rules, "", "namespaces", verb, None), "the portal does not read the cluster: {verb}");
    }
}
