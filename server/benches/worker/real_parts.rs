//! What the real-server rows of `make bench-worker` share (`real.rs`,
//! `real_homes.rs`): the stand-in kubelet, the worker's counted client, and
//! how a start, a pass and the process are measured.

use super::kube_stack::{self, reap_pods, run_pods, As};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use server::provisioner::manifests;
use server::provisioner::reconcile::Reconciler;
use sqlx::PgPool;
use std::collections::HashMap;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// When each booking had every object applied (its Workspace step done)
/// and when it became active, from `opens_at` (polled every 10 ms): the
/// worker's share of a start, and the cluster's.
pub(crate) struct Started {
    pub(crate) applied: Vec<Duration>,
    pub(crate) active: Vec<Duration>,
}

pub(crate) async fn until_active(db: &PgPool, ids: &[Uuid], opens_at: Instant) -> Started {
    let (mut applied, mut active) = (HashMap::new(), HashMap::new());
    let deadline = Instant::now() + Duration::from_secs(300);
    while active.len() < ids.len() {
        assert!(Instant::now() < deadline, "sessions not active within 300 s");
        let now: Vec<(Uuid, bool, bool)> = sqlx::query_as(
            "SELECT b.id, coalesce(s.steps->5->>'state' = 'done', false), b.state = 'active'
             FROM booking b LEFT JOIN session_status s ON s.booking_id = b.id WHERE b.id = ANY($1)",
        )
        .bind(ids)
        .fetch_all(db)
        .await
        .unwrap();
        for (id, workspace_applied, is_active) in now {
            if workspace_applied || is_active {
                applied.entry(id).or_insert_with(|| opens_at.elapsed());
            }
            if is_active {
                active.entry(id).or_insert_with(|| opens_at.elapsed());
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let sorted = |m: HashMap<Uuid, Duration>| {
        let mut v: Vec<Duration> = m.into_values().collect();
        v.sort();
        v
    };
    Started { applied: sorted(applied), active: sorted(active) }
}

pub(crate) fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

/// The stand-in kubelet over every session namespace, until aborted.
pub(crate) async fn kubelet(admin: kube::Client) {
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    let managed = ListParams::default().labels(&manifests::managed_selector());
    loop {
        for ns in namespaces.list(&managed).await.map(|l| l.items).unwrap_or_default() {
            if ns.metadata.deletion_timestamp.is_none()
                && ns.metadata.labels.unwrap_or_default().contains_key(manifests::BOOKING_LABEL)
            {
                run_pods(&admin, "bench-node", &Default::default(), &ns.metadata.name.unwrap_or_default()).await;
            }
        }
        reap_pods(&admin).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The median time of 5 passes.
pub(crate) async fn median_pass(worker: &Reconciler) -> Duration {
    let mut times = Vec::new();
    for _ in 0..5 {
        let at = Instant::now();
        worker.pass().await.unwrap();
        times.push(at.elapsed());
    }
    times.sort();
    times[2]
}

/// API requests per pass (mean of 5) and the objects those 5 passes wrote.
pub(crate) async fn converged_cost(worker: &Reconciler) -> (f64, usize) {
    let before = requests_so_far();
    let mut writes = 0;
    for _ in 0..5 {
        writes += worker.pass().await.unwrap().applied;
    }
    ((requests_so_far() - before) / 5.0, writes)
}

/// The process's peak resident memory so far (VmHWM), KiB.
pub(crate) fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or_default();
    line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).unwrap_or(0)
}

/// A client as deploy/'s berth-worker whose requests the metrics count.
pub(crate) async fn counted_worker_client(stack: &kube_stack::Stack) -> kube::Client {
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(stack.kubeconfig(&As::Worker)).unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    kube::client::ClientBuilder::try_from(config).unwrap().with_layer(&server::kube_metrics::CountRequests).build()
}

/// Requests the worker's client made so far (its metrics counter).
pub(crate) fn requests_so_far() -> f64 {
    let text = server::metrics::handle().render();
    text.lines()
        .filter(|l| l.starts_with("berth_kubernetes_requests_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}
