//! The worker `kill -9` row of `make reliability`: the real `berth worker`
//! process (`BERTH`) against a real PostgreSQL (`DATABASE_URL`, an empty
//! database) and the simulated cluster, served over HTTP from this process
//! so that it outlives the workers. `PROVISIONINGS` (100) bookings open,
//! one every 100 ms, while the worker is killed with SIGKILL at random moments and started
//! again at once; half of them are ended early as soon as they run, so
//! teardowns are interrupted too. Then the last worker runs undisturbed
//! and this waits until the cluster matches the database. Counted:
//! namespaces left without a running booking, objects beyond what a
//! booking's manifests hold, namespaces Berth does not own that went
//! missing, and the time to converge after the last kill. Prints
//! `KEY value` lines the script turns into a table; asserts nothing.

use app::backend::{accounts::tokens, accounts::users, bookings, sessions::facts};
use app::model::Role;
use clap::Parser;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DynamicObject, ListParams, PostParams};
use rand::{Rng, SeedableRng};
use server::cli::ClusterArgs;
use server::provisioner::manifests::owned_by;
use server::provisioner::manifests::{self, Session, BOOKING_LABEL};
use server::provisioner::simulated::SimulatedCluster;
use server::provisioner::snapshot::{resource, SESSION_KINDS};
use sqlx::PgPool;
use std::collections::{BTreeMap, HashSet};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

const KIND: &str = "nvidia.com/mig-1g.24gb";

/// The worker's cluster settings: its defaults, as the script starts it.
#[derive(Parser)]
struct Defaults {
    #[command(flatten)]
    cluster: ClusterArgs,
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set (run make reliability)"))
}

/// Namespaces someone else made, each shaped to tempt a careless collector:
/// another team's, one named like a session, one labelled as Berth's but
/// without the booking annotation.
fn foreign_namespaces() -> Vec<Namespace> {
    let ns = |name: &str, labels: &[(&str, &str)]| Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            labels: Some(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
            ..Default::default()
        },
        ..Default::default()
    };
    vec![
        ns("team-vision", &[("team", "vision")]),
        ns("berth-kills-deadbeef", &[]),
        ns("berth-copied-labels", &[(manifests::MANAGED_BY.0, manifests::MANAGED_BY.1)]),
    ]
}

struct Worker {
    berth: String,
    kubeconfig: std::path::PathBuf,
    log: std::path::PathBuf,
}

impl Worker {
    fn start(&self) -> Child {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&self.log).expect("worker log");
        Command::new(&self.berth)
            .arg("worker")
            .env("KUBECONFIG", &self.kubeconfig)
            .env_remove("KUBERNETES_SERVICE_HOST")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("berth worker starts")
    }
}

/// The demo pool (its capacity does not matter: admission is skipped) and an admin.
async fn setup(db: &PgPool) -> (Uuid, app::model::Principal) {
    app::backend::MIGRATOR.run(db).await.expect("migrations");
    server::seed::demo(db).await.expect("the demo pool");
    let admin = users::upsert_user(db, "admin@kills.test", "Admin", Role::Admin, "kills").await.unwrap();
    let token =
        tokens::issue(db, admin, "kills", chrono::Duration::days(1), app::model::TokenScope::Full).await.unwrap().token;
    let principal = tokens::authenticate(db, &token).await.unwrap().unwrap();
    let pool = sqlx::query_scalar("SELECT id FROM pool WHERE name = $1")
        .bind(server::seed::DEMO_POOL)
        .fetch_one(db)
        .await
        .expect("the demo pool's id");
    (pool, principal)
}

/// `n` approved bookings of the admin whose windows opened a minute ago
/// (admission is not the point here).
async fn open_bookings(db: &PgPool, pool: Uuid, user: Uuid, n: i32) -> Vec<Uuid> {
    sqlx::query_scalar(
        "INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, image, starts_at, ends_at, state)
         SELECT $1, $2, $3, (SELECT tenant_id FROM membership WHERE user_id = $3 LIMIT 1), 1, 'interactive',
                'quay.io/jupyter/pytorch-notebook:cuda12-latest', now() - interval '1 minute',
                now() + interval '2 hours', 'approved'
         FROM generate_series(1, $4) RETURNING id",
    )
    .bind(pool)
    .bind(KIND)
    .bind(user)
    .bind(n)
    .fetch_all(db)
    .await
    .expect("bookings")
}

async fn states(db: &PgPool) -> BTreeMap<Uuid, String> {
    sqlx::query_as::<_, (Uuid, String)>("SELECT id, state::text FROM booking")
        .fetch_all(db)
        .await
        .expect("states")
        .into_iter()
        .collect()
}

/// What the cluster holds against what the database says should run.
#[derive(Debug, Default, PartialEq)]
struct Audit {
    /// Berth's namespaces whose booking does not run.
    orphaned: usize,
    /// Running bookings without their namespace.
    missing: usize,
    /// Objects beyond the booking's manifests (a second namespace for a
    /// booking, an extra object of a kind, a session object elsewhere).
    duplicated: usize,
    /// Objects of running bookings' manifests not (yet) in the cluster.
    absent: usize,
}

async fn audit_cluster(db: &PgPool, cluster: &Arc<SimulatedCluster>, settings: &manifests::Cluster) -> Audit {
    let client = cluster.client();
    let running: HashSet<Uuid> =
        states(db).await.into_iter().filter(|(_, state)| state == "active").map(|(id, _)| id).collect();
    let namespaces = Api::<Namespace>::all(client.clone()).list(&ListParams::default()).await.expect("namespaces");
    let mut audit = Audit::default();
    let mut namespace_of: BTreeMap<Uuid, Vec<String>> = BTreeMap::new();
    for ns in &namespaces.items {
        if let Some(booking) = owned_by(ns, None) {
            namespace_of.entry(booking).or_default().push(ns.metadata.name.clone().unwrap_or_default());
            audit.orphaned += usize::from(!running.contains(&booking));
        }
    }
    audit.duplicated += namespace_of.values().map(|names| names.len() - 1).sum::<usize>();
    audit.missing = running.iter().filter(|id| !namespace_of.contains_key(id)).count();
    // Every session object, by booking and kind, against the manifests.
    let mut live: BTreeMap<(Uuid, String), Vec<String>> = BTreeMap::new();
    for (api_version, kind) in SESSION_KINDS {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource(api_version, kind));
        let Ok(list) = api.list(&ListParams::default().labels(&manifests::managed_selector())).await else { continue };
        for item in list.items {
            let booking = item.metadata.labels.as_ref().and_then(|l| l.get(BOOKING_LABEL)).and_then(|b| b.parse().ok());
            match booking {
                Some(id) => {
                    live.entry((id, kind.to_string())).or_default().push(item.metadata.namespace.unwrap_or_default())
                }
                None => audit.duplicated += 1,
            }
        }
    }
    for id in &running {
        let Ok(facts) = facts::facts(db, *id).await else { continue };
        let session = Session::of(facts);
        let mut expected: BTreeMap<String, usize> = BTreeMap::new();
        for object in manifests::all(&session, settings, "") {
            let kind = object["kind"].as_str().unwrap_or_default().to_string();
            if kind != "Namespace" && object["metadata"]["namespace"] == session.namespace().as_str() {
                *expected.entry(kind).or_default() += 1;
            }
        }
        for (kind, want) in expected {
            let have = live.remove(&(*id, kind)).unwrap_or_default();
            let in_place = have.iter().filter(|ns| **ns == session.namespace()).count();
            audit.duplicated += in_place.saturating_sub(want) + (have.len() - in_place);
            audit.absent += want.saturating_sub(in_place);
        }
    }
    // What is left belongs to bookings that do not run (or kinds they do not have).
    audit.orphaned += live.values().map(Vec::len).sum::<usize>();
    audit
}

#[tokio::main]
async fn main() {
    let url = env("DATABASE_URL");
    let provisionings: i32 = std::env::var("PROVISIONINGS").ok().and_then(|n| n.parse().ok()).unwrap_or(100);
    let db = sqlx::postgres::PgPoolOptions::new().max_connections(4).connect(&url).await.expect("PostgreSQL");
    let (pool, principal) = setup(&db).await;
    let settings = Defaults::parse_from(["berth"]).cluster.cluster();

    let cluster = SimulatedCluster::start(true).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(cluster.clone().serve_http(listener));
    let foreign = foreign_namespaces();
    let names: Vec<String> = foreign.iter().filter_map(|ns| ns.metadata.name.clone()).collect();
    for ns in &foreign {
        Api::<Namespace>::all(cluster.client()).create(&PostParams::default(), ns).await.expect("foreign namespace");
    }
    let dir = std::env::temp_dir().join(format!("berth-kills-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("kubeconfig"), SimulatedCluster::kubeconfig(addr)).unwrap();
    let worker = Worker { berth: env("BERTH"), kubeconfig: dir.join("kubeconfig"), log: dir.join("worker.log") };

    // A booking opens every 100 ms; every second one is ended as soon as it
    // runs. Meanwhile the worker dies every 0.1–1.2 s (uniformly at random).
    let mut rng = rand::rngs::StdRng::seed_from_u64(20261123);
    let mut child = worker.start();
    let mut next_kill = Instant::now() + Duration::from_millis(rng.random_range(100..1200));
    let (mut opened, mut to_end, mut ended, mut kills) = (Vec::new(), HashSet::new(), 0usize, 0usize);
    let started = Instant::now();
    let mut last_start = started;
    while ended < provisionings as usize / 2 || opened.len() < provisionings as usize {
        assert!(started.elapsed() < Duration::from_secs(300), "the run did not finish in 5 minutes");
        if opened.len() < (provisionings as usize).min(started.elapsed().as_millis() as usize / 100 + 1) {
            let batch = open_bookings(&db, pool, principal.user_id, 1).await;
            to_end.extend(batch.iter().filter(|_| opened.len() % 2 == 0).copied());
            opened.extend(batch);
        }
        for (id, state) in states(&db).await {
            if state == "active" && to_end.remove(&id) {
                bookings::end_early(&db, &principal, id).await.expect("end early");
                ended += 1;
            }
        }
        if Instant::now() >= next_kill {
            child.kill().expect("kill -9");
            let _ = child.wait();
            kills += 1;
            child = worker.start();
            last_start = Instant::now();
            next_kill = last_start + Duration::from_millis(rng.random_range(100..1200));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let load_s = started.elapsed().as_secs_f64();

    // The last worker runs undisturbed until the cluster matches the database.
    let converged = loop {
        let states = states(&db).await;
        let settled = states.values().all(|s| s == "active" || s == "completed");
        let audit = audit_cluster(&db, &cluster, &settings).await;
        if settled && audit.missing == 0 && audit.absent == 0 && audit.orphaned == 0 {
            break Some(last_start.elapsed());
        }
        if last_start.elapsed() > Duration::from_secs(120) {
            break None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let audit = audit_cluster(&db, &cluster, &settings).await;
    let left: HashSet<String> = cluster.namespace_names().into_iter().collect();
    let foreign_deleted = names.iter().filter(|name| !left.contains(*name)).count();
    let states = states(&db).await;
    let count = |want: &str| states.values().filter(|s| *s == want).count();
    child.kill().ok();
    let _ = child.wait();
    // The audit sees what it counts: a completed booking's namespace put
    // back by hand is one orphan.
    let completed = states.iter().find(|(_, s)| *s == "completed").map(|(id, _)| *id).unwrap_or_default();
    let planted = Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some("berth-planted".into()),
            labels: Some([(manifests::MANAGED_BY.0.to_string(), manifests::MANAGED_BY.1.to_string())].into()),
            annotations: Some([(manifests::BOOKING_ANNOTATION.to_string(), completed.to_string())].into()),
            ..Default::default()
        },
        ..Default::default()
    };
    Api::<Namespace>::all(cluster.client()).create(&PostParams::default(), &planted).await.expect("planted");
    let sees_orphan = audit_cluster(&db, &cluster, &settings).await.orphaned == audit.orphaned + 1;

    println!("PROVISIONINGS {}", opened.len());
    println!("KILLS {kills}");
    println!("LOAD_S {load_s:.1}");
    println!("ACTIVE {}", count("active"));
    println!("COMPLETED {}", count("completed"));
    println!("FAILED {}", count("failed"));
    println!("ORPHANED_NAMESPACES {}", audit.orphaned);
    println!("MISSING_NAMESPACES {}", audit.missing);
    println!("DUPLICATED_OBJECTS {}", audit.duplicated);
    println!("ABSENT_OBJECTS {}", audit.absent);
    println!("FOREIGN_DELETED {foreign_deleted} of {}", names.len());
    match converged {
        Some(at) => println!("CONVERGED_S {:.2}", at.as_secs_f64()),
        None => println!("CONVERGED_S never (120 s)"),
    }
    println!("CLUSTER_WRITES {}", cluster.writes());
    println!("AUDIT_SEES_A_PLANTED_ORPHAN {sees_orphan}");
    let _ = std::fs::remove_dir_all(&dir);
}
