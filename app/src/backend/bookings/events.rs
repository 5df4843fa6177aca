//! The audit trail of bookings: one row per state change (and per
//! extension), who made it (`None`: the system) and why.

use crate::backend::error::ServiceResult;
use crate::backend::provenance::Provenance;
use crate::model::{via_phrase, BookingState};
use sqlx::{PgConnection, PgPool};
use std::collections::HashMap;
use uuid::Uuid;

/// Records a change; `from` is `None` when the booking was just created.
/// The token and client it was made through are the request's own.
pub async fn record(
    conn: &mut PgConnection,
    booking_id: Uuid,
    actor: Option<Uuid>,
    from: Option<BookingState>,
    to: BookingState,
    reason: &str,
) -> ServiceResult<()> {
    let via = Provenance::current();
    sqlx::query(
        "INSERT INTO booking_event (booking_id, actor_id, from_state, to_state, reason, token_id, client)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(booking_id)
    .bind(actor)
    .bind(from.map(BookingState::as_str))
    .bind(to.as_str())
    .bind(reason)
    .bind(via.token)
    .bind(&via.client)
    .execute(conn)
    .await?;
    Ok(())
}

/// For each of `ids` made through an API token or a named client: how
/// (`model::via_phrase`), read from its creation event.
pub async fn made_via(db: &PgPool, ids: &[Uuid]) -> ServiceResult<HashMap<Uuid, String>> {
    let rows: Vec<(Uuid, Option<String>, String)> = sqlx::query_as(
        "SELECT e.booking_id, CASE WHEN e.token_id IS NOT NULL THEN coalesce(t.name, '') END, e.client
         FROM booking_event e LEFT JOIN api_token t ON t.id = e.token_id
         WHERE e.booking_id = ANY($1) AND e.from_state IS NULL AND (e.token_id IS NOT NULL OR e.client <> '')",
    )
    .bind(ids)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(id, token, client)| Some((id, via_phrase(token.as_deref(), Some(&client))?)))
        .collect())
}

/// For each of `ids` that reached `state`: the reason of its last event
/// there, the notes recorded while in it ("moved to …", a session's step)
/// included.
pub async fn last_reasons(db: &PgPool, ids: &[Uuid], state: BookingState) -> ServiceResult<HashMap<Uuid, String>> {
    reasons(db, ids, state, false).await
}

/// For each of `ids` that reached `state`: why it was moved there (an
/// admin's comment), never a note recorded while it stayed there.
pub async fn last_decisions(db: &PgPool, ids: &[Uuid], state: BookingState) -> ServiceResult<HashMap<Uuid, String>> {
    reasons(db, ids, state, true).await
}

async fn reasons(
    db: &PgPool,
    ids: &[Uuid],
    state: BookingState,
    changes_only: bool,
) -> ServiceResult<HashMap<Uuid, String>> {
    let rows: Vec<(Uuid, String)> = sqlx::query_as(
        "SELECT DISTINCT ON (booking_id) booking_id, reason FROM booking_event
         WHERE booking_id = ANY($1) AND to_state = $2 AND NOT ($3 AND from_state IS NOT DISTINCT FROM to_state)
         ORDER BY booking_id, at DESC, id DESC",
    )
    .bind(ids)
    .bind(state.as_str())
    .bind(changes_only)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().collect())
}
