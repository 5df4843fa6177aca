//! The demo history's label: `make run` seeds a month of made-up bookings
//! and measured use (`berth seed-demo --history`), and every page that
//! sums them says so.

use crate::backend::error::ServiceResult;
use chrono::NaiveDate;
use sqlx::PgPool;

/// "Demo data: …" when this database holds the seeded history.
pub async fn note(db: &PgPool) -> ServiceResult<Option<String>> {
    let days: Option<(NaiveDate, NaiveDate)> =
        sqlx::query_as("SELECT first_day, last_day FROM demo_history").fetch_optional(db).await?;
    Ok(days.map(|(first, last)| {
        format!(
            "Demo data: the bookings from {} to {} and their measured use were made up by `make run` to show \
             these pages; they are marked \"Demo history\".",
            crate::model::day_text(first),
            crate::model::day_text(last)
        )
    }))
}
