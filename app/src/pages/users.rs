//! Admins only: every user with their role and tenants, where tenants can be
//! added or removed by hand (group-granted ones are marked; they return at
//! the next login while the group stays).

use super::field::Field;
use crate::model::{ActionNotice, MembershipSource, UserSummary};
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
pub async fn assign_tenant(user_id: Uuid, tenant: String) -> Result<Answer, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    // A refused slug comes back as a notice, said beside that user's field.
    crate::rpc::beside_posted(
        crate::backend::accounts::users::assign_tenant(&ctx.db, &principal, user_id, tenant.trim()).await,
    )
}

/// A user as changed, or why not (a refused field, said beside it).
pub type Answer = Result<UserSummary, ActionNotice>;

#[server(prefix = "/rpc", endpoint = "users/remove_tenant", output = crate::codec::JsonText)]
pub async fn remove_tenant(user_id: Uuid, tenant: String) -> Result<UserSummary, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let removed = crate::backend::accounts::users::remove_tenant(&ctx.db, &principal, user_id, &tenant).await?;
    // Their tokens on this server lose the tenant now, not within the cache's TTL.
    ctx.tokens.forget_user(user_id);
    Ok(removed)
}

#[server(prefix = "/rpc", endpoint = "users/disable", output = crate::codec::JsonText)]
pub async fn disable_user(user_id: Uuid, reason: String) -> Result<Answer, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let disabled = crate::backend::accounts::disable::disable(&ctx.db, &ctx.tokens, &principal, user_id, &reason).await;
    crate::rpc::beside_posted(disabled)
}

#[server(prefix = "/rpc", endpoint = "users/enable", output = crate::codec::JsonText)]
pub async fn enable_user(user_id: Uuid) -> Result<UserSummary, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::disable::enable(&ctx.db, &principal, user_id).await?)
}

/// The users whose assign and disable forms were sent last.
#[derive(Clone, Copy)]
struct Sent {
    assign: RwSignal<Option<Uuid>>,
    disable: RwSignal<Option<Uuid>>,
}

/// The field refusal of `action`'s last answer, if it was about `user`.
fn refused_for<S>(
    action: ServerAction<S>,
    sent: RwSignal<Option<Uuid>>,
    user: Uuid,
) -> Signal<Option<crate::model::FieldError>>
where
    S: leptos::server_fn::ServerFn<Output = Answer, Error = RpcError> + Send + Sync + Clone + 'static,
{
    Signal::derive(move || (sent.get() == Some(user)).then(|| action.value().get()?.ok()?.err()?.field).flatten())
}

#[component]
pub fn UsersPage() -> impl IntoView {
    let assign = ServerAction::<AssignTenant>::new();
    let remove = ServerAction::<RemoveTenant>::new();
    let disable = ServerAction::<DisableUser>::new();
    let enable = ServerAction::<EnableUser>::new();
    let (assigned, disabled) = (super::notice::deeds(assign), super::notice::deeds(disable));
    let users = Resource::new(
        move || (assigned.get(), remove.version().get(), disabled.get(), enable.version().get()),
        |_| list_users(),
    );
    // Whose form was sent last, kept by the page (the table is drawn anew
    // after each change): that row says its refusal beside the field.
    let sent = Sent {
        assign: super::field::last_sent(assign, |asked| asked.user_id),
        disable: super::field::last_sent(disable, |asked| asked.user_id),
    };
    provide_context(sent);
    let from_query = super::notice::query_notice();
    let failure = move || {
        let errors = [
            assign.value().get().and_then(|r| r.err()),
            remove.value().get().and_then(|r| r.err()),
            disable.value().get().and_then(|r| r.err()),
            enable.value().get().and_then(|r| r.err()),
        ];
        let refused = [assign.value().get(), disable.value().get()]
            .into_iter()
            .flatten()
            .filter_map(|answer| answer.ok()?.err())
            .find(|notice| notice.field.is_none())
            .map(|notice| notice.message);
        // A script-less post's refusal comes back in the URL, without its row.
        let answered = [assign.value(), disable.value()].iter().any(|v| v.with(Option::is_some));
        let posted = move || from_query.get().filter(|n| !n.ok && !answered).map(|n| n.message);
        errors
            .into_iter()
            .flatten()
            .map(|err| err.to_string())
            .next()
            .or(refused)
            .or_else(posted)
            .map(|text| view! { <Alert>{text}</Alert> })
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
                    let sent = expect_context::<Sent>();
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
                                <Field form=format!("disable-{}", u.id) name="reason" label=format!("Reason to disable {email}")
                                    quiet=true refused=refused_for(disable, sent.disable, u.id) let:aria>
                                    <input name="reason" required maxlength="500" placeholder="why"
                                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                                </Field>
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
                                    <Field form=format!("assign-{}", u.id) name="tenant" label=format!("Tenant for {}", u.email)
                                        quiet=true refused=refused_for(assign, sent.assign, u.id) let:aria>
                                        <input name="tenant" required maxlength="40" placeholder="tenant slug"
                                            aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                                    </Field>
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
