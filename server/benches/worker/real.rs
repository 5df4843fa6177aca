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

use super::kube_stack::{self, As};
use super::real_homes::{homes, with_switches};
use super::real_parts::*;
use super::{namespace, percentile, Bench};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use server::provisioner::manifests::{self, Cluster};
use server::provisioner::reconcile::Reconciler;
use std::time::{Duration, Instant};
use uuid::Uuid;

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
