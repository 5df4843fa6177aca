//! The HTML shell, the router and the pages.

// The modules marked `allow(dead_code)` under `people-bundle` are the
// console's pages and what only they use: the people's bundle routes to none
// of them, so there they are unused by design. Every other build (the
// server's, clippy's, every page's bundle) still reports their dead code.
mod account;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod approvals;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod audit;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod blackouts;
pub mod calendar;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod clusters;
mod confirm;
mod copy;
mod dashboard;
mod device_chart;
mod find;
mod fit;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod forbidden;
mod free_then;
mod home;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod homes;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod idle_policy;
mod live;
mod manifests;
mod my_bookings;
mod notice;
mod overview;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod pool_admin;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod report_charts;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod reports;
mod series;
mod settings;
mod sharing;
mod signin;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod tenants;
mod time_zone;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod tokenomics;
mod tokens;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod users;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod waitlist;
#[cfg_attr(feature = "people-bundle", allow(dead_code))]
mod worker;

pub use account::*;
pub use home::HomePage;
pub use overview::load_overview;
pub use tenants::{QuotaSummary, QuotaUse};

use crate::model::{Principal, Role};
use crate::rpc::RpcError;
use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::{
    components::{Route, Router, Routes},
    path, SsrMode,
};

/// The signed-in principal as every page reads it (one request per page load).
pub type Me = Resource<Result<Option<Principal>, RpcError>>;

/// What every page shares, read once per page load at the top of the app
/// (a resource created inside another one's view could be created in a
/// different order on the server and in the browser), and provided as one
/// context value that pages read through `shared()`.
#[derive(Clone, Copy)]
pub struct Shared {
    pub me: Me,
    /// How many bookings and extensions await an admin's decision (0 for
    /// anyone else).
    pub pending_approvals: Resource<Result<i64, RpcError>>,
    /// The browser's time zone when hydration has just learnt it and the
    /// reader has none in Settings ("" otherwise: the server then takes the
    /// Settings zone, else the `berth_tz` cookie an earlier visit left, else UTC).
    pub zone: RwSignal<String>,
    /// The reader's clock: times in the zone pages show them in (see
    /// `reader_clock`).
    pub clock: Resource<Result<crate::model::Clock, RpcError>>,
    /// Moves on whenever something the viewer's pages show has changed
    /// (`live::poll`); pages whose data should stay live depend on it.
    pub live: RwSignal<u64>,
}

/// The one way a page reads what the app shares.
pub fn shared() -> Shared {
    expect_context::<Shared>()
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
    let clock = Resource::new(move || zone.get(), account::load_clock);
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

/// Every page once: its path as the router matches it, the component that
/// renders it and its `<title>` (screen readers announce that first; tabs,
/// history and bookmarks tell pages apart by it). The router and
/// `page_title` both read this one table.
///
/// Pages come in two groups: the pages everyone signed in uses, and the
/// console (reports and administration). The site has two WASM bundles
/// (`.ci/build-site.sh`): the people's, built with the `people-bundle`
/// feature, knows only their pages (a cold calendar load sends about four
/// fifths of the other's bytes); every page's knows every page. A people's
/// page links the people's (`SiteAssets`). A link from a people's page to a
/// console page leaves that WASM's router unmatched, and its fallback loads
/// the page from the server.
macro_rules! pages {
    (
        people: { $( $path:tt => $view:expr, $title:literal; )* }
        console: { $( $cpath:tt => $cview:expr, $ctitle:literal; )* }
    ) => {
        /// Each page's path pattern and title, as `page_title` reads them.
        const PAGES: &[(&str, &str)] = &[$(($path, $title),)* $(($cpath, $ctitle)),*];

        /// The path patterns the people's WASM knows.
        const PEOPLE_PAGES: &[&str] = &[$($path),*];

        /// The router's table of pages. Async: the server waits for the data,
        /// so every page is complete without JavaScript; hydration then only
        /// adds behaviour.
        #[component]
        fn PageRoutes() -> impl IntoView {
            #[cfg(feature = "people-bundle")]
            return view! {
                <Routes fallback=load_from_server>
                    $( <Route path=path!($path) view=$view ssr=SsrMode::Async/> )*
                </Routes>
            };
            #[cfg(not(feature = "people-bundle"))]
            view! {
                <Routes fallback=|| view! { <h1>"Page not found"</h1> <p class="empty">"No page has this address."</p> }>
                    $( <Route path=path!($path) view=$view ssr=SsrMode::Async/> )*
                    $( <Route path=path!($cpath) view=$cview ssr=SsrMode::Async/> )*
                </Routes>
            }
        }
    };
}

pages! {
    people: {
        "" => HomePage, "Pools and bookings";
        "signin" => signin::SignInPage, "Sign in";
        "calendar" => calendar::CalendarPage, "Calendar";
        "bookings" => my_bookings::MyBookingsPage, "My bookings";
        "find" => find::FindSlotPage, "Find a slot";
        "fit" => fit::FitHelperPage, "Which kind fits my model?";
        "free" => free_then::WhatIsFreePage, "What is free then";
        "series" => series::SeriesPage, "Book a recurring slot";
        "bookings/:id" => my_bookings::BookingPage, "Booking";
        "bookings/:id/manifests" => manifests::ManifestsPage, "What the worker applies";
        "tokens" => tokens::TokensPage, "API tokens";
        "settings" => settings::SettingsPage, "Settings";
        "dashboard" => dashboard::DashboardPage, "Dashboard";
    }
    console: {
        "reports" => reports::ReportsPage, "Reports";
        "reports/tokenomics" => tokenomics::TokenomicsPage, "Tokenomics";
        "admin/users" => users::UsersPage, "Users";
        "admin/pools" => pool_admin::PoolsAdminPage, "Manage pools";
        "admin/pools/:id" => pool_admin::PoolAdminPage, "Pool settings";
        "admin/clusters" => clusters::ClustersPage, "Clusters";
        "admin/tenants" => tenants::TenantsPage, "Tenants and quotas";
        "admin/homes" => homes::AdminHomesPage, "Homes";
        "admin/approvals" => approvals::ApprovalsPage, "Approvals";
        "admin/waitlist" => waitlist::AdminWaitlistPage, "Waitlist";
        "admin/audit" => audit::AuditPage, "Audit log";
        "admin/worker" => worker::WorkerPage, "Worker";
    }
}

/// The people's WASM met a page it does not know: the browser asks the
/// server for it, which renders it with the WASM that does. The router
/// writes the new address into history only after this view (one task
/// later), so the load waits for that and then reloads the entry the router
/// made, rather than adding a second one for the same page.
#[cfg(feature = "people-bundle")]
fn load_from_server() -> impl IntoView {
    let location = leptos_router::hooks::use_location();
    let path = location.pathname.get_untracked();
    let search = location.search.get_untracked();
    let address =
        format!("{path}{}{}", if search.is_empty() { "" } else { "?" }, search) + &location.hash.get_untracked();
    #[cfg(feature = "hydrate")]
    set_timeout(
        move || {
            let Some(window) = web_sys::window() else { return };
            let there = window.location().pathname().is_ok_and(|shown| shown == path);
            let _ = if there { window.location().reload() } else { window.location().assign(&address) };
        },
        std::time::Duration::ZERO,
    );
    #[cfg(not(feature = "hydrate"))]
    let _ = (path, address);
    view! { <p class="empty" aria-live="polite">"Loading…"</p> }
}

/// The title of the page at `path`: the `PAGES` row whose pattern it
/// matches, else "Page not found".
fn page_title(path: &str) -> &'static str {
    PAGES.iter().find(|(pattern, _)| matches_pattern(pattern, path)).map_or("Page not found", |(_, title)| title)
}

/// Whether the people's bundle knows the page at `path` (see `pages!`).
fn people_page(path: &str) -> bool {
    PEOPLE_PAGES.iter().any(|pattern| matches_pattern(pattern, path))
}

/// Whether `path` is a page of the router's `pattern` (`:id` stands for one
/// segment; slashes at either end do not count, as for the router).
fn matches_pattern(pattern: &str, path: &str) -> bool {
    let segments: Vec<&str> = path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    let wanted: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    wanted.len() == segments.len() && wanted.iter().zip(&segments).all(|(w, s)| w.starts_with(':') || w == s)
}

#[component]
fn PageTitle() -> impl IntoView {
    let location = leptos_router::hooks::use_location();
    view! { <Title text=move || format!("{} — Berth", page_title(&location.pathname.get()))/> }
}

/// Who is signed in (name, role, tenants), where they can go, and logout.
/// The admin console is one menu (so the bar is one line at 1440 px); on a
/// narrow screen the whole bar folds behind a Menu button (a checkbox and
/// its label: it works without JavaScript).
#[component]
fn Navigation(me: Option<Principal>, waiting: i64) -> impl IntoView {
    let Some(me) = me else {
        return view! { <nav class="account signed-out"><a class="button" href="/signin">"Sign in"</a></nav> }
            .into_any();
    };
    let tenants = if me.tenants.is_empty() {
        "no tenant".to_string()
    } else {
        me.tenants.iter().map(|t| t.slug.as_str()).collect::<Vec<_>>().join(", ")
    };
    let admin = me.role == Role::Admin;
    let reader = matches!(me.role, Role::Admin | Role::Manager);
    let (folded, admin_menu) = (NodeRef::<leptos::html::Input>::new(), NodeRef::<leptos::html::Details>::new());
    // A page opened from a menu closes it (the header outlives navigation).
    let location = leptos_router::hooks::use_location();
    Effect::new(move |_| {
        location.pathname.track();
        #[cfg(feature = "hydrate")]
        {
            if let Some(menu) = admin_menu.get_untracked() {
                menu.set_open(false);
            }
            if let Some(toggle) = folded.get_untracked() {
                toggle.set_checked(false);
            }
        }
    });
    view! {
        <input type="checkbox" id="menu-toggle" class="menu-toggle" node_ref=folded aria-label="Show the menu"/>
        <label for="menu-toggle" class="menu-button button secondary" aria-hidden="true">"Menu"</label>
        <nav class="account" aria-label="Account">
            <a href="/">"Pools"</a>
            <a href="/calendar">"Calendar"</a>
            <a href="/bookings">"My bookings"</a>
            <a href="/dashboard" id="dashboard-nav">"Dashboard"</a>
            <a href="/tokens">"Tokens"</a>
            <a href="/settings" id="settings-nav">"Settings"</a>
            {reader.then(|| view! { <a href="/reports" id="reports-nav">"Reports"</a> <a href="/reports/tokenomics">"Tokenomics"</a> })}
            {admin.then(|| view! {
                <details class="admin-menu" node_ref=admin_menu>
                    <summary id="admin-menu">"Admin"</summary>
                    <div class="dropdown">
                        <a href="/admin/users" id="admin-nav">"Users"</a>
                        <a href="/admin/pools" id="pools-admin-nav">"Manage pools"</a>
                        <a href="/admin/clusters">"Clusters"</a>
                        <a href="/admin/tenants">"Tenants"</a>
                        <a href="/admin/homes">"Homes"</a>
                        <approvals::ApprovalsLink waiting/>
                        <a href="/admin/waitlist">"Waitlist"</a>
                        <a href="/admin/audit">"Audit"</a>
                        <a href="/admin/worker">"Worker"</a>
                    </div>
                </details>
            })}
            <span class="who" id="who">
                <strong id="who-name">{me.name.clone()}</strong>
                <span class="who-detail"><span id="who-role">{me.role.as_str()}</span>
                " · " <span id="who-tenants">{tenants}</span></span>
            </span>
            <form method="post" action="/auth/logout" class="inline">
                <button class="button secondary" type="submit" id="logout">"Sign out"</button>
            </form>
        </nav>
    }
    .into_any()
}

/// Remembers the browser's zone in a cookie (so later pages render in it on
/// the server) and, when the server did not know it yet and the reader has
/// no zone of their own in Settings, makes pages refetch their data in it.
fn learn_zone(zone: RwSignal<String>, clock: Resource<Result<crate::model::Clock, RpcError>>) {
    #[cfg(feature = "hydrate")]
    {
        use leptos::wasm_bindgen::JsCast;
        let browser = browser_zone();
        let Ok(document) = leptos::tachys::dom::document().dyn_into::<web_sys::HtmlDocument>() else { return };
        let encoded = calendar::urlencode(&browser);
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
fn browser_zone() -> String {
    let options = js_sys::Intl::DateTimeFormat::new(&js_sys::Array::new(), &js_sys::Object::new()).resolved_options();
    js_sys::Reflect::get(&options, &"timeZone".into()).ok().and_then(|v| v.as_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::{page_title, people_page, PAGES, PEOPLE_PAGES};

    #[test]
    fn every_page_of_the_router_has_its_title_from_the_same_table() {
        assert_eq!(page_title("/"), "Pools and bookings");
        assert_eq!(page_title("/calendar"), "Calendar");
        assert_eq!(page_title("/bookings/"), "My bookings");
        assert_eq!(page_title("/bookings/7b0c"), "Booking");
        assert_eq!(page_title("/bookings/7b0c/manifests"), "What the worker applies");
        assert_eq!(page_title("/admin/pools/7b0c"), "Pool settings");
        assert_eq!(page_title("/admin/pools/7b0c/more"), "Page not found");
        assert_eq!(page_title("/nowhere"), "Page not found");
        // Each pattern finds its own row (none is shadowed by an earlier one).
        for (pattern, title) in PAGES {
            assert_eq!(page_title(&format!("/{}", pattern.replace(":id", "x"))), *title, "{pattern}");
        }
    }

    #[test]
    fn the_people_bundle_serves_the_people_pages_and_no_other() {
        for path in
            ["/", "/calendar", "/bookings", "/bookings/7b0c", "/bookings/7b0c/manifests", "/settings", "/signin"]
        {
            assert!(people_page(path), "{path}");
        }
        for path in ["/reports", "/reports/tokenomics", "/admin/users", "/admin/pools/7b0c", "/nowhere", "/calendar/x"]
        {
            assert!(!people_page(path), "{path}");
        }
        // Every people's page is a page, with its own title.
        for pattern in PEOPLE_PAGES {
            assert_ne!(page_title(&format!("/{}", pattern.replace(":id", "x"))), "Page not found", "{pattern}");
        }
    }
}
