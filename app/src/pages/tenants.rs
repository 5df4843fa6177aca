//! Admins only: tenants, their members, and their quotas per pool+kind with
//! this week's use. Every form posts without JavaScript too.

use super::field::{refused_field, Field};
use crate::model::{ActionNotice, FieldError, QuotaTarget, QuotaUsage, Tenant, TenantUsage, TenantsPage};
use crate::rpc::RpcError;
use leptos::prelude::*;
use uuid::Uuid;

#[server(prefix = "/rpc", endpoint = "admin/tenants", output = crate::codec::JsonText)]
pub async fn load_tenants() -> Result<TenantsPage, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::tenants::page(&ctx.db, &principal).await?)
}

/// Creates a tenant; a refused slug or name is said beside its field.
#[server(prefix = "/rpc", endpoint = "admin/tenants/create", output = crate::codec::JsonText)]
pub async fn create_tenant(slug: String, name: String) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let new = crate::model::NewTenant { slug, name };
    let created = crate::backend::accounts::tenants::create(&ctx.db, &principal, new).await;
    crate::rpc::act_at(Some(NEW_TENANT), created, |t| format!("Created tenant {} ({}).", t.name, t.slug))
}

/// Renames a tenant; a refused name is said beside that tenant's field.
#[server(prefix = "/rpc", endpoint = "admin/tenants/rename", output = crate::codec::JsonText)]
pub async fn rename_tenant(slug: String, name: String) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let patch = crate::model::TenantPatch { name };
    let renamed = crate::backend::accounts::tenants::rename(&ctx.db, &principal, &slug, patch).await;
    crate::rpc::act(renamed, |t| format!("Renamed {} to {}.", t.slug, t.name))
}

/// The id of the new-tenant form's section: its answers are shown there.
const NEW_TENANT: &str = "new-tenant-notice";

/// A limit typed into a form: empty is "no limit".
#[cfg(feature = "ssr")]
fn limit<T: std::str::FromStr>(field: &str, text: &str) -> Result<Option<T>, crate::backend::ServiceError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse()
        .map(Some)
        .map_err(|_| crate::rules::FieldError::new(field, "must be a number, or empty for no limit").into())
}

/// Sets one quota, answering in the page's words: what was saved, a note
/// when a limit is above what the pool has (it never binds), or which
/// field of which row was refused and why.
#[server(prefix = "/rpc", endpoint = "admin/tenants/quota", output = crate::codec::JsonText)]
pub async fn set_quota(
    tenant: String,
    pool_id: Uuid,
    kind: String,
    max_units: String,
    gpu_hours_per_week: String,
) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    principal.require_admin("only admins set quotas")?;
    let row = crate::model::short_kind(&kind);
    let saved = match (limit("max_units", &max_units), limit("gpu_hours_per_week", &gpu_hours_per_week)) {
        (Err(refused), _) | (_, Err(refused)) => Err(refused),
        (Ok(max_units), Ok(gpu_hours_per_week)) => {
            let entry = crate::model::QuotaEntry { pool_id, kind: kind.clone(), max_units, gpu_hours_per_week };
            match crate::backend::accounts::tenants::check_entry(&entry, str::to_string) {
                Err(refused) => Err(refused.into()),
                Ok(()) => crate::backend::accounts::tenants::set_quota(&ctx.db, &principal, &tenant, entry)
                    .await
                    .map(|_| (max_units, gpu_hours_per_week)),
            }
        }
    };
    let pools = crate::backend::pools::list(&ctx.db, &principal).await?;
    let pool = pools.iter().find(|p| p.id == pool_id);
    let capacity = pool.and_then(|p| p.kinds.iter().find(|k| k.kind == kind)).map_or(0, |k| k.capacity);
    let pool = pool.map(|p| p.name.clone()).unwrap_or_default();
    // A refusal of a field is said in its row, beside it (a script-less
    // post comes back to that row); what was saved, and any other refusal,
    // at the page's top.
    let row_form = saved.as_ref().err().and_then(|e| e.field_error()).map(|_| quota_form(&tenant, pool_id, &kind));
    crate::rpc::act_at(row_form.as_deref(), saved, |(units, hours)| {
        quota_saved(&tenant, &pool, &row, units, hours, capacity)
    })
}

/// The id of a tenant's quota form for one pool and kind: its row's inputs
/// name it, and a refusal of it is said there.
fn quota_form(tenant: &str, pool_id: Uuid, kind: &str) -> String {
    format!("quota-{tenant}-{pool_id}-{}", kind.replace(|c: char| !c.is_ascii_alphanumeric(), "-"))
}

/// "Saved: acme may hold at most 2 units of 1g.24gb on lab-h100 at once and
/// book 40 GPU-hours a week.", with a note when the units exceed the kind's
/// capacity.
#[cfg(feature = "ssr")]
fn quota_saved(tenant: &str, pool: &str, kind: &str, units: Option<i32>, hours: Option<f64>, capacity: i32) -> String {
    let at_once = units.map_or("any number of units".to_string(), |u| crate::model::counted(u, "unit", "units"));
    let week = hours.map_or("any GPU-hours".to_string(), |h| format!("{} GPU-hours", crate::model::figure_text(h)));
    let mut text = format!("Saved: {tenant} may hold {at_once} of {kind} on {pool} at once and book {week} a week.");
    if units.is_some_and(|u| u > capacity) {
        text.push_str(&format!(
            " Note: {pool} has {} of {kind}, so this limit never binds.",
            crate::model::counted(capacity, "unit", "units")
        ));
    }
    text
}

/// The quotas of the signed-in person's tenants and what each uses.
#[server(prefix = "/rpc", endpoint = "tenants/mine", output = crate::codec::JsonText)]
pub async fn my_quotas() -> Result<Vec<TenantUsage>, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::accounts::tenants::mine(&ctx.db, &principal).await?)
}

#[component]
pub fn TenantsPage() -> impl IntoView {
    let create = ServerAction::<CreateTenant>::new();
    let rename = ServerAction::<RenameTenant>::new();
    let quota = ServerAction::<SetQuota>::new();
    let (created, renamed, set) =
        (super::notice::deeds(create), super::notice::deeds(rename), super::notice::deeds(quota));
    let page = Resource::new(move || (created.get(), renamed.get(), set.get()), |_| load_tenants());
    let from_query = super::notice::query_notice();
    let create_refused = Memo::new(move |_| {
        let query = from_query.get().filter(|n| n.at.as_deref() == Some(NEW_TENANT));
        refused_field(create.value().get(), query)
    });
    // The tenant whose rename was sent last: its form shows the answer's fault.
    let renaming = super::field::last_sent(rename, |asked| asked.slug);
    Effect::new(move |_| {
        if rename.version().get() > 0 {
            quota.value().set(None);
        }
    });
    Effect::new(move |_| {
        if quota.version().get() > 0 {
            rename.value().set(None);
        }
    });
    view! {
        <section class="page-head"><h1>"Tenants and quotas"</h1></section>
        <p class="muted">
            "Per pool and kind: the most units a tenant's bookings hold at once, and the GPU-hours (whole-GPU \
             equivalent: units × hours ÷ the kind's units per GPU) "
            "it may book in one ISO week — Monday 00:00 to Monday 00:00 in the pool's time zone. Empty is no limit."
        </p>
        // The newer answer of the two: a rename clears a quota's, and back.
        {move || {
            let answer = super::notice::unless_beside(rename.value().get()).or(quota.value().get());
            super::notice::notice_view(answer, from_query.get())
        }}
        <ActionForm action=create attr:class="fields-row" attr:id="new-tenant">
            <Field form="new-tenant" name="slug" label="Slug" hint="lowercase letters, digits and dashes" refused=create_refused let:aria>
                <input name="slug" required maxlength="40" pattern="[a-z0-9]([a-z0-9\\-]*[a-z0-9])?"
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
            <Field form="new-tenant" name="name" label="Name" refused=create_refused let:aria>
                <input name="name" required maxlength="100"
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
            <button class="button" type="submit">"Create tenant"</button>
        </ActionForm>
        {move || super::notice::section_notice(NEW_TENANT, create.value().get(), from_query.get())}
        <Transition fallback=|| view! { <p class="loading">"Loading tenants…"</p> }>
            {move || page.get().map(|result| match result {
                Ok(data) => data.tenants.into_iter().map(|(tenant, usage)| {
                    let refused = Signal::derive({
                        let slug = tenant.slug.clone();
                        move || renaming.with(|r| r.as_deref() == Some(slug.as_str()))
                            .then(|| refused_field(rename.value().get(), None)).flatten()
                    });
                    view! { <TenantSection tenant usage targets=data.targets.clone() rename quota refused from_query/> }
                }).collect_view().into_any(),
                Err(err) => super::forbidden::or_refusal(super::forbidden::ADMINS, "Could not load tenants: ", err),
            })}
        </Transition>
    }
}

fn limit_text<T: ToString>(value: Option<T>) -> String {
    value.map(|v| v.to_string()).unwrap_or_default()
}

#[component]
fn TenantSection(
    tenant: Tenant,
    usage: TenantUsage,
    targets: Vec<QuotaTarget>,
    rename: ServerAction<RenameTenant>,
    quota: ServerAction<SetQuota>,
    /// What the last rename of this tenant refused.
    refused: Signal<Option<FieldError>>,
    /// What a script-less post came back with.
    from_query: Memo<Option<crate::model::ActionNotice>>,
) -> impl IntoView {
    let slug = tenant.slug.clone();
    let members = if tenant.members.is_empty() { "none yet".to_string() } else { tenant.members.join(", ") };
    let rows = targets.into_iter().map(|target| {
                        let current: Option<&QuotaUsage> =
                            usage.quotas.iter().find(|q| q.pool_id == target.pool_id && q.kind == target.kind);
                        let (units, hours) = (current.and_then(|q| q.max_units), current.and_then(|q| q.gpu_hours_per_week));
                        let unbinding = units.is_some_and(|u| u > target.capacity).then(|| {
                            format!("above the {} this pool has", crate::model::counted(target.capacity, "unit", "units"))
                        });
                        let now = current.map(|q| q.units_now.to_string()).unwrap_or_else(|| "–".into());
                        let week = current.map(|q| format!("{} GPU-h", q.hours_this_week)).unwrap_or_else(|| "–".into());
                        let slug = slug.clone();
                        let label = format!("{slug} {} {}", target.pool, target.kind);
                        let form_id = quota_form(&slug, target.pool_id, &target.kind);
                        // The row's inputs belong to its form, in the last cell.
                        let (units_form, hours_form) = (form_id.clone(), form_id.clone());
                        // The refusal of this row's last post, said beside its field.
                        let refused = Signal::derive({
                            let form_id = form_id.clone();
                            move || {
                                let notice = match quota.value().get() {
                                    Some(answer) => answer.ok(),
                                    None => from_query.get(),
                                };
                                notice.filter(|n| n.at.as_deref() == Some(form_id.as_str())).and_then(|n| n.field)
                            }
                        });
                        view! {
                            <tr>
                                <td>{target.pool.clone()}</td>
                                <td><code>{target.kind.clone()}</code></td>
                                <td>{now}</td>
                                <td>{week}</td>
                                <td><Field form=form_id.clone() name="max_units" label=format!("Max units at once, {label}") quiet=true refused let:aria>
                                    <input form=units_form.clone() name="max_units" inputmode="numeric" size="5" value=limit_text(units)
                                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                                    </Field>
                                    {unbinding.map(|note| view! { <span class="warning quota-unbinding">{note}</span> })}</td>
                                <td><Field form=form_id.clone() name="gpu_hours_per_week" label=format!("GPU-hours per week, {label}") quiet=true refused let:aria>
                                    <input form=hours_form.clone() name="gpu_hours_per_week" inputmode="decimal" size="7" value=limit_text(hours)
                                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                                    </Field></td>
                                <td>
                                    <ActionForm action=quota attr:id=form_id>
                                        <input type="hidden" name="tenant" value=slug.clone()/>
                                        <input type="hidden" name="pool_id" value=target.pool_id.to_string()/>
                                        <input type="hidden" name="kind" value=target.kind.clone()/>
                                        <button class="button secondary" type="submit" aria-label=format!("Set quota, {label}")>"Set"</button>
                                    </ActionForm>
                                </td>
                            </tr>
                        }
    }).collect_view();
    let (section_id, rename_label, slug_field) =
        (format!("tenant-{slug}"), format!("New name of {slug}"), slug.clone());
    let form_name = format!("rename-{slug}");
    let name = tenant.name.clone();
    view! {
        <section class="tenant" id=section_id>
            <h2>{tenant.name.clone()} " " <code>{slug}</code></h2>
            <ActionForm action=rename attr:class="fields-row">
                <input type="hidden" name="slug" value=slug_field/>
                <Field form=form_name name="name" label=rename_label refused let:aria>
                    <input name="name" required maxlength="100" value=name.clone()
                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                </Field>
                <button class="button secondary" type="submit">"Rename"</button>
            </ActionForm>
            <p class="muted">"Members: " {members} " · add members on the " <a href="/admin/users">"Users"</a> " page."</p>
            <table class="bookings quotas">
                <thead><tr><th>"Pool"</th><th>"Kind"</th><th>"Now"</th><th>"This week"</th><th>"Max units at once"</th><th>"GPU-hours per week"</th><th><span class="visually-hidden">"Actions"</span></th></tr></thead>
                <tbody>
                    {rows}
                </tbody>
            </table>
        </section>
    }
}

/// The signed-in member's quota use, loaded once per page: created at the
/// top of the page (see `approvals::Waiting`) and read by `QuotaSummary`
/// wherever it sits, refetched when `version` changes (after a booking).
#[derive(Clone, Copy)]
pub struct QuotaUse(Resource<Result<Vec<TenantUsage>, RpcError>>);

impl QuotaUse {
    pub fn tracking(version: impl Fn() -> usize + Send + Sync + 'static) -> Self {
        Self(Resource::new(version, |_| my_quotas()))
    }
}

/// A member's view of their tenants' quotas: all of them (My bookings), or
/// one pool's (the booking panel). Reads `QuotaUse` from context.
#[component]
pub fn QuotaSummary(#[prop(optional)] pool: Option<String>) -> impl IntoView {
    let Some(QuotaUse(quotas)) = use_context::<QuotaUse>() else { return ().into_any() };
    let title = if pool.is_some() { "Your tenant's quota in this pool" } else { "Your tenant's quotas" };
    view! {
        <Suspense fallback=|| ()>
            {move || quotas.get().and_then(|r| r.ok()).map(|tenants| {
                let rows: Vec<(String, QuotaUsage)> = tenants
                    .into_iter()
                    .flat_map(|t| { let slug = t.tenant; t.quotas.into_iter().map(move |q| (slug.clone(), q)) })
                    .filter(|(_, q)| pool.as_ref().is_none_or(|p| *p == q.pool))
                    .collect();
                (!rows.is_empty()).then(|| view! {
                    <section class="quota-summary" aria-labelledby="quota-title">
                        <h2 id="quota-title">{title}</h2>
                        <ul id="quota-list">
                            {rows.into_iter().map(|(slug, q)| {
                                let units = q.max_units.map(|m| format!("{} of {} now", q.units_now, crate::model::counted(m, "unit", "units")));
                                let hours = q.gpu_hours_per_week.map(|h| format!("{} of {h} GPU-hours this week", q.hours_this_week));
                                let text = [units, hours].into_iter().flatten().collect::<Vec<_>>().join(" · ");
                                view! { <li><code>{slug}</code> " · " {q.pool} " " {crate::model::short_kind(&q.kind)} ": " {text}</li> }
                            }).collect_view()}
                        </ul>
                    </section>
                })
            })}
        </Suspense>
    }
    .into_any()
}
