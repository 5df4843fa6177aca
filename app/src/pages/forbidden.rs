//! Pages for some roles only (reports, the admin console): anyone else
//! signed in gets a proper "not for your role" page, not an error line
//! under the page's heading. The page's own data answers 403 (its status);
//! its error branch asks `or_refusal`, inside the page's own `Suspense`
//! (a gate of its own around the page would create the page's resources in
//! another order on the server and in the browser, and hydration fails).

use crate::model::Role;
use crate::pages::said::Alert;
use crate::rpc::RpcError;
use leptos::prelude::*;

/// Who may open a page, and how the refusal names them.
#[derive(Clone, Copy)]
pub struct Audience {
    pub admits: fn(Role) -> bool,
    /// "managers and admins"
    pub named: &'static str,
}

pub const READERS: Audience =
    Audience { admits: |role| matches!(role, Role::Manager | Role::Admin), named: "managers and admins" };
pub const ADMINS: Audience = Audience { admits: |role| role == Role::Admin, named: "admins" };

/// A page's load error: the refusal page when the signed-in viewer's role
/// is not in `audience`, else `failed` followed by the error.
pub fn or_refusal(audience: Audience, failed: &'static str, err: RpcError) -> AnyView {
    refusal(audience).unwrap_or_else(|| view! { <Alert>{failed} {err.to_string()}</Alert> }.into_any())
}

/// The refusal page, when someone is signed in whose role is not in `audience`.
pub fn refusal(audience: Audience) -> Option<AnyView> {
    let me = super::shared().me.get().and_then(|result| result.ok().flatten())?;
    if (audience.admits)(me.role) {
        return None;
    }
    Some(
        view! {
            <section class="refusal" id="forbidden">
                <h1>"Not for your role"</h1>
                <p>"This page is for " {audience.named} ". You are signed in as "
                    <strong>{me.name.clone()}</strong> " (" {me.role.as_str()} ")."</p>
                <p>"If you need it, ask an admin to change your role. "
                    <a href="/">"Back to the pools"</a> " · " <a href="/bookings">"My bookings"</a></p>
            </section>
        }
        .into_any(),
    )
}
