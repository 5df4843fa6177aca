//! What open pages poll to stay live: a stamp of everything the viewer's
//! pages show about bookings — their own and co-owned bookings' state
//! changes and the worker's steps, their waitlist entries and the queue
//! ahead of them, and (for admins) how many requests await a decision. The
//! stamp changes whenever any of these does, and only then, so a page
//! refetches its data only after a change; it says nothing about other
//! people's bookings beyond what the viewer's own pages show.

use crate::backend::error::ServiceResult;
use crate::model::Principal;
use sqlx::PgPool;

pub async fn stamp(db: &PgPool, principal: &Principal) -> ServiceResult<String> {
    let mine: String = sqlx::query_scalar(
        "WITH mine AS (
             SELECT id FROM booking WHERE user_id = $1
             UNION SELECT booking_id FROM booking_co_owner WHERE user_id = $1
         ), queues AS (
             SELECT DISTINCT pool_id, kind FROM waitlist_entry WHERE user_id = $1 AND state = 'waiting'
         )
         SELECT concat_ws('/',
             (SELECT max(e.id) FROM booking_event e WHERE e.booking_id IN (SELECT id FROM mine)),
             (SELECT max(s.updated_at)::text FROM session_status s WHERE s.booking_id IN (SELECT id FROM mine)),
             (SELECT string_agg(w.id::text || w.state, ',' ORDER BY w.id)
                FROM waitlist_entry w WHERE w.user_id = $1 AND w.ends_at > now()),
             (SELECT count(*) FROM waitlist_entry w JOIN queues q USING (pool_id, kind) WHERE w.state = 'waiting'))",
    )
    .bind(principal.user_id)
    .fetch_one(db)
    .await?;
    let pending = super::approvals::count(db, principal).await?;
    Ok(format!("{mine}/{pending}"))
}
