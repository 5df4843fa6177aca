//! What the last booking attempt led to, shown above the calendar: the
//! booked window (and, when it waits for approval, who must approve), or why
//! it was refused with the next free window as a one-click alternative.

use super::data::MoveBooking;
use crate::model::{BookOutcome, BookingForm, BookingState, MoveOutcome, Suggestion, Window};
use crate::pages::book::{Book, HiddenBooking};
use chrono::{DateTime, Utc};
use leptos::prelude::*;
use leptos_router::params::ParamsMap;

#[derive(Clone, Debug, PartialEq)]
pub enum Banner {
    Booked {
        when: String,
        state: String,
    },
    Refused {
        message: String,
        field: Option<String>,
        suggestion: Option<Suggestion>,
        form: Box<BookingForm>,
        can_wait: bool,
    },
    Waitlisted {
        when: String,
        position: i64,
    },
    /// The attempt never reached a decision: refused as a whole (too much
    /// to send, signed out) or the server could not be asked.
    Failed {
        message: String,
    },
}

impl From<BookOutcome> for Banner {
    fn from(outcome: BookOutcome) -> Self {
        match outcome {
            BookOutcome::Booked { booking, when } => Banner::Booked { when, state: booking.state.as_str().into() },
            BookOutcome::Refused { field, message, suggestion, form, can_wait } => {
                Banner::Refused { message, field, suggestion, form: Box::new(form), can_wait }
            }
            BookOutcome::Waitlisted { entry, when } => {
                Banner::Waitlisted { when, position: entry.position.unwrap_or_default() }
            }
        }
    }
}

impl Banner {
    /// What the last attempt of the booking action led to, refusals of the
    /// whole request included.
    pub fn answered(result: Result<BookOutcome, crate::rpc::RpcError>) -> Banner {
        match result {
            Ok(outcome) => Banner::from(outcome),
            Err(err) => Banner::Failed { message: err.to_string() },
        }
    }

    /// The panel's field a refusal is about, and the sentence said beside it.
    pub fn refused_field(&self) -> Option<crate::model::FormRefusal> {
        match self {
            Banner::Refused { field: Some(field), message, .. } => {
                Some(crate::model::FormRefusal { field: Some(field.clone()), sentence: sentence(Some(field), message) })
            }
            _ => None,
        }
    }

    /// The outcome a script-less form post left in the page's query.
    pub fn from_query(query: &ParamsMap) -> Option<Banner> {
        let get = |key: &str| query.get(key).unwrap_or_default();
        if query.get("booked").is_some() {
            return Some(Banner::Booked { when: get("booked_when"), state: get("booked_state") });
        }
        if let Some(when) = query.get("waitlisted") {
            return Some(Banner::Waitlisted { when, position: get("waitlisted_position").parse().unwrap_or_default() });
        }
        let message = query.get("refused")?;
        let time = |key: &str| get(key).parse::<DateTime<Utc>>().ok();
        let suggestion = match (time("suggest_start"), time("suggest_end")) {
            (Some(start), Some(end)) => Some(Suggestion { window: Window { start, end }, when: get("suggest_when") }),
            _ => None,
        };
        let form = BookingForm {
            pool_id: get("pool_id").parse().unwrap_or_default(),
            kind: get("kind"),
            quantity: get("quantity").parse().unwrap_or(1),
            start: get("start"),
            end: get("end"),
            tz: String::new(),
            mode: get("mode"),
            image: get("image"),
            note: get("note"),
            waitlist: false,
        };
        let can_wait = query.get("can_wait").is_some();
        Some(Banner::Refused { message, field: query.get("field"), suggestion, form: Box::new(form), can_wait })
    }
}

#[component]
/// `key`: the rendering's idempotency key; each form here posts its own
/// variant of it, so a double click books once.
pub fn OutcomeBanner(banner: Banner, action: ServerAction<Book>, tz: String, key: String) -> impl IntoView {
    match banner {
        Banner::Booked { when, state } => {
            let pending = state == BookingState::Pending.as_str();
            view! {
                <div class="outcome ok" role="status" id="outcome">
                    <strong>"Booked: "</strong> {when} " · " <span class=format!("badge state-{state}")>{state.clone()}</span>
                    {pending.then(|| view! { <p>"Waiting for approval by an admin of this pool; you will see it change here and in My bookings."</p> })}
                    <p class="persistence">"Your home (/home/jovyan) and model cache (/models) are there with last "
                        "session's files and models, and are kept after this one; everything else in the session ends "
                        "with the window."</p>
                    " " <a href="/bookings">"See My bookings"</a>
                </div>
            }
            .into_any()
        }
        Banner::Waitlisted { when, position } => view! {
            <div class="outcome ok" role="status" id="outcome">
                <strong>"On the waitlist: "</strong> {when} " · position " {position}
                <p>"When this window has room, it is booked for you automatically, first come first served. It leaves the list when the window starts."</p>
                " " <a href="/bookings#waitlist">"See your waitlist"</a>
            </div>
        }
        .into_any(),
        Banner::Failed { message } => view! {
            <div class="outcome refused" role="alert" id="outcome">
                <strong>"Not booked: "</strong> {message}
            </div>
        }
        .into_any(),
        // A refusal of a field is announced by the sentence beside it
        // (`role=alert` there); the banner, which adds what to do instead,
        // is not a second alert.
        Banner::Refused { message, field, suggestion, form, can_wait } => view! {
            <div class="outcome refused" role=field.is_none().then_some("alert") id="outcome">
                <strong>"Not booked: "</strong> {sentence(field.as_deref(), &message)}
                {can_wait.then(|| view! { <JoinWaitlist action form=(*form).clone() tz=tz.clone() key=format!("{key}-waitlist")/> })}
                {suggestion.map(|s| {
                    let when = s.when.clone();
                    view! {
                        <div class="suggestion">
                            "The earliest window of the same length that fits is " <strong>{s.when.clone()}</strong> "."
                            <ActionForm action attr:class="inline">
                                <HiddenBooking key=format!("{key}-suggestion") form=BookingForm {
                                    start: s.window.start.to_rfc3339(),
                                    end: s.window.end.to_rfc3339(),
                                    tz: tz.clone(),
                                    waitlist: false,
                                    ..(*form).clone()
                                }/>
                                <button class="button" type="submit" id="book-suggestion">{format!("Book {when} instead")}</button>
                            </ActionForm>
                        </div>
                    }
                })}
            </div>
        }
        .into_any(),
    }
}

/// The refused request again, asking to wait for exactly its window.
#[component]
fn JoinWaitlist(action: ServerAction<Book>, form: BookingForm, tz: String, key: String) -> impl IntoView {
    view! {
        <div class="suggestion">
            "Or wait for exactly this window: you are booked automatically if room frees before it starts."
            <ActionForm action attr:class="inline">
                <HiddenBooking form=BookingForm { tz, waitlist: true, ..form } key/>
                <button class="button secondary" type="submit" id="join-waitlist">"Join the waitlist"</button>
            </ActionForm>
        </div>
    }
}

/// What moving or resizing a booking on the grid led to; a refusal for
/// capacity offers the earliest window of the new length that fits.
#[component]
pub fn MoveBanner(outcome: MoveOutcome, action: ServerAction<MoveBooking>, tz: String) -> impl IntoView {
    match outcome {
        MoveOutcome::Moved { when } => view! {
            <div class="outcome ok" role="status" id="outcome"><strong>"Moved: "</strong> {when}</div>
        }
        .into_any(),
        MoveOutcome::Refused { booking, message, suggestion } => view! {
            <div class="outcome refused" role="alert" id="outcome">
                <strong>"Not moved: "</strong> {message}
                {suggestion.map(|s| view! {
                    <div class="suggestion">
                        "The earliest window of that length that fits is " <strong>{s.when.clone()}</strong> "."
                        <ActionForm action attr:class="inline">
                            <input type="hidden" name="id" value=booking.to_string()/>
                            <input type="hidden" name="start" value=s.window.start.to_rfc3339()/>
                            <input type="hidden" name="end" value=s.window.end.to_rfc3339()/>
                            <input type="hidden" name="tz" value=tz.clone()/>
                            <button class="button" type="submit" id="move-suggestion">{format!("Move to {} instead", s.when)}</button>
                        </ActionForm>
                    </div>
                })}
            </div>
        }
        .into_any(),
    }
}

/// A refusal about one of the form's fields as a sentence about it, named
/// by its label: "end: must be after the start" reads "Until must be after
/// the start." The API keeps its machine fields; people read this.
fn sentence(field: Option<&str>, message: &str) -> String {
    let label = match field {
        Some("start") => "From",
        Some("end") => "Until",
        Some("quantity") => "Units",
        Some("kind") => "Kind",
        Some("mode") => "Mode",
        Some("image") => "Workspace image",
        Some("note") => "Note",
        _ => return message.to_string(),
    };
    let field = field.unwrap_or_default();
    // The refusal names the field in words ("End must be after the
    // start.", `FieldError`'s text) or, from an older page, by name
    // ("end: must be …"): either way the reason follows it.
    let words = crate::model::field_words(field);
    let after = |name: &str| {
        message.strip_prefix(name).and_then(|rest| rest.strip_prefix(": ").or_else(|| rest.strip_prefix(' ')))
    };
    let reason = after(field).or_else(|| after(&words)).unwrap_or(message);
    crate::model::FormRefusal::about(field, label, reason).sentence
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_refused_field_reads_as_a_sentence_about_its_label() {
        use super::sentence;
        assert_eq!(sentence(Some("end"), "end: must be after the start"), "Until must be after the start.");
        let refused = crate::model::FieldError::new("end", "must be after the start").to_string();
        assert_eq!(sentence(Some("end"), &refused), "Until must be after the start.");
        assert_eq!(
            sentence(Some("end"), "end: is too far after the start: the pool books at most 7 days at a time"),
            "Until is too far after the start: the pool books at most 7 days at a time."
        );
        assert_eq!(sentence(None, "the pool is full"), "the pool is full");
        assert_eq!(sentence(Some("pool_id"), "pool_id: unknown"), "pool_id: unknown");
    }
}
