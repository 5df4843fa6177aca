//! "What is free then": for a window the person gives, every kind of the
//! pools they may book that is free for all of it, or for a part of it at
//! least as long as they asked, and from when.

use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{duration_text, FormRefusal, FreeRow, FreeThenForm, FreeThenPage, Principal, Window};
use crate::rules::capacity::{align_down, align_up};
use crate::rules::local_time::{local_window, parse_local, zone};
use crate::rules::window as window_rules;
use crate::rules::FieldError;
use chrono::Duration;
use sqlx::PgPool;

/// The form's numbers, or the field at fault; `says` writes a bound as
/// people read it (minutes as hours and days).
fn number(
    field: &str,
    text: &str,
    default: i64,
    range: std::ops::RangeInclusive<i64>,
    says: fn(i64) -> String,
) -> Result<i64, FieldError> {
    let value = match text.trim() {
        "" => default,
        text => text.parse().map_err(|_| FieldError::new(field, "must be a whole number"))?,
    };
    if !range.contains(&value) {
        let (low, high) = (says(*range.start()), says(*range.end()));
        return Err(FieldError::new(field, format!("must be between {low} and {high}")));
    }
    Ok(value)
}

/// Each field's label on the page, to say what is wrong with it.
fn label(field: &str) -> &str {
    match field {
        "from" => "From",
        "to" => "To",
        "at_least" => "At least",
        "units" => "Units",
        "memory_gb" => "GPU memory per unit",
        other => other,
    }
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
        Err(ServiceError::Invalid(e)) => Err(FormRefusal::about(&e.field, label(&e.field), &e.reason)),
        Err(err) if err.can_be_acted_on() => Err(FormRefusal { field: None, sentence: err.public_message() }),
        Err(err) => return Err(err),
    });
    Ok(page)
}

/// What is free in the form's window (the page and `GET /api/v1/free`), or the field at fault.
pub async fn rows(db: &PgPool, principal: &Principal, form: &FreeThenForm, tz: &str) -> ServiceResult<Vec<FreeRow>> {
    let start = parse_local("from", &form.from, tz)?;
    let end = parse_local("to", &form.to, tz)?;
    if end <= start {
        return Err(FieldError::new("to", "must be after From").into());
    }
    if end - start > Duration::days(14) {
        return Err(FieldError::new("to", "must be at most 14 days after From").into());
    }
    let at_least = Duration::minutes(number("at_least", &form.at_least, 60, 15..=20_160, duration_text)?);
    let units = number("units", &form.units, 1, 1..=64, |n| n.to_string())? as i32;
    let memory = number("memory_gb", &form.memory_gb, 0, 0..=10_000, |gb| format!("{gb} GB"))? as i32;
    let window = Window { start, end };
    let now = crate::backend::db_now(db).await?;
    let mut found = Vec::new();
    for pool in crate::backend::pools::list(db, principal).await? {
        if !crate::backend::pools::may_book(principal, &pool) {
            continue;
        }
        // Only what the pool's rules let be booked: from its notice, within
        // its horizon, at most its longest booking, on its steps.
        let rules = &pool.rules;
        let step = window_rules::granularity(rules);
        let open = Window {
            start: start.max(window_rules::earliest_start(rules, now)),
            end: end.min(window_rules::horizon_end(rules, now)),
        };
        if open.end <= open.start {
            continue;
        }
        let longest = Duration::minutes(i64::from(rules.max_booking_minutes));
        for kind in pool.kinds.iter().filter(|k| k.capacity >= units && k.vram_gb_per_unit >= memory) {
            let steps = crate::backend::pools::availability(
                db,
                principal,
                pool.id,
                &kind.kind,
                Some(open.start),
                Some(open.end),
            )
            .await?;
            // The longest run of steps with the units free, on the pool's steps.
            let (mut best, mut run): (Option<Window>, Option<Window>) = (None, None);
            for s in &steps {
                run = match (s.free >= units, run) {
                    (true, Some(r)) if r.end == s.start => Some(Window { start: r.start, end: s.end }),
                    (true, _) => Some(Window { start: s.start, end: s.end }),
                    (false, _) => None,
                };
                if let Some(r) = run {
                    let start = align_up(r.start, step);
                    let r = Window { start, end: align_down(r.end, step).min(start + longest) };
                    if r.end > r.start && best.is_none_or(|b| r.end - r.start > b.end - b.start) {
                        best = Some(r);
                    }
                }
            }
            let Some(free) = best.filter(|b| b.end - b.start >= at_least) else { continue };
            if window_rules::validate_new(rules, kind.capacity, now, free, units).is_err() {
                continue;
            }
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

    #[test]
    fn the_forms_numbers_name_their_field() {
        let plain = |n: i64| n.to_string();
        assert_eq!(number("units", "", 1, 1..=64, plain), Ok(1));
        assert_eq!(number("units", "0", 1, 1..=64, plain).unwrap_err().field, "units");
        assert_eq!(number("at_least", "two hours", 60, 15..=20_160, duration_text).unwrap_err().field, "at_least");
        // Minutes are said as hours and days.
        let long = number("at_least", "30000", 60, 15..=20_160, duration_text).unwrap_err();
        assert_eq!(long.reason, "must be between 15 minutes and 14 days");
    }
}
