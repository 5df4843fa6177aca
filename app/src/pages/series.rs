//! "Book a recurring slot": a day, times and how they repeat; the preview
//! lists each occurrence as fitting or refused (and why), and the user
//! books the ones that fit — all of them at once — or none.

use super::field::Field;
use crate::model::{ActionNotice, Pool, SeriesForm, SeriesPreview};
use crate::pages::said::Alert;
use crate::rpc::RpcError;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

#[server(prefix = "/rpc", endpoint = "series/pools", output = crate::codec::JsonText)]
pub async fn series_pools() -> Result<Vec<Pool>, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let pools = crate::backend::pools::list(&ctx.db, &principal).await?;
    Ok(pools.into_iter().filter(|p| !p.retired).collect())
}

/// The form's fields arrive as they were posted (`pool`, `quantity`, …,
/// `weekdays[]`), one struct rather than ten positions.
#[server(prefix = "/rpc", endpoint = "series/preview", output = crate::codec::JsonText)]
pub async fn preview_series(
    #[server(flatten)] form: SeriesForm,
) -> Result<Result<SeriesPreview, ActionNotice>, RpcError> {
    use crate::backend::bookings::series_form::preview;
    let (principal, ctx) = crate::rpc::ctx()?;
    // A page rendered before the browser's zone was known sent none: the
    // zone it has reported since, not UTC (a series an hour off).
    let form = SeriesForm { tz: crate::rpc::no_script::reader_zone(form.tz).await, ..form };
    // The book form under the preview posts exactly what was previewed.
    let mut echo: Vec<(String, String)> = [
        ("pool", &form.pool),
        ("quantity", &form.quantity),
        ("mode", &form.mode),
        ("date", &form.date),
        ("from", &form.from),
        ("to", &form.to),
        ("repeat", &form.repeat),
        ("until", &form.until),
        ("tz", &form.tz),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_string(), value.clone()))
    .collect();
    echo.extend(form.weekdays.iter().map(|day| ("weekdays[]".to_string(), day.clone())));
    // Booking what was previewed twice (a second click) books it once.
    echo.push(("idempotency_key".to_string(), uuid::Uuid::new_v4().to_string()));
    // A refusal the user can correct is shown beside the form.
    let preview = crate::rpc::beside(preview(&ctx.db, &principal, &form).await)?;
    Ok(preview.map(|preview| SeriesPreview { form: echo, ..preview }))
}

/// The previewed form again, and the occurrences it offered.
#[server(prefix = "/rpc", endpoint = "series/book", output = crate::codec::JsonText)]
pub async fn book_series(
    #[server(flatten)] form: SeriesForm,
    #[server(default)] occurrences: Vec<String>,
    #[server(default)] idempotency_key: String,
) -> Result<ActionNotice, RpcError> {
    use crate::backend::admission::idempotency::once;
    use crate::backend::bookings::series_form::book;
    let (principal, ctx) = crate::rpc::ctx()?;
    let form = SeriesForm { tz: crate::rpc::no_script::reader_zone(form.tz).await, ..form };
    let key = Some(idempotency_key.as_str());
    let asked = (&form, &occurrences);
    let booked = once(&ctx.db, (principal.user_id, key), &asked, book(&ctx.db, &principal, &form, &occurrences)).await;
    crate::rpc::act(booked, |series| {
        format!(
            "Booked {}: {}.",
            crate::model::counted(series.bookings.len() as i64, "occurrence", "occurrences"),
            series.rule
        )
    })
}

#[server(prefix = "/rpc", endpoint = "series/cancel_rest", output = crate::codec::JsonText)]
pub async fn cancel_rest_of_series(
    id: uuid::Uuid,
    from: chrono::DateTime<chrono::Utc>,
) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let canceled = crate::backend::admission::series::cancel_rest(&ctx.db, &principal, id, Some(from)).await;
    crate::rpc::act(canceled, |gone| {
        format!(
            "Canceled {} of the series; the capacity is free again.",
            crate::model::counted(gone.len() as i64, "occurrence", "occurrences")
        )
    })
}

#[component]
pub fn SeriesPage() -> impl IntoView {
    let query = use_query_map();
    let pools = Resource::new(|| (), |_| series_pools());
    let preview = ServerAction::<PreviewSeries>::new();
    let book = ServerAction::<BookSeries>::new();
    // A new preview starts over: the last booking's outcome goes with it.
    Effect::new(move |_| {
        preview.version().get();
        book.value().set(None);
    });
    view! {
        <section class="page-head"><h1>"Book a recurring slot"</h1><a class="button secondary" href="/bookings">"My bookings"</a></section>
        <p class="muted">"The same window every day or on chosen weekdays, up to a last day within the pool's horizon. Each occurrence is admitted on its own under the normal rules: preview first, then book the ones that fit."</p>
        <Transition fallback=|| view! { <p class="loading">"Loading pools…"</p> }>
            {move || pools.get().zip(super::reader_clock()).map(|(result, clock)| match result {
                // Wall-clock times in the reader's zone (`?tz=` names another).
                Ok(pools) => {
                    let tz = query.with(|q| q.get("tz")).unwrap_or(clock.tz);
                    view! { <SeriesInputs pools tz preview/> }.into_any()
                }
                Err(err) => view! { <Alert>"Could not load the pools: " {err.to_string()}</Alert> }.into_any(),
            })}
        </Transition>
        {move || book.value().get().map(|answer| match answer {
            Ok(n) => view! { <div class=if n.ok { "outcome ok" } else { "outcome refused" } role="status" id="series-outcome">{n.message}</div> }.into_any(),
            Err(err) => view! { <Alert>{err.to_string()}</Alert> }.into_any(),
        })}
        // Once booked, the outcome says what was; the plan it came from is done.
        {move || preview.value().get().filter(|_| !book.value().get().is_some_and(|b| b.is_ok_and(|n| n.ok))).map(|answer| match answer {
            Ok(Ok(plan)) => view! { <Plan plan book/> }.into_any(),
            Ok(Err(refused)) => view! { <div class="outcome refused" role="status" id="series-outcome">{refused.message}</div> }.into_any(),
            Err(err) => view! { <Alert>{err.to_string()}</Alert> }.into_any(),
        })}
    }
}

#[component]
fn SeriesInputs(pools: Vec<Pool>, tz: String, preview: ServerAction<PreviewSeries>) -> impl IntoView {
    let options: Vec<(String, String)> = pools
        .iter()
        .flat_map(|p| p.kinds.iter().map(move |k| (format!("{}|{}", p.id, k.kind), format!("{} · {}", p.name, k.kind))))
        .collect();
    let days = crate::model::WEEKDAY_NAMES;
    // The field a preview refused, marked beside its input with its label.
    let refused = Memo::new(move |_| match preview.value().get() {
        Some(Ok(Err(notice))) => notice.field,
        _ => None,
    });
    let field = move |label: &'static str, name: &'static str, kind: &'static str| {
        view! {
            <Field form="series" name label refused=refused let:aria>
                <input type=kind name=name id=format!("series-{name}") required step=(kind == "time").then_some("900")
                    min=(kind == "number").then_some("1") value=(kind == "number").then_some("1")
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
        }
    };
    view! {
        <ActionForm action=preview attr:class="series-form stack">
            <input type="hidden" name="tz" value=tz.clone()/>
            <Field form="series" name="pool" label="Pool and kind" refused=refused let:aria>
                <select name="pool" id="series-pool" required aria-invalid=move || aria.invalid()
                    aria-describedby=move || aria.described_by()>
                    {options.iter().map(|(value, label)| view! { <option value=value.clone()>{label.clone()}</option> }).collect_view()}
                </select>
            </Field>
            {field("Units", "quantity", "number")}
            <Field form="series" name="mode" label="Mode" refused=refused let:aria>
                <select name="mode" id="series-mode" aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()>
                    <option value="interactive">"interactive"</option>
                    <option value="inference">"inference"</option>
                </select>
            </Field>
            {field("First day", "date", "date")}
            {field("From", "from", "time")}
            {field("To", "to", "time")}
            <fieldset>
                <legend>"Repeat"</legend>
                <label><input type="radio" name="repeat" value="weekly" checked/>" weekly on "</label>
                {days.iter().map(|(value, label)| view! {
                    <label class="weekday"><input type="checkbox" name="weekdays[]" value=*value/>" " {*label}</label>
                }).collect_view()}
                <label><input type="radio" name="repeat" value="daily"/>" daily"</label>
            </fieldset>
            {field("Last day", "until", "date")}
            <p class="muted">"Times in " {tz} ", also across a clock change. Weekly with no day ticked repeats on the first day's weekday."</p>
            <button class="button" type="submit">"Preview occurrences"</button>
        </ActionForm>
    }
}

#[component]
fn Plan(plan: SeriesPreview, book: ServerAction<BookSeries>) -> impl IntoView {
    // What is already the booker's is not offered again.
    let fitting: Vec<String> = plan.lines.iter().filter(|l| l.fits && !l.held).map(|l| l.start.to_rfc3339()).collect();
    let count = fitting.len();
    let held = plan.lines.iter().filter(|l| l.held).count();
    view! {
        <section class="series-plan" id="series-plan">
            <h2>"Occurrences: " {plan.rule.clone()}</h2>
            <super::table::TableScroll label="The occurrences"><table class="occurrences">
                <thead><tr><th scope="col">"When"</th><th scope="col">"Verdict"</th></tr></thead>
                <tbody>
                    {plan.lines.into_iter().map(|line| {
                        let (class, verdict) = match (line.held, line.fits) {
                            (true, _) => ("occurrence held", "already yours".to_string()),
                            (false, true) => ("occurrence fits", "fits".to_string()),
                            (false, false) => ("occurrence refused", format!("refused: {}", line.refusal.unwrap_or_default())),
                        };
                        view! { <tr class=class><td>{line.when}</td><td>{verdict}</td></tr> }
                    }).collect_view()}
                </tbody>
            </table></super::table::TableScroll>
            {if count == 0 {
                let none = if held > 0 { "Every occurrence that fits is already yours." } else { "No occurrence fits; change the window or the days." };
                view! { <p class="muted">{none}</p> }.into_any()
            } else {
                view! {
                    <ActionForm action=book attr:class="inline">
                        {plan.form.into_iter().map(|(name, value)| view! { <input type="hidden" name=name value=value/> }).collect_view()}
                        {fitting.into_iter().map(|start| view! { <input type="hidden" name="occurrences[]" value=start/> }).collect_view()}
                        <button class="button" type="submit">{format!("Book the {count} that fit")}</button>
                    </ActionForm>
                    <p class="muted">"Nothing is booked until you do; if one no longer fits by then, none is booked and the reason is shown."</p>
                }.into_any()
            }}
        </section>
    }
}
