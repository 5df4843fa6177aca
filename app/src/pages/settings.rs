//! Settings: the zone times are written in (`time_zone`), the signed-in
//! user's secret calendar feed (subscribe to it from any calendar app;
//! regenerate to cut off an old URL), and what they are notified of, by
//! email and by their webhooks.

use super::field::Field;
use crate::model::{CalendarFeed, NewWebhook, NotificationSettings, EVENTS};
use crate::pages::said::Alert;
use crate::rpc::RpcError;
use leptos::prelude::*;
use uuid::Uuid;

/// Why a narrower token is not shown the feed's link.
#[cfg(feature = "ssr")]
const FEED_NEEDS_FULL: &str =
    "The calendar feed's link outlives any token: it is shown to a signed-in browser or a token that may do everything";

#[server(prefix = "/rpc", endpoint = "settings/calendar_feed", output = crate::codec::JsonText)]
pub async fn load_calendar_feed() -> Result<CalendarFeed, RpcError> {
    let (principal, ctx) = crate::rpc::full(FEED_NEEDS_FULL)?;
    Ok(crate::backend::calendar::feed::show(&ctx.db, &ctx.feed_key, &principal).await?)
}

#[server(prefix = "/rpc", endpoint = "settings/calendar_feed/regenerate", output = crate::codec::JsonText)]
pub async fn regenerate_calendar_feed() -> Result<CalendarFeed, RpcError> {
    let (principal, ctx) = crate::rpc::full(FEED_NEEDS_FULL)?;
    Ok(crate::backend::calendar::feed::regenerate(&ctx.db, &ctx.feed_key, &principal).await?)
}

#[server(prefix = "/rpc", endpoint = "settings/notifications", output = crate::codec::JsonText)]
pub async fn load_notifications() -> Result<NotificationSettings, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::notifications::settings(&ctx.db, &principal).await?)
}

/// `on` holds "<channel>:<event>" for each box ticked; every other event
/// the person can be sent is off.
#[server(prefix = "/rpc", endpoint = "settings/notifications/save", output = crate::codec::JsonText)]
pub async fn save_notifications(#[server(default)] on: Vec<String>) -> Result<NotificationSettings, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let ticked = |channel: &str, event: &str| on.iter().any(|v| *v == format!("{channel}:{event}"));
    let preferences: Vec<crate::model::Preference> = crate::model::events_for(principal.role)
        .map(|(event, _)| crate::model::Preference {
            event: event.to_string(),
            email: ticked("email", event),
            webhook: ticked("webhook", event),
        })
        .collect();
    Ok(crate::backend::notifications::set_preferences(&ctx.db, &principal, &preferences).await?)
}

#[server(prefix = "/rpc", endpoint = "settings/webhooks/add", output = crate::codec::JsonText)]
pub async fn add_webhook(url: String) -> Result<Result<NewWebhook, crate::model::ActionNotice>, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    // A refused URL comes back as a notice, said beside the field.
    crate::rpc::beside_posted(crate::backend::notifications::add_webhook(&ctx.db, &principal, &url, None).await)
}

#[server(prefix = "/rpc", endpoint = "settings/webhooks/remove", output = crate::codec::JsonText)]
pub async fn remove_webhook(id: Uuid) -> Result<(), RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::notifications::remove_webhook(&ctx.db, &principal, id).await?)
}

#[component]
pub fn SettingsPage() -> impl IntoView {
    let regenerate = ServerAction::<RegenerateCalendarFeed>::new();
    let feed = Resource::new(move || regenerate.version().get(), |_| load_calendar_feed());
    view! {
        <section class="page-head"><h1>"Settings"</h1></section>
        <super::time_zone::TimeZoneSection/>
        <section class="panel">
            <h2>"Calendar feed"</h2>
            <p class="muted">"Subscribe to this address in your calendar app to see your bookings there, "
                "refreshed every 15 minutes. Anyone with the address can read your bookings: keep it private, "
                "and regenerate it if it leaked."</p>
            <Transition fallback=|| view! { <p class="loading">"Loading your feed…"</p> }>
                {move || feed.get().zip(super::reader_clock()).map(|(result, clock)| match result {
                    Ok(feed) => view! { <FeedView feed clock/> }.into_any(),
                    Err(err) => view! { <Alert>"Could not load your feed: " {err.to_string()}</Alert> }.into_any(),
                })}
            </Transition>
            <ActionForm action=regenerate attr:class="inline-form">
                <button class="button secondary" type="submit">"Regenerate the address"</button>
            </ActionForm>
            {move || regenerate.value().get().map(|result| match result {
                Ok(_) => view! { <p class="notice" role="status">"A new address is ready; the old one no longer works."</p> }.into_any(),
                Err(err) => view! { <Alert>{err.to_string()}</Alert> }.into_any(),
            })}
        </section>
        <super::homes::MyHome/>
        <NotificationsPanel/>
    }
}

#[component]
fn NotificationsPanel() -> impl IntoView {
    let save = ServerAction::<SaveNotifications>::new();
    let add = ServerAction::<AddWebhook>::new();
    // The refusal of the last answer, or the one a script-less post came back with.
    let from_query = super::notice::query_notice();
    let hook_refused = Signal::derive(move || match add.value().get() {
        Some(answer) => answer.ok()?.err()?.field,
        None => from_query.get()?.field,
    });
    let remove = ServerAction::<RemoveWebhook>::new();
    let settings = Resource::new(
        move || (save.version().get(), add.version().get(), remove.version().get()),
        |_| load_notifications(),
    );
    view! {
        <section class="panel" aria-labelledby="notifications-title">
            <h2 id="notifications-title">"Notifications"</h2>
            <p class="muted">"What you are told about, by email to your address and by a signed POST to "
                "each of your webhooks."</p>
            <Transition fallback=|| view! { <p class="loading">"Loading your choices…"</p> }>
                {move || settings.get().map(|result| match result {
                    Ok(settings) => view! { <Choices settings save remove/> }.into_any(),
                    Err(err) => view! { <Alert>"Could not load your choices: " {err.to_string()}</Alert> }.into_any(),
                })}
            </Transition>
            {move || save.value().get().map(|result| match result {
                Ok(_) => view! { <p class="notice" role="status">"Saved."</p> }.into_any(),
                Err(err) => view! { <Alert>{err.to_string()}</Alert> }.into_any(),
            })}
            <h3>"Add a webhook"</h3>
            <ActionForm action=add attr:class="fields-row">
                <Field form="webhook" name="url" label="URL" refused=hook_refused let:aria>
                    <input id="webhook-url" name="url" type="url" required maxlength="2000" size="40"
                        placeholder="https://hooks.example.org/berth"
                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                </Field>
                <button class="button" type="submit">"Add"</button>
            </ActionForm>
            {move || add.value().get().map(|result| match result {
                Ok(Err(notice)) if notice.field.is_some() => ().into_any(),
                Ok(Err(notice)) => view! { <p class="outcome refused" role="alert">{notice.message}</p> }.into_any(),
                Ok(Ok(hook)) => view! {
                    <div class="notice" role="status">
                        <p>"Webhook added. Its signing secret is shown only now: each body's HMAC-SHA256 "
                            "under it is in the X-Berth-Signature header."</p>
                        <label for="webhook-secret">"Secret"</label>
                        <super::copy::CopyField id="webhook-secret".to_string() value=hook.secret/>
                    </div>
                }.into_any(),
                Err(err) => view! { <Alert>{err.to_string()}</Alert> }.into_any(),
            })}
        </section>
    }
}

#[component]
fn Choices(
    settings: NotificationSettings,
    save: ServerAction<SaveNotifications>,
    remove: ServerAction<RemoveWebhook>,
) -> impl IntoView {
    let rows = settings
        .preferences
        .into_iter()
        .map(|p| {
            let label = EVENTS.iter().find(|(e, _)| *e == p.event).map(|(_, l)| *l).unwrap_or_default();
            view! {
                <tr>
                    <th scope="row">{label}</th>
                    <td><input type="checkbox" name="on[]" value=format!("email:{}", p.event) checked=p.email
                        aria-label=format!("{label}: email")/></td>
                    <td><input type="checkbox" name="on[]" value=format!("webhook:{}", p.event) checked=p.webhook
                        aria-label=format!("{label}: webhook")/></td>
                </tr>
            }
        })
        .collect_view();
    let hooks = settings.webhooks;
    view! {
        <ActionForm action=save>
            <table class="table notification-choices">
                <thead><tr><th scope="col">"Event"</th><th scope="col">"Email"</th><th scope="col">"Webhook"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
            <button class="button" type="submit">"Save choices"</button>
        </ActionForm>
        <h3>"Your webhooks"</h3>
        {if hooks.is_empty() {
            view! { <p class="muted">"None yet."</p> }.into_any()
        } else {
            view! {
                <ul class="webhooks">
                    {hooks.into_iter().map(|h| view! {
                        <li>
                            <code>{h.url.clone()}</code> " "
                            <ActionForm action=remove attr:class="inline-form">
                                <input type="hidden" name="id" value=h.id.to_string()/>
                                <button class="button secondary" type="submit"
                                    aria-label=format!("Remove the webhook {}", h.url)>"Remove"</button>
                            </ActionForm>
                        </li>
                    }).collect_view()}
                </ul>
            }.into_any()
        }}
    }
}

#[component]
fn FeedView(feed: CalendarFeed, clock: crate::model::Clock) -> impl IntoView {
    let created = format!("{} ({})", clock.when(feed.created_at), clock.tz);
    view! {
        {match feed.url {
            Some(url) => view! {
                <label for="feed-url">"Your bookings"</label>
                <super::copy::CopyField id="feed-url".to_string() value=url/>
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
                        <super::copy::CopyField id=format!("pool-feed-{}", p.pool) value=p.url
                            label=format!("occupancy feed of {}", p.pool)/></li>
                }).collect_view()}
            </ul>
        })}
    }
}
