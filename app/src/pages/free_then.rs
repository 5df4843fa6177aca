//! `/free`, "What is free then": a window first ("tomorrow 13:00–18:00, at
//! least 2 h"), units and, if it matters, the GPU memory a unit needs; then
//! every kind of the pools the person may book that is free for all of it,
//! and those free for part of it and from when, each one click from booked.
//! A plain GET form and plain posts: it works without JavaScript.

use super::book::{one_click, Book, HiddenBooking};
use super::calendar::outcome::{Banner, OutcomeBanner};
use super::field::Field;
use crate::model::{short_kind, FormRefusal, FreeRow, FreeThenForm, FreeThenPage};
use crate::pages::said::{Alert, Empty};
use crate::rpc::RpcError;
use leptos::prelude::*;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;

#[server(prefix = "/rpc", endpoint = "free_then", output = crate::codec::JsonText)]
pub async fn load_free_then(form: FreeThenForm, tz: String) -> Result<FreeThenPage, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let tz = crate::rpc::no_script::reader_zone(tz).await;
    Ok(crate::backend::calendar::free_then::page(&ctx.db, &principal, form, &tz).await?)
}

#[component]
pub fn WhatIsFreePage() -> impl IntoView {
    let query = use_query_map();
    let book = ServerAction::<Book>::new();
    let page = Resource::new(
        move || (query.get(), book.version().get(), super::viewer_zone(&query)),
        |(q, _, tz)| {
            let text = |key: &str| q.get(key).unwrap_or_default();
            let form = FreeThenForm {
                from: text("from"),
                to: text("to"),
                at_least: text("at_least"),
                units: text("units"),
                memory_gb: text("memory_gb"),
            };
            load_free_then(form, tz)
        },
    );
    let banner = move || book.value().get().map(Banner::answered).or_else(|| query.with(Banner::from_query));
    view! {
        <section class="page-head"><h1>"What is free then"</h1>
            <a class="button secondary" href="/find">"Find a slot"</a></section>
        {super::said::loaded(page, "Could not look: ", move |data| view! { <FreeThenView data book banner=banner()/> })}
    }
}

#[component]
fn FreeThenView(data: FreeThenPage, book: ServerAction<Book>, banner: Option<Banner>) -> impl IntoView {
    let FreeThenPage { form, rows, form_key, tz } = data;
    let zone_note = tz.clone();
    // A refused field says why beside it; the page's own reason, if any, under the form.
    let refusal = Signal::stored(rows.as_ref().and_then(|r| r.as_ref().err()).cloned());
    view! {
        {banner.map(|banner| view! { <OutcomeBanner banner action=book tz=tz.clone() key=form_key.clone()/> })}
        <Form method="GET" action="/free" attr:class="panel free-form fields-row" attr:id="free-form">
            <Field form="free" name="from" label="From" said=refusal let:aria>
                <input type="datetime-local" name="from" id="free-from" value=form.from.clone() required
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
            <Field form="free" name="to" label="To" said=refusal let:aria>
                <input type="datetime-local" name="to" id="free-to" value=form.to.clone() required
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
            <Field form="free" name="at_least" label="At least (minutes)" said=refusal let:aria>
                <input type="number" name="at_least" id="free-at-least" min="15" step="15" value=form.at_least.clone()
                    placeholder="60" aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
            <Field form="free" name="units" label="Units" said=refusal let:aria>
                <input type="number" name="units" id="free-units" min="1" value=form.units.clone() placeholder="1"
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
            <Field form="free" name="memory_gb" label="GPU memory per unit, at least (GB)" said=refusal let:aria>
                <input type="number" name="memory_gb" id="free-memory" min="0" value=form.memory_gb.clone() placeholder="any"
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
            <button class="button" type="submit" id="free-submit">"Show what is free"</button>
            <p class="muted">"Times in " {zone_note} "."</p>
        </Form>
        {rows.map(|rows| match rows {
            Err(FormRefusal { field: Some(_), .. }) => ().into_any(),
            Err(FormRefusal { field: None, sentence }) => view! { <Alert id="free-error">{sentence}</Alert> }.into_any(),
            Ok(rows) => {
                let (whole, part): (Vec<FreeRow>, Vec<FreeRow>) = rows.into_iter().partition(|r| r.whole);
                let list = |id: &'static str, rows: Vec<FreeRow>, none: &'static str| {
                    if rows.is_empty() {
                        return view! { <Empty id=id>{none}</Empty> }.into_any();
                    }
                    view! {
                        <ul class="found free-rows" id=id>
                            {rows.into_iter().enumerate().map(|(i, row)| view! {
                                <FreeLine row book tz=tz.clone() key=format!("{form_key}-{id}-{i}")/>
                            }).collect_view()}
                        </ul>
                    }.into_any()
                };
                view! {
                    <h2>"Free for the whole window"</h2>
                    {list("free-whole", whole, "Nothing is free for all of it.")}
                    <h2>"Free for part of it"</h2>
                    {list("free-part", part, "Nothing else is free for long enough.")}
                }.into_any()
            }
        })}
    }
}

#[component]
fn FreeLine(row: FreeRow, book: ServerAction<Book>, tz: String, key: String) -> impl IntoView {
    let label = format!("Book {} × {} on {}", row.quantity, short_kind(&row.kind), row.pool);
    view! {
        <li>
            <strong>{row.pool.clone()} " · " {short_kind(&row.kind)}</strong> " · " <span class="when">{row.when.clone()}</span>
            {(!row.fits.is_empty()).then(|| view! { <span class="muted">" · " {row.fits.clone()}</span> })}
            <ActionForm action=book attr:class="inline">
                <HiddenBooking form=one_click(row.pool_id, row.kind.clone(), row.quantity, row.window, tz) key/>
                <button class="button" type="submit">{label}</button>
            </ActionForm>
        </li>
    }
}
