//! Every page once, in one table: the router's routes and each page's
//! title, and which pages the people's bundle knows.

// The people's bundle routes to none of the console's pages (see `pages!`).
#![cfg_attr(feature = "people-bundle", allow(unused_imports))]
use super::{
    approvals, audit, calendar, clusters, dashboard, find, fit, free_then, homes, manifests, my_bookings, pool_admin,
    reports, series, settings, signin, tenants, tokenomics, tokens, users, waitlist, worker, HomePage,
};
use crate::pages::said::Empty;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::{
    components::{Route, Routes},
    path, SsrMode,
};

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
        pub(super) fn PageRoutes() -> impl IntoView {
            #[cfg(feature = "people-bundle")]
            return view! {
                <Routes fallback=load_from_server>
                    $( <Route path=path!($path) view=$view ssr=SsrMode::Async/> )*
                </Routes>
            };
            #[cfg(not(feature = "people-bundle"))]
            view! {
                <Routes fallback=|| view! { <h1>"Page not found"</h1> <Empty>"No page has this address."</Empty> }>
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
pub(super) fn people_page(path: &str) -> bool {
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
pub(super) fn PageTitle() -> impl IntoView {
    let location = leptos_router::hooks::use_location();
    view! { <Title text=move || format!("{} — Berth", page_title(&location.pathname.get()))/> }
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
