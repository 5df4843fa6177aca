//! The document around the app, and the app: the header every page shares
//! and the router's outlet.

use super::approvals;
use super::nav::Navigation;
use super::routes::{people_page, PageRoutes, PageTitle};
use super::zone::{learn_zone, load_clock};
#[cfg(feature = "hydrate")]
use super::{
    live,
    zone::{browser_zone, remember_zone},
};
use super::{Me, Shared};
use crate::model::Principal;
use crate::rpc::RpcError;
use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags};
use leptos_router::components::Router;

/// The signed-in principal, or `None` for an anonymous visitor.
#[server(prefix = "/rpc", endpoint = "me", output = crate::codec::JsonText)]
pub async fn current_user() -> Result<Option<Principal>, RpcError> {
    Ok(crate::rpc::visitor()?.0)
}

/// Whether the worker provisions on the simulated cluster: every page says
/// so in its header, since nothing it shows as provisioned or measured runs.
#[server(prefix = "/rpc", endpoint = "cluster", output = crate::codec::JsonText)]
pub async fn cluster_is_simulated() -> Result<bool, RpcError> {
    Ok(crate::rpc::visitor()?.1.mode.simulated)
}

/// The document around the app, rendered on the server only.
pub fn shell(_options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" type="image/svg+xml" href="/favicon.svg"/>
                <SiteAssets/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The stylesheet and what `HydrationScripts` would load, under the names
/// the server gives them (content-hashed: see `AssetUrls`); Leptos' own
/// component only knows fixed names or a hash file beside the binary. A
/// people's page loads the people's bundle, any other every page's.
#[component]
fn SiteAssets() -> impl IntoView {
    let assets = use_context::<crate::model::AssetUrls>().unwrap_or_default();
    let bundle = if requested_path().is_some_and(|path| people_page(&path)) { assets.people } else { assets.all };
    let nonce = leptos::nonce::use_nonce();
    let hydrate = format!(
        "import init, {{ hydrate }} from '{}'; init({{ module_or_path: '{}' }}).then(() => hydrate());",
        bundle.js, bundle.wasm
    );
    view! {
        <link rel="stylesheet" href=assets.css/>
        <link rel="modulepreload" href=bundle.js.clone()/>
        <link rel="preload" href=bundle.wasm r#as="fetch" r#type="application/wasm" crossorigin=""/>
        <script type="module" nonce=nonce>{hydrate}</script>
    }
}

/// The path of the page being rendered (the shell renders on the server only).
fn requested_path() -> Option<String> {
    #[cfg(feature = "ssr")]
    return use_context::<http::request::Parts>().map(|parts| parts.uri.path().to_string());
    #[cfg(not(feature = "ssr"))]
    None
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    let me: Me = Resource::new(|| (), |_| current_user());
    let zone = RwSignal::new(String::new());
    let live = RwSignal::new(0u64);
    let pending_approvals = Resource::new(|| (), |_| approvals::count_approvals());
    // Only the header reads it: not shared.
    let simulated = Resource::new(|| (), |_| cluster_is_simulated());
    // In the zone the page's other times use (Settings', else the browser's).
    let clock = Resource::new(move || zone.get(), load_clock);
    provide_context(Shared { me, pending_approvals, zone, clock, live });
    // Effects run only in the browser, so this flips once the WASM has hydrated
    // the page; end-to-end tests wait for it before they click.
    let (hydrated, set_hydrated) = signal(false);
    Effect::new(move |_| {
        set_hydrated.set(true);
        learn_zone(zone, clock);
    });
    // Pages stay live for whoever is signed in (started once, in the browser).
    Effect::new(move |started: Option<bool>| {
        if started == Some(true) {
            return true;
        }
        let signed_in = me.get().and_then(|r| r.ok()).flatten().is_some();
        #[cfg(feature = "hydrate")]
        if signed_in {
            live::poll(live);
            let zone = browser_zone();
            leptos::task::spawn_local(async move {
                // Nothing to show if it fails: the next page load reports it again.
                let _ = remember_zone(zone).await;
            });
        }
        signed_in
    });
    // The badge follows changes (in the browser: `live` moves only there).
    Effect::new(move |seen: Option<u64>| {
        let now = live.get();
        if seen.is_some_and(|seen| seen != now) {
            pending_approvals.refetch();
        }
        now
    });
    view! {
        <Router>
            <PageTitle/>
            <header class="topbar">
                <a class="brand" href="/">"Berth"</a>
                <span class="tagline">"GPU time, booked like a room"</span>
                <Suspense fallback=|| ()>
                    {move || simulated.get().and_then(|r| r.ok()).filter(|s| *s).map(|_| view! {
                        <span class="simulated-badge" id="simulated-badge"
                            title="No GPUs or workspaces are real here: the worker provisions into an in-memory API server and usage is simulated.">
                            "Simulated cluster"
                        </span>
                    })}
                </Suspense>
                // The admin menu's count of waiting approvals is read here, with
                // the principal, not in a Suspense of its own nested inside:
                // hydrating that inner Suspense found no badge where the server
                // had rendered one, and every admin page failed to hydrate
                // while a booking waited for approval.
                <Suspense fallback=|| ()>
                    {move || me.get().map(|result| {
                        let waiting = pending_approvals.get().and_then(|r| r.ok()).unwrap_or(0);
                        view! { <Navigation me=result.ok().flatten() waiting/> }
                    })}
                </Suspense>
            </header>
            <main data-hydrated=move || hydrated.get().to_string()>
                <PageRoutes/>
            </main>
        </Router>
    }
}
