//! Provisioning worker benchmark (`make bench-worker`): the real worker loop
//! and passes, a real PostgreSQL (`DATABASE_URL`, emptied first), and the
//! in-memory API server of the simulated cluster, whose kubelet reports
//! workspaces ready at once. Prints results; asserts nothing.
//!
//! 1. Requests, writes and time of a converged pass with 10, 100, 1 000 live sessions.
//! 2. Start latency: booking committed → its namespace's quota applied, one
//!    booking at a time with 10 (then 1 000) sessions running, against a 30 s
//!    polling design.
//! 3. 200 sessions whose windows open in the same minute: time from the
//!    window's start until all are applied and all are active.
//! 4. Two clusters, each with its own worker lead: requests of a converged
//!    pass per cluster, and 25 + 25 sessions opening at once.
//! 5. The same worker on a real API server (`real.rs`).

#[path = "worker/clusters.rs"]
mod clusters;
#[path = "../tests/it/common/kube_stack.rs"]
#[allow(dead_code)]
mod kube_stack;
#[path = "../tests/it/common/processes.rs"]
#[allow(dead_code)]
mod processes;
#[path = "worker/real.rs"]
mod real;
#[path = "worker/real_homes.rs"]
mod real_homes;
#[path = "worker/real_parts.rs"]
mod real_parts;

use app::backend::{accounts::tokens, accounts::users, pools};
use app::model::{KindSpec, NewPool, Role};
use server::provisioner::manifests::Cluster;
use server::provisioner::reconcile::Reconciler;
use server::provisioner::simulated::SimulatedCluster;
use server::provisioner::snapshot::Snapshot;
use sqlx::PgPool;
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

const KIND: &str = "nvidia.com/mig-1g.24gb";

struct Bench {
    db: PgPool,
    pool: Uuid,
    user: Uuid,
    tenant: Uuid,
    admin: app::model::Principal,
}

impl Bench {
    async fn setup() -> Bench {
        let url = std::env::var("DATABASE_URL").expect("DATABASE_URL names an empty database");
        let db = sqlx::postgres::PgPoolOptions::new().max_connections(8).connect(&url).await.expect("PostgreSQL");
        app::backend::MIGRATOR.run(&db).await.expect("migrations");
        let admin = users::upsert_user(&db, "admin@bench.test", "Admin", Role::Admin, "bench").await.unwrap();
        let token = tokens::issue(&db, admin, "bench", chrono::Duration::days(1), app::model::TokenScope::Full)
            .await
            .unwrap()
            .token;
        let principal = tokens::authenticate(&db, &token).await.unwrap().unwrap();
        let new = NewPool {
            name: format!("bench-{}", Uuid::new_v4().simple()),
            images: vec!["quay.io/jupyter/pytorch-notebook:cuda12-latest".into()],
            kinds: vec![KindSpec {
                kind: KIND.into(),
                capacity: 5000,
                replicas_per_unit: 2,
                vram_gb_per_unit: 24,
                cpu_millis_per_unit: 4000,
                memory_mib_per_unit: 32768,
                storage_gib_per_unit: 50,
                slices_per_gpu: None,
                price_per_unit_hour: None,
                lend_idle: false,
            }],
            ..NewPool::default()
        };
        let pool = pools::create(&db, &principal, new).await.unwrap().id;
        let tenant = sqlx::query_scalar("SELECT id FROM tenant WHERE slug = 'bench'").fetch_one(&db).await.unwrap();
        Bench { db, pool, user: admin, tenant, admin: principal }
    }

    /// `n` approved bookings whose window opens `opens_in` from now, in one
    /// transaction (capacity is not the point here, so admission is skipped).
    async fn book(&self, n: i32, opens_in: chrono::Duration) -> Vec<Uuid> {
        self.book_for(self.user, n, opens_in).await
    }

    /// A new member of the bench's tenant (someone with no home yet).
    async fn new_person(&self) -> Uuid {
        let email = format!("person-{}@bench.test", Uuid::new_v4().simple());
        users::upsert_user(&self.db, &email, "Person", Role::User, "bench").await.unwrap()
    }

    /// `n` approved bookings of `person` whose window opens `opens_in` from now.
    async fn book_for(&self, person: Uuid, n: i32, opens_in: chrono::Duration) -> Vec<Uuid> {
        self.book_in(self.pool, person, n, opens_in).await
    }

    /// The same on `pool`.
    async fn book_in(&self, pool: Uuid, person: Uuid, n: i32, opens_in: chrono::Duration) -> Vec<Uuid> {
        sqlx::query_scalar(
            "INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, image, starts_at, ends_at, state)
             SELECT $1, $2, $3, $4, 1, 'interactive', 'quay.io/jupyter/pytorch-notebook:cuda12-latest',
                    now() + $5, now() + $5 + interval '2 hours', 'approved'
             FROM generate_series(1, $6) RETURNING id",
        )
        .bind(pool)
        .bind(KIND)
        .bind(person)
        .bind(self.tenant)
        .bind(opens_in)
        .bind(n)
        .fetch_all(&self.db)
        .await
        .unwrap()
    }

    async fn end_all(&self) {
        sqlx::query("UPDATE booking SET state = 'completed' WHERE state IN ('approved', 'active')")
            .execute(&self.db)
            .await
            .unwrap();
    }
}

fn namespace(id: Uuid) -> String {
    format!("berth-bench-{}", &id.simple().to_string()[..8])
}

fn quota_path(id: Uuid) -> String {
    format!("/api/v1/namespaces/{}/resourcequotas/berth-session", namespace(id))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

async fn converged_pass_cost(bench: &Bench) {
    println!("\n## Converged pass (all sessions provisioned and ready)\n");
    println!("| live sessions | first convergence | requests / pass | writes / pass | pass time (median of 5) | of which reading the snapshot |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for n in [10, 100, 1000] {
        bench.end_all().await;
        let cluster = SimulatedCluster::start(true).await;
        let worker = Reconciler::new(bench.db.clone(), cluster.client(), Cluster::default());
        bench.book(n, chrono::Duration::minutes(-1)).await;
        let started = Instant::now();
        loop {
            let report = worker.pass().await.unwrap();
            if report.applied == 0 && report.started.is_empty() {
                break;
            }
        }
        let first = started.elapsed();
        let mut times = Vec::new();
        let (requests, writes) = (cluster.requests(), cluster.writes());
        for _ in 0..5 {
            let at = Instant::now();
            worker.pass().await.unwrap();
            times.push(at.elapsed());
        }
        times.sort();
        let per_pass = |total: usize| total as f64 / 5.0;
        let (requests, writes) = (per_pass(cluster.requests() - requests), per_pass(cluster.writes() - writes));
        let namespaces = session_namespaces(&cluster.client()).await;
        let mut reads = Vec::new();
        for _ in 0..5 {
            let at = Instant::now();
            Snapshot::read(&cluster.client(), &namespaces, 0, Duration::ZERO).await.unwrap();
            reads.push(at.elapsed());
        }
        reads.sort();
        println!(
            "| {n} | {:.2} s | {requests} | {writes} | {} | {} |",
            first.as_secs_f64(),
            ms(times[2]),
            ms(reads[2])
        );
    }
    bench.end_all().await;
}

/// Starts the real worker loop on a fresh simulated cluster.
async fn running_worker(
    bench: &Bench,
) -> (Arc<SimulatedCluster>, tokio::sync::watch::Sender<bool>, tokio::task::JoinHandle<()>) {
    let cluster = SimulatedCluster::start(true).await;
    *cluster.write_log.lock().unwrap() = Some(Vec::new());
    let worker = Reconciler::new(bench.db.clone(), cluster.client(), Cluster::default());
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(async move { server::provisioner::run::run(worker, stopped).await.unwrap() });
    (cluster, stop, task)
}

fn applied_at(cluster: &SimulatedCluster, path: &str) -> Option<Instant> {
    cluster.write_log.lock().unwrap().as_ref()?.iter().find(|(_, p)| p == path).map(|(at, _)| *at)
}

/// How many of these bookings are active.
async fn active_count(db: &PgPool, ids: &[Uuid]) -> usize {
    let active: i64 = sqlx::query_scalar("SELECT count(*) FROM booking WHERE id = ANY($1) AND state = 'active'")
        .bind(ids)
        .fetch_one(db)
        .await
        .unwrap();
    active as usize
}

/// When the last of these bookings became active (polled every 5 ms).
async fn all_active(db: &PgPool, ids: &[Uuid]) -> Instant {
    while active_count(db, ids).await < ids.len() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Instant::now()
}

async fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !check() {
        assert!(Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
}

async fn start_latency(bench: &Bench, samples: usize, running: i32) {
    bench.end_all().await;
    let (cluster, stop, task) = running_worker(bench).await;
    let background = bench.book(running, chrono::Duration::minutes(-1)).await;
    wait_for("background sessions", || background.iter().all(|id| applied_at(&cluster, &quota_path(*id)).is_some()))
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut latencies = Vec::new();
    for _ in 0..samples {
        let id = bench.book(1, chrono::Duration::zero()).await[0];
        let committed = Instant::now();
        let path = quota_path(id);
        wait_for("quota applied", || applied_at(&cluster, &path).is_some()).await;
        latencies.push(applied_at(&cluster, &path).unwrap() - committed);
        sqlx::query("UPDATE booking SET state = 'canceled' WHERE id = $1").bind(id).execute(&bench.db).await.unwrap();
        let ns = namespace(id);
        wait_for("namespace collected", || !cluster.namespace_names().contains(&ns)).await;
    }
    stop.send(true).unwrap();
    task.await.unwrap();
    latencies.sort();
    let (p50, p99, max) = (percentile(&latencies, 50.0), percentile(&latencies, 99.0), *latencies.last().unwrap());
    println!("\n## Start latency: booking committed → namespace and quota applied ({samples} bookings, {running} sessions running)\n");
    println!("| design | p50 | p99 | max |");
    println!("| --- | ---: | ---: | ---: |");
    println!("| Berth (NOTIFY wakes the loop) | {} | {} | {} |", ms(p50), ms(p99), ms(max));
    // A poller notices a booking after a uniformly distributed wait in
    // [0, 30 s), then needs the same pass.
    let poll = |q: f64| Duration::from_secs_f64(30.0 * q) + p50;
    println!(
        "| 30 s polling (wait uniform in [0, 30 s) + the same pass) | {} | {} | {} |",
        ms(poll(0.5)),
        ms(poll(0.99)),
        ms(poll(1.0))
    );
    bench.end_all().await;
}

async fn same_minute(bench: &Bench, n: i32) {
    bench.end_all().await;
    let (cluster, stop, task) = running_worker(bench).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ids = bench.book(n, chrono::Duration::seconds(3)).await;
    let opens: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("SELECT min(starts_at) FROM booking WHERE id = ANY($1)")
            .bind(&ids)
            .fetch_one(&bench.db)
            .await
            .unwrap();
    let opens_at = Instant::now() + (opens - chrono::Utc::now()).to_std().unwrap_or_default();
    let paths: Vec<String> = ids.iter().map(|id| quota_path(*id)).collect();
    wait_for("all applied", || paths.iter().all(|p| applied_at(&cluster, p).is_some())).await;
    let applied = paths.iter().filter_map(|p| applied_at(&cluster, p)).max().unwrap();
    let active = all_active(&bench.db, &ids).await;
    stop.send(true).unwrap();
    task.await.unwrap();
    println!("\n## {n} sessions whose windows open at the same moment\n");
    println!("| measure | from the windows' start |");
    println!("| --- | ---: |");
    println!("| every namespace + quota applied | {} |", ms(applied.saturating_duration_since(opens_at)));
    println!(
        "| every session `active` (all 15 objects, workspace ready) | {} |",
        ms(active.saturating_duration_since(opens_at))
    );
    bench.end_all().await;
}

#[tokio::main]
async fn main() {
    let bench = Bench::setup().await;
    let samples = std::env::var("BENCH_SAMPLES").ok().and_then(|s| s.parse().ok()).unwrap_or(200);
    // BENCH_REAL_ONLY=1: the real API server's rows alone.
    if std::env::var_os("BENCH_REAL_ONLY").is_none() {
        converged_pass_cost(&bench).await;
        start_latency(&bench, samples, 10).await;
        start_latency(&bench, samples / 4, 1000).await;
        same_minute(&bench, 200).await;
        clusters::two_clusters(&bench).await;
    }
    real::rows(&bench).await;
}

/// The namespaces of every session the worker made (what a repair pass keeps).
async fn session_namespaces(client: &kube::Client) -> std::collections::HashSet<String> {
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client.clone());
    let params = kube::api::ListParams::default().labels(&server::provisioner::manifests::managed_selector());
    let list = namespaces.list_metadata(&params).await.unwrap();
    list.items.into_iter().filter_map(|ns| ns.metadata.name).collect()
}
