//! The sign-in page: the organisation's single sign-on, and — only when the
//! server runs with `--dev-login` on a loopback address — a clearly
//! labelled development login that signs in as a seeded user.

use crate::model::SignInPageData;
use crate::pages::said::{Alert, Empty};
use crate::rpc::RpcError;
use leptos::prelude::*;

#[server(prefix = "/rpc", endpoint = "sign_in_options", output = crate::codec::JsonText)]
pub async fn load_sign_in_page() -> Result<SignInPageData, RpcError> {
    let (_, ctx) = crate::rpc::visitor()?;
    let options = ctx.sign_in;
    let dev_users = if options.dev_login {
        crate::backend::accounts::users::dev_login_candidates(&ctx.db)
            .await?
            .into_iter()
            .map(|u| crate::model::DevUser { email: u.email, name: u.name, role: u.role.as_str().to_string() })
            .collect()
    } else {
        Vec::new()
    };
    Ok(SignInPageData { options, dev_users })
}

#[component]
pub fn SignInPage() -> impl IntoView {
    let data = Resource::new(|| (), |_| load_sign_in_page());
    view! {
        <section class="page-head"><h1>"Sign in to Berth"</h1></section>
        <Suspense fallback=|| view! { <p class="loading">"Loading sign-in options…"</p> }>
            {move || data.get().map(|result| match result {
                Ok(data) => view! { <SignInChoices data/> }.into_any(),
                Err(err) => view! { <Alert>"Could not load sign-in options: " {err.to_string()}</Alert> }.into_any(),
            })}
        </Suspense>
    }
}

#[component]
fn SignInChoices(data: SignInPageData) -> impl IntoView {
    let nothing = !data.options.single_sign_on && !data.options.dev_login;
    view! {
        {data.options.single_sign_on.then(|| view! {
            <section class="panel">
                <p>"Use your organisation's account."</p>
                <a class="button" id="sso-login" href="/auth/login" rel="external">"Sign in with single sign-on"</a>
            </section>
        })}
        {data.options.dev_login.then(|| view! {
            <section class="panel dev-login" aria-labelledby="dev-login-title">
                <h2 id="dev-login-title">"Development login"</h2>
                <p class="warning">"For local development only: anyone who can reach this address can sign in as these users. It is refused on any address but loopback."</p>
                <form method="post" action="/auth/dev-login">
                    <label for="dev-user">"Sign in as"</label>
                    <select id="dev-user" name="email">
                        {data.dev_users.into_iter().map(|u| view! {
                            <option value=u.email.clone()>{format!("{} <{}> — {}", u.name, u.email, u.role)}</option>
                        }).collect_view()}
                    </select>
                    <button class="button" type="submit">"Sign in"</button>
                </form>
            </section>
        })}
        {nothing.then(|| view! {
            <Empty>"No sign-in method is configured. Start the portal with an OpenID provider (BERTH_OIDC_ISSUER) or, locally, with --dev-login."</Empty>
        })}
    }
}
