//! Settings: the signed-in user's secret calendar feed (subscribe to it
//! from any calendar app; regenerate to cut off an old URL).

use super::when;
use crate::model::CalendarFeed;
use leptos::prelude::*;

#[cfg(feature = "ssr")]
mod serve {
    pub use crate::backend::calendar_feed::FeedKey;
    pub use crate::backend::identity::{signed_in, to_server_error};
    pub use sqlx::PgPool;
}

#[server(prefix = "/rpc", endpoint = "settings/calendar_feed")]
pub async fn load_calendar_feed() -> Result<CalendarFeed, ServerFnError> {
    use serve::*;
    let principal = signed_in().map_err(to_server_error)?;
    crate::backend::calendar_feed::show(&expect_context::<PgPool>(), &expect_context::<FeedKey>(), &principal)
        .await
        .map_err(to_server_error)
}

#[server(prefix = "/rpc", endpoint = "settings/calendar_feed/regenerate")]
pub async fn regenerate_calendar_feed() -> Result<CalendarFeed, ServerFnError> {
    use serve::*;
    let principal = signed_in().map_err(to_server_error)?;
    crate::backend::calendar_feed::regenerate(&expect_context::<PgPool>(), &expect_context::<FeedKey>(), &principal)
        .await
        .map_err(to_server_error)
}

#[component]
pub fn SettingsPage() -> impl IntoView {
    let regenerate = ServerAction::<RegenerateCalendarFeed>::new();
    let feed = Resource::new(move || regenerate.version().get(), |_| load_calendar_feed());
    view! {
        <section class="page-head"><h1>"Settings"</h1></section>
        <section class="panel">
            <h2>"Calendar feed"</h2>
            <p class="muted">"Subscribe to this address in your calendar app to see your bookings there, "
                "refreshed every 15 minutes. Anyone with the address can read your bookings: keep it private, "
                "and regenerate it if it leaked."</p>
            <Transition fallback=|| view! { <p class="loading">"Loading your feed…"</p> }>
                {move || feed.get().map(|result| match result {
                    Ok(feed) => view! { <FeedView feed/> }.into_any(),
                    Err(err) => view! { <p class="error" role="alert">"Could not load your feed: " {err.to_string()}</p> }.into_any(),
                })}
            </Transition>
            <ActionForm action=regenerate attr:class="inline-form">
                <button class="button secondary" type="submit">"Regenerate the address"</button>
            </ActionForm>
            {move || regenerate.value().get().map(|result| match result {
                Ok(_) => view! { <p class="notice" role="status">"A new address is ready; the old one no longer works."</p> }.into_any(),
                Err(err) => view! { <p class="error" role="alert">{err.to_string()}</p> }.into_any(),
            })}
        </section>
    }
}

#[component]
fn FeedView(feed: CalendarFeed) -> impl IntoView {
    let created = when(feed.created_at);
    view! {
        {match feed.url {
            Some(url) => view! {
                <label for="feed-url">"Your bookings"</label>
                <input id="feed-url" class="feed-url" readonly value=url/>
            }.into_any(),
            None => view! {
                <p class="notice">"This server's calendar key changed since the address was made, so it cannot be "
                    "shown again (it still works). Regenerate to get one you can copy."</p>
            }.into_any(),
        }}
        <p class="muted">"Made " {created} "."</p>
        {(!feed.pools.is_empty()).then(|| view! {
            <h3>"Pool occupancy (admins)"</h3>
            <ul class="pool-feeds">
                {feed.pools.into_iter().map(|p| view! {
                    <li><span>{p.pool.clone()}</span> " "
                        <input class="feed-url" readonly aria-label=format!("Occupancy feed of {}", p.pool) value=p.url/></li>
                }).collect_view()}
            </ul>
        })}
    }
}
