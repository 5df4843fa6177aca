//! Row 6 of the real-server rows (`real.rs`): homes, window open →
//! `active` for a person's first session and for a returning one, a
//! stand-in provisioner playing its part; and the worker with its switches on.

use super::kube_stack;
use super::real_parts::*;
use super::{namespace, percentile, Bench};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use server::provisioner::manifests::Cluster;
use server::provisioner::reconcile::Reconciler;
use std::time::{Duration, Instant};

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
pub(crate) async fn homes(bench: &Bench, stack: &kube_stack::Stack, admin: &kube::Client) {
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
pub(crate) async fn with_switches(bench: &Bench, stack: &kube_stack::Stack, admin: &kube::Client) {
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
            if report.applied == 0 && super::active_count(&bench.db, &live).await == live.len() {
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
