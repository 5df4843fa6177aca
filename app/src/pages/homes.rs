//! Homes that outlive the window (issue 46): your own in Settings (its
//! size, last use, deletion date, and a button to delete it sooner), and
//! in the admin console every home with the same, plus each tenant's home
//! size and retention. Every form posts without JavaScript too.

use crate::model::{Home, HomesPage};
use crate::rpc::RpcError;
use leptos::prelude::*;
use uuid::Uuid;

/// The signed-in person's own home.
#[server(prefix = "/rpc", endpoint = "homes", output = crate::codec::JsonText)]
pub async fn load_homes() -> Result<HomesPage, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let tz = crate::backend::accounts::time_zone::of(&ctx.db, &principal).await?.unwrap_or_else(|| "UTC".into());
    Ok(crate::backend::homes::page(&ctx.db, &principal, &tz, false).await?)
}

/// Every home and each tenant's settings (admins).
#[server(prefix = "/rpc", endpoint = "admin/homes", output = crate::codec::JsonText)]
pub async fn load_all_homes() -> Result<HomesPage, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let tz = crate::backend::accounts::time_zone::of(&ctx.db, &principal).await?.unwrap_or_else(|| "UTC".into());
    Ok(crate::backend::homes::page(&ctx.db, &principal, &tz, true).await?)
}

/// `user`: the owner's id (one's own; an admin: anyone's).
#[server(prefix = "/rpc", endpoint = "homes/delete", output = crate::codec::JsonText)]
pub async fn delete_home(user: Uuid) -> Result<(), RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::homes::delete(&ctx.db, &principal, user).await?)
}

#[server(prefix = "/rpc", endpoint = "admin/homes/tenant", output = crate::codec::JsonText)]
pub async fn set_tenant_homes(
    tenant: String,
    home_gib: String,
    home_retention_days: String,
) -> Result<crate::model::HomeSettings, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let number = |field: &str, text: &str| -> Result<Option<i32>, crate::backend::ServiceError> {
        match text.trim() {
            "" => Ok(None),
            text => text
                .parse()
                .map(Some)
                .map_err(|_| crate::rules::FieldError::new(field, "must be a whole number").into()),
        }
    };
    let home_gib = number("home_gib", &home_gib)?
        .ok_or_else(|| crate::backend::ServiceError::from(crate::rules::FieldError::new("home_gib", "is required")))?;
    let settings = crate::model::HomeSettings {
        home_gib,
        home_retention_days: number("home_retention_days", &home_retention_days)?,
    };
    Ok(crate::backend::homes::set_tenant(&ctx.db, &principal, &tenant, settings).await?)
}

#[server(prefix = "/rpc", endpoint = "admin/homes/price", output = crate::codec::JsonText)]
pub async fn set_home_price(per_gib_month: String) -> Result<crate::model::HomePrice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let per_gib_month: f64 = per_gib_month.trim().parse().map_err(|_| {
        crate::backend::ServiceError::from(crate::rules::FieldError::new("per_gib_month", "must be a number"))
    })?;
    Ok(crate::backend::homes::set_price(&ctx.db, &principal, crate::model::HomePrice { per_gib_month }).await?)
}

/// A home as one line: size, last use, deletion date.
fn line(home: &Home, last: &str, gone: &str) -> String {
    let class =
        if home.storage_class.is_empty() { String::new() } else { format!(", storage class {}", home.storage_class) };
    format!("{} GiB{class} · last used {last} · deleted {gone}", home.size_gib)
}

/// Settings: the signed-in person's home.
#[component]
pub fn MyHome() -> impl IntoView {
    let delete = ServerAction::<DeleteHome>::new();
    let page = Resource::new(move || delete.version().get(), |_| load_homes());
    view! {
        <section class="panel" aria-labelledby="home-title">
            <h2 id="home-title">"Your home"</h2>
            <Transition fallback=|| view! { <p class="loading">"Loading your home…"</p> }>
                {move || page.get().map(|result| match result {
                    Ok(page) => {
                        let days = page.site_retention_days;
                        match page.homes.into_iter().next() {
                            None => view! {
                                <p class="muted">"Your first session makes your home (/home/jovyan): every session of yours "
                                    "then mounts it, and it is kept " {days} " days after your last one (or as your tenant says)."</p>
                            }.into_any(),
                            Some((home, last, gone)) => view! {
                                <p id="my-home">"/home/jovyan · " {line(&home, &last, &gone)} " (" {page.tz.clone()} ")."</p>
                                <p class="muted">"Every session of yours mounts it; a session before that date keeps it longer."</p>
                                {(!home.delete_requested).then(|| view! {
                                    <details class="confirm-delete">
                                        <summary class="button danger">"Delete my home"</summary>
                                        <ActionForm action=delete attr:class="inline-form">
                                            <input type="hidden" name="user" value=home.user_id.to_string()/>
                                            <span>"Everything in it goes, for good. "</span>
                                            <button class="button danger" type="submit">"Yes, delete my home"</button>
                                        </ActionForm>
                                    </details>
                                })}
                            }.into_any(),
                        }
                    }
                    Err(err) => view! { <p class="error" role="alert">"Could not load your home: " {err.to_string()}</p> }.into_any(),
                })}
            </Transition>
            {move || delete.value().get().map(|result| match result {
                Ok(()) => view! { <p class="notice" role="status">"Your home is deleted as soon as no session of yours holds it."</p> }.into_any(),
                Err(err) => view! { <p class="error" role="alert">{err.to_string()}</p> }.into_any(),
            })}
        </section>
    }
}

/// The admin console's homes page.
#[component]
pub fn AdminHomesPage() -> impl IntoView {
    let delete = ServerAction::<DeleteHome>::new();
    let tenant = ServerAction::<SetTenantHomes>::new();
    let price = ServerAction::<SetHomePrice>::new();
    let page = Resource::new(
        move || (delete.version().get(), tenant.version().get(), price.version().get()),
        |_| load_all_homes(),
    );
    let outcome = move || {
        let failed = [
            delete.value().get().and_then(|r| r.err()),
            tenant.value().get().and_then(|r| r.err()),
            price.value().get().and_then(|r| r.err()),
        ];
        let saved = tenant.value().get().is_some_and(|r| r.is_ok()) || price.value().get().is_some_and(|r| r.is_ok());
        match failed.into_iter().flatten().next() {
            Some(err) => Some(view! { <p class="error" role="alert">{err.to_string()}</p> }.into_any()),
            None => saved.then(|| view! { <p class="notice" role="status">"Saved."</p> }.into_any()),
        }
    };
    view! {
        <section class="page-head"><h1>"Homes"</h1></section>
        <p class="muted">"Each person's home outlives their sessions: it is kept a number of days after their last "
            "session ended, then deleted. Deleting one here deletes it as soon as no session holds it."</p>
        {outcome}
        <Transition fallback=|| view! { <p class="loading">"Loading homes…"</p> }>
            {move || page.get().map(|result| match result {
                Ok(page) => view! { <HomesTables page delete tenant price/> }.into_any(),
                Err(err) => super::forbidden::or_refusal(super::forbidden::ADMINS, "Could not load homes: ", err),
            })}
        </Transition>
    }
}

#[component]
fn HomesTables(
    page: HomesPage,
    delete: ServerAction<DeleteHome>,
    tenant: ServerAction<SetTenantHomes>,
    price: ServerAction<SetHomePrice>,
) -> impl IntoView {
    let site = page.site_retention_days;
    let per_gib_month = page.price_per_gib_month.to_string();
    let homes = page.homes.into_iter().map(|(home, last, gone)| {
        let owner = format!("{} <{}>", home.owner_name, home.owner_email);
        view! {
            <tr>
                <td>{owner.clone()}</td>
                <td>{home.size_gib} " GiB"</td>
                <td>{last}</td>
                <td>{gone}</td>
                <td>{(!home.delete_requested).then(|| view! {
                    <details class="confirm-delete">
                        <summary class="button danger" aria-label=format!("Delete the home of {owner}")>"Delete"</summary>
                        <ActionForm action=delete attr:class="inline">
                            <input type="hidden" name="user" value=home.user_id.to_string()/>
                            <button class="button danger" type="submit">"Yes, delete it and everything in it"</button>
                        </ActionForm>
                    </details>
                })}</td>
            </tr>
        }
    }).collect_view();
    let tenants = page.tenants.into_iter().map(|(slug, settings)| {
        let form_id = format!("homes-{slug}");
        view! {
            <tr>
                <td><code>{slug.clone()}</code></td>
                <td><input form=form_id.clone() name="home_gib" inputmode="numeric" size="6" required
                    value=settings.home_gib.to_string() aria-label=format!("Home size in GiB, {slug}")/></td>
                <td><input form=form_id.clone() name="home_retention_days" inputmode="numeric" size="5"
                    value=settings.home_retention_days.map(|d| d.to_string()).unwrap_or_default()
                    placeholder=site.to_string() aria-label=format!("Days kept, {slug}")/></td>
                <td>
                    <ActionForm action=tenant attr:id=form_id>
                        <input type="hidden" name="tenant" value=slug.clone()/>
                        <button class="button secondary" type="submit" aria-label=format!("Save homes, {slug}")>"Save"</button>
                    </ActionForm>
                </td>
            </tr>
        }
    }).collect_view();
    view! {
        <h2>"Every home (" {page.tz} ")"</h2>
        <table class="bookings homes">
            <thead><tr><th>"Owner"</th><th>"Size"</th><th>"Last used"</th><th>"Deleted"</th><th><span class="visually-hidden">"Actions"</span></th></tr></thead>
            <tbody>{homes}</tbody>
        </table>
        <h2>"Per tenant"</h2>
        <p class="muted">"The size of a member's new home, and how many days a home is kept after its owner's "
            "last session (empty: the site's " {site} ")."</p>
        <table class="bookings homes-per-tenant">
            <thead><tr><th>"Tenant"</th><th>"Home size (GiB)"</th><th>"Days kept"</th><th><span class="visually-hidden">"Actions"</span></th></tr></thead>
            <tbody>{tenants}</tbody>
        </table>
        <h2>"Price"</h2>
        <p class="muted">"Reports show the storage each tenant's homes held, in GiB-days, and its showback at this "
            "price per GiB and month (30 days), in the site's currency."</p>
        <ActionForm action=price attr:class="inline-form">
            <label>"Per GiB-month " <input name="per_gib_month" inputmode="decimal" size="8" required value=per_gib_month/></label>
            <button class="button secondary" type="submit">"Save price"</button>
        </ActionForm>
    }
}
