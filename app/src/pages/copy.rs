//! A read-only address with a Copy button (the calendar feed's, a webhook's
//! secret): the button appears once the page has hydrated, since copying
//! needs the browser's clipboard; without JavaScript the field is still
//! there to select.

use leptos::prelude::*;

#[component]
pub fn CopyField(id: String, value: String, #[prop(optional)] label: Option<String>) -> impl IntoView {
    let (ready, set_ready) = signal(false);
    let (copied, set_copied) = signal(false);
    Effect::new(move |_| set_ready.set(true));
    let text = value.clone();
    let copy = move |_| {
        copy_text(&text);
        set_copied.set(true);
    };
    let button_label = label.clone().map(|l| format!("Copy {l}")).unwrap_or_else(|| "Copy".into());
    view! {
        <span class="copy-field">
            <input id=id class="feed-url" readonly value=value aria-label=label/>
            {move || ready.get().then(|| view! {
                <button class="button secondary copy" type="button" aria-label=button_label.clone() on:click=copy.clone()>
                    {move || if copied.get() { "Copied" } else { "Copy" }}
                </button>
            })}
        </span>
    }
}

/// Puts `text` on the clipboard (`navigator.clipboard.writeText`).
fn copy_text(text: &str) {
    #[cfg(feature = "hydrate")]
    {
        use leptos::wasm_bindgen::{JsCast, JsValue};
        let get = |target: &JsValue, key: &str| js_sys::Reflect::get(target, &key.into()).ok();
        let clipboard = get(&js_sys::global().into(), "navigator").and_then(|n| get(&n, "clipboard"));
        if let Some(clipboard) = clipboard {
            if let Some(write) = get(&clipboard, "writeText").and_then(|f| f.dyn_into::<js_sys::Function>().ok()) {
                let _ = write.call1(&clipboard, &JsValue::from_str(text));
            }
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = text;
}
