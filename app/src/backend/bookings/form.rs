//! Booking from the portal's forms: local wall-clock times in the viewer's
//! zone become UTC instants, and the booking service's refusals become an
//! outcome the page can show (with the next free window for capacity).

use crate::backend::admission::{self, Admission};
use crate::backend::bookings;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{BookOutcome, BookingForm, Mode, NewBooking, Principal, Suggestion, Window};
use crate::rules::local_time::{local_window, parse_local};
use crate::rules::FieldError;

fn new_booking(form: &BookingForm) -> Result<NewBooking, FieldError> {
    let mode = Mode::parse(&form.mode).ok_or_else(|| FieldError::new("mode", "must be interactive or inference"))?;
    Ok(NewBooking {
        pool_id: form.pool_id,
        kind: form.kind.clone(),
        quantity: form.quantity,
        start: parse_local("start", &form.start, &form.tz)?,
        end: parse_local("end", &form.end, &form.tz)?,
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
    admissions: &admission::AdmissionQueue,
    principal: &Principal,
    form: &BookingForm,
) -> ServiceResult<BookOutcome> {
    let new = match new_booking(form) {
        Ok(new) => new,
        Err(field) => return Ok(refused(field.into(), form)),
    };
    match admission::create(admissions, principal, new).await {
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

/// Moves one's booking to the window the calendar's drag (or keyboard)
/// chose, RFC 3339 or as `tz` reads a `datetime-local`; refusals the user
/// can act on come back as `MoveOutcome::Refused`, with the next free window
/// for capacity.
pub async fn move_to(
    db: &sqlx::PgPool,
    principal: &Principal,
    id: uuid::Uuid,
    (start, end, tz): (&str, &str, &str),
) -> ServiceResult<crate::model::MoveOutcome> {
    use crate::model::MoveOutcome;
    let window = crate::rules::local_time::parse_local("start", start, tz)
        .and_then(|start| Ok(Window { start, end: crate::rules::local_time::parse_local("end", end, tz)? }));
    let moved = match window {
        Ok(window) => bookings::reschedule(db, principal, id, window).await,
        Err(field) => Err(field.into()),
    };
    match moved {
        Ok(booking) => {
            Ok(MoveOutcome::Moved { when: local_window(Window { start: booking.start, end: booking.end }, tz) })
        }
        Err(err) if matches!(err.status(), 401 | 403 | 404) || err.status() >= 500 => Err(err),
        Err(err) => {
            let message = err.public_message();
            let suggestion = match err {
                ServiceError::CapacityExceeded { next_free, .. } => next_free,
                _ => None,
            };
            let suggestion = suggestion.map(|window| Suggestion { window, when: local_window(window, tz) });
            Ok(MoveOutcome::Refused { booking: id, message, suggestion })
        }
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
