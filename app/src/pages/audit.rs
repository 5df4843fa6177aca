//! Admins only: every booking event and admin action, newest first,
//! filtered by user, tenant, pool, action and days (in the reader's zone); paginated,
//! bookings named by whose they are, where and when (in the reader's zone),
//! and the filtered view as CSV.

use crate::model::{AuditFilter, AuditPage, FieldError};
use crate::pages::field::Field;
use crate::pages::said::{Alert, Empty};
use crate::rpc::RpcError;
use chrono::NaiveDate;
use leptos::prelude::*;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;
use leptos_router::params::ParamsMap;

const FILTER_KEYS: [&str; 6] = ["user", "tenant", "pool", "action", "from", "to"];

/// The page's filters as the URL carries them, and its days (`YYYY-MM-DD`,
/// in the reader's zone: the server turns them into instants), or the
/// filter at fault.
fn filter_from(query: &ParamsMap) -> Result<(AuditFilter, Days), FieldError> {
    let text = |key: &str| query.get(key).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let page = match text("page") {
        None => None,
        Some(p) => Some(p.parse::<u32>().map_err(|_| FieldError::new("page", "must be a whole number"))?),
    };
    let filter = AuditFilter {
        user: text("user"),
        tenant: text("tenant"),
        pool: text("pool"),
        action: text("action"),
        from: None,
        to: None,
        page,
    };
    let days = (text("from").unwrap_or_default(), text("to").unwrap_or_default());
    first_and_last(&days)?;
    Ok((filter, days))
}

/// The first and the last day the log shows ("" for open), both included.
type Days = (String, String);

/// The days as dates, refused by the field at fault: the page says it
/// beside the field before asking, and the server checks the same.
fn first_and_last((from, to): &Days) -> Result<(Option<NaiveDate>, Option<NaiveDate>), FieldError> {
    let day = |field: &str, text: &str| match text {
        "" => Ok(None),
        text => NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .map(Some)
            .map_err(|_| FieldError::new(field, "must be a date like 2026-11-23")),
    };
    let (from, to) = (day("from", from)?, day("to", to)?);
    if from.zip(to).is_some_and(|(from, to)| to < from) {
        return Err(FieldError::new("to", "must not be before From"));
    }
    Ok((from, to))
}

/// One page of the log, and the filter with its days as the instants they
/// begin and end in the reader's zone (for the CSV link).
#[server(prefix = "/rpc", endpoint = "admin/audit", output = crate::codec::JsonText)]
pub async fn load_audit(
    filter: AuditFilter,
    #[server(default)] days: Days,
) -> Result<(AuditPage, AuditFilter), RpcError> {
    use chrono::Duration;
    let (principal, ctx) = crate::rpc::ctx()?;
    let tz = crate::rules::local_time::zone(&crate::rpc::no_script::reader_zone(String::new()).await);
    let (from, to) = first_and_last(&days)?;
    let midnight = |day: NaiveDate| crate::rules::local_time::local_midnight(tz, day);
    // The "to" day is included.
    let filter = AuditFilter { from: from.map(midnight), to: to.map(|to| midnight(to + Duration::days(1))), ..filter };
    Ok((crate::backend::audit::page(&ctx.db, &principal, &filter).await?, filter))
}

/// The same filters as a query string for `/api/v1/audit.csv`.
fn csv_link(filter: &AuditFilter) -> String {
    let mut parts = Vec::new();
    for (key, value) in
        [("user", &filter.user), ("tenant", &filter.tenant), ("pool", &filter.pool), ("action", &filter.action)]
    {
        if let Some(v) = value {
            parts.push(format!("{key}={}", super::url::urlencode(v)));
        }
    }
    for (key, value) in [("from", filter.from), ("to", filter.to)] {
        if let Some(at) = value {
            parts.push(format!("{key}={}", super::url::urlencode(&at.to_rfc3339())));
        }
    }
    format!("/api/v1/audit.csv?{}", parts.join("&"))
}

#[component]
pub fn AuditPage() -> impl IntoView {
    let query = use_query_map();
    let filter = Memo::new(move |_| query.with(filter_from));
    let log = Resource::new(
        move || filter.get(),
        |filter| async move {
            match filter {
                Ok((filter, days)) => load_audit(filter, days).await.map_err(|e| e.to_string()),
                Err(refused) => Err(refused.to_string()),
            }
        },
    );
    let value = move |key: &'static str| query.with_untracked(|q| q.get(key).unwrap_or_default());
    // The filters as the URL has them, for the page links.
    let kept = move || {
        query.with(|q| {
            FILTER_KEYS
                .iter()
                .filter_map(|key| q.get(key).map(|v| format!("{key}={}", super::url::urlencode(&v))))
                .collect::<Vec<_>>()
                .join("&")
        })
    };
    // A filter the page cannot use is said beside it (the log waits).
    let refused = Signal::derive(move || filter.with(|f| f.as_ref().err().filter(|e| e.field != "page").cloned()));
    let filter_field = move |label: &'static str, name: &'static str, kind: &'static str, placeholder: &'static str| {
        view! {
            <Field form="audit" name label refused let:aria>
                <input name=name type=kind value=value(name) id=format!("audit-{name}")
                    placeholder=(!placeholder.is_empty()).then_some(placeholder)
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
        }
    };
    view! {
        <section class="page-head"><h1>"Audit log"</h1></section>
        <Form method="GET" action="/admin/audit" attr:class="fields-row" attr:id="audit-filter">
            {filter_field("User email", "user", "email", "")}
            {filter_field("Tenant", "tenant", "text", "")}
            {filter_field("Pool", "pool", "text", "")}
            {filter_field("Action", "action", "text", "booking, quota.set…")}
            {filter_field("From", "from", "date", "")}
            {filter_field("To", "to", "date", "")}
            <button class="button secondary" type="submit">"Filter"</button>
        </Form>
        <Transition fallback=|| view! { <p class="loading">"Loading the log…"</p> }>
            {move || log.get().zip(super::reader_clock()).map(|(result, clock)| match result {
                Ok((page, filter)) => view! { <AuditTable page filter kept=kept() clock/> }.into_any(),
                // Someone not an admin gets the refusal page whatever the
                // filter; an admin's unusable filter is said beside it.
                Err(err) => super::forbidden::refusal(super::forbidden::ADMINS).unwrap_or_else(|| match refused.with(Option::is_some) {
                    true => ().into_any(),
                    false => view! { <Alert>{err}</Alert> }.into_any(),
                }),
            })}
        </Transition>
    }
}

#[component]
fn AuditTable(page: AuditPage, filter: AuditFilter, kept: String, clock: crate::model::Clock) -> impl IntoView {
    let csv = csv_link(&filter);
    let link_to = move |page: u32| format!("/admin/audit?{kept}&page={page}");
    let (prev, next) = (page.page.checked_sub(1).filter(|p| *p >= 1), page.more.then_some(page.page + 1));
    view! {
        <p><a class="button secondary" id="audit-csv" href=csv download="berth-audit.csv">"Download CSV"</a></p>
        {page.entries.is_empty().then(|| view! { <Empty>"No entries match."</Empty> })}
        <table class="bookings" id="audit-list">
            <thead><tr><th>"When (" {clock.tz.clone()} ")"</th><th>"Who"</th><th>"Action"</th><th>"What"</th><th>"Tenant"</th><th>"Pool"</th><th>"Why"</th></tr></thead>
            <tbody>
                {page.entries.into_iter().map(|e| view! {
                    <tr>
                        <td>{clock.when(e.at)}</td>
                        <td>
                            {e.actor.clone().unwrap_or_else(|| "Berth".into())}
                            {crate::model::via_phrase(e.token.as_deref(), e.client.as_deref())
                                .map(|via| view! { <br/><small class="audit-via">{via}</small> })}
                        </td>
                        <td><code>{e.action}</code></td>
                        <td>{
                            let what = match &e.booking {
                                Some(b) => crate::model::booking_phrase(
                                    &b.owner, b.extension, e.pool.as_deref().unwrap_or_default(),
                                    &clock.window(crate::model::Window { start: b.start, end: b.end })),
                                None => e.target.clone(),
                            };
                            match e.link {
                                Some(href) => view! { <a class="audit-target" href=href title=e.target>{what}</a> }.into_any(),
                                None => view! { <span>{what}</span> }.into_any(),
                            }
                        }</td>
                        <td>{e.tenant.unwrap_or_default()}</td>
                        <td>{e.pool.unwrap_or_default()}</td>
                        <td>{clock.localize(&e.detail)}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        <nav class="cal-nav" aria-label="Pages">
            {prev.map(|p| view! { <a class="button secondary" href=link_to.clone()(p)>"‹ Newer"</a> })}
            " page " {page.page} " "
            {next.map(|p| view! { <a class="button secondary" id="audit-next" href=link_to.clone()(p)>"Older ›"</a> })}
        </nav>
    }
}
