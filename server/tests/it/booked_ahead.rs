//! `berth_booked_units`: what the calendar knows ahead of any autoscaler —
//! per pool kind, the most units booked at once over the next 15 minutes,
//! hour and day — against bookings placed by hand.

use crate::common;

use chrono::{Duration, Utc};
use common::{Fixture, GPU, MIG};
use server::metrics::{booked_ahead, BookedAhead};

/// A booking of ada's from `from` to `to` minutes from now.
async fn place(f: &Fixture, kind: &str, units: i32, from: i64, to: i64, state: &str) {
    let now = Utc::now();
    f.place(kind, units, (now + Duration::minutes(from), now + Duration::minutes(to)), state).await;
}

#[tokio::test]
async fn the_peak_booked_ahead_is_counted_per_pool_kind_over_each_look_ahead() {
    let f = Fixture::new().await;
    place(&f, MIG, 1, -60, 120, "active").await; // running now, for two hours
    place(&f, MIG, 2, 30, 50, "approved").await; // beside it in half an hour: 3 at once
    place(&f, MIG, 4, 300, 360, "pending").await; // alone in five hours: 4
    place(&f, MIG, 4, 0, 60, "canceled").await; // holds nothing
    place(&f, GPU, 1, 10, 20, "approved").await;
    // A retired pool is not listed.
    sqlx::query("INSERT INTO pool (name, retired_at) VALUES ('old', now())").execute(&f.db).await.unwrap();
    sqlx::query("INSERT INTO pool_kind (pool_id, kind, capacity, slices_per_gpu) SELECT id, $1, 2, 1 FROM pool WHERE name = 'old'")
        .bind(GPU)
        .execute(&f.db)
        .await
        .unwrap();
    let rows = booked_ahead(&f.db).await.unwrap();
    let pool = server::seed::DEMO_POOL;
    let row = |kind: &str, within: &str, units: i64| BookedAhead {
        pool: pool.into(),
        kind: kind.into(),
        within: within.into(),
        units,
    };
    assert_eq!(
        rows,
        [
            row(GPU, "15m", 1),
            row(GPU, "1h", 1),
            row(GPU, "24h", 1),
            row(MIG, "15m", 1),
            row(MIG, "1h", 3),
            row(MIG, "24h", 4)
        ]
    );
}
