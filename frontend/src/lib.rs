//! Browser entry point: hydrates the server-rendered page.

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    // What `leptos::mount::hydrate_lazy` does (each group of pages is its own
    // WASM chunk, loaded before its page hydrates), then the hydration marker:
    // only now is the page's own code attached to it.
    wasm_bindgen_futures::spawn_local(async {
        let body = leptos::tachys::dom::body();
        leptos::mount::hydrate_from_async(body, app::App).await.forget();
        app::mark_hydrated();
    });
}
