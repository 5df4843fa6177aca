//! Pages for some roles only (reports, the admin console): anyone else
//! signed in gets a proper "not for your role" page with status 403, not
//! the page's frame around an error line. A visitor gets the page itself,
//! which asks them to sign in (401).

use crate::model::Role;
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

/// `children` for the audience; the refusal page for anyone else signed in.
#[component]
pub fn ForAudience(audience: Audience, children: ChildrenFn) -> impl IntoView {
    let me = super::shared().me;
    view! {
        <Suspense fallback=|| ()>
            {move || me.get().map(|result| match result.ok().flatten() {
                Some(me) if !(audience.admits)(me.role) => {
                    refused_status();
                    view! {
                        <section class="refusal" id="forbidden">
                            <h1>"Not for your role"</h1>
                            <p>"This page is for " {audience.named} ". You are signed in as "
                                <strong>{me.name.clone()}</strong> " (" {me.role.as_str()} ")."</p>
                            <p>"If you need it, ask an admin to change your role. "
                                <a href="/">"Back to the pools"</a> " · " <a href="/bookings">"My bookings"</a></p>
                        </section>
                    }.into_any()
                }
                _ => children().into_any(),
            })}
        </Suspense>
    }
}

/// 403, as the page's own data would have answered.
fn refused_status() {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(http::StatusCode::FORBIDDEN);
    }
}
