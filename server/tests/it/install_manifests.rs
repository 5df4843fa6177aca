//! The install: both kustomize overlays render with `kubectl kustomize`, pass
//! `kubernetes-validate --strict` (CRD kinds — CloudNativePG `Cluster`,
//! `ServiceMonitor`, `PrometheusRule`, OpenShift `Route` — only warn), and
//! the rendered Deployments run the way docs/operations.md promises.

use crate::common;

use common::processes::repo_root;
use serde::Deserialize;
use serde_yaml_ng::Value;
use std::process::Command;

fn render(overlay: &str) -> (String, Vec<Value>) {
    let output = Command::new("kubectl")
        .args(["kustomize", &format!("deploy/overlays/{overlay}")])
        .current_dir(repo_root())
        .output()
        .expect("kubectl (with built-in kustomize) is installed");
    assert!(output.status.success(), "kubectl kustomize {overlay}: {}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    let objects = serde_yaml_ng::Deserializer::from_str(&text).map(|doc| Value::deserialize(doc).unwrap()).collect();
    (text, objects)
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

fn validate(overlay: &str, text: &str) -> String {
    let path = std::env::temp_dir().join(format!("berth-install-{overlay}-{}.yaml", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let output = Command::new("kubernetes-validate")
        .args(["--strict", "--kubernetes-version", "1.30.0", "--quiet"])
        .arg(&path)
        .output()
        .expect("kubernetes-validate is installed");
    std::fs::remove_file(&path).ok();
    let report = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success() && !report.contains("ERROR"), "{overlay}: {report}");
    report
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_sequence().map(|s| s.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

fn check_deployment(objects: &[Value], name: &str, args: &[&str], account: &str, pinned_uid: bool) {
    let deployment = find(objects, "Deployment", name);
    let spec = &deployment["spec"];
    assert_eq!(spec["replicas"], 2, "{name}");
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], account, "{name}");
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true, "{name}");
    assert_eq!(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault", "{name}");
    assert_eq!(pod["securityContext"]["runAsUser"].as_i64().is_some(), pinned_uid, "{name}: runAsUser");
    assert!(pod["terminationGracePeriodSeconds"].as_i64().unwrap() > 30, "{name}: room for the 30 s drain");
    let spread = &pod["topologySpreadConstraints"][0];
    assert_eq!(spread["topologyKey"], "kubernetes.io/hostname", "{name}");
    let container = &pod["containers"][0];
    assert_eq!(strings(&container["args"]), args, "{name}");
    let security = &container["securityContext"];
    assert_eq!(security["readOnlyRootFilesystem"], true, "{name}");
    assert_eq!(security["allowPrivilegeEscalation"], false, "{name}");
    assert_eq!(strings(&security["capabilities"]["drop"]), ["ALL"], "{name}");
    for key in ["requests", "limits"] {
        assert!(container["resources"][key]["memory"].is_string(), "{name}: {key}.memory");
    }
    let database = container["env"].as_sequence().unwrap().iter().find(|e| e["name"] == "DATABASE_URL").unwrap();
    assert_eq!(database["valueFrom"]["secretKeyRef"]["name"], "berth-db-app", "{name}: the CloudNativePG app secret");
    assert_eq!(database["valueFrom"]["secretKeyRef"]["key"], "uri", "{name}");
    let budget = find(objects, "PodDisruptionBudget", name);
    assert_eq!(budget["spec"]["minAvailable"], 1, "{name}");
    assert_eq!(budget["spec"]["selector"]["matchLabels"], spec["template"]["metadata"]["labels"], "{name}");
}

fn check_overlay(overlay: &str, expose: &str, pinned_uid: bool) -> Vec<Value> {
    let (text, objects) = render(overlay);
    let report = validate(overlay, &text);
    for kind in ["Cluster", "ServiceMonitor", "PrometheusRule"] {
        assert!(report.contains(&format!("kind {kind} ")), "{overlay}: {kind} should only warn: {report}");
    }
    check_deployment(&objects, "berth-portal", &["serve", "--no-worker"], "berth-portal", pinned_uid);
    check_deployment(&objects, "berth-worker", &["worker"], "berth-worker", pinned_uid);
    let portal = &find(&objects, "Deployment", "berth-portal")["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(portal["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(portal["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(find(&objects, "ConfigMap", "berth-config")["data"]["BERTH_EXPOSE"], expose);
    assert_eq!(find(&objects, "Cluster", "berth-db")["spec"]["instances"], 3);
    let rules = &find(&objects, "PrometheusRule", "berth")["spec"]["groups"][0]["rules"];
    assert_eq!(rules.as_sequence().unwrap().len(), 7);
    let policy = find(&objects, "NetworkPolicy", "berth");
    assert_eq!(strings(&policy["spec"]["policyTypes"]), ["Ingress", "Egress"]);
    // Any other pod of Berth's namespace (the image cache's) reaches nothing
    // and is reached by nothing; the database only by Berth and its operator.
    let deny = find(&objects, "NetworkPolicy", "default-deny");
    assert_eq!(strings(&deny["spec"]["policyTypes"]), ["Ingress", "Egress"]);
    assert!(deny["spec"]["podSelector"].as_mapping().unwrap().is_empty(), "every pod of the namespace");
    assert!(deny["spec"]["ingress"].is_null() && deny["spec"]["egress"].is_null(), "no rule opens anything");
    let database = find(&objects, "NetworkPolicy", "berth-db");
    assert_eq!(database["spec"]["podSelector"]["matchLabels"]["cnpg.io/cluster"], "berth-db");
    let namespace = find(&objects, "Namespace", "berth");
    assert_eq!(namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"], "restricted");
    // Every namespaced object of Berth's own is in its namespace.
    for object in &objects {
        let namespace = object["metadata"]["namespace"].as_str();
        assert!(
            matches!(namespace, None | Some("berth") | Some("gpu-operator")),
            "{overlay}: {:?} in {namespace:?}",
            object["metadata"]["name"]
        );
    }
    objects
}

#[test]
fn the_kubernetes_overlay_renders_validates_and_runs_hardened_with_an_ingress() {
    let objects = check_overlay("kubernetes", "ingress", true);
    let ingress = find(&objects, "Ingress", "berth");
    assert_eq!(ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"], "berth-portal");
}

#[test]
fn the_openshift_overlay_renders_validates_and_leaves_the_uid_to_the_scc_with_a_route() {
    let objects = check_overlay("openshift", "route", false);
    let route = find(&objects, "Route", "berth");
    assert_eq!(route["spec"]["to"]["name"], "berth-portal");
    assert_eq!(route["spec"]["tls"]["termination"], "edge");
}

#[test]
fn the_hub_and_member_overlays_split_one_berth_over_several_clusters() {
    let (hub_text, hub) = render("hub");
    validate("hub", &hub_text);
    let (member_text, member) = render("member");
    validate("member", &member_text);
    let (_, single) = render("kubernetes");
    let kinds = |objects: &[Value], kind: &str| objects.iter().filter(|o| o["kind"] == kind).count();

    // The hub: the whole portal and its worker, driving the kubeconfig clusters
    // too, with read access to those Secrets and no other.
    assert_eq!(find(&hub, "ConfigMap", "berth-config")["data"]["BERTH_HUB"], "true");
    check_deployment(&hub, "berth-worker", &["worker"], "berth-worker", true);
    let role = find(&hub, "Role", "berth-worker-kubeconfigs");
    assert_eq!(role["metadata"]["namespace"], "berth-clusters");
    let rules = role["rules"].as_sequence().unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!((strings(&rules[0]["resources"]), strings(&rules[0]["verbs"])), (vec!["secrets"], vec!["get"]));
    let binding = find(&hub, "RoleBinding", "berth-worker-kubeconfigs");
    assert_eq!(binding["subjects"][0]["name"], "berth-worker");
    assert_eq!(binding["subjects"][0]["namespace"], "berth");
    // The portal's kubeconfigs of the members: its own namespace, its alone.
    let role = find(&hub, "Role", "berth-portal-kubeconfigs");
    assert_eq!(role["metadata"]["namespace"], "berth-portal-clusters");
    let rules = role["rules"].as_sequence().unwrap();
    assert_eq!((strings(&rules[0]["resources"]), strings(&rules[0]["verbs"])), (vec!["secrets"], vec!["get"]));
    let binding = find(&hub, "RoleBinding", "berth-portal-kubeconfigs");
    assert_eq!(
        (&binding["subjects"][0]["name"], binding["subjects"].as_sequence().unwrap().len()),
        (&"berth-portal".into(), 1)
    );
    for object in &single {
        let (kind, name) = (&object["kind"], &object["metadata"]["name"]);
        assert!(
            hub.iter().any(|o| &o["kind"] == kind && &o["metadata"]["name"] == name),
            "hub lacks {kind:?} {name:?}"
        );
    }

    // A member: the worker's namespace, account, rights and the same
    // policies; nothing that runs.
    find(&member, "Namespace", "berth");
    find(&member, "ServiceAccount", "berth-worker");
    find(&member, "ClusterRole", "berth-worker");
    // …and the portal's account the hub opens workspaces with (access Secrets only).
    find(&member, "ServiceAccount", "berth-portal");
    find(&member, "ClusterRole", "berth-portal");
    assert_eq!(kinds(&member, "Deployment"), 0);
    assert_eq!(kinds(&member, "Cluster"), 0, "no database");
    for kind in ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"] {
        assert!(kinds(&member, kind) > 0, "{kind}");
        assert_eq!(kinds(&member, kind), kinds(&single, kind), "{kind}: the policies are unchanged per member");
    }
}
