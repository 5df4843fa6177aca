//! "Find a slot": kind, quantity, duration, earliest start and latest end →
//! every window that fits on the pool's granularity, each one click from being booked.

use super::book::{one_click, Book, HiddenBooking};
use super::calendar::outcome::{Banner, OutcomeBanner};
use super::field::Field;
use crate::model::{short_kind, FindPage, FoundSlots};
use crate::pages::said::{Alert, Empty};
use crate::rpc::RpcError;
use leptos::prelude::*;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;
use uuid::Uuid;

#[allow(clippy::too_many_arguments)] // one argument per form field
#[server(prefix = "/rpc", endpoint = "find", output = crate::codec::JsonText)]
pub async fn load_find(
    pool: Option<Uuid>,
    kind: Option<String>,
    quantity: Option<i32>,
    duration_minutes: Option<i64>,
    earliest: Option<String>,
    latest: Option<String>,
    tz: String,
) -> Result<FindPage, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let tz = crate::rpc::no_script::reader_zone(tz).await;
    let query = crate::model::FindQuery { pool, kind, quantity, duration_minutes, earliest, latest, tz };
    Ok(crate::backend::calendar::find::page(&ctx.db, &principal, query).await?)
}

#[component]
pub fn FindSlotPage() -> impl IntoView {
    let query = use_query_map();
    let book = ServerAction::<Book>::new();
    let page = Resource::new(
        move || (query.get(), book.version().get(), super::viewer_zone(&query)),
        |(q, _, tz)| {
            let text = |key: &str| q.get(key).filter(|v| !v.is_empty());
            load_find(
                text("pool").and_then(|v| v.parse().ok()),
                text("kind"),
                text("quantity").and_then(|v| v.parse().ok()),
                text("duration_minutes").and_then(|v| v.parse().ok()),
                text("earliest"),
                text("latest"),
                tz,
            )
        },
    );
    let banner = move || book.value().get().map(Banner::answered).or_else(|| query.with(Banner::from_query));
    view! {
        <section class="page-head"><h1>"Find a slot"</h1>
            <a class="button secondary" href="/fit" id="fit-link">"Which kind fits my model?"</a>
            <a class="button secondary" href="/free" id="free-link">"What is free then?"</a>
            <a class="button secondary" href="/calendar">"Calendar"</a></section>
        {super::said::loaded(page, "Could not search: ", move |data| view! { <FindView data book banner=banner()/> })}
    }
}

#[component]
fn FindView(data: FindPage, book: ServerAction<Book>, banner: Option<Banner>) -> impl IntoView {
    let tz = data.tz.clone();
    let pool = data.pool.clone();
    let key = data.form_key.clone();
    // What the form's fields hold (out of range is a 422 for the whole page;
    // a refusal the person can fix is said under the form).
    let (pools, kind, quantity, duration) =
        (data.pools.clone(), data.kind.clone(), data.quantity, data.duration_minutes);
    let (earliest, latest) = (data.earliest.clone(), data.latest.clone());
    let step = pool.rules.granularity_minutes.to_string();
    view! {
        {banner.map(|banner| view! { <OutcomeBanner banner action=book tz=tz.clone() key=key.clone()/> })}
        <Form method="GET" action="/find" attr:class="panel fields-row">
            <input type="hidden" name="tz" value=data.tz.clone()/>
            <Field form="find" name="pool" label="Pool" let:_aria>
                <select name="pool">
                    // The attribute for the page as served; the property too, since once
                    // someone has chosen, a re-rendered attribute no longer moves the choice.
                    {pools.iter().map(|p| view! { <option value=p.id.to_string() selected=p.id == pool.id prop:selected=p.id == pool.id>{p.name.clone()}</option> }).collect_view()}
                </select>
            </Field>
            <Field form="find" name="kind" label="Kind" let:_aria>
                <select name="kind" id="find-kind">
                    {pool.kinds.iter().map(|k| view! {
                        <option value=k.kind.clone() selected=k.kind == kind prop:selected=k.kind == kind>{kind_option(k)}</option>
                    }).collect_view()}
                </select>
            </Field>
            <Field form="find" name="quantity" label="Units" let:_aria>
                <input type="number" name="quantity" id="find-quantity" min="1" value=quantity.to_string()/>
            </Field>
            <Field form="find" name="duration_minutes" label="Duration (minutes)" let:_aria>
                <input type="number" name="duration_minutes" id="find-duration" min=step.clone() step=step.clone()
                    value=duration.to_string()/>
            </Field>
            <Field form="find" name="earliest" label="Earliest start" let:_aria>
                <input type="datetime-local" name="earliest" id="find-earliest" value=earliest.clone()/>
            </Field>
            <Field form="find" name="latest" label="Latest end" let:_aria>
                <input type="datetime-local" name="latest" id="find-latest" value=latest.clone()/>
            </Field>
            <button class="button" type="submit" id="find-submit">"Find windows"</button>
            <p class="muted">"Times in " {data.tz.clone()} "."</p>
        </Form>
        {data.found.map(|found| match found {
            Err(message) => view! { <Alert id="find-error">{message}</Alert> }.into_any(),
            Ok(slots) if slots.windows.is_empty() => view! {
                <Empty id="find-none">"No window of that length fits between those times. Try a later latest end or fewer units."</Empty>
            }.into_any(),
            Ok(slots) => view! { <FoundList slots book key=key.clone()/> }.into_any(),
        })}
    }
}

#[component]
pub(super) fn FoundList(slots: FoundSlots, book: ServerAction<Book>, key: String) -> impl IntoView {
    let FoundSlots { pool_id, kind, quantity, tz, windows, .. } = slots;
    let label = format!("Book {} × {}", quantity, short_kind(&kind));
    view! {
        <ol class="found" id="found">
            {windows.into_iter().enumerate().map(|(i, s)| {
                let (kind, tz, label) = (kind.clone(), tz.clone(), label.clone());
                let key = format!("{key}-{i}");
                view! {
                <li>
                    <strong>{s.when.clone()}</strong>
                    <ActionForm action=book attr:class="inline">
                        <HiddenBooking form=one_click(pool_id, kind, quantity, s.window, tz) key/>
                        <button class="button" type="submit">{label}</button>
                    </ActionForm>
                </li>
            }}).collect_view()}
        </ol>
    }
}

/// A kind as Find a slot lists it: its name, units, memory and one line of
/// what fits ("MIG 1g.24gb (4 units) · 24 GB · inference of an 8B model …").
fn kind_option(k: &crate::model::PoolKind) -> String {
    let name = format!("{} ({})", short_kind(&k.kind), crate::model::counted(k.capacity, "unit", "units"));
    match crate::rules::fit::kind_line_of(k.vram_gb_per_unit) {
        fits if fits.is_empty() => name,
        fits => format!("{name} · {fits}"),
    }
}
