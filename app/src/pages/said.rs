//! How every page says that something went wrong or that there is nothing
//! to show: one alert and one empty state (`style/_said.scss`), so no page
//! draws its own.

use leptos::prelude::*;

/// What went wrong, announced as it appears: a failed load, a refused
/// action that is about no field in particular (a field's refusal is said
/// beside it: `field::Field`).
#[component]
pub fn Alert(#[prop(optional, into)] id: Option<String>, children: Children) -> impl IntoView {
    view! { <p class="alert" role="alert" id=id>{children()}</p> }
}

/// Nothing to show here yet, said as a sentence, with what to do about it
/// where there is something.
#[component]
pub fn Empty(#[prop(optional, into)] id: Option<String>, children: Children) -> impl IntoView {
    view! { <p class="empty" id=id>{children()}</p> }
}

/// A page's body from the one resource it loads: "Loading…" until that
/// answers, then the body, or the failure as an alert that starts with
/// `failed` ("Could not search: ").
pub fn loaded<T, V>(
    page: Resource<Result<T, crate::rpc::RpcError>>,
    failed: &'static str,
    body: impl Fn(T) -> V + Send + Sync + 'static,
) -> impl IntoView
where
    T: Clone + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static,
    V: IntoView + 'static,
{
    view! {
        <Transition fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || page.get().map(|result| match result {
                Ok(data) => body(data).into_any(),
                Err(err) => view! { <Alert>{failed} {err.to_string()}</Alert> }.into_any(),
            })}
        </Transition>
    }
}
