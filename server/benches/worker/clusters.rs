//! Row 4 of `make bench-worker`: two clusters, each with its own worker
//! lead: requests of a converged pass per cluster, and 25 + 25 sessions
//! opening at once.

use super::*;

/// A second cluster, `bench-east`, with a pool like the bench's; the
/// workers of both clusters as their leads would be.
async fn two_cluster_workers(bench: &Bench) -> (Uuid, [(Reconciler, Arc<SimulatedCluster>); 2]) {
    let east = app::backend::clusters::create(
        &bench.db,
        &bench.admin,
        app::model::ClusterSpec::reached("bench-east", app::model::ClusterAccess::Simulated),
    )
    .await
    .unwrap();
    let pool: Uuid = sqlx::query_scalar(
        "INSERT INTO pool (name, images, cluster_id) VALUES ('bench-east', ARRAY['quay.io/jupyter/pytorch-notebook:cuda12-latest'], $1)
         RETURNING id",
    )
    .bind(east.id)
    .fetch_one(&bench.db)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO pool_kind (pool_id, kind, capacity, replicas_per_unit, vram_gb_per_unit, cpu_millis_per_unit,
                                memory_mib_per_unit, storage_gib_per_unit, slices_per_gpu)
         SELECT $1, kind, capacity, replicas_per_unit, vram_gb_per_unit, cpu_millis_per_unit, memory_mib_per_unit,
                storage_gib_per_unit, slices_per_gpu FROM pool_kind WHERE pool_id = $2",
    )
    .bind(pool)
    .bind(bench.pool)
    .execute(&bench.db)
    .await
    .unwrap();
    let west: Uuid =
        sqlx::query_scalar("SELECT id FROM cluster WHERE name = 'default'").fetch_one(&bench.db).await.unwrap();
    let worker = |id: Uuid, name: &str, api: Arc<SimulatedCluster>| {
        let mut worker = Reconciler::new(bench.db.clone(), api.client(), Cluster::default());
        worker.drives = Some(server::provisioner::reconcile::ClusterRef { id, name: name.into() });
        (worker, api)
    };
    let (west_api, east_api) = (SimulatedCluster::start(true).await, SimulatedCluster::start(true).await);
    (pool, [worker(west, "default", west_api), worker(east.id, "bench-east", east_api)])
}

/// Two clusters with 100 sessions each: each cluster's converged pass costs
/// what one cluster's does; then 25 + 25 windows opening at once, each
/// cluster's lead running.
pub async fn two_clusters(bench: &Bench) {
    bench.end_all().await;
    let (east_pool, workers) = two_cluster_workers(bench).await;
    bench.book(100, chrono::Duration::minutes(-1)).await;
    bench.book_in(east_pool, bench.user, 100, chrono::Duration::minutes(-1)).await;
    let mut per_cluster = Vec::new();
    for (worker, api) in &workers {
        while {
            let report = worker.pass().await.unwrap();
            report.applied > 0 || !report.started.is_empty()
        } {}
        let requests = api.requests();
        for _ in 0..5 {
            worker.pass().await.unwrap();
        }
        per_cluster.push((api.requests() - requests) as f64 / 5.0);
    }
    println!(
        "
## Two clusters, each driven by its own lead
"
    );
    println!("| measure | default | bench-east |");
    println!("| --- | ---: | ---: |");
    println!("| requests / converged pass, 100 sessions on each | {} | {} |", per_cluster[0], per_cluster[1]);
    bench.end_all().await;

    // 25 + 25 windows opening together, both leads running.
    let mut leads = Vec::new();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut apis = Vec::new();
    for (worker, api) in workers {
        *api.write_log.lock().unwrap() = Some(Vec::new());
        apis.push(api);
        let stopped = stopped.clone();
        leads.push(tokio::spawn(async move { server::provisioner::run::run(worker, stopped).await.unwrap() }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let opens_in = chrono::Duration::seconds(3);
    let ids = [bench.book(25, opens_in).await, bench.book_in(east_pool, bench.user, 25, opens_in).await];
    let opens: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("SELECT min(starts_at) FROM booking WHERE id = ANY($1) OR id = ANY($2)")
            .bind(&ids[0])
            .bind(&ids[1])
            .fetch_one(&bench.db)
            .await
            .unwrap();
    let opens_at = Instant::now() + (opens - chrono::Utc::now()).to_std().unwrap_or_default();
    let mut applied = Vec::new();
    for (api, ids) in apis.iter().zip(&ids) {
        let paths: Vec<String> = ids.iter().map(|id| quota_path(*id)).collect();
        wait_for("all applied", || paths.iter().all(|p| applied_at(api, p).is_some())).await;
        applied.push(paths.iter().filter_map(|p| applied_at(api, p)).max().unwrap());
    }
    let all: Vec<Uuid> = ids.concat();
    let active = all_active(&bench.db, &all).await;
    stop.send(true).unwrap();
    for lead in leads {
        lead.await.unwrap();
    }
    let since = |at: Instant| ms(at.saturating_duration_since(opens_at));
    println!(
        "| 25 + 25 windows opening at once: every namespace + quota applied | {} | {} |",
        since(applied[0]),
        since(applied[1])
    );
    println!("| the same: all 50 sessions `active` | {} (both) | |", since(active));
    bench.end_all().await;
}
