//! The exact objects the worker applies for a booking, as JSON, so owners and
//! admins can audit a session's isolation before (and while) it runs.

use crate::pages::said::Alert;
use crate::rpc::RpcError;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;
use uuid::Uuid;

#[server(prefix = "/rpc", endpoint = "bookings/manifests", output = crate::codec::JsonText)]
pub async fn booking_manifests(id: Uuid) -> Result<String, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::sessions::preview::preview(&ctx.db, &principal, &ctx.renderer, id).await?)
}

#[component]
pub fn ManifestsPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.with(|p| p.get("id").and_then(|id| id.parse::<Uuid>().ok()));
    let listing = Resource::new(id, |id| async move {
        match id {
            Some(id) => booking_manifests(id).await,
            None => Err(RpcError::refused("booking not found")),
        }
    });
    view! {
        <section class="page-head"><h1>"What the worker applies"</h1><a class="button secondary" href="/bookings">"My bookings"</a></section>
        <p class="muted">"One namespace per booking, created when the window opens and deleted when it ends. The access token is generated then and never shown here. "
            "The objects are shown as JSON, exactly as the worker sends them to the API server."</p>
        <p class="muted" id="quota-note">"The ResourceQuota counts what the cluster hands out: with time-slicing each physical unit "
            "is advertised as several replicas, so a booked unit of a kind with 2 time-slice replicas per unit reads as "
            <code>"2"</code> " there. Every other GPU kind is set to " <code>"0"</code> ", so a session can never take a kind it did not book."</p>
        <Suspense fallback=|| view! { <p class="loading">"Rendering…"</p> }>
            // The listing scrolls sideways: focusable, so a keyboard can scroll it.
            {move || listing.get().map(|result| match result {
                Ok(text) => view! { <pre class="manifests" id="manifests" tabindex="0" role="region" aria-label="Manifests">{text}</pre> }.into_any(),
                Err(err) => view! { <Alert>"Could not render: " {err.to_string()}</Alert> }.into_any(),
            })}
        </Suspense>
    }
}
