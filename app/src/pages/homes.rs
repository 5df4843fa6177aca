//! Homes and model caches that outlive the window (issue 46): your own in
//! Settings (size, last use, deletion date, and a button to delete each
//! sooner), and in the admin console every one with the same, plus each
//! tenant's sizes and retentions, and whether its caches are kept. Every
//! form posts without JavaScript too.

use super::field::Field;
use crate::model::{Home, HomesPage};
use crate::pages::said::Alert;
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

/// `user`: the owner's id (one's own; an admin: anyone's); `purpose`:
/// `home` or `cache`.
#[server(prefix = "/rpc", endpoint = "homes/delete", output = crate::codec::JsonText)]
pub async fn delete_home(user: Uuid, purpose: String) -> Result<(), RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let purpose = crate::model::Kept::parse(&purpose).ok_or_else(|| {
        crate::backend::ServiceError::from(crate::rules::FieldError::new("purpose", "must be home or cache"))
    })?;
    Ok(crate::backend::homes::delete(&ctx.db, &principal, user, Some(purpose)).await?)
}

#[server(prefix = "/rpc", endpoint = "admin/homes/tenant", output = crate::codec::JsonText)]
pub async fn set_tenant_homes(
    tenant: String,
    home_gib: String,
    home_retention_days: String,
    cache_gib: String,
    cache_retention_days: String,
    cache_kept: String,
) -> Result<crate::model::ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let saved = async {
        let number = |field: &str, text: &str| -> Result<Option<i32>, crate::backend::ServiceError> {
            match text.trim() {
                "" => Ok(None),
                text => text
                    .parse()
                    .map(Some)
                    .map_err(|_| crate::rules::FieldError::new(field, "must be a whole number").into()),
            }
        };
        let required = |field: &'static str, text: &str| {
            number(field, text)?
                .ok_or_else(|| crate::backend::ServiceError::from(crate::rules::FieldError::new(field, "is required")))
        };
        let cache_kept = match cache_kept.as_str() {
            "kept" => true,
            "per-session" => false,
            _ => return Err(crate::rules::FieldError::new("cache_kept", "must be kept or per-session").into()),
        };
        let settings = crate::model::HomeSettings {
            home_gib: required("home_gib", &home_gib)?,
            home_retention_days: number("home_retention_days", &home_retention_days)?,
            cache_gib: required("cache_gib", &cache_gib)?,
            cache_retention_days: number("cache_retention_days", &cache_retention_days)?,
            cache_kept,
        };
        crate::backend::homes::set_tenant(&ctx.db, &principal, &tenant, settings).await
    };
    // A refused size or number of days is said beside it, in that tenant's row.
    crate::rpc::act(saved.await, |_| format!("Saved the homes of {tenant}."))
}

#[server(prefix = "/rpc", endpoint = "admin/homes/price", output = crate::codec::JsonText)]
pub async fn set_home_price(per_gib_month: String) -> Result<crate::model::ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let saved = match per_gib_month.trim().parse::<f64>() {
        Ok(per_gib_month) => {
            crate::backend::homes::set_price(&ctx.db, &principal, crate::model::HomePrice { per_gib_month }).await
        }
        Err(_) => Err(crate::rules::FieldError::new("per_gib_month", "must be a number").into()),
    };
    // A refused price is said beside its field.
    crate::rpc::act_at(Some(PRICE), saved, |p| {
        format!("Saved: a GiB-month costs {}.", crate::model::figure_text(p.per_gib_month))
    })
}

/// The price form's section: its answers are shown there.
const PRICE: &str = "price-notice";

/// A home as one line: size, where it is (a cluster other than the
/// default), last use, deletion date.
fn line(home: &Home, last: &str, gone: &str) -> String {
    let class =
        if home.storage_class.is_empty() { String::new() } else { format!(", storage class {}", home.storage_class) };
    let cluster = if home.cluster.is_empty() || home.cluster == crate::model::DEFAULT_CLUSTER {
        String::new()
    } else {
        format!(" on cluster {}", home.cluster)
    };
    format!("{} GiB{cluster}{class} · last used {last} · deleted {gone}", home.size_gib)
}

/// Settings: the signed-in person's home and model cache.
#[component]
pub fn MyHome() -> impl IntoView {
    let delete = ServerAction::<DeleteHome>::new();
    let page = Resource::new(move || delete.version().get(), |_| load_homes());
    view! {
        <section class="panel" aria-labelledby="home-title">
            <h2 id="home-title">"Your home and model cache"</h2>
            <Transition fallback=|| view! { <p class="loading">"Loading your home…"</p> }>
                {move || page.get().map(|result| match result {
                    Ok(page) if page.homes.is_empty() => {
                        let days = page.site_retention_days;
                        view! {
                            <p class="muted">"Your first session makes your home (/home/jovyan) and model cache "
                                "(/models): every session of yours then mounts them, and they are kept " {days}
                                " days after your last one (or as your tenant says)."</p>
                        }.into_any()
                    }
                    Ok(page) => {
                        let tz = page.tz.clone();
                        page.homes.into_iter().map(|(home, last, gone)| {
                            view! { <KeptLine home last gone tz=tz.clone() delete/> }
                        }).collect_view().into_any()
                    }
                    Err(err) => view! { <Alert>"Could not load your home: " {err.to_string()}</Alert> }.into_any(),
                })}
            </Transition>
            {move || delete.value().get().map(|result| match result {
                Ok(()) => view! { <p class="notice" role="status">"It is deleted as soon as no session of yours holds it."</p> }.into_any(),
                Err(err) => view! { <Alert>{err.to_string()}</Alert> }.into_any(),
            })}
        </section>
    }
}

/// One of one's kept volumes in Settings, with its delete button.
#[component]
fn KeptLine(home: Home, last: String, gone: String, tz: String, delete: ServerAction<DeleteHome>) -> impl IntoView {
    let (label, mount) = (home.purpose.label(), home.purpose.mount());
    let name = label.to_lowercase();
    view! {
        <p id=format!("my-{}", home.purpose.as_str())>{label} " (" {mount} ") · " {line(&home, &last, &gone)} " (" {tz} ")."</p>
        {(!home.delete_requested).then(|| view! {
            <details class="confirm-delete">
                <summary class="button danger">"Delete my " {name.clone()}</summary>
                <ActionForm action=delete attr:class="inline-form">
                    <input type="hidden" name="user" value=home.user_id.to_string()/>
                    <input type="hidden" name="purpose" value=home.purpose.as_str()/>
                    <span>"Everything in it goes, for good. "</span>
                    <button class="button danger" type="submit">"Yes, delete my " {name}</button>
                </ActionForm>
            </details>
        })}
    }
}

/// Which tenant's row of sizes was sent last, for its fault to show there.
#[derive(Clone, Copy)]
struct SentTenant(RwSignal<Option<String>>);

/// The admin console's homes page.
#[component]
pub fn AdminHomesPage() -> impl IntoView {
    let delete = ServerAction::<DeleteHome>::new();
    let tenant = ServerAction::<SetTenantHomes>::new();
    let price = ServerAction::<SetHomePrice>::new();
    let priced = super::notice::deeds(price);
    let tenant_saved = super::notice::deeds(tenant);
    let page = Resource::new(move || (delete.version().get(), tenant_saved.get(), priced.get()), |_| load_all_homes());
    // The price's answer is said in its own section, a tenant's refused
    // field in its row.
    let outcome = move || {
        let failed = [delete.value().get().and_then(|r| r.err()), price.value().get().and_then(|r| r.err())];
        failed.into_iter().flatten().next().map(|err| view! { <Alert>{err.to_string()}</Alert> })
    };
    let saved = move || super::notice::notice_view(super::notice::unless_beside(tenant.value().get()), None);
    // Whose row was sent last, kept by the page (the tables are drawn anew
    // after each change).
    provide_context(SentTenant(super::field::last_sent(tenant, |asked| asked.tenant)));
    view! {
        <section class="page-head"><h1>"Homes"</h1></section>
        <p class="muted">"Each person's home and model cache outlive their sessions: each is kept a number of days "
            "after their last session ended, then deleted. Deleting one here deletes it as soon as no session holds it."</p>
        {outcome}
        {saved}
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
    let from_query = super::notice::query_notice();
    let price_refused = Signal::derive(move || {
        let query = from_query.get().filter(|n| n.at.as_deref() == Some(PRICE));
        super::field::refused_field(price.value().get(), query)
    });
    let homes = page.homes.into_iter().map(|(home, last, gone)| {
        let owner = format!("{} <{}>", home.owner_name, home.owner_email);
        let what = home.purpose.label();
        view! {
            <tr>
                <td>{owner.clone()}</td>
                <td>{what}</td>
                <td>{home.size_gib} " GiB"</td>
                <td>{last}</td>
                <td>{gone}</td>
                <td>{(!home.delete_requested).then(|| view! {
                    <details class="confirm-delete">
                        <summary class="button danger" aria-label=format!("Delete the {} of {owner}", what.to_lowercase())>"Delete"</summary>
                        <ActionForm action=delete attr:class="inline">
                            <input type="hidden" name="user" value=home.user_id.to_string()/>
                            <input type="hidden" name="purpose" value=home.purpose.as_str()/>
                            <button class="button danger" type="submit">"Yes, delete it and everything in it"</button>
                        </ActionForm>
                    </details>
                })}</td>
            </tr>
        }
    }).collect_view();
    let SentTenant(sent) = expect_context::<SentTenant>();
    let tenants = page.tenants.into_iter().map(|(slug, settings)| {
        let form_id = format!("homes-{slug}");
        let refused = Signal::derive({
            let slug = slug.clone();
            move || {
                let here = sent.with(|s| s.as_deref() == Some(slug.as_str()));
                here.then(|| super::field::refused_field(tenant.value().get(), None)).flatten()
            }
        });
        let number = |name: &'static str, label: String, value: String, placeholder: String| {
            let (form_id, error_form) = (form_id.clone(), format!("{form_id}-{name}"));
            view! {
                <td><Field form=error_form name label quiet=true refused let:aria>
                    <input form=form_id.clone() name=name inputmode="numeric" size="6" value=value.clone()
                        placeholder=placeholder.clone()
                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                </Field></td>
            }
        };
        let days = |d: Option<i32>| d.map(|d| d.to_string()).unwrap_or_default();
        view! {
            <tr>
                <td><code>{slug.clone()}</code></td>
                {number("home_gib", format!("Home size in GiB, {slug}"), settings.home_gib.to_string(), String::new())}
                {number("home_retention_days", format!("Days kept, {slug}"), days(settings.home_retention_days), site.to_string())}
                {number("cache_gib", format!("Model cache size in GiB, {slug}"), settings.cache_gib.to_string(), String::new())}
                {number("cache_retention_days", format!("Days a model cache is kept, {slug}"),
                    days(settings.cache_retention_days), site.to_string())}
                <td><select form=form_id.clone() name="cache_kept" aria-label=format!("Model cache, {slug}")>
                    <option value="kept" selected=settings.cache_kept>"kept"</option>
                    <option value="per-session" selected=!settings.cache_kept>"per session"</option>
                </select></td>
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
            <thead><tr><th>"Owner"</th><th>"What"</th><th>"Size"</th><th>"Last used"</th><th>"Deleted"</th><th><span class="visually-hidden">"Actions"</span></th></tr></thead>
            <tbody>{homes}</tbody>
        </table>
        <h2>"Per tenant"</h2>
        <p class="muted">"The size of a member's new home and model cache, and how many days each is kept after "
            "its owner's last session (empty: the site's " {site} "). A model cache \"per session\" ends with each "
            "session, as everything else in it does."</p>
        <table class="bookings homes-per-tenant">
            <thead><tr><th>"Tenant"</th><th>"Home size (GiB)"</th><th>"Home days kept"</th><th>"Cache size (GiB)"</th><th>"Cache days kept"</th><th>"Model cache"</th><th><span class="visually-hidden">"Actions"</span></th></tr></thead>
            <tbody>{tenants}</tbody>
        </table>
        <h2>"Price"</h2>
        <p class="muted">"Reports show the storage each tenant's homes and model caches held, in GiB-days, and its showback at this "
            "price per GiB and month (30 days), in the site's currency."</p>
        <ActionForm action=price attr:class="fields-row" attr:id="home-price">
            <Field form="home-price" name="per_gib_month" label="Per GiB-month" refused=price_refused let:aria>
                <input name="per_gib_month" inputmode="decimal" size="8" required value=per_gib_month.clone()
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
            <button class="button secondary" type="submit">"Save price"</button>
        </ActionForm>
        {move || super::notice::section_notice(PRICE, price.value().get(), from_query.get())}
    }
}
