//! Settings' time zone: the zone pages, mails, the calendar feed and the CLI
//! write times in. Until chosen, pages follow the browser, and the rest the
//! zone the browser reported first (see `remember_zone`), shown here.

use crate::model::{ActionNotice, ZoneChoice};
use crate::pages::said::Alert;
use crate::rpc::RpcError;
use leptos::prelude::*;

#[server(prefix = "/rpc", endpoint = "settings/time_zone", output = crate::codec::JsonText)]
pub async fn load_time_zone() -> Result<ZoneChoice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let chosen = crate::backend::accounts::time_zone::of(&ctx.db, &principal).await?;
    Ok(ZoneChoice { chosen, zones: chrono_tz::TZ_VARIANTS.iter().map(|tz| tz.name().to_string()).collect() })
}

#[server(prefix = "/rpc", endpoint = "settings/time_zone/save", output = crate::codec::JsonText)]
pub async fn save_time_zone(time_zone: String) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let chosen = crate::backend::accounts::time_zone::choose(&ctx.db, &principal, &time_zone).await;
    crate::rpc::act(chosen, |zone| {
        format!("Times on these pages, in mails, your calendar feed and the CLI are now in {zone}.")
    })
}

#[component]
pub fn TimeZoneSection() -> impl IntoView {
    let save = ServerAction::<SaveTimeZone>::new();
    let from_query = super::notice::query_notice();
    let choice = Resource::new(move || save.version().get(), |_| load_time_zone());
    let browser = super::shared().zone;
    // Pages already loaded show times in the zone just saved.
    Effect::new(move |_| {
        if save.value().get().is_some_and(|saved| saved.is_ok()) {
            super::shared().clock.refetch();
        }
    });
    view! {
        <section class="panel" aria-labelledby="time-zone-title">
            <h2 id="time-zone-title">"Time zone"</h2>
            <p class="muted">"Pages, mails, your calendar feed and the command-line client write times in "
                "this zone, and name it. Until you choose one, pages follow your browser's zone and the rest "
                "the zone your browser reported first."</p>
            {move || super::notice::notice_view(save.value().get(), from_query.get())}
            <Transition fallback=|| view! { <p class="loading">"Loading your time zone…"</p> }>
                {move || choice.get().map(|result| match result {
                    Ok(choice) => {
                        // Until one is kept, the browser's zone is offered.
                        let current = choice.chosen.clone().unwrap_or_else(|| match browser.get_untracked() {
                            zone if zone.is_empty() => "UTC".to_string(),
                            zone => zone,
                        });
                        view! {
                            <ActionForm action=save attr:class="inline-form" attr:id="time-zone-form">
                                <label for="time-zone">"Zone"</label>
                                <select id="time-zone" name="time_zone">
                                    {choice.zones.into_iter().map(|zone| {
                                        let selected = zone == current;
                                        let label = zone.clone();
                                        view! { <option value=zone selected=selected>{label}</option> }
                                    }).collect_view()}
                                </select>
                                <button class="button" type="submit">"Save zone"</button>
                            </ActionForm>
                        }.into_any()
                    }
                    Err(err) => view! { <Alert>{err.to_string()}</Alert> }.into_any(),
                })}
            </Transition>
        </section>
    }
}
