//! The reader's time zone: the zone a page asks its times in, the clock it
//! writes them with, and the browser's zone learnt once hydrated.

use super::shared;
use crate::rpc::RpcError;
use leptos::prelude::*;

/// The zone the browser reports once hydrated, kept for mails and feeds
/// until the person chooses one in Settings. (Not learnt while rendering:
/// a write there delayed every page's `me` and unsettled hydration.)
#[server(prefix = "/rpc", endpoint = "me/zone", output = crate::codec::JsonText)]
pub async fn remember_zone(zone: String) -> Result<(), RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::time_zone::learn(&ctx.db, &principal, &zone).await?)
}

/// The reader's clock (`rpc::no_script::reader_zone`: `tz` when a page
/// asks for one, else their Settings zone, else their browser's), for
/// `pages::reader_clock`.
#[server(prefix = "/rpc", endpoint = "clock", output = crate::codec::JsonText)]
pub async fn load_clock(tz: String) -> Result<crate::model::Clock, RpcError> {
    let own = tz.is_empty() && crate::rpc::no_script::own_zone().await.is_some();
    let tz = crate::rpc::no_script::reader_zone(tz).await;
    Ok(crate::model::Clock { own, ..crate::rules::local_time::clock(&tz, chrono::Utc::now()) })
}

/// The zone a page asks its times in: `?tz=` first, else the browser's when
/// this visit first learnt it, else "" (the server then takes the reader's
/// Settings zone, see `rpc::no_script::reader_zone`).
pub fn viewer_zone(query: &Memo<leptos_router::params::ParamsMap>) -> String {
    query.with(|q| q.get("tz")).unwrap_or_else(|| shared().zone.get())
}

/// The reader's clock, read inside a page's Suspense or Transition (which
/// then waits for it): every time a page writes goes through it, in the
/// zone the calendar and My bookings use.
pub fn reader_clock() -> Option<crate::model::Clock> {
    shared().clock.get().map(|loaded| loaded.unwrap_or_default())
}

/// Remembers the browser's zone in a cookie (so later pages render in it on
/// the server) and, when the server did not know it yet and the reader has
/// no zone of their own in Settings, makes pages refetch their data in it.
pub(super) fn learn_zone(zone: RwSignal<String>, clock: Resource<Result<crate::model::Clock, RpcError>>) {
    #[cfg(feature = "hydrate")]
    {
        use leptos::wasm_bindgen::JsCast;
        let browser = browser_zone();
        let Ok(document) = leptos::tachys::dom::document().dyn_into::<web_sys::HtmlDocument>() else { return };
        let encoded = super::url::urlencode(&browser);
        let known = document.cookie().unwrap_or_default().split("; ").any(|c| c == format!("berth_tz={encoded}"));
        if !browser.is_empty() && !known {
            let _ = document.set_cookie(&format!("berth_tz={encoded}; path=/; SameSite=Lax; max-age=31536000"));
            let own = clock.get_untracked().and_then(|c| c.ok()).is_some_and(|c| c.own);
            if !own {
                zone.set(browser);
            }
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (zone, clock);
}

/// The browser's IANA zone ("" when it names none).
#[cfg(feature = "hydrate")]
pub(super) fn browser_zone() -> String {
    let options = js_sys::Intl::DateTimeFormat::new(&js_sys::Array::new(), &js_sys::Object::new()).resolved_options();
    js_sys::Reflect::get(&options, &"timeZone".into()).ok().and_then(|v| v.as_string()).unwrap_or_default()
}
