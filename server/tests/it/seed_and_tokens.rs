//! The demo seed and API tokens as the command line uses them.

use crate::common;

use app::backend::{accounts::tokens, accounts::users};
use app::model::Role;
use chrono::Duration;
use common::fresh_db;

#[tokio::test]
async fn seeding_twice_leaves_one_demo_pool_like_the_reference_lab() {
    let db = fresh_db().await;
    server::seed::demo(&db).await.unwrap();
    let again = server::seed::demo(&db).await.unwrap();
    assert!(again.contains("already exists"));
    let kinds: Vec<(String, i32, i32, i32)> =
        sqlx::query_as("SELECT kind, capacity, replicas_per_unit, vram_gb_per_unit FROM pool_kind ORDER BY kind")
            .fetch_all(&db)
            .await
            .unwrap();
    assert_eq!(kinds, [("nvidia.com/gpu".to_string(), 1, 4, 96), ("nvidia.com/mig-1g.24gb".to_string(), 4, 2, 24)]);
}

#[tokio::test]
async fn tokens_are_stored_hashed_and_stop_at_expiry() {
    let db = fresh_db().await;
    let user = users::upsert_user(&db, "t@x.test", "T", Role::User, "x").await.unwrap();
    let issued = tokens::issue(&db, user, "cli", Duration::days(30), app::model::TokenScope::Full).await.unwrap();
    assert!(issued.token.starts_with("berth_") && issued.token.len() == 70);
    let stored: Vec<u8> = sqlx::query_scalar("SELECT token_hash FROM api_token").fetch_one(&db).await.unwrap();
    assert_eq!(stored.len(), 32);
    assert!(!String::from_utf8_lossy(&stored).contains(&issued.token[6..]));
    let principal = tokens::authenticate(&db, &issued.token).await.unwrap().expect("live token");
    assert_eq!(principal.email, "t@x.test");
    assert_eq!(principal.tenants[0].slug, "x");
    sqlx::query("UPDATE api_token SET expires_at = now()").execute(&db).await.unwrap();
    assert!(tokens::authenticate(&db, &issued.token).await.unwrap().is_none());
    let bad_tenant = users::upsert_user(&db, "u@x.test", "U", Role::User, "Not A Slug").await;
    assert!(matches!(bad_tenant, Err(app::backend::ServiceError::Invalid(f)) if f.field == "tenant"));
}

#[tokio::test]
async fn the_token_cache_remembers_a_principal_for_its_ttl_only() {
    let db = fresh_db().await;
    let user = users::upsert_user(&db, "c@x.test", "C", Role::User, "x").await.unwrap();
    let issued = tokens::issue(&db, user, "cli", Duration::days(1), app::model::TokenScope::Full).await.unwrap();
    let cache = tokens::TokenCache::new(std::time::Duration::from_millis(300));
    assert!(cache.authenticate(&db, &issued.token).await.unwrap().is_some());
    sqlx::query("UPDATE api_token SET revoked_at = now()").execute(&db).await.unwrap();
    assert!(cache.authenticate(&db, &issued.token).await.unwrap().is_some(), "still remembered");
    tokio::time::sleep(std::time::Duration::from_millis(350)).await;
    assert!(cache.authenticate(&db, &issued.token).await.unwrap().is_none(), "revocation took effect after the ttl");
    assert!(cache.authenticate(&db, "berth_unknown").await.unwrap().is_none());
    assert!(cache.authenticate(&db, "other").await.unwrap().is_none());
}

/// `make run`'s month of history (issue 61): past bookings of both
/// tenants across the demo pools, with measured use, no-shows and idle
/// releases, so the report shows figures on first open, never a unit
/// booked twice, labelled as made up on the report and the dashboard;
/// seeding again adds nothing.
#[tokio::test]
async fn the_demo_history_fills_the_report_labelled_and_once() {
    let db = fresh_db().await;
    server::seed::demo(&db).await.unwrap();
    server::seed_console::console(&db).await.unwrap();
    let done = server::seed_history::history(&db, None).await.unwrap();
    assert!(done.starts_with("seeded "), "{done}");
    assert!(server::seed_history::history(&db, None).await.unwrap().contains("already seeded"));
    let count = |sql: &'static str| {
        let db = db.clone();
        async move { sqlx::query_scalar::<_, i64>(sql).fetch_one(&db).await.unwrap() }
    };
    let booked = count("SELECT count(*) FROM booking WHERE note = 'Demo history'").await;
    assert!(booked > 100, "{booked} bookings");
    assert_eq!(count("SELECT count(*) FROM booking WHERE note = 'Demo history' AND ends_at > now()").await, 0);
    assert!(count("SELECT count(DISTINCT tenant_id) FROM booking WHERE note = 'Demo history'").await >= 2);
    for fate in ["no_show", "idle"] {
        let sql = match fate {
            "no_show" => "SELECT count(*) FROM booking WHERE released_as = 'no_show'",
            _ => "SELECT count(*) FROM booking WHERE released_as = 'idle'",
        };
        assert!(count(sql).await > 0, "some {fate}");
    }
    // No unit of any kind is held twice at once.
    let over = count(
        "SELECT count(*) FROM (
             SELECT b.id FROM booking b JOIN pool_kind k USING (pool_id, kind)
             WHERE b.state = 'completed'
               AND (SELECT sum(o.quantity) FROM booking o WHERE o.pool_id = b.pool_id AND o.kind = b.kind
                      AND o.state = 'completed' AND o.starts_at <= b.starts_at AND o.ends_at > b.starts_at)
                   > k.capacity) x",
    )
    .await;
    assert_eq!(over, 0, "bookings over capacity");
    assert_eq!(count("SELECT count(*) FROM usage_hour WHERE NOT simulated").await, 0, "all of it simulated");

    let admin = users::find_by_email(&db, "admin@berth.local").await.unwrap();
    let admin = app::backend::accounts::principals::by_user_id(&db, admin).await.unwrap().unwrap();
    let now = chrono::Utc::now();
    let report = app::backend::reports::utilization(
        &db,
        &admin,
        (app::model::ReportGroup::Tenant, None),
        now - Duration::days(30),
        now,
        chrono_tz::UTC,
        "EUR",
    )
    .await
    .unwrap();
    let total = &report.total;
    assert!(total.booked_gpu_hours > 50.0, "{total:?}");
    // The pools were there all month: never more booked than there was.
    let booked_pct = total.booking_utilization_pct.unwrap_or_default();
    assert!(booked_pct > 20.0 && booked_pct <= 100.0, "{total:?}");
    assert!(report.heatmap.iter().any(|cell| cell.occupancy_pct.is_some_and(|p| p > 0.0)), "the heat map has a shape");
    assert!(total.active_gpu_hours > 10.0, "{total:?}");
    assert!(total.no_shows > 0 && report.simulated, "{total:?}");
    assert!(report.rows.len() >= 2, "both tenants: {:?}", report.rows);
    assert!(report.trend.iter().filter(|p| p.booked_gpu_hours > 0.0).count() > 10, "a trend with a shape");
    let label = report.demo_history.unwrap_or_default();
    assert!(label.starts_with("Demo data: the bookings from "), "{label}");
    let range = app::model::ChartRange::default();
    let dashboard =
        app::backend::reports::dashboard::load(&db, &admin, (Some("demo"), range, None), "UTC").await.unwrap();
    assert_eq!(dashboard.demo_history.as_deref(), Some(label.as_str()));
    // Tokenomics' measured utilisation counts the made-up month too.
    let tokenomics = app::backend::reports::tokenomics::view(&db, &admin, None, "EUR").await.unwrap();
    assert_eq!(tokenomics.demo_history.as_deref(), Some(label.as_str()));
}

/// The browser tests' history ends on a fixed day, so what they photograph
/// is the same month whenever they run: every booking lies in the 30 days
/// before that day, the label names them, and the same day always gives
/// the same bookings and measured use.
#[tokio::test]
async fn a_history_ending_on_a_fixed_day_lies_before_it_and_is_the_same_every_time() {
    let until = chrono::NaiveDate::from_ymd_opt(2025, 11, 3).unwrap();
    let mut seen = Vec::new();
    for _ in 0..2 {
        let db = fresh_db().await;
        server::seed::demo(&db).await.unwrap();
        server::seed_console::console(&db).await.unwrap();
        server::seed_history::history(&db, Some(until)).await.unwrap();
        let (first, last, count, shape): (chrono::NaiveDate, chrono::NaiveDate, i64, String) = sqlx::query_as(
            "SELECT min(starts_at AT TIME ZONE 'UTC')::date, max(ends_at AT TIME ZONE 'UTC')::date, count(*),
                    md5(string_agg(p.name || b.kind || b.starts_at || b.ends_at || b.state, ',' ORDER BY p.name, b.kind, b.starts_at, b.ends_at, b.state))
             FROM booking b JOIN pool p ON p.id = b.pool_id WHERE b.note = 'Demo history'",
        )
        .fetch_one(&db)
        .await
        .unwrap();
        assert!(count > 100, "{count}");
        let used: String = sqlx::query_scalar(
            "SELECT md5(string_agg(round(busy_unit_minutes::numeric, 3)::text, ',' ORDER BY hour, busy_unit_minutes))
             FROM usage_hour",
        )
        .fetch_one(&db)
        .await
        .unwrap();
        let shape = format!("{shape} {used}");
        assert_eq!((first, last), (until - Duration::days(30), until - Duration::days(1)), "in UTC");
        let label = app::backend::reports::demo::note(&db).await.unwrap().unwrap_or_default();
        assert!(label.contains("from Sat 04 Oct 2025 to Sun 02 Nov 2025"), "{label}");
        seen.push((count, shape));
    }
    assert_eq!(seen[0], seen[1], "the same bookings both times");
}
