//! The pages as lazily loaded routes, in groups: the release build splits the
//! WASM at each group's `render` (`.ci/build-site.sh` runs `wasm-split-cli`),
//! so a browser downloads the shell (router, navigation, reactive runtime)
//! plus the code of the group of the page it shows; the other groups arrive
//! when the user first navigates to one of their pages.
//!
//! Why groups and not one split per page: code two split points share goes
//! into a chunk of its own for each combination of split points using it.
//! With a split per page that made ~500 chunks (the calendar needed 266 of
//! them, 2 KB each: more requests and per-module overhead than code); a few
//! groups of pages people use together keep the chunks fewer and larger.
//! Measured (`make bench-calendar`): the calendar alone in its group loads
//! 402 KB brotli in 33 files, against 465 KB in 266 files split per page and
//! 526 KB with the other booking pages in its group.
//!
//! The pages fetch their own data, so a route's `data()` holds nothing: on a
//! page load the server has rendered the page with its data
//! (`SsrMode::Async`) and hydration reuses it.

use leptos::prelude::*;
use leptos_router::LazyRoute;

macro_rules! page_group {
    ($(#[$doc:meta])* $group:ident { $($route:ident => $page:path),* $(,)? }) => {
        $(#[$doc])*
        mod $group {
            use leptos::prelude::*;

            pub enum Page {
                $($route),*
            }

            /// The split point: everything only this group's pages use is
            /// loaded with the first call. wasm-split names a split by the
            /// name given here, hence the group's.
            #[lazy($group)]
            pub async fn render(page: Page) -> AnyView {
                match page {
                    $(Page::$route => {
                        use $page as P;
                        view! { <P/> }.into_any()
                    })*
                }
            }
        }

        $(
            #[doc = concat!("The lazily loaded route of `", stringify!($page), "`.")]
            pub struct $route;

            impl LazyRoute for $route {
                fn data() -> Self {
                    $route
                }

                async fn view(_this: Self) -> AnyView {
                    $group::render($group::Page::$route).await
                }

                // Hydration loads the page's chunk first (`hydrate_lazy`):
                // a view still waiting for its code would not match the
                // server's HTML.
                async fn preload() {
                    #[cfg(target_arch = "wasm32")]
                    $group::__preload_render().await;
                }
            }
        )*
    };
}

page_group! {
    /// Anonymous visitors see only this.
    sign_in { SignIn => crate::pages::signin::SignInPage }
}

page_group! {
    /// Where every signed-in user lands.
    home { Home => crate::pages::home::HomePage }
}

page_group! {
    /// The calendar, the page most bookings start from.
    calendar { Calendar => crate::pages::calendar::CalendarPage }
}

page_group! {
    /// Booking and one's own bookings: the pages a data scientist moves between.
    booking {
        MyBookings => crate::pages::my_bookings::MyBookingsPage,
        FindSlot => crate::pages::find::FindSlotPage,
        Series => crate::pages::series::SeriesPage,
        Manifests => crate::pages::manifests::ManifestsPage,
    }
}

page_group! {
    /// One's own account.
    account {
        Tokens => crate::pages::tokens::TokensPage,
        Settings => crate::pages::settings::SettingsPage,
        Dashboard => crate::pages::dashboard::DashboardPage,
    }
}

page_group! {
    /// Managers' and admins' reports.
    reading {
        Reports => crate::pages::reports::ReportsPage,
        Tokenomics => crate::pages::tokenomics::TokenomicsPage,
    }
}

page_group! {
    /// Admins only.
    admin {
        Users => crate::pages::users::UsersPage,
        PoolsAdmin => crate::pages::pool_admin::PoolsAdminPage,
        PoolAdmin => crate::pages::pool_admin::PoolAdminPage,
        Tenants => crate::pages::tenants::TenantsPage,
        Approvals => crate::pages::approvals::ApprovalsPage,
        Audit => crate::pages::audit::AuditPage,
        Worker => crate::pages::worker::WorkerPage,
    }
}
