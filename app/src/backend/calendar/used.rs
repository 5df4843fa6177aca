//! How much of the booked time was really used: the calendar's thin bar
//! under a booking's block. Active unit-minutes (the sampler's, at the
//! site's threshold) over the unit-minutes booked so far; a booking with
//! nothing sampled gets no bar (unknown is not idle). A live booking also
//! says how many of its units were idle in its last sampled minute.

use crate::backend::error::ServiceResult;
use crate::model::{Booking, UsedBar};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

/// The minute after which a live booking's last sample no longer says
/// what it does now (the sampler runs every minute).
const FRESH_MINUTES: i32 = 5;

/// The bars of `bookings` that have begun by `now`, by booking, in one
/// statement. `full`: the viewer sees whose booking it is (admins).
pub async fn bars(db: &PgPool, bookings: &[Booking], now: DateTime<Utc>) -> ServiceResult<HashMap<Uuid, UsedBar>> {
    let begun: Vec<&Booking> =
        bookings.iter().filter(|b| b.start <= now && (b.mine || b.user_name.is_some())).collect();
    if begun.is_empty() {
        return Ok(HashMap::new());
    }
    let ids: Vec<Uuid> = begun.iter().map(|b| b.id).collect();
    let rows: Vec<(Uuid, f64, bool, Option<f64>)> = sqlx::query_as(
        "SELECT h.booking_id, sum(h.active_unit_minutes)::float8, bool_or(h.simulated),
                (SELECT 1 - m.active_devices::float8 / m.devices FROM usage_minute m
                 WHERE m.booking_id = h.booking_id AND m.minute > $2 - make_interval(mins => $3)
                 ORDER BY m.minute DESC LIMIT 1)
         FROM usage_hour h WHERE h.booking_id = ANY($1) GROUP BY h.booking_id",
    )
    .bind(&ids)
    .bind(now)
    .bind(FRESH_MINUTES)
    .fetch_all(db)
    .await?;
    let by_id: HashMap<Uuid, &Booking> = begun.iter().map(|b| (b.id, *b)).collect();
    Ok(rows
        .into_iter()
        .filter_map(|(id, active, simulated, idle_share)| {
            let b = by_id.get(&id)?;
            Some((id, bar(b, now, active, idle_share, simulated)))
        })
        .collect())
}

/// `active`: the booking's active unit-minutes; `idle_share`: the share of
/// its devices idle in its last fresh minute, if it is live.
fn bar(b: &Booking, now: DateTime<Utc>, active: f64, idle_share: Option<f64>, simulated: bool) -> UsedBar {
    let booked_minutes = (b.end.min(now) - b.start).num_seconds() as f64 / 60.0 * f64::from(b.quantity);
    let pct = if booked_minutes > 0.0 { (active / booked_minutes * 100.0).round().clamp(0.0, 100.0) } else { 0.0 };
    let live = b.start <= now && now < b.end;
    UsedBar {
        pct: pct as u8,
        idle_units: match idle_share {
            Some(share) if live => (share * f64::from(b.quantity)).round() as i32,
            _ => 0,
        },
        who: (!b.mine).then(|| b.user_name.clone()).flatten(),
        simulated,
        ended: now >= b.end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, TimeZone};

    fn booking(quantity: i32, hours: i64, mine: bool) -> Booking {
        let start = Utc.with_ymd_and_hms(2026, 11, 27, 9, 0, 0).unwrap();
        Booking {
            id: Uuid::nil(),
            pool_id: Uuid::nil(),
            kind: "nvidia.com/gpu".into(),
            quantity,
            mode: crate::model::Mode::Interactive,
            state: crate::model::BookingState::Active,
            start,
            end: start + Duration::hours(hours),
            mine,
            user_email: None,
            user_name: (!mine).then(|| "Ada Lovelace".to_string()),
            tenant: None,
            image: None,
            note: None,
            created_at: start,
            extends: None,
            co_owners: Vec::new(),
            co_owned: false,
            series: None,
            warning: None,
        }
    }

    #[test]
    fn used_time_is_active_over_booked_so_far() {
        let b = booking(2, 4, true);
        // Two hours in: 2 units × 120 min booked so far, 60 active unit-minutes.
        let now = b.start + Duration::hours(2);
        let bar = bar(&b, now, 60.0, Some(0.5), false);
        assert_eq!((bar.pct, bar.idle_units, bar.who.as_deref()), (25, 1, None));
        assert_eq!(bar.text(), "25 % of the booked time so far was used · 1 booked unit idle now");
        // Ended: the whole window counts, and nothing is idle "now".
        let after = b.end + Duration::hours(1);
        let bar = super::bar(&b, after, 240.0, Some(1.0), true);
        assert_eq!((bar.pct, bar.idle_units), (50, 0));
        assert_eq!(bar.text(), "50 % of the booked time was used (simulated)", "not 'so far' once ended");
    }

    #[test]
    fn an_admin_is_told_whose_booking_it_is() {
        let b = booking(1, 1, false);
        let bar = bar(&b, b.end, 60.0, None, false);
        assert_eq!(bar.pct, 100);
        assert_eq!(bar.text(), "Ada Lovelace: 100 % of the booked time was used");
    }
}
