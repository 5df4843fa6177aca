//! The navigation bar: who is signed in, where they can go, and sign out.

use super::approvals;
use crate::model::{Principal, Role};
use leptos::prelude::*;

/// Who is signed in (name, role, tenants), where they can go, and logout.
/// The admin console is one menu (so the bar is one line at 1440 px); on a
/// narrow screen the whole bar folds behind a Menu button (a checkbox and
/// its label: it works without JavaScript).
#[component]
pub(super) fn Navigation(me: Option<Principal>, waiting: i64) -> impl IntoView {
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
