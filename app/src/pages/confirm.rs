//! A destructive action asks first. Its button opens a `<dialog>` with the
//! question and the real form; without JavaScript the button is a link-like
//! form to the booking's page (`/bookings/{id}?confirm=cancel`), where the
//! same dialog is rendered open. Nothing happens until "Yes" is pressed.

use leptos::prelude::*;
use uuid::Uuid;

/// What `?confirm=` names on a booking's page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asked {
    Cancel,
    CancelSeries,
    End,
}

impl Asked {
    pub fn as_str(self) -> &'static str {
        match self {
            Asked::Cancel => "cancel",
            Asked::CancelSeries => "cancel-series",
            Asked::End => "end",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Asked::Cancel, Asked::CancelSeries, Asked::End].into_iter().find(|asked| asked.as_str() == text)
    }
}

/// The button `label` for `asked` on booking `booking`; `children` is the
/// form that acts (its submit button says "Yes, …"). `open`: the page was
/// asked for this confirmation (`?confirm=`), so the dialog shows at once.
#[component]
pub fn Confirm(
    booking: Uuid,
    asked: Asked,
    label: &'static str,
    question: String,
    open: bool,
    children: Children,
) -> impl IntoView {
    view! {
        <AskFirst page=format!("/bookings/{booking}") asked=asked.as_str() key=booking.to_string()
            label question open keep="Keep it" danger=false>
            {children()}
        </AskFirst>
    }
}

/// Any destructive action's question: the button `label` opens a dialog
/// asking `question`, with `children` (the form that acts) and a way back
/// (`keep`). Without JavaScript the button goes to `page?confirm=asked`,
/// where the page renders the same dialog `open`.
#[component]
pub fn AskFirst(
    page: String,
    asked: &'static str,
    /// Tells this dialog from others of the same kind on the page.
    key: String,
    label: &'static str,
    question: String,
    open: bool,
    keep: &'static str,
    /// The opening button looks dangerous (a pool's deletion).
    danger: bool,
    children: Children,
) -> impl IntoView {
    let dialog = NodeRef::<leptos::html::Dialog>::new();
    let ask = move |ev: leptos::ev::SubmitEvent| {
        #[cfg(feature = "hydrate")]
        if let Some(dialog) = dialog.get() {
            ev.prevent_default();
            let _ = dialog.show_modal();
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = ev;
    };
    // Whatever was submitted inside (the action, or "Keep it") closes it.
    let close = move |_: leptos::ev::SubmitEvent| {
        #[cfg(feature = "hydrate")]
        if let Some(dialog) = dialog.get() {
            dialog.close();
        }
    };
    let id = format!("confirm-{asked}-{key}");
    let class = if danger { "button danger" } else { "button secondary" };
    view! {
        <form method="get" action=page class="inline" on:submit=ask>
            <input type="hidden" name="confirm" value=asked/>
            <button class=class type="submit" data-asks=asked>{label}</button>
        </form>
        <dialog node_ref=dialog class="confirm" id=id.clone() open=open aria-labelledby=format!("{id}-question") on:submit=close>
            <p id=format!("{id}-question")>{question}</p>
            <div class="confirm-actions">
                {children()}
                <form method="dialog" class="inline">
                    <button class="button secondary" type="submit" autofocus>{keep}</button>
                </form>
            </div>
        </dialog>
    }
}
