//! Admins only: every user with their role and tenants, where tenants can be
//! added or removed by hand (group-granted ones are marked; they return at
//! the next login while the group stays).

use crate::model::{MembershipSource, UserSummary};
use crate::pages::said::Alert;
use crate::rpc::RpcError;
use leptos::prelude::*;
use uuid::Uuid;

#[server(prefix = "/rpc", endpoint = "users/list", output = crate::codec::JsonText)]
pub async fn list_users() -> Result<Vec<UserSummary>, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::users::list(&ctx.db, &principal).await?)
}

#[server(prefix = "/rpc", endpoint = "users/assign_tenant", output = crate::codec::JsonText)]
pub async fn assign_tenant(user_id: Uuid, tenant: String) -> Result<UserSummary, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::users::assign_tenant(&ctx.db, &principal, user_id, tenant.trim()).await?)
}

#[server(prefix = "/rpc", endpoint = "users/remove_tenant", output = crate::codec::JsonText)]
pub async fn remove_tenant(user_id: Uuid, tenant: String) -> Result<UserSummary, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::users::remove_tenant(&ctx.db, &principal, user_id, &tenant).await?)
}

#[server(prefix = "/rpc", endpoint = "users/disable", output = crate::codec::JsonText)]
pub async fn disable_user(user_id: Uuid, reason: String) -> Result<UserSummary, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::disable::disable(&ctx.db, &ctx.tokens, &principal, user_id, &reason).await?)
}

#[server(prefix = "/rpc", endpoint = "users/enable", output = crate::codec::JsonText)]
pub async fn enable_user(user_id: Uuid) -> Result<UserSummary, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::disable::enable(&ctx.db, &principal, user_id).await?)
}

#[component]
pub fn UsersPage() -> impl IntoView {
    let assign = ServerAction::<AssignTenant>::new();
    let remove = ServerAction::<RemoveTenant>::new();
    let disable = ServerAction::<DisableUser>::new();
    let enable = ServerAction::<EnableUser>::new();
    let users = Resource::new(
        move || (assign.version().get(), remove.version().get(), disable.version().get(), enable.version().get()),
        |_| list_users(),
    );
    let failure = move || {
        let errors = [
            assign.value().get().and_then(|r| r.err()),
            remove.value().get().and_then(|r| r.err()),
            disable.value().get().and_then(|r| r.err()),
            enable.value().get().and_then(|r| r.err()),
        ];
        errors.into_iter().flatten().next().map(|err| view! { <Alert>{err.to_string()}</Alert> })
    };
    view! {
        <section class="page-head"><h1>"Users"</h1></section>
        <p class="muted">"Roles come from identity-provider groups at each login. Tenants can also be assigned here."</p>
        {failure}
        <Transition fallback=|| view! { <p class="loading">"Loading users…"</p> }>
            {move || users.get().map(|result| match result {
                Ok(list) => view! { <UserTable list assign remove disable enable/> }.into_any(),
                Err(err) => super::forbidden::or_refusal(super::forbidden::ADMINS, "Could not load users: ", err),
            })}
        </Transition>
    }
}

#[component]
fn UserTable(
    list: Vec<UserSummary>,
    assign: ServerAction<AssignTenant>,
    remove: ServerAction<RemoveTenant>,
    disable: ServerAction<DisableUser>,
    enable: ServerAction<EnableUser>,
) -> impl IntoView {
    view! {
        <table class="bookings" id="user-list">
            <thead><tr><th>"User"</th><th>"Role"</th><th>"Tenants"</th><th>"Add tenant"</th><th>"Access"</th></tr></thead>
            <tbody>
                {list.into_iter().map(|u| {
                    let id = u.id.to_string();
                    let (access_id, email) = (id.clone(), u.email.clone());
                    let access = match u.disabled.clone() {
                        Some(reason) => view! {
                            <span class="badge state-failed">"disabled"</span>
                            <span class="muted">" " {reason}</span>
                            <ActionForm action=enable attr:class="inline">
                                <input type="hidden" name="user_id" value=access_id/>
                                <button class="link" type="submit" aria-label=format!("Enable {email}")>"enable"</button>
                            </ActionForm>
                        }.into_any(),
                        None => view! {
                            <ActionForm action=disable attr:class="inline-form">
                                <input type="hidden" name="user_id" value=access_id/>
                                <input name="reason" required maxlength="500" placeholder="why"
                                    aria-label=format!("Why disable {email}")/>
                                <button class="button danger" type="submit" aria-label=format!("Disable {email}")>"Disable"</button>
                            </ActionForm>
                        }.into_any(),
                    };
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
                            <td>{access}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}
