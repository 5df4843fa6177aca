//! The agenda (the coming bookings of one pool, day by day; a phone's
//! calendar) and the month (each day's share booked and one's own
//! bookings). Plain lists and a table of links: complete without
//! JavaScript, read by the keyboard and screen readers as they are.

use super::data::load_span;
use super::{PoolPicker, ViewSwitch};
use crate::model::{CalendarSpan, MonthDay, SpanKind};
use crate::pages::said::Alert;
use crate::pages::url::urlencode;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

#[component]
pub fn SpanPage(kind: SpanKind) -> impl IntoView {
    let query = use_query_map();
    let view_name = match kind {
        SpanKind::Agenda => "agenda",
        SpanKind::Month => "month",
    };
    let span = Resource::new(
        move || {
            let (pool, date) = query.with(|q| (q.get("pool"), q.get("date").and_then(|d| d.parse().ok())));
            (pool, date, crate::pages::viewer_zone(&query))
        },
        move |(pool, date, tz)| load_span(pool, date, view_name.to_string(), tz),
    );
    view! {
        <Transition fallback=|| view! { <p class="loading">"Loading the calendar…"</p> }>
            {move || span.get().map(|result| match result {
                Ok(data) => view! { <SpanView data/> }.into_any(),
                Err(err) => view! { <Alert>"Could not load the calendar: " {err.to_string()}</Alert> }.into_any(),
            })}
        </Transition>
    }
}

#[component]
fn SpanView(data: CalendarSpan) -> impl IntoView {
    let view_name = match data.kind {
        SpanKind::Agenda => "agenda",
        SpanKind::Month => "month",
    };
    let (pool, tz) = (data.pool.id, data.tz.clone());
    let link = {
        let tz = tz.clone();
        move |date: chrono::NaiveDate| {
            format!("/calendar?pool={pool}&date={date}&view={view_name}&tz={}", urlencode(&tz))
        }
    };
    let body = match data.kind {
        SpanKind::Agenda => view! { <Agenda data=data.clone()/> }.into_any(),
        SpanKind::Month => view! { <Month data=data.clone()/> }.into_any(),
    };
    view! {
        <section class="page-head calendar-head">
            <h1>{data.pool.name.clone()} <span class="muted">" · " {data.title.clone()}</span></h1>
            <nav class="cal-nav" aria-label="Calendar navigation">
                <a class="button secondary" id="prev" href=link(data.prev)>"‹ Previous"</a>
                <a class="button secondary" id="today" href=link(data.today)>"Today"</a>
                <a class="button secondary" id="next" href=link(data.next)>"Next ›"</a>
            </nav>
        </section>
        <ViewSwitch pool date=data.date tz=tz.clone() current=view_name/>
        <PoolPicker pools=data.pools.clone() current=pool view=view_name tz=tz.clone()/>
        {body}
    }
}

#[component]
fn Agenda(data: CalendarSpan) -> impl IntoView {
    let week = format!("/calendar?pool={}&view=week&tz={}", data.pool.id, urlencode(&data.tz));
    if data.agenda.is_empty() {
        return view! {
            <p id="agenda-empty">"Nothing is booked in these two weeks. " <a href=week>"Book on the week grid"</a></p>
        }
        .into_any();
    }
    view! {
        <section id="agenda" aria-label="Coming bookings">
            {data.agenda.into_iter().map(|day| {
                let heading = format!("agenda-{}", day.date);
                view! {
                    <h2 class="agenda-day" id=heading.clone()>{day.label}</h2>
                    <ul class="agenda-list" aria-labelledby=heading>
                        {day.entries.into_iter().map(|e| {
                            let class = if e.mine { "agenda-entry mine" } else { "agenda-entry others" };
                            view! {
                                <li class=class>
                                    <span class="when">{e.when}</span>
                                    <span class="what">{e.what}</span>
                                    {match e.booking {
                                        Some(id) => view! { <a class="title" href=format!("/bookings/{id}")>{e.title}</a> }.into_any(),
                                        None => view! { <span class="title">{e.title}</span> }.into_any(),
                                    }}
                                    <span class="state muted">{e.state}</span>
                                </li>
                            }
                        }).collect_view()}
                    </ul>
                }
            }).collect_view()}
        </section>
    }
    .into_any()
}

#[component]
fn Month(data: CalendarSpan) -> impl IntoView {
    let (pool, tz) = (data.pool.id, urlencode(&data.tz));
    let day_link = move |d: &MonthDay| format!("/calendar?pool={pool}&date={}&view=day&tz={tz}", d.date);
    view! {
        <div class="table-scroll">
        <table class="month" id="month">
            <caption>"Each day: the share of the pool booked, and your bookings. A day opens its slots."</caption>
            <thead><tr>
                {["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map(|d| view! { <th scope="col">{d}</th> }).collect_view()}
            </tr></thead>
            <tbody>
                {data.weeks.into_iter().map(|week| view! {
                    <tr>
                        {week.into_iter().map(|d| {
                            let class = format!(
                                "month-day{}{}{}",
                                if d.in_month { "" } else { " other-month" },
                                if d.today { " today" } else { "" },
                                if d.past { " past" } else { "" },
                            );
                            let name = format!(
                                "{}: {} % booked{}",
                                // The visible day number, unpadded, inside the name.
                                d.date.format("%a %-d %b"),
                                d.booked_pct,
                                match d.mine.len() {
                                    0 => String::new(),
                                    1 => ", 1 booking of yours".to_string(),
                                    n => format!(", {n} bookings of yours"),
                                }
                            );
                            view! {
                                <td class=class aria-current=d.today.then_some("date")>
                                    <a class="day-link" href=day_link(&d) aria-label=name>{d.day}</a>
                                    <span class="booked-bar" aria-hidden="true">
                                        <span class=format!("booked-fill fill-{}", u32::from(d.booked_pct) / 5 * 5)></span>
                                    </span>
                                    <ul class="month-mine">
                                        {d.mine.into_iter().map(|m| view! { <li>{m}</li> }).collect_view()}
                                    </ul>
                                </td>
                            }
                        }).collect_view()}
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        </div>
    }
}
