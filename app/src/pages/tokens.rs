//! API tokens for the signed-in user: create (shown once), list with last
//! use, revoke. The same tokens `berth token create` makes.

use super::field::Field;
use crate::model::{ActionNotice, CreatedToken, FieldError};
use crate::model::{Clock, TokenInfo, TokenScope, MAX_TOKEN_DAYS};
use crate::pages::said::{Alert, Empty};
use crate::rpc::RpcError;
use leptos::prelude::*;
use uuid::Uuid;

#[server(prefix = "/rpc", endpoint = "tokens/list", output = crate::codec::JsonText)]
pub async fn list_tokens() -> Result<Vec<TokenInfo>, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::tokens::list_for(&ctx.db, &principal).await?)
}

#[server(prefix = "/rpc", endpoint = "tokens/create", output = crate::codec::JsonText)]
pub async fn create_token(
    name: String,
    expires_in_days: i64,
    // Left out (a form from before scopes): the least, read only.
    scope: Option<String>,
) -> Result<Result<CreatedToken, ActionNotice>, RpcError> {
    let scope = scope.unwrap_or_else(|| TokenScope::Read.as_str().to_string());
    let (principal, ctx) =
        crate::rpc::browser("API tokens are created from a signed-in browser session, never with another API token")?;
    // A refused name or expiry comes back as a notice, said beside its field.
    crate::rpc::beside_posted(
        crate::backend::accounts::tokens::create_for(&ctx.db, &principal, &name, expires_in_days, &scope).await,
    )
}

#[server(prefix = "/rpc", endpoint = "tokens/revoke", output = crate::codec::JsonText)]
pub async fn revoke_token(id: Uuid) -> Result<TokenInfo, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::tokens::revoke(&ctx.db, &ctx.tokens, &principal, id).await?)
}

#[component]
pub fn TokensPage() -> impl IntoView {
    let create = ServerAction::<CreateToken>::new();
    let revoke = ServerAction::<RevokeToken>::new();
    let tokens = Resource::new(move || (create.version().get(), revoke.version().get()), |_| list_tokens());
    // The refusal of the last answer, or the one a script-less post came back with.
    let from_query = super::notice::query_notice();
    let refused = Signal::derive(move || -> Option<FieldError> {
        match create.value().get() {
            Some(answer) => answer.ok()?.err()?.field,
            None => from_query.get()?.field,
        }
    });
    view! {
        <section class="page-head"><h1>"API tokens"</h1></section>
        <p class="muted">"Tokens let scripts, the REST API and AI assistants (MCP) act as you: send one as "
            <code>"Authorization: Bearer <token>"</code> ". Give each the least it needs: an assistant that only \
            looks and books does not need to cancel."</p>
        <section class="panel">
            <h2>"New token"</h2>
            <ActionForm action=create attr:class="fields-row">
                <Field form="new-token" name="name" label="Name" refused let:aria>
                    <input name="name" required maxlength="60" placeholder="e.g. laptop notebook"
                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                </Field>
                <Field form="new-token" name="expires_in_days" label="Expires in (days)" refused let:aria>
                    <input name="expires_in_days" type="number" min="1" max=MAX_TOKEN_DAYS.to_string() value="30" required
                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                </Field>
                <Field form="new-token" name="scope" label="May" refused let:aria>
                    <select name="scope" aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()>
                        {TokenScope::ALL.into_iter().map(|scope| view! {
                            <option value=scope.as_str() selected=scope == TokenScope::Read>{scope.says()}</option>
                        }).collect_view()}
                    </select>
                </Field>
                <button class="button" type="submit">"Create token"</button>
            </ActionForm>
            {move || create.value().get().map(|result| match result {
                Ok(Ok(created)) => view! {
                    <div class="token-once" role="status">
                        <p>"Token " <strong>{created.name}</strong> " — copy it now, it is shown only once:"</p>
                        <code id="new-token">{created.token}</code>
                    </div>
                }.into_any(),
                // Said beside the field it is about.
                Ok(Err(notice)) if notice.field.is_some() => ().into_any(),
                Ok(Err(notice)) => view! { <p class="outcome refused" role="alert">{notice.message}</p> }.into_any(),
                Err(err) => view! { <p class="outcome refused" role="alert">{err.to_string()}</p> }.into_any(),
            })}
            {move || create.value().with(Option::is_none).then(|| from_query.get())
                .flatten()
                .filter(|notice| !notice.ok && notice.field.is_none())
                .map(|notice| view! { <p class="outcome refused" role="alert">{notice.message}</p> })}
        </section>
        <h2>"Your tokens"</h2>
        <Transition fallback=|| view! { <p class="loading">"Loading tokens…"</p> }>
            {move || tokens.get().zip(super::reader_clock()).map(|(result, clock)| match result {
                Ok(list) if list.is_empty() => view! { <Empty>"No tokens yet."</Empty> }.into_any(),
                Ok(list) => view! { <TokenTable list revoke clock/> }.into_any(),
                Err(err) => view! { <Alert>"Could not load tokens: " {err.to_string()}</Alert> }.into_any(),
            })}
        </Transition>
    }
}

#[component]
fn TokenTable(list: Vec<TokenInfo>, revoke: ServerAction<RevokeToken>, clock: Clock) -> impl IntoView {
    let tz = clock.tz.clone();
    view! {
        <p class="muted zone-note">"Times in " {tz}</p>
        <table class="bookings" id="token-list">
            <thead><tr><th>"Name"</th><th>"Created"</th><th>"May"</th><th>"Expires"</th><th>"Last used"</th><th>"Status"</th><th><span class="visually-hidden">"Actions"</span></th></tr></thead>
            <tbody>
                {list.into_iter().map(|t| {
                    let live = t.revoked_at.is_none();
                    view! {
                        <tr>
                            <td>{t.name.clone()}</td>
                            <td>{clock.when(t.created_at)}</td>
                            <td class="token-scope">{t.scope.says()}</td>
                            <td>{clock.when(t.expires_at)}</td>
                            <td>{t.last_used_at.map(|at| clock.when(at)).unwrap_or_else(|| "never".into())}</td>
                            <td>{if live { "active" } else { "revoked" }}</td>
                            <td>{live.then(|| view! {
                                <ActionForm action=revoke>
                                    <input type="hidden" name="id" value=t.id.to_string()/>
                                    <button class="button secondary" type="submit" aria-label=format!("Revoke {}", t.name)>"Revoke"</button>
                                </ActionForm>
                            })}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}
