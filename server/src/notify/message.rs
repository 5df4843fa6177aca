//! What each event says: a subject and a plain-text body (the HTML part is
//! the same text, escaped, with its links made clickable) and the webhook's
//! JSON. Times are in the recipient's zone (Settings; a webhook's, the
//! pool's), named.

use super::outbox::Due;
use crate::web::plain_page::escape;
use app::backend::sessions::kept_until::{persistence_sentence, KeptUntil};
use app::model::{short_kind, Kept};
use chrono::DateTime;
use serde_json::{json, Value};

pub struct Message {
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// The booking's card on the portal.
pub fn booking_url(base: &str, due: &Due) -> String {
    format!("{}/bookings#booking-{}", base.trim_end_matches('/'), due.booking_id)
}

fn local(due: &Due, t: chrono::DateTime<chrono::Utc>) -> chrono::DateTime<chrono_tz::Tz> {
    t.with_timezone(&app::rules::local_time::zone(&due.time_zone))
}

fn at(due: &Due, t: chrono::DateTime<chrono::Utc>) -> String {
    local(due, t).format("%a %Y-%m-%d %H:%M %Z").to_string()
}

/// "lab-h100 MIG 1g.24gb ×3, Tue 2026-12-01 09:00 – 12:00 CET" (the end's
/// date only when it is another day).
fn what(due: &Due) -> String {
    let (start, end) = (local(due, due.starts_at), local(due, due.ends_at));
    let end_format = if start.date_naive() == end.date_naive() { "%H:%M %Z" } else { "%a %Y-%m-%d %H:%M %Z" };
    format!(
        "{} {} ×{}, {} – {}",
        due.pool,
        short_kind(&due.kind),
        due.quantity,
        start.format("%a %Y-%m-%d %H:%M"),
        end.format(end_format)
    )
}

/// What outlives the session and what ends with it, in the recipient's zone.
fn persistence(due: &Due) -> String {
    let ends = due.continues_until.unwrap_or(due.ends_at);
    let owner = Some(due.owner_name.as_str()).filter(|_| due.recipient_email.as_deref() != Some(&due.owner_email));
    let kept = KeptUntil::of((due.home_kept_until, due.cache_kept_until, due.team_cache), due.cache_kept);
    let zone = app::rules::local_time::zone(&due.time_zone);
    persistence_sentence(owner, &kept, (due.ends_at, ends), &zone)
}

/// What an expiring kept volume is (the notification's detail), its
/// deletion date and "30 days": how long after the last session's end it is kept.
fn expiring(due: &Due) -> (Kept, chrono::DateTime<chrono::Utc>, String) {
    let purpose = Kept::parse(&due.detail).unwrap_or_default();
    let until = match purpose {
        Kept::Home => due.home_kept_until,
        Kept::Cache => due.cache_kept_until,
    };
    let days = (until - due.ends_at).num_days();
    (purpose, until, format!("{days} day{}", if days == 1 { "" } else { "s" }))
}

/// Events about what the cluster provisioned or measured: on the simulated
/// cluster their mails say so, since no workspace runs there.
const ABOUT_THE_CLUSTER: [&str; 5] =
    ["booking.starting", "workspace.ready", "booking.idle", "booking.failed", "session.stuck"];

/// `simulated`: the worker provisions on the in-memory simulated cluster.
pub fn render(base: &str, due: &Due, simulated: bool) -> Message {
    let base = base.trim_end_matches('/');
    let card = booking_url(base, due);
    let what = what(due);
    let comment = |label: &str| match due.detail.trim() {
        "" => String::new(),
        text => format!("\n{label}: {text}"),
    };
    let (subject, body) = match due.event.as_str() {
        "booking.pending" => (
            format!("Approval wanted: {} ({})", what, due.tenant),
            format!(
                "{} <{}> of {} asks for {what}.\n\nDecide at {base}/admin/approvals (booking {}).",
                due.owner_name, due.owner_email, due.tenant, due.booking_id
            ),
        ),
        "booking.approved" => {
            (format!("Approved: {what}"), format!("Your booking is approved: {what}.{}\n\n{card}", comment("Comment")))
        }
        "booking.rejected" => {
            (format!("Rejected: {what}"), format!("Your booking was rejected: {what}.{}\n\n{card}", comment("Comment")))
        }
        "waitlist.promoted" => (
            format!("Booked from the waitlist: {what}"),
            format!("Room freed up and your waitlist entry is now a booking: {what}.\n\n{card}"),
        ),
        "booking.starting" => (
            format!("Starts at {}: {}", at(due, due.starts_at), due.pool),
            format!("Your window starts soon: {what}.\nThe workspace is prepared at the start.\n\n{card}"),
        ),
        "booking.ending" if due.continues_until.is_some() => (
            format!("Continues into your next booking: {}", due.pool),
            format!(
                "Your window ends soon and your session continues into your next booking: {what}.\n{}\n\n{card}",
                persistence(due)
            ),
        ),
        "booking.ending" => {
            let extend = match due.free_after {
                Some(free) if free >= due.quantity => {
                    format!("\nThe hour after it is free: extend it at {card}")
                }
                _ => "\nThe time after it is booked by others.".to_string(),
            };
            (
                format!("Ends at {}: {}", at(due, due.ends_at), due.pool),
                format!(
                    "Your window ends soon: {what}.\n{} Save what you need to keep in /home/jovyan.{extend}\n\n{card}",
                    persistence(due)
                ),
            )
        }
        "workspace.ready" => (
            format!("Workspace ready: {}", due.pool),
            format!(
                "Your workspace is ready: {what}.\nOpen it at {base}/bookings/{}/open\n{}\n\n{card}",
                due.booking_id,
                persistence(due)
            ),
        ),
        "booking.failed" => (
            format!("Failed: {what}"),
            format!("Your session could not be prepared: {what}.{}\n\n{card}", comment("Reason")),
        ),
        "booking.idle" => (
            format!("Idle GPUs: {}", due.pool),
            format!(
                "The GPUs of your live booking have been idle: {what}.\nUse them or end the booking; \
                 idle bookings of this pool are ended early.\n\n{card}"
            ),
        ),
        "session.stuck" => (
            format!("Stuck terminating: {}", due.detail),
            format!(
                "The session of this booking ended, but its namespace {} is still terminating after 2 minutes: \
                 a pod or finalizer that will not go may still hold its GPUs, which Berth counts as free. \
                 Check it with `kubectl get pods,pvc -n {}` and its finalizers.\n{what}\n\n{card}",
                due.detail, due.detail
            ),
        ),
        "booking.maintenance" => {
            // The detail is "<start>|<end>|<reason>" (see `blackouts::create`).
            let mut parts = due.detail.splitn(3, '|');
            let instant =
                |text: Option<&str>| text.and_then(|t| DateTime::parse_from_rfc3339(t).ok()).map(|t| t.to_utc());
            let (start, end) = (instant(parts.next()), instant(parts.next()));
            let reason = parts.next().unwrap_or_default();
            let note = match start.zip(end) {
                Some((start, end)) => app::backend::pools::blackouts::windows::kept_inside(
                    app::model::Window { start, end },
                    reason,
                    &due.time_zone,
                ),
                None => format!("Maintenance on this pool ({reason}) overlaps this booking."),
            };
            (format!("Maintenance during your booking: {}", due.pool), format!("{note}\n{what}\n\n{card}"))
        }
        "home.expiring" => {
            let (purpose, until, retention) = expiring(due);
            let on = local(due, until).format("%a %-d %b %Y").to_string();
            let (name, what_in) = match purpose {
                Kept::Home => ("home", "everything in it"),
                Kept::Cache => ("model cache", "the models in it"),
            };
            (
                format!("Your {name} is deleted on {on}"),
                format!(
                    "Your Berth {name} ({} in every session of yours) is kept until {on}, {retention} after your \
                     last session ended ({what}), and is then deleted with {what_in}. A session of yours \
                     before then keeps it; copy out what you need otherwise. You can delete it sooner in \
                     Settings: {base}/settings",
                    purpose.mount()
                ),
            )
        }
        other => (format!("Berth: {other}"), format!("{what}\n\n{card}")),
    };
    let (subject, body) = match simulated && ABOUT_THE_CLUSTER.contains(&due.event.as_str()) {
        true => (
            format!("{subject} (simulated cluster)"),
            format!(
                "{body}\n\nThis portal runs on a simulated cluster: no workspace runs and GPU use is simulated; \
                 its link shows what would be opened."
            ),
        ),
        false => (subject, body),
    };
    let html = format!(
        "<html><body><pre style=\"font-family: sans-serif; white-space: pre-wrap\">{}</pre></body></html>",
        linkify(&escape(&body))
    );
    Message { subject, text: body, html }
}

/// The webhook's body: the event, its delivery id (also the
/// `X-Berth-Delivery` header) and the booking as the API shows it.
pub fn webhook_body(base: &str, due: &Due) -> Value {
    json!({
        "event": due.event,
        "delivery": due.id,
        "detail": due.detail,
        "booking": {
            "id": due.booking_id,
            "pool": due.pool,
            "kind": due.kind,
            "quantity": due.quantity,
            "start": due.starts_at,
            "end": due.ends_at,
            "state": due.state,
            "tenant": due.tenant,
            "owner": due.owner_email,
            "url": booking_url(base, due),
        },
        "extend_free": due.free_after.map(|free| free >= due.quantity),
    })
}

/// Escaped text with each http(s) word as a link.
fn linkify(escaped: &str) -> String {
    let word = |word: &str| {
        let core = word.trim_end_matches('.');
        if core.starts_with("http://") || core.starts_with("https://") {
            format!("<a href=\"{core}\">{core}</a>{}", &word[core.len()..])
        } else {
            word.to_string()
        }
    };
    escaped.lines().map(|line| line.split(' ').map(word).collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n")
}
