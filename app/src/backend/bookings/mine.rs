//! "My bookings": the principal's own bookings, live, upcoming and of the
//! last 30 days, each with the ends it can be extended to and, when pending,
//! who may approve it.

use crate::backend::admission::accepted::WAITLIST_REASON;
use crate::backend::error::ServiceResult;
use crate::backend::{
    bookings, calendar::planning, db_now, pools, sessions::kept_until, sessions::session_status, waitlist,
};
use crate::model::{BookingCard, BookingFilter, BookingState, EndOption, MyBookings, Principal, WaitlistLine, Window};
use crate::rules::local_time::local_window;
use crate::rules::local_time::zone;
use chrono::Duration;
use sqlx::PgPool;

pub async fn load(db: &PgPool, principal: &Principal, tz: &str) -> ServiceResult<MyBookings> {
    let now = db_now(db).await?;
    let filter = BookingFilter {
        pool_id: None,
        from: Some(now - Duration::days(30)),
        to: Some(now + Duration::days(400)),
        mine: true,
    };
    let listed = bookings::list(db, principal, &filter).await?;
    let mut page = cards(db, principal, tz, now, listed).await?;
    page.waitlist = waitlist::mine(db, principal)
        .await?
        .into_iter()
        .map(|entry| WaitlistLine { when: local_window(entry.window, tz), entry })
        .collect();
    Ok(page)
}

/// A pool's step as a quick extension reads it: "1 h", "15 min", "1 h 30 min".
fn step_label(step: chrono::Duration) -> String {
    match (step.num_hours(), step.num_minutes() % 60) {
        (0, m) => format!("{m} min"),
        (h, 0) => format!("{h} h"),
        (h, m) => format!("{h} h {m} min"),
    }
}

/// The cards of `listed` (bookings and the extension requests of them),
/// sorted into live, upcoming and past as `now` finds them.
async fn cards(
    db: &PgPool,
    principal: &Principal,
    tz: &str,
    now: chrono::DateTime<chrono::Utc>,
    listed: Vec<crate::model::Booking>,
) -> ServiceResult<MyBookings> {
    let zone = zone(tz);
    // Extension requests show on the card of the booking they extend.
    let (requests, own): (Vec<_>, Vec<_>) = listed.into_iter().partition(|b| b.extends.is_some());
    let request_ids: Vec<uuid::Uuid> = requests.iter().map(|r| r.id).collect();
    let mut rejections = bookings::extension::decisions(db, &request_ids).await?;
    let ids: Vec<uuid::Uuid> = own.iter().map(|b| b.id).collect();
    let mut sessions = session_status::load(db, &ids).await?;
    let mut failures = session_status::failure_reasons(db, &ids).await?;
    let mut idle = crate::backend::sessions::idle_reclaim::card_notes(db, &ids, &zone).await?;
    let mut access = session_status::access_notes(db, &ids).await?;
    let kept = kept_until::kept_until_for(db, &ids).await?;
    let mut maintenance = crate::backend::pools::blackouts::windows::notes(db, &ids, tz).await?;
    let mut cluster_down = crate::backend::sessions::cluster_status::card_notes(db, &ids, &zone).await?;
    let next = crate::backend::sessions::continuation::successors(db, &ids).await?;
    let mut apart = crate::backend::sessions::continuation::cannot_continue(db, &ids).await?;
    let mut rejected = bookings::events::last_decisions(db, &ids, BookingState::Rejected).await?;
    let mut approved = bookings::events::last_decisions(db, &ids, BookingState::Approved).await?;
    let mut made_via = bookings::events::made_via(db, &ids).await?;
    // The series' rules, read only when a card belongs to one.
    let series: Vec<uuid::Uuid> = own.iter().filter_map(|b| b.series).collect();
    let rules: std::collections::HashMap<uuid::Uuid, String> = match series.is_empty() {
        true => Default::default(),
        false => sqlx::query_as("SELECT id, rule FROM booking_series WHERE id = ANY($1)")
            .bind(&series)
            .fetch_all(db)
            .await?
            .into_iter()
            .collect(),
    };
    let pools = pools::list(db, principal).await?;
    let approvers: Vec<String> =
        sqlx::query_scalar("SELECT name FROM app_user WHERE role = 'admin' ORDER BY name LIMIT 10")
            .fetch_all(db)
            .await?;
    let mut page = MyBookings {
        now,
        tz: zone.name().to_string(),
        live: Vec::new(),
        upcoming: Vec::new(),
        past: Vec::new(),
        simulated: false,
        waitlist: Vec::new(),
        me: principal.email.clone(),
    };
    for booking in own {
        let pool = pools.iter().find(|p| p.id == booking.pool_id);
        let label = |end: chrono::DateTime<chrono::Utc>| crate::rules::local_time::local_moment(end, tz);
        let open_request = requests.iter().any(|r| r.extends == Some(booking.id) && r.state == BookingState::Pending);
        // While a request waits, no other end is offered (it would be refused).
        let extend_to = match pool {
            Some(pool) if !open_request => planning::extension_ends(db, pool, &booking, now)
                .await?
                .into_iter()
                .map(|end| EndOption { end, label: label(end) })
                .collect(),
            _ => Vec::new(),
        };
        // The latest request of this booking that is waiting or was refused.
        let extension = requests.iter().rev().filter(|r| r.extends == Some(booking.id)).find_map(|r| match r.state {
            BookingState::Pending => Some(format!("Extension to {} awaits an admin's approval.", label(r.end))),
            BookingState::Rejected => Some(format!(
                "Extension to {} was rejected: {}",
                label(r.end),
                rejections.remove(&r.id).unwrap_or_default()
            )),
            _ => None,
        });
        let decision = match booking.state {
            BookingState::Rejected => rejected.remove(&booking.id).map(|why| format!("Rejected: {why}")),
            // "booked" is the creation event of a pool without approval.
            _ => approved.remove(&booking.id).filter(|comment| !comment.is_empty() && comment != "booked").map(
                |comment| match comment.starts_with(WAITLIST_REASON) {
                    true => "Booked from the waitlist when room freed.".to_string(),
                    false => format!("Approved: {comment}"),
                },
            ),
        };
        let kept_until = (booking.state.holds_capacity() && booking.end > now).then(|| kept.get(&booking.id)).flatten();
        let ends = next.get(&booking.id).map(|(_, _, end)| *end).unwrap_or(booking.end);
        let owner = booking.user_name.as_deref().filter(|_| !booking.mine);
        let persistence =
            kept_until.map(|kept| kept_until::persistence_sentence(owner, kept, (booking.end, ends), &zone));
        let home_note = kept_until.map(|kept| kept_until::ending_now_sentence(owner, kept, &zone));
        let step = pool.map(|p| chrono::Duration::minutes(i64::from(p.rules.granularity_minutes)));
        let extend_by = extend_to
            .first()
            .filter(|o| step.is_some_and(|step| o.end == booking.end + step))
            .map(|o| EndOption { end: o.end, label: format!("+{}", step_label(step.unwrap_or_default())) });
        let continues_into = next
            .get(&booking.id)
            .map(|(_, start, end)| {
                format!(
                    "Continues into your booking of {}: the workspace, what runs in it and its files stay.",
                    local_window(Window { start: *start, end: *end }, tz)
                )
            })
            .or_else(|| apart.remove(&booking.id));
        let maintenance =
            maintenance.remove(&booking.id).filter(|_| booking.state.holds_capacity() && booking.end > now);
        let card = BookingCard {
            maintenance,
            cluster_down: cluster_down.remove(&booking.id),
            continues_into,
            persistence,
            home_note,
            extend_by,
            extension,
            decision,
            when: local_window(Window { start: booking.start, end: booking.end }, tz),
            pool_name: pool.map(|p| p.name.clone()).unwrap_or_else(|| "(pool no longer visible)".into()),
            approvers: if booking.state == BookingState::Pending { approvers.clone() } else { Vec::new() },
            extend_to,
            session: sessions.remove(&booking.id).map(|stored| stored.status),
            failure: failures.remove(&booking.id),
            idle: idle.remove(&booking.id),
            access_note: access.remove(&booking.id).filter(|_| booking.state == BookingState::Active),
            series_rule: booking.series.and_then(|id| rules.get(&id).cloned()),
            batch_queue: None,
            booked_via: made_via.remove(&booking.id).map(|via| format!("Booked {via}.")),
            booking,
        };
        let b = &card.booking;
        if b.state.holds_capacity() && b.start <= now && now < b.end {
            page.live.push(card);
        } else if b.state.holds_capacity() && b.start > now {
            page.upcoming.push(card);
        } else {
            page.past.push(card);
        }
    }
    page.past.reverse();
    Ok(page)
}

/// One booking as My bookings shows it, on its own page: the principal's
/// own or co-owned ones, and any for an admin (who acts on it as an admin).
/// Everyone else, the rest of its tenant included, is told "not found".
pub async fn one(db: &PgPool, principal: &Principal, id: uuid::Uuid, tz: &str) -> ServiceResult<MyBookings> {
    let booking = bookings::get(db, principal, id).await?;
    if !(booking.mine || principal.is_admin()) || booking.extends.is_some() {
        return Err(crate::backend::error::ServiceError::NotFound("booking"));
    }
    let mut listed = bookings::extension_requests(db, principal, id).await?;
    listed.insert(0, booking);
    cards(db, principal, tz, db_now(db).await?, listed).await
}
