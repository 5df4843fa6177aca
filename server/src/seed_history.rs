//! A month of demo history for `make run`: past bookings across the demo
//! pools and two tenants, with simulated measured use (busy and idle
//! people, no-shows, sessions released for idling, cancellations), so the
//! reports, dashboard and tokenomics show figures on first open. Every
//! booking carries the note "Demo history", and `demo_history` records the
//! seeding so that those pages say the figures are made up.
//!
//! Deterministic: which slots are booked, by whom and how busy comes from
//! a hash of the slot, so two seedings ending on the same day look alike.
//! The browser tests end it on a fixed day (`--history-until`), so their
//! screenshots of the reports and calendar always see the same month.

use app::backend::{accounts::users, ServiceError};
use app::model::Role;
use chrono::NaiveDate;
use sqlx::PgPool;

/// The note every seeded booking carries.
pub const HISTORY_NOTE: &str = "Demo history";

/// Days of history before today.
const DAYS: i32 = 30;

/// The people of the history: email, name, tenant (slug, name), and how
/// busy their GPUs are on average (0-1). Ada works her GPUs hard, Alan
/// books more than he uses.
const PEOPLE: [(&str, &str, (&str, &str), f64); 4] = [
    ("ada@berth.local", "Ada Demo", ("demo", "Demo team"), 0.75),
    ("mia@berth.local", "Mia Manager", ("demo", "Demo team"), 0.45),
    ("grace@berth.local", "Grace Demo", ("demo", "Demo team"), 0.6),
    ("alan@berth.local", "Alan Demo", ("vision", "Vision team"), 0.15),
];

/// Seeds the history once, for the `DAYS` days before `until` (today when
/// `None`); returns what it did.
pub async fn history(db: &PgPool, until: Option<NaiveDate>) -> Result<String, ServiceError> {
    let until = match until {
        Some(day) => day,
        // Today in UTC, as the slots' midnights are: a database in a zone
        // ahead of UTC would otherwise end the month after now.
        None => sqlx::query_scalar("SELECT (now() AT TIME ZONE 'UTC')::date").fetch_one(db).await?,
    };
    let seeded: Option<chrono::DateTime<chrono::Utc>> =
        sqlx::query_scalar("SELECT seeded_at FROM demo_history").fetch_optional(db).await?;
    if let Some(at) = seeded {
        return Ok(format!("demo history already seeded ({})", at.format("%Y-%m-%d")));
    }
    let (mut ids, mut tenants, mut busy) = (Vec::new(), Vec::new(), Vec::new());
    for (email, name, (slug, tenant_name), share) in PEOPLE {
        let tenant = users::ensure_tenant(db, slug, tenant_name).await?;
        let role = if email.starts_with("mia@") { Role::Manager } else { Role::User };
        // Existing demo people keep their role and name.
        let id = match users::find_by_email(db, email).await {
            Ok(id) => id,
            Err(_) => users::upsert_user(db, email, name, role, slug).await?,
        };
        ids.push(id);
        tenants.push(tenant);
        busy.push(share);
    }
    let pools = [crate::seed::DEMO_POOL, crate::seed_console::APPROVAL_POOL];
    let mut tx = db.begin().await?;
    // The pools were there for the month: the report counts a kind's
    // capacity from when it was added.
    sqlx::query(
        "UPDATE pool_kind k SET created_at = least(k.created_at, ($1::date - $2)::timestamptz)
         FROM pool p WHERE p.id = k.pool_id AND p.name = ANY($3)",
    )
    .bind(until)
    .bind(DAYS)
    .bind(pools)
    .execute(&mut *tx)
    .await?;
    let booked = sqlx::query(BOOKINGS)
        .bind(&ids)
        .bind(&tenants)
        .bind(DAYS)
        .bind(HISTORY_NOTE)
        .bind(pools)
        .bind(until)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    let hours = sqlx::query(USE).bind(&ids).bind(&busy).bind(HISTORY_NOTE).execute(&mut *tx).await?.rows_affected();
    sqlx::query("INSERT INTO demo_history (first_day, last_day) VALUES ($1::date - $2, $1::date - 1)")
        .bind(until)
        .bind(DAYS)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(format!("seeded {booked} past bookings over {DAYS} days, with {hours} hours of simulated use"))
}

/// The bookings: each unit of each kind of the demo pools has a morning
/// (from 07-08 UTC, 2-5 h), an afternoon (from 13-14 UTC, 3-7 h) and a
/// night (a training run from 21 UTC, 6-9 h) that never overlap, so no
/// unit is ever booked twice. A morning or afternoon is booked on eight
/// weekdays in ten and one weekend day in ten, a night one in three; one
/// in 23 was canceled, one in 13 a no-show (released after 30 minutes)
/// and one in 11 released half way for idling. $1, $2: the people and their tenants;
/// $3: days; $4: the note; $5: the pools; $6: the day after the last.
const BOOKINGS: &str = "
    WITH slots AS (
        SELECT k.pool_id, k.kind, day, half,
               abs(hashtext(p.name || k.kind || unit || ':' || ($6::date - day) || ':' || half)) AS h,
               ($6::date - day)::timestamp AT TIME ZONE 'UTC' AS midnight
        FROM pool_kind k JOIN pool p ON p.id = k.pool_id,
             generate_series(0, k.capacity - 1) unit, generate_series(1, $3) day, generate_series(0, 2) half
        -- A night ends the next morning: the last day has none, nothing reaches $6.
        WHERE p.name = ANY($5) AND (half < 2 OR day > 1)),
    chosen AS (
        SELECT *, 1 + h % cardinality($1::uuid[]) AS who,
               CASE WHEN h % 23 = 0 THEN 'canceled' WHEN h % 13 = 0 THEN 'no_show' WHEN h % 11 = 0 THEN 'idle'
                    ELSE 'done' END AS fate,
               midnight + make_interval(hours => CASE half WHEN 0 THEN 7 + h % 2 WHEN 1 THEN 13 + h % 2 ELSE 21 END)
                   AS starts,
               make_interval(hours => CASE half WHEN 0 THEN 2 + (h / 7) % 4 WHEN 1 THEN 3 + (h / 7) % 5
                                                ELSE 6 + (h / 7) % 4 END) AS length
        FROM slots
        WHERE h % 10 < CASE WHEN half = 2 THEN 3 WHEN extract(isodow FROM midnight) > 5 THEN 1 ELSE 8 END)
    INSERT INTO booking (pool_id, kind, user_id, tenant_id, quantity, mode, note, starts_at, ends_at, state,
                         planned_ends_at, released_as, created_at, updated_at)
    SELECT pool_id, kind, ($1::uuid[])[who], ($2::uuid[])[who], 1,
           CASE WHEN h % 5 = 0 THEN 'inference' ELSE 'interactive' END, $4, starts,
           CASE fate WHEN 'no_show' THEN starts + interval '30 minutes' WHEN 'idle' THEN starts + length / 2
                     ELSE starts + length END,
           CASE fate WHEN 'canceled' THEN 'canceled' ELSE 'completed' END,
           CASE WHEN fate IN ('no_show', 'idle') THEN starts + length END,
           CASE WHEN fate IN ('no_show', 'idle') THEN fate END,
           starts - interval '2 days', starts + length
    FROM chosen";

/// Their measured use, hour by hour, as the sampler would have stored it
/// (`usage::store`, whose weighting by `slices_per_gpu` this repeats for
/// whole hours): each person's GPUs busy around their share, give or take
/// 20 points an hour; a session released for idling was nearly idle; a
/// no-show was never measured. $1, $2: the people and their shares; $3:
/// the note.
const USE: &str = "
    WITH people AS (SELECT * FROM unnest($1::uuid[], $2::float8[]) AS p(user_id, share)),
    measured AS (
        SELECT b.id, b.pool_id, b.tenant_id, b.user_id, b.quantity AS q, k.slices_per_gpu AS slices,
               k.vram_gb_per_unit AS vram, hr,
               extract(epoch FROM least(b.ends_at, hr + interval '1 hour') - greatest(b.starts_at, hr)) / 60 AS m,
               CASE WHEN b.released_as = 'idle' THEN 0.02
                    -- Hashed by what the booking is, not its random id: the same day gives the same use.
                    ELSE least(1, greatest(0, p.share + (abs(hashtext(u.email || b.kind || extract(epoch FROM b.starts_at)
                                                                      || ':' || extract(epoch FROM hr))) % 41 - 20) / 100.0))
               END AS busy
        FROM booking b JOIN pool_kind k ON k.pool_id = b.pool_id AND k.kind = b.kind
             JOIN people p ON p.user_id = b.user_id JOIN app_user u ON u.id = b.user_id,
             generate_series(date_trunc('hour', b.starts_at), b.ends_at - interval '1 second', interval '1 hour') hr
        WHERE b.note = $3 AND b.state = 'completed' AND b.released_as IS DISTINCT FROM 'no_show'),
    tiered AS (
        SELECT *, CASE WHEN busy >= 0.05 THEN least(1, busy + 0.15) ELSE 0 END AS active FROM measured),
    -- GPU-minutes in 1/1024ths: sums of such are exact in double precision
    -- whatever order they are added in, so the same history reads the same
    -- figures on every seeding (37.5 and 37.51 otherwise, by row order).
    weighted AS (
        SELECT *, round(busy * m * q / slices * 1024) / 1024 AS busy_g, round(m * q / slices * 1024) / 1024 AS sampled_g,
               round(active * m * q / slices * 1024) / 1024 AS active_g
        FROM tiered),
    pool_hours AS (
        INSERT INTO usage_pool_hour AS u (pool_id, hour, busy_gpu_minutes, sampled_gpu_minutes, active_gpu_minutes,
                                          simulated)
        SELECT pool_id, hr, sum(busy_g), sum(sampled_g), sum(active_g), true
        FROM weighted GROUP BY pool_id, hr
        ON CONFLICT (pool_id, hour) DO UPDATE SET
            busy_gpu_minutes = u.busy_gpu_minutes + excluded.busy_gpu_minutes,
            sampled_gpu_minutes = u.sampled_gpu_minutes + excluded.sampled_gpu_minutes,
            active_gpu_minutes = u.active_gpu_minutes + excluded.active_gpu_minutes, simulated = true),
    days AS (
        INSERT INTO usage_day AS u (day, pool_id, tenant_id, user_id, busy_gpu_minutes, sampled_gpu_minutes,
                                    active_gpu_minutes, simulated)
        SELECT (hr AT TIME ZONE 'UTC')::date, pool_id, tenant_id, user_id, sum(busy_g), sum(sampled_g),
               sum(active_g), true
        FROM weighted GROUP BY 1, pool_id, tenant_id, user_id
        ON CONFLICT (day, pool_id, tenant_id, user_id) DO UPDATE SET
            busy_gpu_minutes = u.busy_gpu_minutes + excluded.busy_gpu_minutes,
            sampled_gpu_minutes = u.sampled_gpu_minutes + excluded.sampled_gpu_minutes,
            active_gpu_minutes = u.active_gpu_minutes + excluded.active_gpu_minutes, simulated = true),
    months AS (
        INSERT INTO usage_month AS u (month, pool_id, tenant_id, user_id, busy_gpu_minutes, sampled_gpu_minutes,
                                      active_gpu_minutes, simulated)
        SELECT date_trunc('month', hr AT TIME ZONE 'UTC')::date, pool_id, tenant_id, user_id,
               sum(busy_g), sum(sampled_g), sum(active_g), true
        FROM weighted GROUP BY 1, pool_id, tenant_id, user_id
        ON CONFLICT (month, pool_id, tenant_id, user_id) DO UPDATE SET
            busy_gpu_minutes = u.busy_gpu_minutes + excluded.busy_gpu_minutes,
            sampled_gpu_minutes = u.sampled_gpu_minutes + excluded.sampled_gpu_minutes,
            active_gpu_minutes = u.active_gpu_minutes + excluded.active_gpu_minutes, simulated = true)
    INSERT INTO usage_hour (booking_id, hour, pool_id, tenant_id, user_id, samples, busy_unit_minutes,
                            active_unit_minutes, memory_max_mib, energy_wh, simulated)
    SELECT id, hr, pool_id, tenant_id, user_id, m::int, round(busy * m * q * 1024) / 1024, round(active * m * q * 1024) / 1024,
           vram * 1024 * (0.2 + 0.7 * busy), (60 + 290 * busy) * m / 60 * q / slices, true
    FROM weighted";
