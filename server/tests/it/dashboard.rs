//! The tenant dashboard over REST: a live session's sparklines follow the
//! sampler's minutes (gaps stay gaps), the idle badge follows the pool's
//! threshold, the week's booked hours meet the weekly budget, upcoming
//! bookings are listed, and other tenants' members learn nothing.

use crate::common;

use axum::http::{Method, StatusCode};
use common::{slot, Fixture, GPU, MIG};
use serde_json::{json, Value};
use uuid::Uuid;

#[tokio::test]
async fn members_see_live_use_idle_badges_budget_and_upcoming() {
    let f = Fixture::new().await;
    let (status, booked) = f.book(&f.ada, MIG, 1, common::current_slot(), slot(3)).await;
    assert_eq!(status, StatusCode::CREATED, "{booked}");
    let live: Uuid = booked["id"].as_str().unwrap().parse().unwrap();
    let (status, _) = f.book(&f.carol, MIG, 2, slot(8), slot(10)).await;
    assert_eq!(status, StatusCode::CREATED);
    // A weekly budget on the slices for team-a.
    let quota = json!([{"pool_id": f.lab, "kind": MIG, "gpu_hours_per_week": 40}]);
    let (status, body) = f.call(Method::PUT, "/api/v1/tenants/team-a/quotas", Some(&f.admin), Some(quota)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    common::clear_of_the_minute_turn().await;
    // 40 busy minutes, then a 5-minute gap, then the last 15 idle (the
    // latest whole minute is "1 minute ago": the sampler's round in progress is not in yet).
    sqlx::query(
        "INSERT INTO usage_minute (booking_id, minute, busy, memory_used_mib, power_w, devices, simulated)
         SELECT $1, date_trunc('minute', now()) - make_interval(mins => k),
                CASE WHEN k <= 15 THEN 0.01 ELSE 0.75 END, 2048 + k, NULL, 1, true
         FROM generate_series(1, 60) k WHERE k NOT BETWEEN 16 AND 20",
    )
    .bind(live)
    .execute(&f.db)
    .await
    .unwrap();

    let (status, d) = f.call(Method::GET, "/api/v1/tenants/team-a/dashboard", Some(&f.carol), None).await;
    assert_eq!(status, StatusCode::OK, "{d}");
    assert_eq!(d["simulated"], true);
    let session = &d["live"][0];
    // Carol reads Ada's session, not its id: that names Ada's workspace host.
    assert_eq!(session["booking_id"], app::backend::bookings::occupancy_id(live).to_string());
    let busy: Vec<&Value> = session["busy"].as_array().unwrap().iter().collect();
    assert_eq!(busy.len(), 60);
    assert!((busy[59].as_f64().unwrap() - 0.01).abs() < 1e-6, "the latest minute last");
    assert!(busy[40..45].iter().all(|v| v.is_null()), "the gap stays a gap: {busy:?}");
    assert!((busy[10].as_f64().unwrap() - 0.75).abs() < 1e-6);
    assert_eq!(session["memory_mib"][59], 2049.0);
    // The default threshold is 5 % for 30 minutes: 15 idle minutes are no badge yet.
    assert_eq!(session["idle"], Value::Null, "{session}");
    let policy = json!({"enabled": false, "threshold_pct": 5, "idle_minutes": 10, "grace_minutes": 30});
    let (status, _) =
        f.call(Method::PUT, &format!("/api/v1/pools/{}/idle-policy", f.lab), Some(&f.admin), Some(policy)).await;
    assert_eq!(status, StatusCode::OK);
    let (_, d) = f.call(Method::GET, "/api/v1/tenants/team-a/dashboard", Some(&f.ada), None).await;
    assert_eq!(d["live"][0]["booking_id"], live.to_string(), "her own, she reads as it is");
    assert_eq!(d["live"][0]["idle"], "Idle for 15 min (below 5 %)", "{}", d["live"][0]);

    // The device charts: two MIG instances measured for the last three hours,
    // the second at twice the first's memory; over 6 hours each has one
    // point per 6 minutes measured (30), on an axis in the reader's zone.
    sqlx::query(
        "INSERT INTO usage_device_minute (booking_id, device, minute, busy, memory_used_mib)
         SELECT $1, 'GPU 0 · MIG 1g.24gb #' || d, date_trunc('minute', now()) - make_interval(mins => k),
                CASE WHEN d = 1 THEN 0.5 ELSE 0.25 END, 1024 * d
         FROM generate_series(1, 180) k, generate_series(1, 2) d",
    )
    .bind(live)
    .execute(&f.db)
    .await
    .unwrap();
    let path = "/api/v1/tenants/team-a/dashboard?range=6h&tz=Europe%2FBerlin";
    let (status, d) = f.call(Method::GET, path, Some(&f.ada), None).await;
    assert_eq!(status, StatusCode::OK, "{d}");
    assert_eq!((d["axis"]["range"].as_str(), d["axis"]["zone"].as_str()), (Some("6h"), Some("Europe/Berlin")));
    assert!((6..=7).contains(&d["axis"]["ticks"].as_array().unwrap().len()), "hourly ticks: {}", d["axis"]);
    let devices = d["live"][0]["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 2, "{devices:?}");
    assert_eq!(devices[0]["device"], "GPU 0 · MIG 1g.24gb #1");
    let points = devices[0]["points"].as_array().unwrap();
    assert!((30..=31).contains(&points.len()), "{}", points.len());
    assert!(points.iter().all(|p| p["busy_pct"] == 50.0 && p["memory_gib"] == 1.0), "{points:?}");
    assert!(devices[1]["points"].as_array().unwrap().iter().all(|p| p["memory_gib"] == 2.0));
    // A teammate's dashboard draws the same charts of Ada's session, shown
    // under its occupancy id (it said "No GPU use measured" before).
    let (status, seen) = f.call(Method::GET, path, Some(&f.carol), None).await;
    assert_eq!(status, StatusCode::OK, "{seen}");
    assert_eq!(seen["live"][0]["booking_id"], app::backend::bookings::occupancy_id(live).to_string());
    assert_eq!(seen["live"][0]["devices"], d["live"][0]["devices"], "the same charts as Ada's own");
    // The booking's own page draws the same charts for its holder, none for a teammate.
    let charts = |token: &str| {
        axum::http::Request::post("/rpc/bookings/charts")
            .header(axum::http::header::AUTHORIZATION, format!("Bearer {token}"))
            .header(axum::http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(axum::body::Body::from(format!("id={live}&range=24h&tz=UTC")))
            .unwrap()
    };
    let (status, own) = common::raw(&f.app, charts(&f.ada)).await;
    assert_eq!(status, StatusCode::OK, "{own}");
    assert_eq!((own["axis"]["range"].as_str(), own["devices"].as_array().map(Vec::len)), (Some("24h"), Some(2)));
    let (status, theirs) = common::raw(&f.app, charts(&f.carol)).await;
    assert_eq!(
        (status, theirs),
        (StatusCode::OK, Value::Null),
        "a teammate reads the dashboard, not the booking's charts"
    );
    let (status, _) = common::raw(&f.app, charts(&f.bob)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, err) = f.call(Method::GET, "/api/v1/tenants/team-a/dashboard?range=1y", Some(&f.ada), None).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("range")), "{err}");

    // This week: Ada's 1 slice x 1 h (4 quarter-hours) + Carol's 2 x 30 min = 2 unit-hours, against 40
    // (unless the week turns between the two bookings, which the test cannot rule out at Sunday midnight).
    let line = &d["budget"][0];
    assert_eq!((line["kind"].as_str(), line["budget_hours"].as_f64()), (Some(MIG), Some(40.0)), "{d}");
    let booked = line["booked_hours"].as_f64().unwrap();
    assert!(booked > 0.0 && booked <= 2.0 + 1e-9, "{line}");
    assert_eq!(d["upcoming"].as_array().unwrap().len(), 1);
    assert_eq!(d["upcoming"][0]["owner"], "carol");

    // Bob (team-b) learns nothing about team-a; his own dashboard is empty.
    let (status, _) = f.call(Method::GET, "/api/v1/tenants/team-a/dashboard", Some(&f.bob), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, d) = f.call(Method::GET, "/api/v1/tenants/team-b/dashboard", Some(&f.bob), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!((d["live"].as_array().unwrap().len(), d["simulated"].as_bool()), (0, Some(false)));

    // The zone the windows are written in must be a real one.
    let (status, d) =
        f.call(Method::GET, "/api/v1/tenants/team-b/dashboard?tz=Europe/Berlin", Some(&f.bob), None).await;
    assert_eq!(status, StatusCode::OK, "{d}");
    let (status, d) = f.call(Method::GET, "/api/v1/tenants/team-b/dashboard?tz=Mars/Olympus", Some(&f.bob), None).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{d}");
    assert!(d.to_string().contains("tz"), "{d}");
}

#[tokio::test]
async fn the_dashboard_shows_one_clusters_pools_when_asked() {
    let f = Fixture::new().await;
    let east = json!({"name": "east-mig", "kinds": [{"kind": MIG, "capacity": 4}]});
    let pool = f.pool_on_new_cluster("east", "simulated", east).await;
    let (status, _) = f.book(&f.ada, MIG, 1, common::current_slot(), slot(3)).await;
    assert_eq!(status, StatusCode::CREATED);
    let on_east =
        json!({"pool_id": pool, "kind": MIG, "quantity": 1, "start": slot(8), "end": slot(10), "mode": "interactive"});
    let (status, body) = f.call(Method::POST, "/api/v1/bookings", Some(&f.ada), Some(on_east)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    let pools = |d: &Value, list: &str| -> Vec<String> {
        d[list].as_array().unwrap().iter().map(|l| l["pool"].as_str().unwrap().to_string()).collect()
    };
    let (_, all) = f.call(Method::GET, "/api/v1/tenants/team-a/dashboard", Some(&f.ada), None).await;
    assert_eq!(
        (pools(&all, "live"), pools(&all, "upcoming")),
        (vec!["lab-h100".to_string()], vec!["east-mig".to_string()])
    );
    assert_eq!(all["clusters"], json!(["default", "east"]));
    assert_eq!(all["cluster"], Value::Null);
    let (status, east) = f.call(Method::GET, "/api/v1/tenants/team-a/dashboard?cluster=east", Some(&f.ada), None).await;
    assert_eq!(status, StatusCode::OK, "{east}");
    assert_eq!((pools(&east, "live"), pools(&east, "upcoming")), (vec![], vec!["east-mig".to_string()]));
    assert!(pools(&east, "budget").iter().all(|p| p == "east-mig"), "{east}");
    assert_eq!(east["cluster"], "east");
    let (_, home) = f.call(Method::GET, "/api/v1/tenants/team-a/dashboard?cluster=default", Some(&f.ada), None).await;
    assert_eq!((pools(&home, "live"), pools(&home, "upcoming")), (vec!["lab-h100".to_string()], vec![]));
    let (status, err) = f.call(Method::GET, "/api/v1/tenants/team-a/dashboard?cluster=mars", Some(&f.ada), None).await;
    assert_eq!((status, err["field"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("cluster")), "{err}");
}

/// Issue 61, pages agree: "booked" has one definition
/// (`BookingState::BOOKED`). For the same bookings the dashboard's week and
/// the report read the same booked GPU-hours; a request waiting for
/// approval is booked in neither, and the dashboard names it apart (the
/// weekly budget counts it).
#[tokio::test]
async fn the_dashboard_and_the_report_agree_on_what_is_booked() {
    let f = Fixture::new().await;
    // Monday of this week (the pool's zone is UTC): always inside the
    // dashboard's week, whenever the test runs. Two whole GPUs for 3 hours,
    // completed; one for 2 hours, still waiting for approval.
    for (quantity, from, hours, state) in [(2, 1, 3, "completed"), (1, 5, 2, "pending")] {
        sqlx::query(
            "INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state)
             SELECT p.id, $1, u.id, m.tenant_id, $2, 'interactive',
                    date_trunc('week', now()) + make_interval(hours => $3),
                    date_trunc('week', now()) + make_interval(hours => $3 + $4), $5
             FROM pool p, app_user u JOIN membership m ON m.user_id = u.id
             WHERE p.name = $6 AND u.email = 'ada@a.test'",
        )
        .bind(GPU)
        .bind(quantity)
        .bind(from)
        .bind(hours)
        .bind(state)
        .bind(server::seed::DEMO_POOL)
        .execute(&f.db)
        .await
        .unwrap();
    }
    let (status, d) = f.call(Method::GET, "/api/v1/tenants/team-a/dashboard", Some(&f.ada), None).await;
    assert_eq!(status, StatusCode::OK, "{d}");
    let line = d["budget"].as_array().unwrap().iter().find(|l| l["kind"] == GPU).expect("the GPU line").clone();
    assert_eq!((line["booked_hours"].as_f64(), line["waiting_hours"].as_f64()), (Some(6.0), Some(2.0)), "{line}");

    let monday: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("SELECT date_trunc('week', now())").fetch_one(&f.db).await.unwrap();
    let (from, to) = (monday.format("%Y-%m-%d"), (monday + chrono::Duration::days(7)).format("%Y-%m-%d"));
    let path = format!("/api/v1/reports/utilization?from={from}&to={to}&group=tenant");
    let (status, report) = f.call(Method::GET, &path, Some(&f.mia), None).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    let row = report["rows"].as_array().unwrap().iter().find(|r| r["name"] == "team-a").expect("team-a's row").clone();
    assert_eq!(
        row["booked_gpu_hours"].as_f64(),
        line["booked_hours"].as_f64(),
        "the report's booked, the dashboard's: {row}"
    );
}
