//! A member cluster's worker signed in as its own PostgreSQL role (issue
//! 60, 5b): every write it might attempt on another cluster's rows, or on a
//! table that is not a cluster's, is refused by the real PostgreSQL; the
//! same worker still drives its own cluster's sessions from start to end.

use crate::common;

use common::{Fixture, MIG};
use serde_json::json;
use server::member_role::{self, Confinement, Refused};
use server::provisioner::manifests::Cluster;
use server::provisioner::reconcile::{ClusterRef, Policy, Reconciler};
use server::provisioner::simulated::SimulatedCluster;
use sqlx::PgPool;
use std::time::Duration;
use uuid::Uuid;

/// What PostgreSQL answered one attempt: refused (and why), or rows changed.
enum Answer {
    Refused(String),
    Changed(u64),
}

/// In a transaction rolled back after (so a `LOCK` may be tried too).
async fn attempt(db: &PgPool, sql: &str) -> Answer {
    let mut tx = db.begin().await.unwrap();
    let answer = match sqlx::query(sql).execute(&mut *tx).await {
        Ok(done) => Answer::Changed(done.rows_affected()),
        Err(err) => Answer::Refused(err.as_database_error().map(|e| e.message().to_string()).unwrap_or_default()),
    };
    tx.rollback().await.unwrap();
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_members_role_writes_its_own_clusters_rows_and_nothing_else() {
    let f = Fixture::new().await;
    let east_pool = f
        .pool_on_new_cluster("east", "in-cluster", json!({"name": "east-mig", "kinds": [{"kind": MIG, "capacity": 4}]}))
        .await;
    let (west, east) = (common::world::book_now(&f, MIG, 1, "interactive", f.lab).await, {
        common::world::book_now(&f, MIG, 1, "interactive", east_pool).await
    });
    let (role, url) = f.member_role("east").await;

    // Only a role that can be confined, for a cluster with a worker of its own.
    let refusal = |r: Result<_, Refused>| r.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(refusal(member_role::grant(&f.db, "default", &role).await).contains("only a cluster with its own worker"));
    assert!(refusal(member_role::grant(&f.db, "east", "postgres").await).contains("never confined"));
    assert!(refusal(member_role::grant(&f.db, "east", "nobody_here").await).contains("no such PostgreSQL role"));
    assert!(refusal(member_role::grant(&f.db, "east", "x\"; DROP TABLE booking; --").await).contains("role name"));
    assert!(refusal(member_role::grant(&f.db, "north", &role).await).contains("no such cluster"));
    let granted = member_role::grant(&f.db, "east", &role).await.unwrap();
    assert!(granted.updates.contains(&"booking".to_string()) && !granted.inserts.contains(&"booking".to_string()));
    assert!(!granted.reads.contains(&"api_token".to_string()));

    let member = common::clusters::signed_in(&url).await;
    // A table a later release makes is granted when the portal migrates.
    sqlx::query("CREATE TABLE next_release (id int)").execute(&f.db).await.unwrap();
    assert!(sqlx::query("SELECT * FROM next_release").execute(&member).await.is_err());
    server::database::migrate(&f.db).await.unwrap();
    sqlx::query("SELECT * FROM next_release").execute(&member).await.expect("granted on migrating");
    assert_eq!(member_role::confinement(&member).await.unwrap(), Confinement::To("east".into()));
    assert_eq!(member_role::confinement(&f.db).await.unwrap(), Confinement::None, "the owner is no member");

    // Rows of the other cluster the attempts aim at: a home, a worker's row,
    // a waitlist entry.
    let (lab, ada): (Uuid, Uuid) =
        sqlx::query_as("SELECT pool_id, user_id FROM booking WHERE id = $1").bind(west).fetch_one(&f.db).await.unwrap();
    sqlx::query("INSERT INTO home (user_id, storage_class, volume, size_gib) VALUES ($1, '', 'home-west', 10)")
        .bind(ada)
        .execute(&f.db)
        .await
        .unwrap();
    sqlx::query("INSERT INTO worker_process (name, simulated) VALUES ('hub-worker', false)")
        .execute(&f.db)
        .await
        .unwrap();
    let default_cluster: Uuid =
        sqlx::query_scalar("SELECT id FROM cluster WHERE name = 'default'").fetch_one(&f.db).await.unwrap();
    sqlx::query("INSERT INTO cluster_status (cluster_id, worker) VALUES ($1, 'hub-worker')")
        .bind(default_cluster)
        .execute(&f.db)
        .await
        .unwrap();

    let attacks = [
        // Another cluster's bookings, sessions, homes and status.
        format!("UPDATE booking SET state = 'canceled' WHERE id = '{west}'"),
        format!("DELETE FROM booking WHERE id = '{west}'"),
        format!("UPDATE booking SET pool_id = '{lab}' WHERE id = '{east}'"),
        format!("INSERT INTO booking_event (booking_id, to_state) VALUES ('{west}', 'canceled')"),
        format!("INSERT INTO session_status (booking_id, namespace) VALUES ('{west}', 'decoy')"),
        format!("INSERT INTO session_home (booking_id, purpose, volume, size_gib) VALUES ('{west}', 'home', 'home-west', 10)"),
        format!("INSERT INTO session_continuation (booking_id, session_id, follows) VALUES ('{east}', '{west}', '{west}')"),
        format!("INSERT INTO notification (event, booking_id, dedupe) VALUES ('booking.failed', '{west}', 'forged')"),
        "UPDATE home SET gone_at = now(), delete_requested_at = now() WHERE volume = 'home-west'".into(),
        format!("UPDATE home SET cluster_id = (SELECT id FROM cluster WHERE name = 'east') WHERE user_id = '{ada}'"),
        format!("INSERT INTO home (user_id, storage_class, volume, size_gib, cluster_id) VALUES ('{ada}', '', 'h2', 1, '{default_cluster}')"),
        format!("UPDATE cluster_status SET error = 'forged', unreachable_since = now() WHERE cluster_id = '{default_cluster}'"),
        format!("INSERT INTO lent_hour (pool_id, kind, hour, unit_seconds) VALUES ('{lab}', '{MIG}', date_trunc('hour', now()), 1)"),
        format!("INSERT INTO waitlist_entry (id, pool_id, kind, tenant_id, user_id, quantity, mode, starts_at, ends_at)
                 SELECT gen_random_uuid(), '{lab}', '{MIG}', tenant_id, user_id, 1, 'interactive', starts_at, ends_at
                 FROM booking WHERE id = '{west}'"),
        "UPDATE worker_process SET start_pass_error = 'forged' WHERE name = 'hub-worker'".into(),
        // Its own rows, where a change would reach another person, tenant,
        // cluster or everyone's next id, or hold everyone up.
        format!("UPDATE booking SET user_id = (SELECT user_id FROM membership m JOIN tenant t ON t.id = m.tenant_id
                 WHERE t.slug = 'team-b' LIMIT 1) WHERE id = '{east}'"),
        format!("UPDATE booking SET tenant_id = (SELECT id FROM tenant WHERE slug = 'team-b') WHERE id = '{east}'"),
        format!("DELETE FROM booking WHERE id = '{east}'"),
        format!("INSERT INTO booking_event (id, booking_id, to_state) OVERRIDING SYSTEM VALUE
                 VALUES (2147483000, '{east}', 'active')"),
        format!("INSERT INTO notification (event, booking_id, dedupe) VALUES ('booking.failed', '{east}', 'event:2147483000')"),
        format!("INSERT INTO session_continuation (booking_id, session_id, follows) VALUES ('{east}', '{west}', '{east}')"),
        format!("SELECT id FROM booking WHERE id = '{west}' FOR UPDATE"),
        "LOCK TABLE booking IN ACCESS EXCLUSIVE MODE".into(),
        "LOCK TABLE session_status IN ACCESS EXCLUSIVE MODE".into(),
        // Facts that are no cluster's: who may book, who is admin, the clusters themselves.
        "UPDATE member_role SET cluster_id = (SELECT id FROM cluster WHERE name = 'default')".into(),
        "UPDATE cluster SET workspace_domain = 'evil.example'".into(),
        format!("UPDATE pool SET cluster_id = (SELECT id FROM cluster WHERE name = 'east') WHERE id = '{lab}'"),
        "UPDATE app_user SET role = 'admin'".into(),
        format!("INSERT INTO membership (user_id, tenant_id) SELECT '{ada}', id FROM tenant WHERE slug = 'team-b'"),
        "UPDATE tenant_quota SET max_units = 1000".into(),
        "INSERT INTO audit_event (action, target) VALUES ('user.disable', 'ada')".into(),
        "DELETE FROM booking_month_settled".into(),
        // Secrets, and the way out of the policies.
        "SELECT * FROM api_token".into(),
        "SELECT * FROM web_session".into(),
        "SELECT * FROM webhook".into(),
        "SELECT * FROM calendar_feed".into(),
        "ALTER TABLE booking DISABLE ROW LEVEL SECURITY".into(),
        "SET ROLE postgres".into(),
    ];
    let mut refused = 0;
    for sql in &attacks {
        // Each attempt is one the owner's role could make (rolled back): the
        // member's refusal is its confinement, not a statement that fails anyway.
        let mut tx = f.db.begin().await.unwrap();
        let owners = sqlx::query(sql).execute(&mut *tx).await;
        tx.rollback().await.unwrap();
        let owners = owners.unwrap_or_else(|err| panic!("the owner's own attempt fails: {sql}\n{err}"));
        match attempt(&member, sql).await {
            Answer::Refused(why) => {
                assert!(
                    ["row-level security", "permission denied", "must be owner"].iter().any(|w| why.contains(w)),
                    "refused for a reason other than the member's confinement: {sql}\n{why}"
                );
                refused += 1;
            }
            // Nothing changed: the rows are there (the owner's statement
            // changed them), the policies hid them from the member's write.
            Answer::Changed(0) => {
                assert!(owners.rows_affected() > 0, "an attempt that aims at nothing proves nothing: {sql}");
                refused += 1;
            }
            Answer::Changed(n) => panic!("a member changed {n} rows of what is not its own: {sql}"),
        }
    }
    eprintln!("member role: {refused} of {} writes and reads outside its cluster refused", attacks.len());
    assert_eq!(refused, attacks.len());
    assert_eq!(f.booking_state(west).await, "approved", "the other cluster's booking is untouched");
    // Its own rows may name what they like, and decide nothing elsewhere: a
    // team volume its session "holds" is not held on the default cluster.
    sqlx::query(
        "INSERT INTO session_home (booking_id, purpose, volume, size_gib, team_class) VALUES ($1, 'cache', 'team-west', 10, 'fast')",
    )
    .bind(east)
    .execute(&member)
    .await
    .unwrap();
    let held = app::backend::sessions::homes::team_volumes_held(&f.db, west).await.unwrap();
    assert!(!held.contains(&"team-west".to_string()), "{held:?}");
    let gone: Option<chrono::DateTime<chrono::Utc>> =
        sqlx::query_scalar("SELECT gone_at FROM home WHERE volume = 'home-west'").fetch_one(&f.db).await.unwrap();
    assert_eq!(gone, None);

    // The legitimate form: the member's own worker, as that role, starts its
    // session, repairs, sweeps, and ends it when the window is closed.
    let api = SimulatedCluster::start(true).await;
    let east_id: Uuid =
        sqlx::query_scalar("SELECT id FROM cluster WHERE name = 'east'").fetch_one(&f.db).await.unwrap();
    let mut worker = Reconciler::new(member.clone(), api.client(), Cluster::default());
    worker.policy = Policy { retry_delay: Duration::from_millis(1), ..Policy::default() };
    worker.drives = Some(ClusterRef { id: east_id, name: "east".into() });
    worker.site_duties = false;
    for _ in 0..40 {
        worker.pass().await.expect("the member's pass");
        if f.booking_state(east).await == "active" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(f.booking_state(east).await, "active");
    assert_eq!(api.namespace_names().len(), 1, "its session's namespace, on its own cluster");
    worker.sweep().await.expect("the member's sweep");
    assert_eq!(f.booking_state(west).await, "approved", "nor does its pass start the other cluster's");
    let (status, _) =
        f.call(axum::http::Method::POST, &format!("/api/v1/bookings/{east}/end"), Some(&f.ada), None).await;
    assert_eq!(status, 200);
    worker.pass().await.expect("the member's pass after the end");
    assert_eq!(f.booking_state(east).await, "completed");
    let ready: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM notification WHERE booking_id = $1 AND event IN ('workspace.ready', 'booking.starting')",
    )
    .bind(east)
    .fetch_one(&f.db)
    .await
    .unwrap();
    assert!(ready >= 1, "what its changes notify is written for it (as the owner)");

    // East takes another role: the one before is detached, and may write
    // (or read) nothing, its own cluster's rows included.
    let (_, _) = f.member_role("east").await;
    assert_eq!(member_role::confinement(&member).await.unwrap(), Confinement::Detached);
    match attempt(&member, &format!("UPDATE booking SET note = 'late' WHERE id = '{east}'")).await {
        Answer::Refused(why) => assert!(why.contains("permission denied"), "{why}"),
        Answer::Changed(n) => panic!("a detached role changed {n} rows"),
    }
    member.close().await;
}

/// `berth worker` signed in as a member's role drives that cluster alone:
/// asked for another, or for the hub's, or once detached, it says so and
/// stops before it touches a cluster or migrates.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_members_worker_refuses_to_drive_any_other_cluster() {
    let f = Fixture::new().await;
    f.pool_on_new_cluster("east", "in-cluster", json!({"name": "east-mig", "kinds": [{"kind": MIG, "capacity": 4}]}))
        .await;
    let (_, url) = f.member_role("east").await;
    for args in [&["worker", "--cluster", "default"][..], &["worker", "--cluster", "east", "--hub"]] {
        let output = common::processes::berth()
            .env("DATABASE_URL", &url)
            .env("KUBECONFIG", "/nonexistent")
            .args(args)
            .output()
            .expect("berth runs");
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?}");
        assert!(said.contains("this database role is cluster east's worker"), "{args:?}: {said}");
    }
    // Once east has another role, the one before drives nothing at all.
    f.member_role("east").await;
    let output = common::processes::berth()
        .env("DATABASE_URL", &url)
        .env("KUBECONFIG", "/nonexistent")
        .args(["worker", "--cluster", "east"])
        .output()
        .expect("berth runs");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && said.contains("its cluster has gone or took another role"), "{said}");
}
