//! "What is free then": for a window the person gives, every kind of the
//! pools they may book that is free for all of it, or for a part of it at
//! least as long as they asked, and from when.

use crate::backend::error::ServiceResult;
use crate::model::{FreeRow, FreeThenForm, FreeThenPage, Principal, Window};
use crate::rules::local_time::{local_window, parse_local, zone};
use crate::rules::FieldError;
use chrono::{DateTime, Duration, Utc};
use sqlx::PgPool;

/// The form's numbers, or the field at fault.
fn number(field: &str, text: &str, default: i64, range: std::ops::RangeInclusive<i64>) -> Result<i64, FieldError> {
    let value = match text.trim() {
        "" => default,
        text => text.parse().map_err(|_| FieldError::new(field, "must be a whole number"))?,
    };
    if !range.contains(&value) {
        return Err(FieldError::new(field, format!("must be between {} and {}", range.start(), range.end())));
    }
    Ok(value)
}

/// The start of the first step of `granularity` at or after `at`.
fn ceil_to(at: DateTime<Utc>, step: Duration) -> DateTime<Utc> {
    let seconds = step.num_seconds().max(60);
    let t = at.timestamp();
    let up = t.div_euclid(seconds) * seconds + if t.rem_euclid(seconds) == 0 { 0 } else { seconds };
    DateTime::from_timestamp(up, 0).unwrap_or(at)
}

/// The end of the last step of `granularity` at or before `at`.
fn floor_to(at: DateTime<Utc>, step: Duration) -> DateTime<Utc> {
    let seconds = step.num_seconds().max(60);
    DateTime::from_timestamp(at.timestamp().div_euclid(seconds) * seconds, 0).unwrap_or(at)
}

pub async fn page(db: &PgPool, principal: &Principal, form: FreeThenForm, tz: &str) -> ServiceResult<FreeThenPage> {
    let mut page = FreeThenPage {
        form: form.clone(),
        rows: None,
        form_key: uuid::Uuid::new_v4().to_string(),
        tz: zone(tz).name().to_string(),
    };
    if form.from.trim().is_empty() && form.to.trim().is_empty() {
        return Ok(page);
    }
    page.rows = Some(match rows(db, principal, &form, tz).await {
        Ok(rows) => Ok(rows),
        Err(err) if err.can_be_acted_on() => Err(err.public_message()),
        Err(err) => return Err(err),
    });
    Ok(page)
}

async fn rows(db: &PgPool, principal: &Principal, form: &FreeThenForm, tz: &str) -> ServiceResult<Vec<FreeRow>> {
    let start = parse_local("from", &form.from, tz)?;
    let end = parse_local("to", &form.to, tz)?;
    if end <= start {
        return Err(FieldError::new("to", "must be after from").into());
    }
    if end - start > Duration::days(14) {
        return Err(FieldError::new("to", "a window may span at most 14 days").into());
    }
    let at_least = Duration::minutes(number("at_least", &form.at_least, 60, 15..=20_160)?);
    let units = number("units", &form.units, 1, 1..=64)? as i32;
    let memory = number("memory_gb", &form.memory_gb, 0, 0..=10_000)? as i32;
    let window = Window { start, end };
    let mut found = Vec::new();
    for pool in crate::backend::pools::list(db, principal).await? {
        if !crate::backend::pools::may_book(principal, &pool) {
            continue;
        }
        let step = Duration::minutes(i64::from(pool.rules.granularity_minutes));
        for kind in pool.kinds.iter().filter(|k| k.capacity >= units && k.vram_gb_per_unit >= memory) {
            let steps =
                crate::backend::pools::availability(db, principal, pool.id, &kind.kind, Some(start), Some(end)).await?;
            // The longest run of steps with the units free, on the pool's granularity.
            let (mut best, mut run): (Option<Window>, Option<Window>) = (None, None);
            for s in &steps {
                run = match (s.free >= units, run) {
                    (true, Some(r)) if r.end == s.start => Some(Window { start: r.start, end: s.end }),
                    (true, _) => Some(Window { start: s.start, end: s.end }),
                    (false, _) => None,
                };
                if let Some(r) = run {
                    let r = Window { start: ceil_to(r.start, step), end: floor_to(r.end, step) };
                    if r.end > r.start && best.is_none_or(|b| r.end - r.start > b.end - b.start) {
                        best = Some(r);
                    }
                }
            }
            let Some(free) = best.filter(|b| b.end - b.start >= at_least) else { continue };
            found.push(FreeRow {
                pool_id: pool.id,
                pool: pool.name.clone(),
                kind: kind.kind.clone(),
                quantity: units,
                window: free,
                when: local_window(free, tz),
                whole: free == window,
                fits: crate::rules::fit::kind_line_of(kind.vram_gb_per_unit),
            });
        }
    }
    // Whole windows first, then the parts from the earliest.
    found.sort_by_key(|r| (!r.whole, r.window.start, r.pool.clone(), r.kind.clone()));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn parts_of_a_window_keep_to_the_pools_steps() {
        let at = |h, m| Utc.with_ymd_and_hms(2026, 11, 27, h, m, 0).unwrap();
        let quarter = Duration::minutes(15);
        assert_eq!(ceil_to(at(13, 5), quarter), at(13, 15));
        assert_eq!(ceil_to(at(13, 15), quarter), at(13, 15));
        assert_eq!(floor_to(at(17, 59), quarter), at(17, 45));
        assert_eq!(number("units", "", 1, 1..=64), Ok(1));
        assert_eq!(number("units", "0", 1, 1..=64).unwrap_err().field, "units");
        assert_eq!(number("at_least", "two hours", 60, 15..=20_160).unwrap_err().field, "at_least");
    }
}
