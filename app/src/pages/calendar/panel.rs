//! The booking panel: a form prefilled with the selected window. It posts
//! to the `book` server fn — through the hydrated app when JavaScript runs,
//! as a plain form post when it does not.

use super::selection::Selection;
use crate::model::CalendarData;
use crate::pages::book::Book;
use crate::pages::counted::CountedText;
use crate::pages::field::Field;
use leptos::prelude::*;
use std::sync::Arc;

/// Up to this many units free, the units are a list to choose from; past
/// it (a pool of many time-sliced shares), a number field.
const MOST_LISTED: i32 = 64;

/// What the panel starts with when no selection fills it: the values a
/// script-less post came back with (every outcome echoes the form).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prefill {
    pub kind: Option<String>,
    pub quantity: Option<i32>,
    pub start: Option<String>,
    pub end: Option<String>,
    pub mode: Option<String>,
    pub image: Option<String>,
    pub note: Option<String>,
    /// The field the last attempt was refused for, and why, said beside it.
    pub refused: Option<crate::model::FormRefusal>,
}

impl Prefill {
    pub fn from_query(query: &leptos_router::params::ParamsMap) -> Self {
        let text = |key: &str| query.get(key).filter(|v| !v.is_empty());
        // Only what a datetime-local input holds ("2026-11-26T09:00"); a
        // window booked from a suggestion comes back as an instant.
        let local = |key: &str| text(key).filter(|v| v.len() == 16 && v.as_bytes()[10] == b'T');
        Prefill {
            kind: text("kind"),
            quantity: text("quantity").and_then(|q| q.parse().ok()),
            start: local("start"),
            end: local("end"),
            mode: text("mode"),
            image: text("image"),
            note: text("note"),
            // The refusal itself comes with the page's banner.
            refused: None,
        }
    }
}

/// What the form holds. The page keeps it, not the panel, so that what was
/// typed survives the calendar's reload after a booking or a refusal.
#[derive(Clone, Copy)]
pub struct Typed {
    kind: RwSignal<String>,
    quantity: RwSignal<i32>,
    start: RwSignal<String>,
    end: RwSignal<String>,
}

impl Typed {
    pub fn new(prefill: &Prefill) -> Self {
        Typed {
            kind: RwSignal::new(prefill.kind.clone().unwrap_or_default()),
            quantity: RwSignal::new(prefill.quantity.unwrap_or(1)),
            start: RwSignal::new(prefill.start.clone().unwrap_or_default()),
            end: RwSignal::new(prefill.end.clone().unwrap_or_default()),
        }
    }
}

#[component]
pub fn BookingPanel(
    data: Arc<CalendarData>,
    selection: RwSignal<Option<Selection>>,
    action: ServerAction<Book>,
    prefill: Prefill,
    typed: Typed,
) -> impl IntoView {
    let Typed { kind, quantity, start, end } = typed;
    // Defaults only where nothing was typed (or a kind this pool lacks).
    if !data.kinds.iter().any(|k| k.kind == kind.get_untracked()) {
        kind.set(data.kinds.first().map(|k| k.kind.clone()).unwrap_or_default());
    }
    if start.get_untracked().is_empty() || end.get_untracked().is_empty() {
        let first_slot = data
            .days
            .iter()
            .find_map(|d| d.slots.iter().position(|s| s.bookable).map(|i| (d.local_start(i), d.local_end(i))));
        let (first_start, first_end) = first_slot.unwrap_or_default();
        start.set(first_start);
        end.set(first_end);
    }
    // A new selection fills the form; the quantity falls to what is free.
    let fill_data = data.clone();
    Effect::new(move |_| {
        let Some(s) = selection.get() else { return };
        let (first, last) = s.range();
        let day = &fill_data.days[s.day];
        start.set(day.local_start(first));
        end.set(day.local_end(last));
        kind.set(fill_data.kinds[s.kind].kind.clone());
        let most = s.max_quantity(&fill_data.cells[s.day][s.kind], &day.slots);
        quantity.update(|q| *q = (*q).clamp(1, most.max(1)));
    });
    // Only what is free across the selected window is offered: up to how many.
    let offer_data = data.clone();
    let most_offered = move || {
        let capacity = offer_data.kinds.iter().find(|k| k.kind == kind.get()).map(|k| k.capacity).unwrap_or(1);
        let most = match selection.get() {
            Some(s) if offer_data.kinds.get(s.kind).is_some_and(|k| k.kind == kind.get()) => {
                s.max_quantity(&offer_data.cells[s.day][s.kind], &offer_data.days[s.day].slots)
            }
            _ => capacity,
        };
        most.max(0)
    };
    let pool = data.pool.clone();
    let images = pool.images.clone();
    let kinds = data.kinds.clone();
    let note = prefill.note.clone().unwrap_or_default();
    let refused = Signal::stored(prefill.refused.clone());
    let chosen_image = prefill.image.clone().unwrap_or_default();
    let chosen_mode = prefill.mode.clone().unwrap_or_else(|| "interactive".into());
    let pending = action.pending();
    view! {
        <section class="panel booking-panel" id="booking-panel" aria-labelledby="panel-title">
            <h2 id="panel-title">"Book a window"</h2>
            <p class="muted">
                {if pool.requires_approval { "Bookings in this pool wait for an admin's approval." } else { "Bookings in this pool are confirmed at once." }}
                " Times are in " {data.tz.clone()} "."
            </p>
            <crate::pages::QuotaSummary pool=pool.name.clone()/>
            <ActionForm action attr:class="booking-form">
                <input type="hidden" name="pool_id" value=pool.id.to_string()/>
                <input type="hidden" name="tz" value=data.tz.clone()/>
                <input type="hidden" name="idempotency_key" value=data.form_key.clone()/>
                <Field form="book" name="kind" label="Kind" said=refused let:aria>
                    <select name="kind" id="book-kind" prop:value=move || kind.get() on:change=move |ev| kind.set(event_target_value(&ev))
                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()>
                        {kinds.iter().map(|k| {
                            let value = k.kind.clone();
                            let selected = kind.get_untracked() == value;
                            // What a unit holds, so nobody books a whole GPU "to be safe".
                            let label = match k.fits.as_str() {
                                "" => format!("{} ({})", k.short, k.kind),
                                fits => format!("{} — {fits}", k.short),
                            };
                            view! { <option value=value.clone() selected=selected>{label}</option> }
                        }).collect_view()}
                    </select>
                </Field>
                <a href="/fit" id="panel-fit-link">"Which kind fits my model? ›"</a>
                <Field form="book" name="quantity" label="Units" said=refused let:aria>
                    {let most_offered = most_offered.clone(); move || match most_offered() {
                        // A pool of many shares is typed, not scrolled through:
                        // a list of a thousand choices helps no one (and was
                        // 30 KB of the page).
                        most if most > MOST_LISTED => view! {
                            <input type="number" name="quantity" id="book-quantity" min="1" max=most.to_string()
                                step="1" required prop:value=move || quantity.get().to_string()
                                on:change=move |ev| quantity.set(event_target_value(&ev).parse().unwrap_or(1))
                                aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                        }.into_any(),
                        most => view! {
                            <select name="quantity" id="book-quantity" prop:value=move || quantity.get().to_string()
                                on:change=move |ev| quantity.set(event_target_value(&ev).parse().unwrap_or(1))
                                aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()>
                                {(1..=most).map(|n| view! {
                                    <option value=n.to_string() selected=move || quantity.get() == n>{n}</option>
                                }).collect_view()}
                            </select>
                        }.into_any(),
                    }}
                </Field>
                <Field form="book" name="start" label="From" said=refused let:aria>
                    <input type="datetime-local" name="start" id="book-start" required
                        value=start.get_untracked() prop:value=move || start.get() on:input=move |ev| start.set(event_target_value(&ev))
                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                </Field>
                <Field form="book" name="end" label="Until" said=refused let:aria>
                    <input type="datetime-local" name="end" id="book-end" required
                        value=end.get_untracked() prop:value=move || end.get() on:input=move |ev| end.set(event_target_value(&ev))
                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                </Field>
                <fieldset class="modes">
                    <legend>"Mode"</legend>
                    <label><input type="radio" name="mode" value="interactive" checked=chosen_mode == "interactive"/>
                        " Interactive — a notebook or IDE workspace with the GPUs attached."</label>
                    <label><input type="radio" name="mode" value="inference" checked=chosen_mode == "inference"/>
                        " Inference — serve a model; the workspace itself requests no GPU."</label>
                </fieldset>
                <Field form="book" name="image" label="Workspace image" said=refused let:aria>
                    <select name="image" id="book-image" aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()>
                        {images.is_empty().then(|| view! { <option value="">"Pool default"</option> })}
                        {images.iter().map(|image| view! {
                            <option value=image.clone() selected=chosen_image == *image>{image.clone()}</option>
                        }).collect_view()}
                    </select>
                </Field>
                <Field form="book" name="note" label="Note" said=refused let:aria>
                    <CountedText name="note" id="book-note" limit=crate::model::NOTE_LIMIT what="a note" rows=2
                        value=note.clone() invalid=aria/>
                </Field>
                <p class="persistence wide muted">{persistence(pool.placement.team_cache_class.is_some())}</p>
                <button class="button" type="submit" id="book-submit" disabled=move || pending.get()>
                    {move || if pending.get() { "Booking…" } else { "Book" }}
                </button>
            </ActionForm>
        </section>
    }
}

/// What outlives a session of this pool, before booking it.
fn persistence(team_cache: bool) -> String {
    let days = crate::model::SITE_RETENTION_DAYS;
    let kept = match team_cache {
        true => format!(
            "Your home (/home/jovyan) is yours across sessions: kept until {days} days after your last one (or as your \
             tenant sets), and /models is your team's shared model cache in this pool."
        ),
        false => format!(
            "Your home (/home/jovyan) and model cache (/models) are yours across sessions: kept until {days} days after \
             your last one (or as your tenant sets; a tenant may keep the cache per session)."
        ),
    };
    format!("{kept} Everything else in the session — what runs, other volumes — ends with the window.")
}
