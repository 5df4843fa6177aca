//! The utilisation report against hand-computed fixtures: a Berlin day
//! across the autumn DST change (25 hours), bookings crossing its edges,
//! partial hours, canceled and ended-early bookings, a no-show, overlapping
//! blackouts excluded from capacity, measured use, refusals and the
//! waitlist. The CSV, read back by a CSV parser, equals the JSON.

use crate::common;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use common::Fixture;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use sqlx::PgPool;
use tower::ServiceExt;
use uuid::Uuid;

const DAY: &str = "/api/v1/reports/utilization?from=2026-10-25&to=2026-10-26&tz=Europe/Berlin";

async fn exec(db: &PgPool, sql: &str) {
    sqlx::raw_sql(sql).execute(db).await.unwrap_or_else(|e| panic!("{e}: {sql}"));
}

/// The fixture pool `fx` (2 GPUs + 7 MIG 1g slices stated as 7 per GPU = 3
/// GPUs, 2.00 per unit-hour of either, both there since January) and its history.
async fn fixtures(db: &PgPool) -> Uuid {
    exec(
        db,
        "INSERT INTO pool (name, price_per_gpu_hour, time_zone) VALUES ('fx', 2, 'Europe/Berlin');
         INSERT INTO pool_kind (pool_id, kind, capacity, slices_per_gpu, created_at)
           SELECT id, 'nvidia.com/gpu', 2, 1, '2026-01-01Z' FROM pool WHERE name = 'fx';
         INSERT INTO pool_kind (pool_id, kind, capacity, slices_per_gpu, price_per_unit_hour, created_at)
           SELECT id, 'nvidia.com/mig-1g.24gb', 7, 7, 2, '2026-01-01Z' FROM pool WHERE name = 'fx';
         -- GPUs closed 10-12 and every kind 11-13: 3 h of 2 GPUs and 2 h of the slices' 1 GPU.
         INSERT INTO blackout (pool_id, kind, starts_at, ends_at, reason)
           SELECT id, 'nvidia.com/gpu', '2026-10-25T10:00Z', '2026-10-25T12:00Z', 'fans' FROM pool WHERE name = 'fx';
         INSERT INTO blackout (pool_id, kind, starts_at, ends_at, reason)
           SELECT id, NULL, '2026-10-25T11:00Z', '2026-10-25T13:00Z', 'power' FROM pool WHERE name = 'fx';",
    )
    .await;
    let booking = |id: u8, email: &str, kind: &str, units: i32, state: &str, window: (&str, &str), cut: &str| {
        format!(
            "INSERT INTO booking (id, pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state, planned_ends_at, released_as)
             SELECT '00000000-0000-0000-0000-0000000000{id:02}', p.id, 'nvidia.com/{kind}', u.id, m.tenant_id, {units},
                    'interactive', '{}', '{}', '{state}', {cut}
             FROM pool p, app_user u JOIN membership m ON m.user_id = u.id
             WHERE p.name = 'fx' AND u.email = '{email}';",
            window.0, window.1
        )
    };
    let mut sql = String::new();
    // 3 h inside the day (22:00Z-01:00Z), 1 GPU: 3 GPU-h, 6.00.
    sql += &booking(1, "ada@a.test", "gpu", 1, "completed", ("2026-10-24T20:00Z", "2026-10-25T01:00Z"), "NULL, NULL");
    // Half an hour inside (22:30Z-23:00Z), 2 slices = 2/7 GPU: 1/7 GPU-h, 2.00.
    sql += &booking(
        2,
        "ada@a.test",
        "mig-1g.24gb",
        2,
        "approved",
        ("2026-10-25T22:30Z", "2026-10-26T02:00Z"),
        "NULL, NULL",
    );
    // Ended early at 09:30Z instead of 12:00Z: 1.5 GPU-h booked, 2.5 returned, 3.00.
    sql += &booking(
        3,
        "bob@b.test",
        "gpu",
        1,
        "completed",
        ("2026-10-25T08:00Z", "2026-10-25T09:30Z"),
        "'2026-10-25T12:00Z', 'ended_early'",
    );
    // Canceled: counts nowhere.
    sql += &booking(4, "bob@b.test", "gpu", 2, "canceled", ("2026-10-25T06:00Z", "2026-10-25T07:00Z"), "NULL, NULL");
    // A no-show released after 30 min of 2 h: 0.5 booked, 1.5 returned, 1.00.
    sql += &booking(
        5,
        "carol@a.test",
        "gpu",
        1,
        "completed",
        ("2026-10-25T14:00Z", "2026-10-25T14:30Z"),
        "'2026-10-25T16:00Z', 'no_show'",
    );
    exec(db, &sql).await;
    exec(
        db,
        "-- Booking 1 occupied for the hour 23:00Z at half busy, active for 40 of its
         -- minutes; the hour before the day does not count.
         INSERT INTO usage_hour (booking_id, hour, pool_id, tenant_id, user_id, samples, busy_unit_minutes, active_unit_minutes, memory_max_mib, energy_wh, simulated)
           SELECT id, '2026-10-24T23:00Z', pool_id, tenant_id, user_id, 60, 30, 40, 1000, 300, false FROM booking WHERE note = '' AND quantity = 1 AND starts_at = '2026-10-24T20:00Z';
         INSERT INTO usage_hour (booking_id, hour, pool_id, tenant_id, user_id, samples, busy_unit_minutes, active_unit_minutes, memory_max_mib, energy_wh, simulated)
           SELECT id, '2026-10-24T21:00Z', pool_id, tenant_id, user_id, 60, 60, 60, 1000, 300, false FROM booking WHERE starts_at = '2026-10-24T20:00Z';
         -- Refused for capacity: 2 GPUs x 2 h; waitlisted: 7 slices x 1 h (one more, admitted, is a booking).
         INSERT INTO booking_refusal (pool_id, kind, tenant_id, user_id, quantity, starts_at, ends_at, reason)
           SELECT p.id, 'nvidia.com/gpu', m.tenant_id, u.id, 2, '2026-10-25T15:00Z', '2026-10-25T17:00Z', 'capacity'
           FROM pool p, app_user u JOIN membership m ON m.user_id = u.id WHERE p.name = 'fx' AND u.email = 'ada@a.test';
         INSERT INTO waitlist_entry (id, pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state)
           SELECT gen_random_uuid(), p.id, 'nvidia.com/mig-1g.24gb', u.id, m.tenant_id, 7, 'interactive', '2026-10-25T18:00Z', '2026-10-25T19:00Z', s
           FROM pool p, app_user u JOIN membership m ON m.user_id = u.id, unnest(ARRAY['waiting', 'admitted']) s
           WHERE p.name = 'fx' AND u.email = 'bob@b.test';
         -- The sampler's roll-ups of the same hours, as it writes them.
         INSERT INTO usage_pool_hour (pool_id, hour, busy_gpu_minutes, sampled_gpu_minutes, active_gpu_minutes, simulated)
           SELECT u.pool_id, u.hour, sum(u.busy_unit_minutes * gpu_share(b.pool_id, b.kind)), sum(u.samples * b.quantity * gpu_share(b.pool_id, b.kind)),
                  sum(u.active_unit_minutes * gpu_share(b.pool_id, b.kind)), false
           FROM usage_hour u JOIN booking b ON b.id = u.booking_id GROUP BY 1, 2;
         INSERT INTO usage_day (day, pool_id, tenant_id, user_id, busy_gpu_minutes, sampled_gpu_minutes, active_gpu_minutes, simulated)
           SELECT (u.hour AT TIME ZONE 'UTC')::date, u.pool_id, u.tenant_id, u.user_id,
                  sum(u.busy_unit_minutes * gpu_share(b.pool_id, b.kind)), sum(u.samples * b.quantity * gpu_share(b.pool_id, b.kind)),
                  sum(u.active_unit_minutes * gpu_share(b.pool_id, b.kind)), false
           FROM usage_hour u JOIN booking b ON b.id = u.booking_id GROUP BY 1, 2, 3, 4;
         INSERT INTO usage_month (month, pool_id, tenant_id, user_id, busy_gpu_minutes, sampled_gpu_minutes, active_gpu_minutes, simulated)
           SELECT date_trunc('month', day::timestamp)::date, pool_id, tenant_id, user_id,
                  sum(busy_gpu_minutes), sum(sampled_gpu_minutes), sum(active_gpu_minutes), false
           FROM usage_day GROUP BY 1, 2, 3, 4;
         INSERT INTO usage_policy (active_threshold) VALUES (0.15);
         INSERT INTO usage_gap (minute, reason) VALUES
           ('2026-10-25T03:00Z', 'down'), ('2026-10-25T03:01Z', 'down'), ('2026-10-26T03:00Z', 'after');",
    )
    .await;
    sqlx::query_scalar("SELECT id FROM pool WHERE name = 'fx'").fetch_one(db).await.unwrap()
}

/// Figures are served rounded to two decimals.
fn close(value: &Value, expected: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - expected).abs() <= 0.005 + 1e-9)
}

fn row<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no {name}: {report}"))
}

fn assert_figures(row: &Value, expected: &[(&str, f64)]) {
    for (field, value) in expected {
        assert!(close(&row[*field], *value), "{field}: expected {value}, got {} in {row}", row[*field]);
    }
}

#[tokio::test]
async fn a_dst_day_by_pool_matches_the_hand_computed_figures() {
    let f = Fixture::new().await;
    fixtures(&f.db).await;
    let (status, report) = f.call(Method::GET, &format!("{DAY}&group=pool"), Some(&f.mia), None).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["from"], "2026-10-24T22:00:00Z");
    assert_eq!(report["to"], "2026-10-25T23:00:00Z", "the day lasts 25 hours");
    let booked = 3.0 + 1.0 / 7.0 + 1.5 + 0.5;
    assert_figures(
        row(&report, "fx"),
        &[
            ("capacity_gpu_hours", 3.0 * 25.0 - 2.0 * 3.0 - 1.0 * 2.0),
            ("booked_gpu_hours", booked),
            ("booking_utilization_pct", booked / 67.0 * 100.0),
            // Three tiers: booked, occupied (an hour), active (40 minutes of it).
            ("occupied_gpu_hours", 1.0),
            ("active_gpu_hours", 40.0 / 60.0),
            ("active_utilization_pct", 40.0 / 60.0 / booked * 100.0),
            ("busy_gpu_hours", 0.5),
            // Busy % of booked: of the booked GPU-hours, not only the measured ones.
            ("busy_utilization_pct", 0.5 / booked * 100.0),
            // Idle booked: booked but not active, whether occupied or not.
            ("idle_booked_gpu_hours", booked - 40.0 / 60.0),
            ("no_shows", 1.0),
            ("returned_gpu_hours", 2.5 + 1.5),
            ("refused_gpu_hours", 4.0),
            ("waitlisted_gpu_hours", 1.0),
            ("showback_cost", 6.0 + 2.0 + 3.0 + 1.0),
        ],
    );
    // The demo pool is listed although nothing was booked, and without
    // capacity: it was created (by the fixture, today) after the period.
    let demo = row(&report, server::seed::DEMO_POOL);
    assert_figures(demo, &[("booked_gpu_hours", 0.0), ("capacity_gpu_hours", 0.0)]);
    assert_eq!(demo["busy_utilization_pct"], Value::Null, "nothing measured is not 0 %");
    assert_eq!(report["gap_minutes"], 2);
    assert_eq!(report["active_threshold_pct"], 15.0, "the threshold the sampler judged by");
    assert_eq!(row(&report, "fx")["device_level_only"], false, "whole GPUs and MIG slices are measured each");
    assert_eq!(report["total"]["name"], "All");
    assert!(close(&report["total"]["booked_gpu_hours"], booked));

    assert_eq!(report["trend_bucket"], "hour");
    let trend = report["trend"].as_array().unwrap();
    assert_eq!(trend.len(), 25);
    let trend_booked: f64 = trend.iter().map(|p| p["booked_gpu_hours"].as_f64().unwrap()).sum();
    // Each point is rounded to two decimals on its own.
    let rounding = 0.005 * trend.len() as f64;
    assert!((trend_booked - booked).abs() < rounding, "the trend adds up to the table: {trend_booked}");
    let at_22 = trend.iter().find(|p| p["start"] == "2026-10-25T22:00:00Z").unwrap();
    assert_figures(at_22, &[("booked_gpu_hours", 1.0 / 7.0)]);
    let at_23 = trend.iter().find(|p| p["start"] == "2026-10-24T23:00:00Z").unwrap();
    assert_figures(at_23, &[("booked_gpu_hours", 1.0), ("busy_gpu_hours", 0.5)]);
    // Sunday 02:00 happens twice (CEST, then CET); booking 1 holds 1 GPU in the first.
    let gpus = 3.0;
    let cell = report["heatmap"].as_array().unwrap().iter().find(|c| c["weekday"] == 6 && c["hour"] == 2).unwrap();
    assert!(close(&cell["occupancy_pct"], 1.0 / (2.0 * gpus) * 100.0), "{cell}");
}

/// The fixtures, and a second cluster, `east`, with no pool yet.
async fn fixtures_and_east() -> Fixture {
    let f = Fixture::new().await;
    fixtures(&f.db).await;
    let (status, _) = f
        .call(Method::POST, "/api/v1/clusters", Some(&f.admin), Some(json!({"name": "east", "access": "simulated"})))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    f
}

#[tokio::test]
async fn by_cluster_a_cluster_holds_its_pools_figures_and_capacity() {
    let f = fixtures_and_east().await;
    let (_, by_pool) = f.call(Method::GET, &format!("{DAY}&group=pool"), Some(&f.mia), None).await;
    let (status, report) = f.call(Method::GET, &format!("{DAY}&group=cluster"), Some(&f.mia), None).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    let names: Vec<&str> = report["rows"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["default", "east"], "every cluster, the empty one too");
    // Every pool is on the default cluster: it holds all of their figures.
    let default = row(&report, "default");
    for field in [
        "capacity_gpu_hours",
        "booked_gpu_hours",
        "occupied_gpu_hours",
        "active_gpu_hours",
        "showback_cost",
        "refused_gpu_hours",
    ] {
        assert!(
            close(&default[field], by_pool["total"][field].as_f64().unwrap()),
            "{field}: {default} vs {}",
            by_pool["total"]
        );
    }
    assert_figures(row(&report, "east"), &[("booked_gpu_hours", 0.0), ("capacity_gpu_hours", 0.0)]);
    assert!(close(&report["total"]["booked_gpu_hours"], by_pool["total"]["booked_gpu_hours"].as_f64().unwrap()));
}

/// Sums a trend's field.
fn trend_sum(report: &Value, field: &str) -> f64 {
    report["trend"].as_array().unwrap().iter().map(|p| p[field].as_f64().unwrap()).sum()
}

#[tokio::test]
async fn one_clusters_report_counts_its_pools_alone_from_bookings_and_roll_ups() {
    let f = fixtures_and_east().await;
    // fx, with every figure of the fixtures, runs on east; the default
    // cluster's pools get an October booking of their own (3 GPU-h).
    exec(
        &f.db,
        "UPDATE pool SET cluster_id = (SELECT id FROM cluster WHERE name = 'east') WHERE name = 'fx';
         INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state)
           SELECT p.id, 'nvidia.com/gpu', u.id, m.tenant_id, 1, 'interactive', '2026-10-25T05:00Z', '2026-10-25T08:00Z', 'completed'
           FROM pool p, app_user u JOIN membership m ON m.user_id = u.id
           WHERE p.name = 'lab-h100' AND u.email = 'ada@a.test';
         INSERT INTO pool_kind (pool_id, kind, capacity, slices_per_gpu, created_at)
           SELECT id, 'nvidia.com/gpu', 1, 1, '2026-01-01Z' FROM pool WHERE name = 'lab-h100'
           ON CONFLICT DO NOTHING;",
    )
    .await;
    let get = async |query: &str| {
        let (status, report) = f.call(Method::GET, &format!("{DAY}&group=pool{query}"), Some(&f.mia), None).await;
        assert_eq!(status, StatusCode::OK, "{report}");
        report
    };
    let (all, east, default) = (get("").await, get("&cluster=east").await, get("&cluster=default").await);
    let names = |r: &Value| -> Vec<String> {
        r["rows"].as_array().unwrap().iter().map(|row| row["name"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(names(&east), ["fx"]);
    assert!(!names(&default).contains(&"fx".to_string()) && names(&default).contains(&"lab-h100".to_string()));
    assert_eq!((&east["cluster"], &east["clusters"]), (&json!("east"), &json!(["default", "east"])));
    assert_eq!(all.get("cluster"), None);
    // East's row is fx's row of the whole report, and its total is that row.
    assert_eq!(row(&east, "fx"), row(&all, "fx"));
    for field in ["booked_gpu_hours", "capacity_gpu_hours", "active_gpu_hours", "refused_gpu_hours", "showback_cost"] {
        assert!(close(&east["total"][field], row(&all, "fx")[field].as_f64().unwrap()), "{field}: {}", east["total"]);
    }
    // The charts keep to it too, and the two clusters add up to the whole.
    for (field, total) in [("booked_gpu_hours", "booked_gpu_hours"), ("capacity_gpu_hours", "capacity_gpu_hours")] {
        assert!(close(&east["total"][total], trend_sum(&east, field)), "{field}: {}", east["trend"]);
        let both = trend_sum(&east, field) + trend_sum(&default, field);
        assert!((both - trend_sum(&all, field)).abs() < 0.02, "{field}: {both} vs {}", trend_sum(&all, field));
    }
    assert!(trend_sum(&default, "booked_gpu_hours") > 2.9, "the default cluster's own booking: {}", default["trend"]);

    // Over settled months, the trend of one cluster is read from its pools'
    // bookings: the roll-up of every pool's hours would count the other's.
    assert!(app::backend::reports::rollups::settle_due(&f.db).await.unwrap() > 0);
    let months = "/api/v1/reports/utilization?from=2026-09-15&to=2026-11-20&tz=Europe/Berlin&group=pool&cluster=east";
    let (status, settled) = f.call(Method::GET, months, Some(&f.mia), None).await;
    assert_eq!(status, StatusCode::OK, "{settled}");
    assert!(close(&settled["total"]["booked_gpu_hours"], trend_sum(&settled, "booked_gpu_hours")), "{settled}");
    let (_, every) = f.call(Method::GET, &months.replace("&cluster=east", ""), Some(&f.mia), None).await;
    assert_eq!(row(&settled, "fx"), row(&every, "fx"));
    assert!(trend_sum(&every, "booked_gpu_hours") > trend_sum(&settled, "booked_gpu_hours") + 2.9, "{every}");

    // A name no cluster has is refused naming the field; the CSV keeps to the cluster.
    let (status, refused) = f.call(Method::GET, &format!("{DAY}&cluster=nowhere"), Some(&f.mia), None).await;
    assert_eq!((status, &refused["field"]), (StatusCode::UNPROCESSABLE_ENTITY, &json!("cluster")), "{refused}");
    let csv = Request::get(DAY.replace("utilization?", "utilization.csv?") + "&group=pool&cluster=east")
        .header(header::AUTHORIZATION, format!("Bearer {}", f.mia))
        .body(Body::empty())
        .unwrap();
    let response = f.app.clone().oneshot(csv).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let mut reader = csv::Reader::from_reader(bytes.as_ref());
    let name = reader.headers().unwrap().iter().position(|c| c == "name").unwrap();
    let pools: Vec<String> = reader.records().map(|r| r.unwrap()[name].to_string()).collect();
    assert_eq!(pools, ["fx", "All"]);
}

#[tokio::test]
async fn by_tenant_and_by_user_split_the_same_figures() {
    let f = Fixture::new().await;
    fixtures(&f.db).await;
    let (status, report) = f.call(Method::GET, &format!("{DAY}&group=tenant"), Some(&f.admin), None).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_figures(
        row(&report, "team-a"),
        &[
            ("booked_gpu_hours", 3.0 + 1.0 / 7.0 + 0.5),
            ("returned_gpu_hours", 1.5),
            ("no_shows", 1.0),
            ("refused_gpu_hours", 4.0),
            ("showback_cost", 9.0),
        ],
    );
    assert_figures(
        row(&report, "team-b"),
        &[
            ("booked_gpu_hours", 1.5),
            ("returned_gpu_hours", 2.5),
            ("waitlisted_gpu_hours", 1.0),
            ("showback_cost", 3.0),
        ],
    );
    assert_eq!(row(&report, "team-a")["capacity_gpu_hours"], Value::Null, "tenants have no capacity of their own");
    let (_, report) = f.call(Method::GET, &format!("{DAY}&group=user"), Some(&f.mia), None).await;
    assert_figures(row(&report, "carol@a.test"), &[("booked_gpu_hours", 0.5), ("no_shows", 1.0)]);
    assert_figures(row(&report, "ada@a.test"), &[("busy_gpu_hours", 0.5), ("refused_gpu_hours", 4.0)]);
    // Two whole UTC days: measured use comes from the daily roll-up, both of booking 1's hours.
    let two_days = "/api/v1/reports/utilization?from=2026-10-24&to=2026-10-26&group=user";
    let (_, report) = f.call(Method::GET, two_days, Some(&f.mia), None).await;
    assert_figures(
        row(&report, "ada@a.test"),
        &[("busy_gpu_hours", 1.5), ("occupied_gpu_hours", 2.0), ("active_gpu_hours", 1.0 + 40.0 / 60.0)],
    );
    // Half a day each side of a whole one: the edges from the hours, the middle from the days.
    let edges = "/api/v1/reports/utilization?from=2026-10-23T22:30:00Z&to=2026-10-25T00:30:00Z&group=pool";
    let (_, report) = f.call(Method::GET, edges, Some(&f.mia), None).await;
    assert_figures(
        row(&report, "fx"),
        &[("busy_gpu_hours", 1.5), ("occupied_gpu_hours", 2.0), ("active_gpu_hours", 1.0 + 40.0 / 60.0)],
    );
    // A whole month from the monthly roll-up; a period across a month's edge
    // from the month, the days beside it and the hours at its ends: each
    // measured hour counted once, and the bookings' hours the same as the day's.
    let mut booked = Vec::new();
    for period in ["from=2026-10-01&to=2026-11-01", "from=2026-09-29T13:00:00Z&to=2026-11-02T07:30:00Z"] {
        let path = format!("/api/v1/reports/utilization?{period}&group=user");
        let (status, report) = f.call(Method::GET, &path, Some(&f.mia), None).await;
        assert_eq!(status, StatusCode::OK, "{report}");
        assert_figures(
            row(&report, "ada@a.test"),
            &[
                ("busy_gpu_hours", 1.5),
                ("occupied_gpu_hours", 2.0),
                ("active_gpu_hours", 1.0 + 40.0 / 60.0),
                ("refused_gpu_hours", 4.0),
            ],
        );
        assert_figures(row(&report, "carol@a.test"), &[("no_shows", 1.0)]);
        booked.push(report["total"]["booked_gpu_hours"].as_f64().unwrap());
    }
    assert!(booked[0] > 0.0 && (booked[0] - booked[1]).abs() < 1e-9, "{booked:?}");
}

#[tokio::test]
async fn time_sliced_shares_are_said_to_be_measured_at_the_device() {
    let f = Fixture::new().await;
    fixtures(&f.db).await;
    exec(
        &f.db,
        "INSERT INTO pool (name, time_zone) VALUES ('ts', 'Europe/Berlin');
         INSERT INTO pool_kind (pool_id, kind, capacity, replicas_per_unit, slices_per_gpu, created_at)
           SELECT id, 'nvidia.com/gpu', 1, 4, 1, '2026-01-01Z' FROM pool WHERE name = 'ts';
         INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state)
           SELECT p.id, 'nvidia.com/gpu', u.id, m.tenant_id, 1, 'interactive', '2026-10-25T08:00Z', '2026-10-25T09:00Z', 'completed'
           FROM pool p, app_user u JOIN membership m ON m.user_id = u.id WHERE p.name = 'ts' AND u.email = 'ada@a.test';",
    )
    .await;
    let (status, report) = f.call(Method::GET, &format!("{DAY}&group=pool"), Some(&f.mia), None).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(row(&report, "ts")["device_level_only"], true);
    assert_eq!(row(&report, "fx")["device_level_only"], false);
    assert_eq!(report["total"]["device_level_only"], true);
    let (_, report) = f.call(Method::GET, &format!("{DAY}&group=user"), Some(&f.mia), None).await;
    assert_eq!(row(&report, "ada@a.test")["device_level_only"], true, "the user booked a share");
    assert_eq!(row(&report, "bob@b.test")["device_level_only"], false);
}

#[tokio::test]
async fn the_csv_read_back_equals_the_json() {
    let f = Fixture::new().await;
    fixtures(&f.db).await;
    let path = format!("{DAY}&group=pool");
    let (_, json) = f.call(Method::GET, &path, Some(&f.mia), None).await;
    let request = Request::get(&path)
        .header(header::AUTHORIZATION, format!("Bearer {}", f.mia))
        .header(header::ACCEPT, "text/csv")
        .body(Body::empty())
        .unwrap();
    let response = f.app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers()[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/csv"));
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let mut reader = csv::Reader::from_reader(bytes.as_ref());
    let columns: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
    assert_eq!(columns, app::model::REPORT_CSV_COLUMNS);
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let expected: Vec<&Value> = json["rows"].as_array().unwrap().iter().chain([&json["total"]]).collect();
    assert_eq!(records.len(), expected.len());
    for (record, row) in records.iter().zip(expected) {
        for (column, cell) in columns.iter().zip(record.iter()) {
            // The report's currency, on every line beside the cost.
            let want = if column == "currency" { &json["currency"] } else { &row[column.as_str()] };
            match want {
                Value::Null => assert_eq!(cell, "", "{column}"),
                Value::Number(n) => {
                    assert!((cell.parse::<f64>().unwrap() - n.as_f64().unwrap()).abs() < 1e-9, "{column}")
                }
                Value::Bool(b) => assert_eq!(cell, b.to_string(), "{column}"),
                Value::String(s) => assert_eq!(cell, s, "{column}"),
                other => panic!("{column}: {other}"),
            }
        }
    }
}

#[tokio::test]
async fn only_managers_and_admins_read_it_and_bad_queries_name_their_field() {
    let f = Fixture::new().await;
    let path = "/api/v1/reports/utilization?from=2026-10-25&to=2026-10-26";
    assert_eq!(f.call(Method::GET, path, None, None).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(f.call(Method::GET, path, Some(&f.ada), None).await.0, StatusCode::FORBIDDEN);
    for (query, field) in [
        ("from=2026-10-26&to=2026-10-25", "to"),
        ("from=soon&to=2026-10-25", "from"),
        ("from=2025-01-01&to=2026-10-25", "to"),
        ("from=2026-10-25&to=2026-10-26&tz=Nowhere/Place", "tz"),
        ("from=2026-10-25&to=2026-10-26&group=galaxy", "group"),
    ] {
        let (status, body) =
            f.call(Method::GET, &format!("/api/v1/reports/utilization?{query}"), Some(&f.mia), None).await;
        assert!(status.is_client_error(), "{query}: {status} {body}");
        assert_eq!(body["field"], field, "{query}: {body}");
    }
}

#[tokio::test]
async fn a_pool_with_one_connection_gives_the_same_report_one_statement_after_the_other() {
    let f = Fixture::new().await;
    fixtures(&f.db).await;
    let mia = app::backend::accounts::tokens::authenticate(&f.db, &f.mia).await.unwrap().unwrap();
    let query = app::model::ReportQuery {
        from: "2026-10-25".into(),
        to: "2026-10-26".into(),
        group: app::model::ReportGroup::Tenant,
        tz: Some("Europe/Berlin".into()),
        cluster: None,
    };
    let side_by_side = app::backend::reports::for_query(&f.db, &mia, &query, "USD").await.unwrap();
    let options = (*f.db.connect_options()).clone();
    let single = sqlx::postgres::PgPoolOptions::new().max_connections(1).connect_with(options).await.unwrap();
    let one_after_the_other = app::backend::reports::for_query(&single, &mia, &query, "USD").await.unwrap();
    assert_eq!(side_by_side, one_after_the_other);
    assert!(side_by_side.total.booked_gpu_hours > 5.0);
}

/// Every number in `a` within 1e-9 of the one in `b`, everything else equal.
fn assert_same_report(a: &Value, b: &Value, at: &str) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!((x - y).abs() < 1e-9 * x.abs().max(1.0), "{at}: {x} against {y}");
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}: lengths");
            for (i, (x, y)) in x.iter().zip(y).enumerate() {
                assert_same_report(x, y, &format!("{at}[{i}]"));
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>(), "{at}: fields");
            for (key, x) in x {
                assert_same_report(x, &y[key], &format!("{at}.{key}"));
            }
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}

#[tokio::test]
async fn settled_months_read_from_the_roll_ups_give_the_same_report_and_a_late_change_unsettles_them() {
    let f = Fixture::new().await;
    fixtures(&f.db).await;
    // Bookings across the edges of October: Sep 30 -> Oct 1 (6 GPU-h, 4 of them in October), and one cut short
    // on Oct 31 whose returned hours run into November (2 h in October, 6 in November), and a no-show.
    exec(
        &f.db,
        "INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, starts_at, ends_at, state, planned_ends_at, released_as)
           SELECT p.id, 'nvidia.com/gpu', u.id, m.tenant_id, 2, 'interactive', w.s, w.e, 'completed', w.planned, w.released
           FROM pool p, app_user u JOIN membership m ON m.user_id = u.id,
                (VALUES ('2026-09-30T21:00Z'::timestamptz, '2026-10-01T03:00Z'::timestamptz, NULL::timestamptz, NULL),
                        ('2026-10-31T20:00Z', '2026-10-31T22:00Z', '2026-11-01T06:00Z', 'ended_early'),
                        ('2026-10-12T08:00Z', '2026-10-12T08:30Z', '2026-10-12T12:00Z', 'no_show')) w (s, e, planned, released)
           WHERE p.name = 'fx' AND u.email = 'carol@a.test';",
    )
    .await;
    let path = |group: &str| {
        format!("/api/v1/reports/utilization?from=2026-09-15&to=2026-11-20&tz=Europe/Berlin&group={group}")
    };
    let mut from_bookings = Vec::new();
    for group in ["pool", "tenant", "user"] {
        let (status, report) = f.call(Method::GET, &path(group), Some(&f.mia), None).await;
        assert_eq!(status, StatusCode::OK, "{report}");
        from_bookings.push(report);
    }
    let booked_before = from_bookings[0]["total"]["booked_gpu_hours"].as_f64().unwrap();
    assert!(booked_before > 12.0, "{}", from_bookings[0]["total"]);

    // The sweep settles September and October (November has not ended).
    let settled = app::backend::reports::rollups::settle_due(&f.db).await.unwrap();
    assert_eq!(settled, 2);
    let months: Vec<chrono::NaiveDate> =
        sqlx::query_scalar("SELECT month FROM booking_month_settled ORDER BY 1").fetch_all(&f.db).await.unwrap();
    assert_eq!(months.iter().map(|m| m.to_string()).collect::<Vec<_>>(), ["2026-09-01", "2026-10-01"]);
    assert_eq!(app::backend::reports::rollups::settle_due(&f.db).await.unwrap(), 0, "settled once");
    for (group, expected) in ["pool", "tenant", "user"].iter().zip(&from_bookings) {
        let (_, report) = f.call(Method::GET, &path(group), Some(&f.mia), None).await;
        assert_same_report(&report, expected, group);
    }

    // The report really reads October from the roll-ups: a change made there alone shows.
    exec(&f.db, "UPDATE booking_month SET booked_unit_hours = booked_unit_hours + 1000 WHERE kind = 'nvidia.com/gpu'")
        .await;
    let (_, tampered) = f.call(Method::GET, &path("pool"), Some(&f.mia), None).await;
    let added = tampered["total"]["booked_gpu_hours"].as_f64().unwrap() - booked_before;
    assert!(added >= 1000.0, "{added}");

    // A late change to an October booking (an admin cancels booking 1 after the fact) forgets October, so
    // the report is right at once, read from the bookings, and again once the sweep settles it anew.
    exec(&f.db, "UPDATE booking SET state = 'canceled' WHERE id = '00000000-0000-0000-0000-000000000001'").await;
    let months: Vec<chrono::NaiveDate> =
        sqlx::query_scalar("SELECT month FROM booking_month_settled").fetch_all(&f.db).await.unwrap();
    assert_eq!(months.iter().map(|m| m.to_string()).collect::<Vec<_>>(), ["2026-09-01"]);
    let (_, unsettled) = f.call(Method::GET, &path("pool"), Some(&f.mia), None).await;
    let booked_after = unsettled["total"]["booked_gpu_hours"].as_f64().unwrap();
    assert!((booked_before - booked_after - 5.0).abs() < 1e-9, "booking 1 held 5 GPU-h: {booked_after}");
    assert_eq!(app::backend::reports::rollups::settle_due(&f.db).await.unwrap(), 1);
    let (_, resettled) = f.call(Method::GET, &path("pool"), Some(&f.mia), None).await;
    assert_same_report(&resettled, &unsettled, "resettled");

    // Ordinary traffic does not touch settled months: ending this month's booking early leaves them.
    exec(&f.db, "UPDATE booking SET ends_at = ends_at - interval '1 hour' WHERE starts_at >= '2026-11-01'").await;
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM booking_month_settled").fetch_one(&f.db).await.unwrap();
    assert_eq!(count, 2);
}
