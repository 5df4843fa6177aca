//! The recurring-booking form: a day and times on the viewer's wall clock
//! become a series request in the viewer's zone; its preview comes back in
//! the viewer's words.

use crate::backend::admission::series;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{
    BookedSeries, Mode, NewSeries, OccurrenceLine, Principal, Repeat, SeriesForm, SeriesPreview, Window,
};
use crate::rules::local_time::{local_window, parse_local, zone};
use crate::rules::FieldError;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::PgPool;
use uuid::Uuid;

fn day(field: &'static str, text: &str) -> Result<NaiveDate, FieldError> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
        .map_err(|_| FieldError::new(field, "must be a date like 2026-11-30"))
}

fn request(form: &SeriesForm, occurrences: Option<Vec<DateTime<Utc>>>) -> Result<NewSeries, FieldError> {
    let (pool, kind) = form.pool.split_once('|').ok_or_else(|| FieldError::new("pool", "choose a pool and kind"))?;
    let pool_id: Uuid = pool.parse().map_err(|_| FieldError::new("pool", "choose a pool and kind"))?;
    let mode = Mode::parse(&form.mode).ok_or_else(|| FieldError::new("mode", "must be interactive or inference"))?;
    let repeat = match form.repeat.as_str() {
        "daily" => Repeat::Daily,
        "weekly" => Repeat::Weekly,
        _ => return Err(FieldError::new("repeat", "must be daily or weekly")),
    };
    let first = day("date", &form.date)?;
    let start = parse_local("from", &format!("{first}T{}", form.from.trim()), &form.tz)?;
    let end = parse_local("to", &format!("{first}T{}", form.to.trim()), &form.tz)?;
    // Said, not guessed: an end at or before the start was once read as the
    // next morning, and 10:00 to 09:00 became 23-hour windows.
    if end <= start {
        return Err(FieldError::new("to", "must be after From, on the same day"));
    }
    Ok(NewSeries {
        pool_id,
        kind: kind.to_string(),
        quantity: form.quantity.trim().parse().map_err(|_| FieldError::new("quantity", "must be a whole number"))?,
        start,
        end,
        mode,
        image: None,
        note: String::new(),
        tenant: None,
        repeat,
        weekdays: form.weekdays.clone(),
        until: day("until", &form.until)?,
        time_zone: Some(zone(&form.tz).name().to_string()),
        occurrences,
    })
}

/// Each occurrence with its verdict, nothing written.
pub async fn preview(db: &PgPool, principal: &Principal, form: &SeriesForm) -> ServiceResult<SeriesPreview> {
    let plan = series::preview(db, principal, &request(form, None)?).await.map_err(in_form_words)?;
    let lines = plan
        .occurrences
        .into_iter()
        .map(|o| OccurrenceLine {
            start: o.start,
            when: local_window(Window { start: o.start, end: o.end }, &form.tz),
            fits: o.fits,
            refusal: o.refusal,
            held: o.held,
        })
        .collect();
    Ok(SeriesPreview { rule: plan.rule, lines, form: Vec::new() })
}

/// Books exactly the occurrences the preview offered (their starts, RFC 3339).
pub async fn book(
    db: &PgPool,
    principal: &Principal,
    form: &SeriesForm,
    occurrences: &[String],
) -> ServiceResult<BookedSeries> {
    let starts = occurrences
        .iter()
        .map(|s| DateTime::parse_from_rfc3339(s).map(|at| at.with_timezone(&Utc)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| FieldError::new("occurrences", "preview the series again"))?;
    series::book(db, principal, &request(form, Some(starts))?).await.map_err(in_form_words)
}

/// The series rules name the first window's times as the API does, start
/// and end; this form's inputs are From and To, and a refusal is marked on
/// the input it concerns (a window too long for a series was not).
fn in_form_words(error: ServiceError) -> ServiceError {
    match error {
        ServiceError::Invalid(mut refused) => {
            let input = match refused.field.as_str() {
                "start" => "from",
                "end" => "to",
                _ => return ServiceError::Invalid(refused),
            };
            refused.field = input.to_string();
            ServiceError::Invalid(refused)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_that_are_no_whole_number_are_refused_as_units() {
        let form = SeriesForm {
            pool: format!("{}|nvidia.com/gpu", Uuid::nil()),
            quantity: "two".into(),
            mode: "interactive".into(),
            date: "2026-12-01".into(),
            from: "09:00".into(),
            to: "10:00".into(),
            repeat: "daily".into(),
            until: "2026-12-03".into(),
            tz: "Europe/Berlin".into(),
            ..SeriesForm::default()
        };
        let refused = request(&form, None).unwrap_err();
        assert_eq!((refused.field.as_str(), refused.reason.as_str()), ("quantity", "must be a whole number"));
        let fine = request(&SeriesForm { quantity: " 2 ".into(), ..form }, None).unwrap();
        assert_eq!((fine.quantity, fine.repeat), (2, Repeat::Daily));
    }

    #[test]
    fn the_rules_start_and_end_are_this_forms_from_and_to() {
        let said = |field: &str| match in_form_words(FieldError::new(field, "must be after start").into()) {
            ServiceError::Invalid(refused) => refused.field,
            other => panic!("{other:?}"),
        };
        assert_eq!((said("start"), said("end"), said("until")), ("from".into(), "to".into(), "until".into()));
        assert!(matches!(in_form_words(ServiceError::NotFound("pool")), ServiceError::NotFound("pool")));
    }
}
