//! Answers for forms posted by a browser without JavaScript: such a post is
//! answered with a redirect back to the page it came from, carrying the
//! outcome in the query so the page can show it; with JavaScript the
//! outcome is the server fn's return value.

use crate::model::{BookOutcome, BookingForm};
use leptos::prelude::*;

/// The page a plain (script-less) form post came from, as path and query.
/// `None` when the request came from the hydrated app (which sends no
/// `Accept: text/html`).
pub fn referer() -> Option<String> {
    let parts = use_context::<http::request::Parts>()?;
    let accepts_html =
        parts.headers.get(http::header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|v| v.contains("text/html"));
    if !accepts_html {
        return None;
    }
    let referer = parts.headers.get(http::header::REFERER)?.to_str().ok()?;
    let url = url::Url::parse(referer).ok()?;
    Some(match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_string(),
    })
}

/// Sends a script-less booking post back to its page with the outcome.
/// Whatever the outcome, the form comes back with what was typed in it.
pub fn send_back_outcome(outcome: &BookOutcome, form: &BookingForm) {
    if let Some(back) = referer() {
        redirect_with(&back, &outcome_query(outcome, form), None);
    }
}

fn outcome_query(outcome: &BookOutcome, typed: &BookingForm) -> Vec<(&'static str, String)> {
    let kept = || {
        [
            ("kind", typed.kind.clone()),
            ("quantity", typed.quantity.to_string()),
            ("start", typed.start.clone()),
            ("end", typed.end.clone()),
        ]
    };
    match outcome {
        BookOutcome::Booked { booking, when } => {
            let mut query = vec![
                ("booked", booking.id.to_string()),
                ("booked_when", when.clone()),
                ("booked_state", booking.state.as_str().to_string()),
            ];
            query.extend(kept());
            query
        }
        BookOutcome::Waitlisted { entry, when } => {
            let mut query = vec![
                ("waitlisted", when.clone()),
                ("waitlisted_position", entry.position.unwrap_or_default().to_string()),
            ];
            query.extend(kept());
            query
        }
        BookOutcome::Refused { field, message, suggestion, form, can_wait } => {
            let mut query = vec![
                ("refused", message.clone()),
                ("pool_id", form.pool_id.to_string()),
                ("kind", form.kind.clone()),
                ("quantity", form.quantity.to_string()),
                ("mode", form.mode.clone()),
                ("image", form.image.clone()),
                ("note", form.note.clone()),
                ("start", form.start.clone()),
                ("end", form.end.clone()),
            ];
            if *can_wait {
                query.push(("can_wait", "1".into()));
            }
            if let Some(field) = field {
                query.push(("field", field.clone()));
            }
            if let Some(suggestion) = suggestion {
                query.push(("suggest_start", suggestion.window.start.to_rfc3339()));
                query.push(("suggest_end", suggestion.window.end.to_rfc3339()));
                query.push(("suggest_when", suggestion.when.clone()));
            }
            query
        }
    }
}

/// The zone the browser reported earlier (cookie `berth_tz`), so pages
/// render in it from the first byte on later visits.
pub fn zone_cookie() -> Option<String> {
    cookie("berth_tz")
}

/// A cookie of the request, decoded.
fn cookie(name: &str) -> Option<String> {
    let parts = use_context::<http::request::Parts>()?;
    let cookies = parts.headers.get(http::header::COOKIE)?.to_str().ok()?;
    let value = cookies.split("; ").find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))?;
    url::form_urlencoded::parse(format!("v={value}").as_bytes()).next().map(|(_, decoded)| decoded.into_owned())
}

/// The pool the viewer's calendar showed last (cookie `berth_pool`).
pub fn last_pool() -> Option<uuid::Uuid> {
    cookie("berth_pool")?.parse().ok()
}

/// Remembers the pool the calendar shows, so `/calendar` without a pool
/// opens it next time (a year; it names a pool, nothing secret).
pub fn remember_pool(pool: uuid::Uuid) {
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        let cookie = format!("berth_pool={pool}; Path=/; Max-Age=31536000; SameSite=Lax");
        if let Ok(value) = http::HeaderValue::from_str(&cookie) {
            response.append_header(http::header::SET_COOKIE, value);
        }
    }
}

/// Redirects to `back` with earlier outcome keys replaced by `query`, and
/// scrolled to the element `at` if one is named.
pub fn redirect_with(back: &str, query: &[(&str, String)], at: Option<&str>) {
    let (path, old) = back.split_once('?').unwrap_or((back, ""));
    let mut pairs = url::form_urlencoded::Serializer::new(String::new());
    for (key, value) in url::form_urlencoded::parse(old.as_bytes()) {
        if !OUTCOME_KEYS.contains(&key.as_ref()) {
            pairs.append_pair(&key, &value);
        }
    }
    for (key, value) in query {
        pairs.append_pair(key, value);
    }
    let fragment = at.map(|id| format!("#{id}")).unwrap_or_default();
    leptos_axum::redirect(&format!("{path}?{}{fragment}", pairs.finish()));
}

/// Query keys that carry a booking outcome back to a page without JavaScript,
/// and `confirm`: a confirmation, once answered, is not asked again.
pub const OUTCOME_KEYS: [&str; 25] = [
    "booked",
    "waitlisted",
    "waitlisted_position",
    "can_wait",
    "booked_when",
    "booked_state",
    "refused",
    "field",
    "suggest_start",
    "suggest_end",
    "suggest_when",
    "pool_id",
    "kind",
    "quantity",
    "mode",
    "image",
    "note",
    "start",
    "end",
    "notice",
    "notice_ok",
    "notice_field",
    "notice_reason",
    "notice_at",
    "confirm",
];

/// The zone a page writes times in: the one it asked for (`?tz=`, or the
/// browser's on the visit that first learns it), else the one the reader
/// chose in Settings, else the one this browser reported earlier (cookie),
/// else UTC ("").
pub async fn reader_zone(tz: String) -> String {
    if !tz.is_empty() {
        return tz;
    }
    if let Some(own) = own_zone().await {
        return own;
    }
    zone_cookie().unwrap_or_default()
}

/// The zone the signed-in reader chose in Settings, if they did.
pub async fn own_zone() -> Option<String> {
    let (Some(principal), ctx) = super::visitor().ok()? else { return None };
    crate::backend::accounts::time_zone::chosen(&ctx.db, &principal).await.ok().flatten()
}
