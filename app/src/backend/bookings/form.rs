//! Booking from the portal's forms: local wall-clock times in the viewer's
//! zone become UTC instants, and the booking service's refusals become an
//! outcome the page can show (with the next free window for capacity).

use crate::backend::bookings::{self, Admission};
use crate::backend::calendar::zone;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{BookOutcome, BookingForm, Mode, NewBooking, Principal, Suggestion, Window};
use crate::rules::FieldError;
use chrono::{DateTime, NaiveDateTime, TimeZone, Utc};

/// A form's time: RFC 3339 as is, or local wall-clock time in `tz`. A time
/// that a clock change skips is refused; one it repeats means the first.
pub fn parse_time(field: &'static str, text: &str, tz: &str) -> Result<DateTime<Utc>, FieldError> {
    let text = text.trim();
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        let at = at.with_timezone(&Utc);
        crate::rules::window::check_in_range(field, at)?;
        return Ok(at);
    }
    let local = NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M")
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S"))
        .map_err(|_| FieldError::new(field, "must be a date and time like 2026-11-23T09:15"))?;
    // Checked before the zone is applied: near chrono's limits that would overflow.
    crate::rules::window::check_date_in_range(field, local.date())?;
    let zone = zone(tz);
    zone.from_local_datetime(&local)
        .earliest()
        .map(|at| at.with_timezone(&Utc))
        .ok_or_else(|| FieldError::new(field, format!("does not exist in {} (the clocks change then)", zone.name())))
}

fn new_booking(form: &BookingForm) -> Result<NewBooking, FieldError> {
    let mode = Mode::parse(&form.mode).ok_or_else(|| FieldError::new("mode", "must be interactive or inference"))?;
    Ok(NewBooking {
        pool_id: form.pool_id,
        kind: form.kind.clone(),
        quantity: form.quantity,
        start: parse_time("start", &form.start, &form.tz)?,
        end: parse_time("end", &form.end, &form.tz)?,
        mode,
        image: Some(form.image.trim().to_string()).filter(|i| !i.is_empty()),
        note: form.note.clone(),
        tenant: None,
        waitlist: form.waitlist,
    })
}

/// Books what the form asks for. Refusals the user can act on (a field,
/// capacity) come back as `BookOutcome::Refused`; sign-in, permission,
/// unknown pools and server failures are errors.
pub async fn book(
    admissions: &bookings::Admissions,
    principal: &Principal,
    form: &BookingForm,
) -> ServiceResult<BookOutcome> {
    let new = match new_booking(form) {
        Ok(new) => new,
        Err(field) => return Ok(refused(field.into(), form)),
    };
    match bookings::create(admissions, principal, new).await {
        Ok(Admission::Booked(booking)) => {
            let when = local_window(Window { start: booking.start, end: booking.end }, &form.tz);
            Ok(BookOutcome::Booked { booking, when })
        }
        Ok(Admission::Waitlisted(entry)) => {
            let when = local_window(entry.window, &form.tz);
            Ok(BookOutcome::Waitlisted { entry, when })
        }
        // Who may book where is not a form problem: those keep their status.
        Err(err) if matches!(err.status(), 401 | 403 | 404) || err.status() >= 500 => Err(err),
        Err(err) => Ok(refused(err, form)),
    }
}

/// A window in the viewer's zone: "Mon 23 Nov 09:15–11:00", or with both
/// dates when it spans midnight.
pub fn local_window(window: Window, tz: &str) -> String {
    let zone = zone(tz);
    let (start, end) = (window.start.with_timezone(&zone), window.end.with_timezone(&zone));
    if start.date_naive() == end.date_naive() {
        format!("{}–{}", start.format("%a %d %b %H:%M"), end.format("%H:%M"))
    } else {
        format!("{} – {}", start.format("%a %d %b %H:%M"), end.format("%a %d %b %H:%M"))
    }
}

fn refused(err: ServiceError, form: &BookingForm) -> BookOutcome {
    let message = err.public_message();
    let can_wait = matches!(err, ServiceError::CapacityExceeded { .. } | ServiceError::QuotaExceeded(_));
    let (field, suggestion) = match err {
        ServiceError::Invalid(field) => (Some(field.field), None),
        ServiceError::CapacityExceeded { next_free, .. } => (None, next_free),
        _ => (None, None),
    };
    let suggestion = suggestion.map(|window| Suggestion { window, when: local_window(window, &form.tz) });
    BookOutcome::Refused { field, message, suggestion, form: form.clone(), can_wait }
}

#[cfg(test)]
mod tests {
    use crate::backend::bookings::form::*;

    #[test]
    fn local_times_are_read_in_the_viewers_zone() {
        let at = parse_time("start", "2026-11-23T09:15", "Europe/Berlin").unwrap();
        assert_eq!(at.to_rfc3339(), "2026-11-23T08:15:00+00:00");
        let kathmandu = parse_time("start", "2026-11-23T09:15:00", "Asia/Kathmandu").unwrap();
        assert_eq!(kathmandu.to_rfc3339(), "2026-11-23T03:30:00+00:00");
        let utc = parse_time("end", "2026-11-23T09:15:00Z", "Europe/Berlin").unwrap();
        assert_eq!(utc.to_rfc3339(), "2026-11-23T09:15:00+00:00");
        // Unknown zones read as UTC.
        assert_eq!(
            parse_time("start", "2026-11-23T09:15", "Nowhere").unwrap().to_rfc3339(),
            "2026-11-23T09:15:00+00:00"
        );
    }

    #[test]
    fn skipped_times_are_refused_and_repeated_ones_mean_the_first() {
        let skipped = parse_time("start", "2026-03-29T02:30", "Europe/Berlin").unwrap_err();
        assert_eq!(skipped.field, "start");
        assert!(skipped.reason.contains("clocks change"), "{}", skipped.reason);
        let repeated = parse_time("end", "2026-10-25T02:30", "Europe/Berlin").unwrap();
        assert_eq!(repeated.to_rfc3339(), "2026-10-25T00:30:00+00:00", "the first 02:30 (still summer time)");
        let garbage = parse_time("end", "tomorrow", "UTC").unwrap_err();
        assert_eq!((garbage.field.as_str(), garbage.reason.contains("like")), ("end", true));
    }
}
