//! `POST /bookings`: the checks that need no database, then the request joins
//! its pool+kind's admission queue (see `queue.rs`) and waits for the verdict.

use crate::backend::admission::admit::Admission;
use crate::backend::admission::queue::AdmissionQueue;
use crate::backend::admission::request::Request;
use crate::backend::error::{ServiceError, ServiceResult};
use crate::model::{NewBooking, Principal, TenantRef, Window};
use crate::rules::window::check_not_empty;
use crate::rules::FieldError;

/// The tenant the booking is made for: the named one, or the principal's only one.
pub fn booking_tenant<'p>(principal: &'p Principal, asked: Option<&str>) -> ServiceResult<&'p TenantRef> {
    match (asked, principal.tenants.as_slice()) {
        (Some(slug), tenants) => tenants
            .iter()
            .find(|t| t.slug == slug)
            .ok_or_else(|| FieldError::new("tenant", format!("you are not a member of {slug}")).into()),
        (None, []) => Err(ServiceError::Forbidden("you belong to no tenant yet; ask your admin to add you to one")),
        (None, [only]) => Ok(only),
        (None, _) => Err(FieldError::new("tenant", "you belong to several tenants; say which one to book for").into()),
    }
}

/// Books the window, or with `waitlist` set and no room for it (capacity or
/// the tenant's quota), puts the request on the waitlist.
pub async fn create(admissions: &AdmissionQueue, principal: &Principal, new: NewBooking) -> ServiceResult<Admission> {
    if new.note.chars().count() > crate::model::NOTE_LIMIT {
        return Err(FieldError::new("note", format!("must be at most {} characters", crate::model::NOTE_LIMIT)).into());
    }
    let tenant = booking_tenant(principal, new.tenant.as_deref())?.clone();
    let window = Window { start: new.start, end: new.end };
    check_not_empty(window)?;
    admissions
        .submit(Request {
            principal: principal.clone(),
            tenant,
            pool_id: new.pool_id,
            kind: new.kind,
            quantity: new.quantity,
            mode: new.mode,
            image: new.image,
            note: new.note,
            window,
            join_waitlist: new.waitlist,
            entry: None,
            provenance: crate::backend::provenance::Provenance::current(),
        })
        .await
}
