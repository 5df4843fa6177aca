//! "Find a slot": kind, quantity, duration, earliest start and latest end →
//! the earliest windows that fit, each one click from being booked.

use super::calendar::data::Book;
use super::calendar::outcome::{Banner, OutcomeBanner};
use crate::model::{short_kind, FoundSlots, Pool};
use leptos::prelude::*;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FindPage {
    pub pools: Vec<Pool>,
    pub pool: Pool,
    pub tz: String,
    /// The form's values, filled with defaults where the query had none.
    pub kind: String,
    pub quantity: i32,
    pub duration_minutes: i64,
    pub earliest: String,
    pub latest: String,
    /// The answer, once the form was sent; `Err` is a refusal to show.
    pub found: Option<Result<FoundSlots, String>>,
}

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
) -> Result<FindPage, ServerFnError> {
    use crate::backend::booking_form::{local_window, parse_time};
    use crate::backend::calendar::{zone, LOCAL_INPUT};
    use crate::backend::identity::{signed_in, to_server_error};
    use crate::model::Suggestion;
    let principal = signed_in().map_err(to_server_error)?;
    let db = expect_context::<sqlx::PgPool>();
    let tz = if tz.is_empty() { super::calendar::data::no_script::zone_cookie().unwrap_or_default() } else { tz };
    let zone = zone(&tz);
    let pools = crate::backend::pools::list(&db, &principal).await.map_err(to_server_error)?;
    let chosen = pool.and_then(|id| pools.iter().find(|p| p.id == id)).or(pools.first()).cloned();
    let Some(chosen) = chosen else { return Err(to_server_error(crate::backend::ServiceError::NotFound("pool"))) };
    let now = crate::backend::db_now(&db).await.map_err(to_server_error)?;
    let asked = kind.is_some();
    let kind = kind.unwrap_or_else(|| chosen.kinds.first().map(|k| k.kind.clone()).unwrap_or_default());
    let quantity = quantity.unwrap_or(1);
    let duration_minutes = duration_minutes.unwrap_or(60);
    let earliest = earliest.unwrap_or_else(|| now.with_timezone(&zone).format(LOCAL_INPUT).to_string());
    let latest = latest
        .unwrap_or_else(|| (now + chrono::Duration::days(7)).with_timezone(&zone).format(LOCAL_INPUT).to_string());
    // Out-of-range input is refused outright (422 naming the field); what a
    // person can fix within range is shown beside the form instead.
    let checked = || -> Result<_, crate::rules::FieldError> {
        Ok((
            crate::rules::window::duration_minutes("duration_minutes", duration_minutes)?,
            parse_time("earliest", &earliest, &tz)?,
            parse_time("latest", &latest, &tz)?,
        ))
    };
    let found = if asked {
        let (duration, from, to) = checked().map_err(|e| to_server_error(e.into()))?;
        let search = async {
            let ask = crate::backend::planning::SlotRequest {
                kind: &kind,
                quantity,
                duration,
                earliest: from,
                latest_end: to,
            };
            crate::backend::planning::find_windows(&db, &chosen, &ask, now).await
        };
        Some(match search.await {
            Ok(windows) => Ok(FoundSlots {
                pool_id: chosen.id,
                pool_name: chosen.name.clone(),
                kind: kind.clone(),
                quantity,
                tz: zone.name().to_string(),
                windows: windows
                    .into_iter()
                    .map(|window| Suggestion { window, when: local_window(window, &tz) })
                    .collect(),
            }),
            Err(err @ (crate::backend::ServiceError::Database(_) | crate::backend::ServiceError::Unavailable)) => {
                return Err(to_server_error(err))
            }
            Err(err) => Err(err.public_message()),
        })
    } else {
        None
    };
    Ok(FindPage {
        pools,
        pool: chosen,
        tz: zone.name().to_string(),
        kind,
        quantity,
        duration_minutes,
        earliest,
        latest,
        found,
    })
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
    let banner =
        move || book.value().get().and_then(|r| r.ok()).map(Banner::from).or_else(|| query.with(Banner::from_query));
    view! {
        <section class="page-head"><h1>"Find a slot"</h1><a class="button secondary" href="/calendar">"Calendar"</a></section>
        <Transition fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || page.get().map(|result| match result {
                Ok(data) => view! { <FindView data book banner=banner()/> }.into_any(),
                Err(err) => view! { <p class="error" role="alert">"Could not search: " {err.to_string()}</p> }.into_any(),
            })}
        </Transition>
    }
}

#[component]
fn FindView(data: FindPage, book: ServerAction<Book>, banner: Option<Banner>) -> impl IntoView {
    let tz = data.tz.clone();
    let pool = data.pool.clone();
    view! {
        {banner.map(|banner| view! { <OutcomeBanner banner action=book tz=tz.clone()/> })}
        <Form method="GET" action="/find" attr:class="panel find-form">
            <input type="hidden" name="tz" value=data.tz.clone()/>
            <label>"Pool"
                <select name="pool">
                    {data.pools.iter().map(|p| view! { <option value=p.id.to_string() selected=p.id == pool.id>{p.name.clone()}</option> }).collect_view()}
                </select>
            </label>
            <label>"Kind"
                <select name="kind" id="find-kind">
                    {pool.kinds.iter().map(|k| view! {
                        <option value=k.kind.clone() selected=k.kind == data.kind>{format!("{} ({} units)", short_kind(&k.kind), k.capacity)}</option>
                    }).collect_view()}
                </select>
            </label>
            <label>"Units" <input type="number" name="quantity" id="find-quantity" min="1" value=data.quantity.to_string()/></label>
            <label>"Duration (minutes)" <input type="number" name="duration_minutes" id="find-duration"
                min=pool.rules.granularity_minutes.to_string() step=pool.rules.granularity_minutes.to_string() value=data.duration_minutes.to_string()/></label>
            <label>"Earliest start" <input type="datetime-local" name="earliest" id="find-earliest" value=data.earliest.clone()/></label>
            <label>"Latest end" <input type="datetime-local" name="latest" id="find-latest" value=data.latest.clone()/></label>
            <button class="button" type="submit" id="find-submit">"Find windows"</button>
            <p class="muted">"Times in " {data.tz.clone()} "."</p>
        </Form>
        {data.found.map(|found| match found {
            Err(message) => view! { <p class="error" role="alert" id="find-error">{message}</p> }.into_any(),
            Ok(slots) if slots.windows.is_empty() => view! {
                <p class="empty" id="find-none">"No window of that length fits between those times. Try a later latest end or fewer units."</p>
            }.into_any(),
            Ok(slots) => view! { <FoundList slots book/> }.into_any(),
        })}
    }
}

#[component]
fn FoundList(slots: FoundSlots, book: ServerAction<Book>) -> impl IntoView {
    let FoundSlots { pool_id, kind, quantity, tz, windows, .. } = slots;
    let label = format!("Book {} × {}", quantity, short_kind(&kind));
    view! {
        <ol class="found" id="found">
            {windows.into_iter().map(|s| {
                let (kind, tz, label) = (kind.clone(), tz.clone(), label.clone());
                view! {
                <li>
                    <strong>{s.when.clone()}</strong>
                    <ActionForm action=book attr:class="inline">
                        <input type="hidden" name="pool_id" value=pool_id.to_string()/>
                        <input type="hidden" name="kind" value=kind/>
                        <input type="hidden" name="quantity" value=quantity.to_string()/>
                        <input type="hidden" name="start" value=s.window.start.to_rfc3339()/>
                        <input type="hidden" name="end" value=s.window.end.to_rfc3339()/>
                        <input type="hidden" name="tz" value=tz/>
                        <input type="hidden" name="mode" value="interactive"/>
                        <button class="button" type="submit">{label}</button>
                    </ActionForm>
                </li>
            }}).collect_view()}
        </ol>
    }
}
