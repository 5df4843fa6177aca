//! The worker on a real Kubernetes API server (`make bench-worker`, after the
//! simulated rows): the real worker loop as deploy/'s `berth-worker`
//! ServiceAccount, a real PostgreSQL (`DATABASE_URL`, emptied first), the
//! stack of `.ci/kube-stack.sh`, and the tests' stand-in kubelet (a Node with
//! the pool's labels; pods bound and reported Ready every 100 ms, which adds
//! up to 100 ms to each start). Prints results; asserts nothing.
//!
//! 1. Start latency, window open → session `active`: one session at a time
//!    (p50, p99 over the samples), and 50 opening at once (p50, p99, last).
//! 2. API requests of a converged pass with those 50 sessions active.
//! 3. Window end → namespace gone (the controller manager finalized it).

#[path = "../tests/common/kube_stack.rs"]
#[allow(dead_code)]
mod kube_stack;
#[path = "../tests/common/processes.rs"]
#[allow(dead_code)]
mod processes;

use app::backend::{pools, tokens, users};
use app::model::{KindSpec, NewPool, Role};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use kube_stack::{reap_pods, run_pods, As};
use server::worker::manifests::{self, Cluster};
use server::worker::reconcile::Reconciler;
use sqlx::PgPool;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};
use uuid::Uuid;

const KIND: &str = "nvidia.com/mig-1g.24gb";

fn node_labels() -> BTreeMap<String, String> {
    BTreeMap::from([("berth.io/pool".to_string(), "bench".to_string())])
}

async fn setup(db: &PgPool) -> (Uuid, Uuid, Uuid) {
    app::backend::MIGRATOR.run(db).await.expect("migrations");
    let admin = users::upsert_user(db, "admin@bench.test", "Admin", Role::Admin, "bench").await.unwrap();
    let token = tokens::issue(db, admin, "bench", chrono::Duration::days(1)).await.unwrap().token;
    let principal = tokens::authenticate(db, &token).await.unwrap().unwrap();
    let new = NewPool {
        name: format!("bench-{}", Uuid::new_v4().simple()),
        description: String::new(),
        gpu_model: String::new(),
        requires_approval: false,
        granularity_minutes: None,
        max_booking_minutes: None,
        horizon_days: None,
        min_notice_minutes: None,
        price_per_unit_hour: 0.0,
        images: vec!["quay.io/jupyter/pytorch-notebook:cuda12-latest".into()],
        tenants: vec![],
        node_selector: node_labels(),
        tolerations: vec![],
        time_zone: "UTC".into(),
        kinds: vec![KindSpec {
            kind: KIND.into(),
            capacity: 5000,
            replicas_per_unit: 2,
            vram_gb_per_unit: 24,
            cpu_millis_per_unit: 4000,
            memory_mib_per_unit: 32768,
            storage_gib_per_unit: 50,
        }],
    };
    let pool = pools::create(db, &principal, new).await.unwrap().id;
    let tenant = sqlx::query_scalar("SELECT id FROM tenant WHERE slug = 'bench'").fetch_one(db).await.unwrap();
    (pool, admin, tenant)
}

/// `n` approved bookings whose window opens `opens_in` from now (admission
/// is not the point here).
async fn book(db: &PgPool, (pool, user, tenant): (Uuid, Uuid, Uuid), n: i32, opens_in: Duration) -> Vec<Uuid> {
    sqlx::query_scalar(
        "INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, image, starts_at, ends_at, state)
         SELECT $1, $2, $3, $4, 1, 'interactive', 'quay.io/jupyter/pytorch-notebook:cuda12-latest',
                now() + $5, now() + $5 + interval '2 hours', 'approved'
         FROM generate_series(1, $6) RETURNING id",
    )
    .bind(pool)
    .bind(KIND)
    .bind(user)
    .bind(tenant)
    .bind(chrono::Duration::from_std(opens_in).unwrap())
    .bind(n)
    .fetch_all(db)
    .await
    .unwrap()
}

/// When each booking became active (polled every 10 ms), from `opens_at`.
async fn until_active(db: &PgPool, ids: &[Uuid], opens_at: Instant) -> Vec<Duration> {
    let mut active: HashMap<Uuid, Duration> = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(300);
    while active.len() < ids.len() {
        assert!(Instant::now() < deadline, "sessions not active within 300 s");
        let now: Vec<Uuid> = sqlx::query_scalar("SELECT id FROM booking WHERE id = ANY($1) AND state = 'active'")
            .bind(ids)
            .fetch_all(db)
            .await
            .unwrap();
        for id in now {
            active.entry(id).or_insert_with(|| opens_at.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut latencies: Vec<Duration> = active.into_values().collect();
    latencies.sort();
    latencies
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
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
                run_pods(&admin, "bench-node", &node_labels(), &ns.metadata.name.unwrap_or_default()).await;
            }
        }
        reap_pods(&admin).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Requests the worker's client made so far (its metrics counter).
fn requests_so_far() -> f64 {
    let text = server::metrics::handle().render();
    text.lines()
        .filter(|l| l.starts_with("berth_kubernetes_requests_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[tokio::main]
async fn main() {
    let Some(stack) = kube_stack::stack() else {
        println!("\n(no real API server on this machine: the real-server rows are skipped)");
        return;
    };
    let url = std::env::var("DATABASE_URL").expect("DATABASE_URL names an empty database");
    let db = sqlx::postgres::PgPoolOptions::new().max_connections(8).connect(&url).await.expect("PostgreSQL");
    let grant = setup(&db).await;
    let admin = stack.client(As::Admin).await;
    let kubelet = tokio::spawn(kubelet(admin.clone()));
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(stack.kubeconfig(&As::Worker)).unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    let client =
        kube::client::ClientBuilder::try_from(config).unwrap().with_layer(&server::kube_metrics::CountRequests).build();
    let worker = Reconciler::new(db.clone(), client.clone(), Cluster::default());
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let loop_task = tokio::spawn(async move { server::worker::run::run(worker, stopped).await.unwrap() });
    tokio::time::sleep(Duration::from_secs(1)).await;

    let samples = std::env::var("BENCH_REAL_SAMPLES").ok().and_then(|s| s.parse().ok()).unwrap_or(20);
    let mut single = Vec::new();
    for _ in 0..samples {
        let ids = book(&db, grant, 1, Duration::from_secs(2)).await;
        single.extend(until_active(&db, &ids, Instant::now() + Duration::from_secs(2)).await);
        sqlx::query("UPDATE booking SET state = 'canceled' WHERE id = ANY($1)").bind(&ids).execute(&db).await.unwrap();
    }
    single.sort();
    let ids = book(&db, grant, 50, Duration::from_secs(3)).await;
    let fifty = until_active(&db, &ids, Instant::now() + Duration::from_secs(3)).await;

    // A converged pass with the 50 active: the same passes the loop runs.
    let worker = Reconciler::new(db.clone(), client, Cluster::default());
    worker.pass().await.unwrap();
    let before = requests_so_far();
    let mut writes = 0;
    for _ in 0..5 {
        writes += worker.pass().await.unwrap().applied;
    }
    let per_pass = (requests_so_far() - before) / 5.0;

    // Window end: every one of the 50 closes now.
    sqlx::query("UPDATE booking SET ends_at = now() WHERE id = ANY($1)").bind(&ids).execute(&db).await.unwrap();
    let ended = Instant::now();
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    let mut gone = Vec::new();
    let mut left: Vec<String> = ids.iter().map(|id| manifests::namespace_name("bench", *id)).collect();
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
    row("window open → `active`, 50 sessions opening at once", &fifty);
    row("window end → namespace gone (50 at once)", &gone);
    println!("\nA converged pass with 50 sessions active: {per_pass:.1} API requests, {writes} writes (mean of 5).");
}
