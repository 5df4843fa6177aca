//! The requests a batch admitted, as they are written (every booking and
//! its audit event in one statement) and as their callers read them.

use crate::backend::admission::request::Request;
use crate::backend::error::ServiceResult;
use crate::model::{Booking, BookingState};
use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

/// One admitted request, ready to insert: `index` is its place in the batch.
pub(super) struct Accepted {
    pub index: usize,
    pub id: Uuid,
    pub image: String,
    /// Pending where the pool asks for approval, approved elsewhere.
    pub state: BookingState,
}

/// How a booking made from a waitlist entry says so in its audit trail.
pub const WAITLIST_REASON: &str = "admitted from the waitlist";

/// Inserts the accepted bookings and their audit events in one statement.
pub(super) async fn insert(tx: &mut PgConnection, requests: &[&Request], accepted: &[&Accepted]) -> ServiceResult<()> {
    // One array per column, for unnest.
    let (mut pools, mut kinds, mut states) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ids, mut users, mut tenants, mut quantities) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut modes, mut images, mut notes, mut starts, mut ends) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut reasons, mut tokens, mut clients) = (Vec::new(), Vec::new(), Vec::new());
    for a in accepted {
        let r = requests[a.index];
        reasons.push(match r.entry {
            Some(entry) => format!("{WAITLIST_REASON} (entry {entry})"),
            None => "booked".to_string(),
        });
        tokens.push(r.provenance.token);
        clients.push(r.provenance.client.as_str());
        pools.push(r.pool_id);
        kinds.push(r.kind.as_str());
        states.push(a.state.as_str());
        ids.push(a.id);
        users.push(r.principal.user_id);
        tenants.push(r.tenant.id);
        quantities.push(r.quantity);
        modes.push(r.mode.as_str());
        images.push(a.image.as_str());
        notes.push(r.note.as_str());
        starts.push(r.window.start);
        ends.push(r.window.end);
    }
    sqlx::query(
        "WITH b AS (
             INSERT INTO booking (id, pool_id, kind, user_id, tenant_id, quantity, mode, image, note, starts_at, ends_at, state)
             SELECT r.id, r.pool_id, r.kind, r.user_id, r.tenant_id, r.quantity, r.mode, r.image, r.note,
                    r.starts_at, r.ends_at, r.state
             FROM unnest($4::uuid[], $5::uuid[], $6::uuid[], $7::int[], $8::text[], $9::text[], $10::text[],
                         $11::timestamptz[], $12::timestamptz[], $1::uuid[], $2::text[], $3::text[])
                  AS r(id, user_id, tenant_id, quantity, mode, image, note, starts_at, ends_at, pool_id, kind, state)
             RETURNING id, user_id, state
         )
         INSERT INTO booking_event (booking_id, actor_id, from_state, to_state, reason, token_id, client)
         SELECT b.id, b.user_id, NULL, b.state, r.reason, r.token_id, r.client
         FROM b JOIN unnest($4::uuid[], $13::text[], $14::uuid[], $15::text[]) AS r(id, reason, token_id, client)
              ON r.id = b.id",
    )
    .bind(&pools)
    .bind(&kinds)
    .bind(&states)
    .bind(&ids)
    .bind(&users)
    .bind(&tenants)
    .bind(&quantities)
    .bind(&modes)
    .bind(&images)
    .bind(&notes)
    .bind(&starts)
    .bind(&ends)
    .bind(&reasons)
    .bind(&tokens)
    .bind(&clients)
    .execute(tx)
    .await?;
    Ok(())
}

pub(super) fn view(request: &Request, admitted: Accepted, now: DateTime<Utc>) -> Booking {
    Booking {
        id: admitted.id,
        pool_id: request.pool_id,
        kind: request.kind.clone(),
        quantity: request.quantity,
        mode: request.mode,
        state: admitted.state,
        start: request.window.start,
        end: request.window.end,
        mine: true,
        user_email: Some(request.principal.email.clone()),
        user_name: Some(request.principal.name.clone()),
        tenant: Some(request.tenant.slug.clone()),
        image: Some(admitted.image),
        note: Some(request.note.clone()),
        created_at: now,
        extends: None,
        co_owners: Vec::new(),
        co_owned: false,
        series: None,
        warning: None,
    }
}
