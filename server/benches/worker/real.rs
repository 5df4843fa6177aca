//! The worker on a real Kubernetes API server (`make bench-worker`, after the
//! simulated rows): the real worker loop as deploy/'s `berth-worker`
//! ServiceAccount, the stack of `.ci/kube-stack.sh`, and the tests' stand-in
//! kubelet (a Node; pods bound and reported Ready every 100 ms, which adds up
//! to 100 ms to each start).
//!
//! 1. Start latency, window open → session `active`: one session at a time
//!    (p50, p99 over the samples), and 50 opening at once (p50, p99, last).
//! 2. API requests of a converged pass with those 50 sessions active, and
//!    its time and the peak memory with 500 decoys (Berth's label refused).
//! 3. Window end → namespace gone (the controller manager finalized it).
//! 4. With `--kueue` and `--scale-ahead 30m` on: the requests and writes of a
//!    converged pass with 1 and 200 sessions active and as many bookings
//!    opening within the lead time (their room held).
//! 5. The cluster's own floor: the same objects for 50 sessions applied by a
//!    bare client (server-side apply, nothing read first) at the worker's
//!    concurrency, as berth-worker, on the same server in the same run;
//!    and Berth's 50-at-once "every object applied" as a ratio of it.
//! 6. Homes (issue 46): window open → `active` for a person's first session
//!    (a new home and model cache, provisioned) and for a returning person
//!    (both kept volumes reserved and bound again), a stand-in provisioner
//!    playing its part.

use super::kube_stack::{self, reap_pods, run_pods, As};
use super::{namespace, percentile, Bench};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use server::provisioner::manifests::{self, Cluster};
use server::provisioner::reconcile::Reconciler;
use sqlx::PgPool;
use std::collections::HashMap;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// When each booking had every object applied (its Workspace step done)
/// and when it became active, from `opens_at` (polled every 10 ms): the
/// worker's share of a start, and the cluster's.
struct Started {
    applied: Vec<Duration>,
    active: Vec<Duration>,
}

async fn until_active(db: &PgPool, ids: &[Uuid], opens_at: Instant) -> Started {
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

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

/// The stand-in kubelet over every session namespace, until aborted.
async fn kubelet(admin: kube::Client) {
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
async fn median_pass(worker: &Reconciler) -> Duration {
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
async fn converged_cost(worker: &Reconciler) -> (f64, usize) {
    let before = requests_so_far();
    let mut writes = 0;
    for _ in 0..5 {
        writes += worker.pass().await.unwrap().applied;
    }
    ((requests_so_far() - before) / 5.0, writes)
}

/// The process's peak resident memory so far (VmHWM), KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or_default();
    line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).unwrap_or(0)
}

/// A client as deploy/'s berth-worker whose requests the metrics count.
async fn counted_worker_client(stack: &kube_stack::Stack) -> kube::Client {
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(stack.kubeconfig(&As::Worker)).unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    kube::client::ClientBuilder::try_from(config).unwrap().with_layer(&server::kube_metrics::CountRequests).build()
}

/// Requests the worker's client made so far (its metrics counter).
fn requests_so_far() -> f64 {
    let text = server::metrics::handle().render();
    text.lines()
        .filter(|l| l.starts_with("berth_kubernetes_requests_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

pub async fn rows(bench: &Bench) {
    let Some(stack) = kube_stack::stack() else {
        println!("\n(no real API server on this machine: the real-server rows are skipped)");
        return;
    };
    bench.end_all().await;
    let db = bench.db.clone();
    let admin = stack.client(As::Admin).await;
    let kubelet = tokio::spawn(kubelet(admin.clone()));
    let client = counted_worker_client(stack).await;
    let worker = Reconciler::new(db.clone(), client.clone(), Cluster::default());
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let loop_task = tokio::spawn(async move { server::provisioner::run::run(worker, stopped).await.unwrap() });
    tokio::time::sleep(Duration::from_secs(1)).await;

    let samples = std::env::var("BENCH_REAL_SAMPLES").ok().and_then(|s| s.parse().ok()).unwrap_or(20);
    let mut single = Vec::new();
    for _ in 0..samples {
        let ids = bench.book(1, chrono::Duration::seconds(2)).await;
        single.extend(until_active(&db, &ids, Instant::now() + Duration::from_secs(2)).await.active);
        sqlx::query("UPDATE booking SET state = 'canceled' WHERE id = ANY($1)").bind(&ids).execute(&db).await.unwrap();
    }
    single.sort();
    let ids = bench.book(50, chrono::Duration::seconds(3)).await;
    let fifty = until_active(&db, &ids, Instant::now() + Duration::from_secs(3)).await;

    // A converged pass with the 50 active: the same passes the loop runs,
    // with the loop stopped so that only these are counted.
    stop.send(true).unwrap();
    loop_task.await.unwrap();
    let worker = Reconciler::new(db.clone(), client.clone(), Cluster::default());
    worker.pass().await.unwrap();
    let (per_pass, writes) = converged_cost(&worker).await;
    // The same passes with 500 decoys (10 KB each; Berth's label refused,
    // so without it): time, requests, and how much peak memory grew.
    let plain = median_pass(&worker).await;
    let peak = peak_rss_kib();
    kube_stack::decoys(&admin, 500).await;
    let before = requests_so_far();
    let decoyed = median_pass(&worker).await;
    let decoy_requests = (requests_so_far() - before) / 5.0;
    let grown = peak_rss_kib().saturating_sub(peak);
    let _ = Api::<Namespace>::all(admin.clone()).delete("decoys", &Default::default()).await;

    // Window end: every one of the 50 closes now, with the loop running again.
    let worker = Reconciler::new(db.clone(), client, Cluster::default());
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let loop_task = tokio::spawn(async move { server::provisioner::run::run(worker, stopped).await.unwrap() });
    sqlx::query("UPDATE booking SET ends_at = now() WHERE id = ANY($1)").bind(&ids).execute(&db).await.unwrap();
    let ended = Instant::now();
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    let mut gone = Vec::new();
    let mut left: Vec<String> = ids.iter().map(|id| namespace(*id)).collect();
    let deadline = Instant::now() + Duration::from_secs(300);
    while !left.is_empty() {
        assert!(Instant::now() < deadline, "namespaces not gone within 300 s");
        let mut still = Vec::new();
        for name in left {
            match namespaces.get_opt(&name).await.unwrap() {
                Some(_) => still.push(name),
                None => gone.push(ended.elapsed()),
            }
        }
        left = still;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    gone.sort();
    stop.send(true).unwrap();
    loop_task.await.unwrap();
    kubelet.abort();

    println!("\n## On a real API server (v1.36, worker as berth-worker, stand-in kubelet every 100 ms)\n");
    println!("| measure | p50 | p99 | last |");
    println!("| --- | ---: | ---: | ---: |");
    let row = |name: &str, d: &[Duration]| {
        println!("| {name} | {} | {} | {} |", ms(percentile(d, 50.0)), ms(percentile(d, 99.0)), ms(*d.last().unwrap()))
    };
    row(&format!("window open → `active`, one session at a time ({samples} samples)"), &single);
    row("window open → every object applied, 50 sessions opening at once", &fifty.applied);
    row("window open → `active`, 50 sessions opening at once", &fifty.active);
    row("window end → namespace gone (50 at once)", &gone);
    println!("\nA converged pass with 50 sessions active: {per_pass:.1} API requests, {writes} writes (mean of 5).");
    println!(
        "With 500 decoys (10 KB each; Berth's label refused, so without it): {decoy_requests:.1} requests, \
         pass p50 {} (without: {}), peak memory +{} MiB.",
        ms(decoyed),
        ms(plain),
        grown / 1024
    );
    bench.end_all().await;
    let floor = floor(stack, 50).await;
    let (ours, bare) = (*fifty.applied.last().unwrap(), *floor.last().unwrap());
    println!(
        "\nThe floor, 50 sessions' objects applied by a bare client 8 sessions at a time: p50 {}, last {}. \
         Berth's 50 at once, every object applied: last {} = {:.2}× the floor.",
        ms(percentile(&floor, 50.0)),
        ms(bare),
        ms(ours),
        ours.as_secs_f64() / bare.as_secs_f64()
    );
    homes(bench, stack, &admin).await;
    with_switches(bench, stack, &admin).await;
}

/// The floor: every object of `n` sessions (as the worker builds them)
/// applied with server-side apply by a client as berth-worker, 8 sessions at
/// once (the worker's `STARTS_AT_ONCE`), each session's objects in order.
/// Returns each session's time to its last object, sorted.
async fn floor(stack: &kube_stack::Stack, n: usize) -> Vec<Duration> {
    use futures::StreamExt;
    use kube::api::{DynamicObject, Patch, PatchParams};
    let client = stack.client(As::Worker).await;
    let sessions: Vec<manifests::Session> = (0..n)
        .map(|_| manifests::Session {
            booking_id: Uuid::new_v4(),
            pool_id: Uuid::new_v4(),
            tenant: "floor".into(),
            user: "someone@bench.test".into(),
            co_owners: vec![],
            quantity: 1,
            interactive: true,
            image: "quay.io/jupyter/pytorch-notebook:cuda12-latest".into(),
            kind: manifests::KindGrant {
                kind: super::KIND.into(),
                replicas_per_unit: 2,
                cpu_millis_per_unit: 4000,
                memory_mib_per_unit: 32768,
                storage_gib_per_unit: 50,
                lend_idle: false,
            },
            other_kinds: vec![],
            placement: Default::default(),
            window: Default::default(),
        })
        .collect();
    let started = Instant::now();
    let apply = |session: manifests::Session| {
        let client = client.clone();
        async move {
            for object in manifests::all(&session, &Cluster::default(), "t0ken") {
                let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
                let resource =
                    server::provisioner::snapshot::resource(&text(&object["apiVersion"]), &text(&object["kind"]));
                let api: Api<DynamicObject> = match object["metadata"]["namespace"].as_str() {
                    Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
                    None => Api::all_with(client.clone(), &resource),
                };
                let (params, patch) = (PatchParams::apply(manifests::FIELD_MANAGER).force(), Patch::Apply(&object));
                let name = text(&object["metadata"]["name"]);
                server::provisioner::retry::retrying(3, Duration::from_millis(200), || {
                    api.patch(&name, &params, &patch)
                })
                .await
                .unwrap_or_else(|e| panic!("the bare client applies {name}: {e}"));
            }
            started.elapsed()
        }
    };
    let mut done: Vec<Duration> =
        futures::stream::iter(sessions.clone()).map(apply).buffer_unordered(8).collect().await;
    done.sort();
    let namespaces: Api<Namespace> = Api::all(stack.client(As::Admin).await);
    for session in &sessions {
        let _ = namespaces.delete(&session.namespace(), &Default::default()).await;
    }
    done
}

/// The stand-in provisioner: a PersistentVolume for every pending claim of
/// storage class `HOMES` in a session namespace, made for that claim, until
/// aborted. The controller manager binds them.
async fn provisioner(admin: kube::Client) {
    use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
    let (claims, volumes) = (Api::<PersistentVolumeClaim>::all(admin.clone()), Api::<PersistentVolume>::all(admin));
    loop {
        for claim in claims.list(&ListParams::default()).await.map(|l| l.items).unwrap_or_default() {
            let spec = claim.spec.clone().unwrap_or_default();
            if spec.volume_name.is_some() || spec.storage_class_name.as_deref() != Some(HOMES) {
                continue;
            }
            let uid = claim.metadata.uid.clone().unwrap_or_default();
            let pv = serde_json::json!({ "apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": { "name": format!("pvc-{uid}") },
                "spec": { "capacity": { "storage": "200Gi" }, "accessModes": ["ReadWriteOnce"],
                          "persistentVolumeReclaimPolicy": "Delete", "storageClassName": HOMES,
                          "hostPath": { "path": format!("/tmp/{uid}") },
                          "claimRef": { "namespace": claim.metadata.namespace, "name": claim.metadata.name, "uid": uid } } });
            let _ = volumes.create(&Default::default(), &serde_json::from_value(pv).unwrap()).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

const HOMES: &str = "bench-homes";

/// Window open → `active` for a person's first session and for their next
/// one, `samples` people, one session at a time, the worker loop running.
async fn homes(bench: &Bench, stack: &kube_stack::Stack, admin: &kube::Client) {
    let samples = std::env::var("BENCH_HOME_SAMPLES").ok().and_then(|s| s.parse().ok()).unwrap_or(5);
    let (kubelet, provisioner) = (tokio::spawn(kubelet(admin.clone())), tokio::spawn(provisioner(admin.clone())));
    let cluster = Cluster { storage_class: Some(HOMES.into()), ..Cluster::default() };
    let worker = Reconciler::new(bench.db.clone(), counted_worker_client(stack).await, cluster);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let loop_task = tokio::spawn(async move { server::provisioner::run::run(worker, stopped).await.unwrap() });
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    let (mut first, mut again) = (Vec::new(), Vec::new());
    for _ in 0..samples {
        let person = bench.new_person().await;
        for times in [&mut first, &mut again] {
            let ids = bench.book_for(person, 1, chrono::Duration::seconds(2)).await;
            times.extend(until_active(&bench.db, &ids, Instant::now() + Duration::from_secs(2)).await.active);
            // Both kept (the repair pass saw the claims bound), then the window ends.
            let deadline = Instant::now() + Duration::from_secs(120);
            while sqlx::query_scalar::<_, i64>("SELECT count(*) FROM home WHERE user_id = $1")
                .bind(person)
                .fetch_one(&bench.db)
                .await
                .unwrap()
                < 2
            {
                assert!(Instant::now() < deadline, "no home and model cache kept within 120 s");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            sqlx::query("UPDATE booking SET ends_at = now() WHERE id = ANY($1)")
                .bind(&ids)
                .execute(&bench.db)
                .await
                .unwrap();
            while namespaces.get_opt(&namespace(ids[0])).await.unwrap().is_some() {
                assert!(Instant::now() < deadline, "namespace not gone within 120 s");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    stop.send(true).unwrap();
    loop_task.await.unwrap();
    kubelet.abort();
    provisioner.abort();
    first.sort();
    again.sort();
    println!("\n## Homes (real API server, stand-in provisioner and kubelet every 100 ms, {samples} people)\n");
    println!("| window open → `active` | p50 | last |");
    println!("| --- | ---: | ---: |");
    println!(
        "| a person's first session (a new home and model cache) | {} | {} |",
        ms(percentile(&first, 50.0)),
        ms(*first.last().unwrap())
    );
    println!(
        "| a returning person (their home and cache bound again) | {} | {} |",
        ms(percentile(&again, 50.0)),
        ms(*again.last().unwrap())
    );
    bench.end_all().await;
}

/// A converged pass with both switches on (`--kueue`, `--scale-ahead 30m`):
/// `n` sessions active, `n` bookings opening in 10 minutes.
async fn with_switches(bench: &Bench, stack: &kube_stack::Stack, admin: &kube::Client) {
    use server::provisioner::manifests::ahead::{AheadMode, ScaleAhead};
    let kubelet = tokio::spawn(kubelet(admin.clone()));
    let cluster = Cluster {
        kueue: true,
        scale_ahead: Some(ScaleAhead {
            lead: chrono::Duration::minutes(30),
            mode: AheadMode::CapacityBuffer,
            pause_image: "registry.k8s.io/pause:3.10".into(),
        }),
        ..Cluster::default()
    };
    let client = counted_worker_client(stack).await;
    let worker = Reconciler::new(bench.db.clone(), client, cluster);
    println!("\n## With `--kueue` and `--scale-ahead 30m` on (real API server, worker as berth-worker)\n");
    println!("| sessions active + opening within the lead time | first convergence | requests / pass | writes / pass | pass time (median of 5) |");
    println!("| ---: | ---: | ---: | ---: | ---: |");
    for n in [1, 200] {
        let live = bench.book(n, chrono::Duration::minutes(-1)).await;
        bench.book(n, chrono::Duration::minutes(10)).await;
        let started = Instant::now();
        let deadline = started + Duration::from_secs(600);
        loop {
            assert!(Instant::now() < deadline, "not converged within 600 s");
            let report = worker.pass().await.unwrap();
            assert!(report.errors.is_empty(), "{:?}", report.errors);
            let active: i64 =
                sqlx::query_scalar("SELECT count(*) FROM booking WHERE id = ANY($1) AND state = 'active'")
                    .bind(&live)
                    .fetch_one(&bench.db)
                    .await
                    .unwrap();
            if report.applied == 0 && active == i64::from(n) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let first = started.elapsed();
        let (per_pass, writes) = converged_cost(&worker).await;
        let median = median_pass(&worker).await;
        println!(
            "| {n} + {n} | {:.1} s | {per_pass:.1} | {:.1} | {} |",
            first.as_secs_f64(),
            writes as f64 / 5.0,
            ms(median)
        );
        // Both go: their namespaces, queues and room.
        bench.end_all().await;
        worker.pass().await.unwrap();
    }
    kubelet.abort();
}
