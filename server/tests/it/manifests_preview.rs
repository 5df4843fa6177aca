//! `berth manifests BOOKING_ID`: a booking from the database rendered into
//! the exact objects the worker applies, with no secret in them.

use crate::common;

use common::{slot, Fixture, MIG};
use server::cli::{render_manifests, Cli, Command};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_booking_renders_as_sixteen_documents_with_its_role_quota_placement_window_and_no_secret() {
    let f = Fixture::new().await;
    let (status, booking) = f.book(&f.ada, MIG, 2, slot(8), slot(12)).await;
    assert_eq!(status, 201);
    let id: uuid::Uuid = booking["id"].as_str().unwrap().parse().unwrap();
    use clap::Parser;
    let cli =
        Cli::try_parse_from(["berth", "manifests", &id.to_string(), "--database-url", "postgres://unused"]).unwrap();
    let Command::Manifests { cluster, .. } = cli.command else { panic!("expected manifests") };
    let yaml = render_manifests(&f.db, id, &cluster.cluster()).await.unwrap();

    let documents: Vec<serde_json::Value> = yaml
        .split("\n---\n")
        .map(|doc| serde_json::from_str(doc).expect("each document is JSON (and so YAML)"))
        .collect();
    assert_eq!(documents.len(), 16);
    let window =
        documents.iter().find(|d| d["kind"] == "ConfigMap" && d["metadata"]["name"] == "berth-session").unwrap();
    assert_eq!(
        window["data"]["window-end"],
        slot(12).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "what /etc/berth says"
    );
    let namespace = format!("berth-team-a-{}", &id.simple().to_string()[..8]);
    assert_eq!(documents[0]["kind"], "Namespace");
    assert_eq!(documents[0]["metadata"]["name"], namespace.as_str());
    let quota = documents.iter().find(|d| d["kind"] == "ResourceQuota").unwrap();
    assert_eq!(quota["spec"]["hard"]["requests.nvidia.com/mig-1g.24gb"], "4", "2 slices × 2 time-slice replicas");
    for denied in ["nvidia.com/gpu", "amd.com/gpu", "nvidia.com/gpu.shared"] {
        assert_eq!(quota["spec"]["hard"][format!("requests.{denied}")], "0", "{denied}");
    }
    let binding =
        documents.iter().find(|d| d["kind"] == "RoleBinding" && d["metadata"]["name"] == "berth-session-user").unwrap();
    assert_eq!(binding["roleRef"]["name"], "berth-session-user", "Berth's own role, not the built-in admin");
    assert_eq!(binding["subjects"][0]["name"], "ada@a.test");
    assert!(!yaml.contains("\"admin\""), "nothing binds the built-in admin role");
    let selector = serde_json::json!({ "nvidia.com/gpu.product": "NVIDIA-H100-NVL" });
    assert_eq!(
        documents[0]["metadata"]["annotations"]["berth.io/node-selector.0"],
        "nvidia.com/gpu.product=NVIDIA-H100-NVL"
    );
    assert_eq!(documents[0]["metadata"]["annotations"]["berth.io/gpu-kind"], MIG);
    let secret = documents.iter().find(|d| d["kind"] == "Secret").unwrap();
    assert_eq!(secret["stringData"]["token"], "<generated when the session starts>");
    let deployment = documents.iter().find(|d| d["kind"] == "Deployment").unwrap();
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        "quay.io/jupyter/pytorch-notebook:cuda12-latest"
    );
    assert_eq!(deployment["spec"]["template"]["spec"]["nodeSelector"], selector, "the pool's placement");
    assert_eq!(deployment["spec"]["template"]["spec"]["tolerations"][0]["key"], "nvidia.com/gpu");

    let missing = render_manifests(&f.db, uuid::Uuid::new_v4(), &cluster.cluster()).await.unwrap_err();
    assert_eq!(missing.to_string(), "booking not found");

    // The same text on the booking's page, for its owner and admins only.
    // (One test, not two: two tests of this binary rendering pages at once on
    // their own current-thread runtimes hung now and then in the Leptos
    // renderer; the server's multi-thread runtime is not affected.)
    owners_and_admins_see_a_bookings_manifests_page_others_do_not(&f, &id.to_string()).await;
}

async fn owners_and_admins_see_a_bookings_manifests_page_others_do_not(f: &Fixture, id: &str) {
    use axum::body::Body;
    use axum::http::{header, Request};
    let page = |token: String| {
        Request::get(format!("/bookings/{id}/manifests"))
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap()
    };
    let (status, html) = common::raw(&f.app, page(f.ada.clone())).await;
    assert_eq!(status, 200);
    let html = html.as_str().unwrap().to_string();
    assert!(
        html.contains("ResourceQuota") && html.contains("requests.nvidia.com/mig-1g.24gb"),
        "the YAML is on the page"
    );
    assert!(
        html.contains("&lt;generated when the session starts&gt;")
            || html.contains("generated when the session starts")
    );
    assert_eq!(common::raw(&f.app, page(f.admin.clone())).await.0, 200);
    assert_eq!(common::raw(&f.app, page(f.carol.clone())).await.0, 403, "a teammate sees the booking, not its details");
    assert_eq!(common::raw(&f.app, page(f.bob.clone())).await.0, 404);
}
