//! The HTML shell, the router and the pages.

mod home;
mod overview;

pub use home::HomePage;
pub use overview::{load_overview, KindSummary, Overview, PoolSummary};

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::{
    components::{Route, Router, Routes},
    SsrMode, StaticSegment,
};

/// The document around the app, rendered on the server only.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" type="image/svg+xml" href="/favicon.svg"/>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    // Effects run only in the browser, so this flips once the WASM has hydrated
    // the page; end-to-end tests wait for it before they click.
    let (hydrated, set_hydrated) = signal(false);
    Effect::new(move |_| set_hydrated.set(true));
    view! {
        <Stylesheet id="leptos" href="/pkg/berth.css"/>
        <Title text="Berth — GPU booking"/>
        <Router>
            <header class="topbar">
                <a class="brand" href="/">"Berth"</a>
                <span class="tagline">"GPU time, booked like a room"</span>
            </header>
            <main data-hydrated=move || hydrated.get().to_string()>
                <Routes fallback=|| view! { <p class="empty">"Page not found."</p> }>
                    // Async: the server waits for the data, so the page is complete
                    // without JavaScript; hydration then only adds behaviour.
                    <Route path=StaticSegment("") view=HomePage ssr=SsrMode::Async/>
                </Routes>
            </main>
        </Router>
    }
}
