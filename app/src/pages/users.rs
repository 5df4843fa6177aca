//! Admins only: every user with their role and tenants, where tenants can be
//! added or removed by hand (group-granted ones are marked; they return at
//! the next login while the group stays).

use super::account::{list_users, AssignTenant, RemoveTenant};
use crate::model::{MembershipSource, UserSummary};
use leptos::prelude::*;

#[component]
pub fn UsersPage() -> impl IntoView {
    let assign = ServerAction::<AssignTenant>::new();
    let remove = ServerAction::<RemoveTenant>::new();
    let users = Resource::new(move || (assign.version().get(), remove.version().get()), |_| list_users());
    let failure = move || {
        let assign_err = assign.value().get().and_then(|r| r.err());
        let remove_err = remove.value().get().and_then(|r| r.err());
        assign_err.or(remove_err).map(|err| view! { <p class="error" role="alert">{err.to_string()}</p> })
    };
    view! {
        <section class="page-head"><h1>"Users"</h1></section>
        <p class="muted">"Roles come from identity-provider groups at each login. Tenants can also be assigned here."</p>
        {failure}
        <Transition fallback=|| view! { <p class="loading">"Loading users…"</p> }>
            {move || users.get().map(|result| match result {
                Ok(list) => view! { <UserTable list assign remove/> }.into_any(),
                Err(err) => view! { <p class="error" role="alert">"Could not load users: " {err.to_string()}</p> }.into_any(),
            })}
        </Transition>
    }
}

#[component]
fn UserTable(
    list: Vec<UserSummary>,
    assign: ServerAction<AssignTenant>,
    remove: ServerAction<RemoveTenant>,
) -> impl IntoView {
    view! {
        <table class="bookings" id="user-list">
            <thead><tr><th>"User"</th><th>"Role"</th><th>"Tenants"</th><th>"Add tenant"</th></tr></thead>
            <tbody>
                {list.into_iter().map(|u| {
                    let id = u.id.to_string();
                    view! {
                        <tr>
                            <td>{u.name.clone()} <br/> <span class="muted">{u.email.clone()}</span>
                                {(!u.federated).then(|| view! { <span class="badge">"local"</span> })}</td>
                            <td>{u.role.as_str()}</td>
                            <td><ul class="tenant-list">
                                {u.tenants.into_iter().map(|m| {
                                    let id = id.clone();
                                    let label = format!("Remove {} from {}", u.email, m.slug);
                                    view! {
                                        <li>
                                            <code>{m.slug.clone()}</code>
                                            {(m.source == MembershipSource::Oidc).then(|| view! { <span class="muted">" (from group)"</span> })}
                                            <ActionForm action=remove attr:class="inline">
                                                <input type="hidden" name="user_id" value=id/>
                                                <input type="hidden" name="tenant" value=m.slug.clone()/>
                                                <button class="link" type="submit" aria-label=label>"remove"</button>
                                            </ActionForm>
                                        </li>
                                    }
                                }).collect_view()}
                            </ul></td>
                            <td>
                                <ActionForm action=assign attr:class="inline-form">
                                    <input type="hidden" name="user_id" value=id/>
                                    <input name="tenant" required maxlength="40" placeholder="tenant slug" aria-label=format!("Tenant for {}", u.email)/>
                                    <button class="button secondary" type="submit">"Add"</button>
                                </ActionForm>
                            </td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}
