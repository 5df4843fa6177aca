//! A text area that says how much of its limit is used as the person types:
//! the browser's `maxlength` alone stops a paste at the limit without a
//! word, and the server refuses longer text.

use leptos::prelude::*;

#[component]
pub fn CountedText(
    name: &'static str,
    id: &'static str,
    /// The most characters the server takes (its check's figure).
    limit: usize,
    /// What the text is, for the counter at the limit: "a note".
    what: &'static str,
    rows: u32,
    value: String,
    /// The field it is drawn in (`Field`), when the server may refuse it:
    /// described by the refusal as well as by its count.
    #[prop(optional)]
    invalid: Option<crate::pages::field::Aria>,
) -> impl IntoView {
    let count = RwSignal::new(value.chars().count());
    let counter = format!("{id}-count");
    let described_by = {
        let counter = counter.clone();
        move || match invalid.and_then(|aria| aria.described_by()) {
            Some(refusal) => format!("{counter} {refusal}"),
            None => counter.clone(),
        }
    };
    view! {
        <textarea name=name id=id maxlength=limit.to_string() rows=rows.to_string() aria-describedby=described_by
            aria-invalid=move || invalid.and_then(|aria| aria.invalid())
            on:input=move |ev| count.set(event_target_value(&ev).chars().count())>{value}</textarea>
        <span class="counter" id=counter class:full={move || count.get() >= limit}>{move || used(count.get(), limit, what)}</span>
    }
}

/// "12 of 1000 characters", and at the limit why typing stops.
fn used(count: usize, limit: usize, what: &str) -> String {
    match count >= limit {
        true => format!("{limit} of {limit} characters: the most {what} holds; the rest was not taken"),
        false => format!("{count} of {limit} characters"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_counter_says_when_text_stops() {
        assert_eq!(super::used(12, 1000, "a note"), "12 of 1000 characters");
        assert_eq!(
            super::used(1000, 1000, "a note"),
            "1000 of 1000 characters: the most a note holds; the rest was not taken"
        );
    }
}
