//! The REST answer as a tool's result: the JSON as its structured content,
//! led by a sentence that says what happened — approved, pending approval
//! or waitlisted, and why — and a refusal as the portal says it, with the
//! earliest window that fits when the one asked for does not.

use super::tools::Tool;
use app::model::{field_words, short_kind, FormRefusal};
use axum::http::StatusCode;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{json, Value};

pub fn result(tool: &Tool, status: StatusCode, body: Value, portal: &url::Url) -> CallToolResult {
    if !status.is_success() {
        let sentence = refusal(status, &body);
        // The REST status too: what the same request answers on `/api/v1`.
        let refused = with(with(body, "sentence", sentence.clone().into()), "status", status.as_u16().into());
        let mut result = CallToolResult::structured_error(refused);
        result.content.insert(0, ContentBlock::text(sentence));
        return result;
    }
    let mut answer = match (tool.list, body) {
        (Some(name), Value::Array(items)) => json!({ name: items }),
        (_, Value::Object(object)) => Value::Object(object),
        (_, other) => json!({ "answer": other }),
    };
    let sentence = said(tool, status, &answer);
    // A booking's page: where its workspace is opened, and its state shown.
    if let (Some(id), Some(_)) = (answer["id"].as_str(), answer["state"].as_str()) {
        if let Ok(page) = portal.join(&format!("bookings/{id}")) {
            answer["portal_url"] = page.to_string().into();
        }
    }
    let mut result = CallToolResult::structured(answer);
    if let Some(sentence) = sentence {
        result.content.insert(0, ContentBlock::text(sentence));
    }
    result
}

fn with(body: Value, key: &str, value: Value) -> Value {
    let mut object = match body {
        Value::Object(object) => object,
        other => serde_json::Map::from_iter([("answer".to_string(), other)]),
    };
    object.insert(key.into(), value);
    Value::Object(object)
}

/// What a booking tool did, in a sentence.
fn said(tool: &Tool, status: StatusCode, answer: &Value) -> Option<String> {
    if let (Some(rule), Some(booked)) = (answer["rule"].as_str(), answer["bookings"].as_array()) {
        return Some(series_said(rule, booked, answer["left_out"].as_array().map(Vec::as_slice).unwrap_or_default()));
    }
    if answer.get("position").is_some() {
        return Some(format!(
            "Waitlisted, not booked: no room for that window now; place {} in line. It is booked \
             automatically when room frees, and leaves the list when the window starts.",
            answer["position"]
        ));
    }
    let (state, start, end) = (answer["state"].as_str()?, answer["start"].as_str()?, answer["end"].as_str()?);
    let what = format!("{} × {}", short_kind(answer["kind"].as_str().unwrap_or_default()), answer["quantity"]);
    let window = format!("{what} from {start} to {end}");
    Some(match (tool.name, state, status) {
        ("book", "approved", _) => format!("Booked {window}: approved."),
        ("book", "pending", _) => format!(
            "Requested {window}: pending, because this pool needs an admin's approval; the units are held \
             until an admin decides."
        ),
        ("extend", _, StatusCode::ACCEPTED) => {
            format!("The extra time waits for an admin's approval (this pool needs it); the booking is {window}.")
        }
        ("extend", _, _) => format!("Extended: the booking is now {window}."),
        ("cancel", _, _) => format!("Canceled: {window}."),
        ("end_now", _, _) => format!("Ended: {window}; its workspace is being torn down."),
        (_, state, _) => format!("{window}: {state}."),
    })
}

/// A booked series: how many, in which states, and what was left out and why.
fn series_said(rule: &str, booked: &[Value], left_out: &[Value]) -> String {
    let count = |state: &str| booked.iter().filter(|b| b["state"] == state).count();
    let (approved, pending) = (count("approved"), count("pending"));
    let mut sentence = format!("Booked a series, {rule}: {} bookings", booked.len());
    if let (Some(first), Some(last)) = (booked.first(), booked.last()) {
        sentence.push_str(&format!(
            ", the first from {} to {}, the last from {} to {}",
            first["start"].as_str().unwrap_or_default(),
            first["end"].as_str().unwrap_or_default(),
            last["start"].as_str().unwrap_or_default(),
            last["end"].as_str().unwrap_or_default()
        ));
    }
    sentence.push_str(&format!("; {approved} approved"));
    if pending > 0 {
        sentence.push_str(&format!(", {pending} pending an admin's approval (this pool needs it)"));
    }
    sentence.push('.');
    if !left_out.is_empty() {
        let each: Vec<String> = left_out
            .iter()
            .map(|o| {
                let why = o["refusal"].as_str().unwrap_or("it does not fit");
                format!("{} ({why})", o["start"].as_str().unwrap_or_default())
            })
            .collect();
        sentence.push_str(&format!(" Not booked, for they do not fit: {}.", each.join("; ")));
    }
    sentence
}

/// A refusal as people read it: the field by its name ("End must be after
/// start."), or the API's message as a sentence, and for a window that
/// has no room, the earliest one of the same length that fits.
fn refusal(status: StatusCode, body: &Value) -> String {
    let message = body["message"].as_str().unwrap_or("the request was refused");
    let mut sentence = match (status, body["field"].as_str()) {
        (StatusCode::UNPROCESSABLE_ENTITY, Some(field)) => {
            let reason = message.strip_prefix(&format!("{field}: ")).unwrap_or(message);
            FormRefusal::about(field, &field_words(field), reason).sentence
        }
        _ => {
            let mut chars = message.chars();
            let first = chars.next().map(|c| c.to_uppercase().collect::<String>()).unwrap_or_default();
            format!("{first}{}{}", chars.as_str(), if message.ends_with('.') { "" } else { "." })
        }
    };
    if let (Some(start), Some(end)) = (body["next_free"]["start"].as_str(), body["next_free"]["end"].as_str()) {
        sentence.push_str(&format!(
            " The earliest window of the same length that fits is {start} to {end}: book that instead."
        ));
    }
    sentence
}
