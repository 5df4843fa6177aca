//! Admins only: every pool (`/admin/pools`) and one pool's form
//! (`/admin/pools/{id}`, or `new`): all of its fields, its kinds, retire
//! and delete. Every form posts without JavaScript too; a refusal names
//! the field, and lowering a capacity below what is booked names the
//! bookings in the way.

use super::field::Field;
use super::notice::{deeds, notice_view, query_notice};
use crate::model::{short_kind, ActionNotice, KindForm, Pool, PoolForm};
use crate::rpc::RpcError;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;
use uuid::Uuid;

#[server(prefix = "/rpc", endpoint = "admin/pools", output = crate::codec::JsonText)]
/// Every pool, and the currency prices are in (the form names it).
pub async fn list_pools_admin() -> Result<(Vec<Pool>, String), RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    principal.require_admin("only admins manage pools")?;
    Ok((crate::backend::pools::list(&ctx.db, &principal).await?, ctx.currency))
}

#[server(prefix = "/rpc", endpoint = "admin/pools/get", output = crate::codec::JsonText)]
/// The pool, and the currency prices are in.
pub async fn get_pool_admin(id: Uuid) -> Result<(Pool, String), RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    principal.require_admin("only admins manage pools")?;
    Ok((crate::backend::pools::get(&ctx.db, &principal, id).await?, ctx.currency))
}

/// Creates (empty `id`) or updates a pool from the form; a refusal is a
/// notice the page shows, and a script-less post goes back with it.
#[server(prefix = "/rpc", endpoint = "admin/pools/save", output = crate::codec::JsonText)]
pub async fn save_pool(#[server(default)] id: String, form: PoolForm) -> Result<ActionNotice, RpcError> {
    use crate::backend::pools::form;
    let (principal, ctx) = crate::rpc::ctx()?;
    match form::save(&ctx.db, &principal, &id, &form).await {
        Ok(pool) => {
            leptos_axum::redirect(&format!("/admin/pools/{}?notice=Saved.&notice_ok=1", pool.id));
            Ok(ActionNotice::said(true, "Saved."))
        }
        Err(err) => {
            crate::rpc::act(Err::<(), _>(form::name_the_bookings(&ctx.db, &principal, err).await), |_| String::new())
        }
    }
}

#[server(prefix = "/rpc", endpoint = "admin/pools/retire", output = crate::codec::JsonText)]
pub async fn retire_pool(id: Uuid, retired: bool) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    let patch = crate::model::PoolPatch { retired: Some(retired), ..Default::default() };
    crate::backend::pools::update(&ctx.db, &principal, id, patch).await?;
    let message = if retired { "Retired: it takes no new bookings." } else { "Reopened for bookings." };
    crate::rpc::act(Ok(()), |_| message.into())
}

#[server(prefix = "/rpc", endpoint = "admin/pools/delete", output = crate::codec::JsonText)]
pub async fn delete_pool(id: Uuid) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    match crate::backend::pools::delete(&ctx.db, &principal, id).await {
        Ok(()) => {
            leptos_axum::redirect("/admin/pools?notice=Deleted.&notice_ok=1");
            Ok(ActionNotice::said(true, "Deleted."))
        }
        refused => crate::rpc::act(refused, |_| String::new()),
    }
}

#[component]
pub fn PoolsAdminPage() -> impl IntoView {
    let pools = Resource::new(|| (), |_| list_pools_admin());
    let save = ServerAction::<SavePool>::new();
    let from_query = query_notice();
    view! {
        <section class="page-head"><h1>"Pools"</h1></section>
        {move || notice_view(save.value().get(), from_query.get())}
        <Transition fallback=|| view! { <p class="loading">"Loading pools…"</p> }>
            {move || pools.get().map(|result| match result {
                Ok((list, currency)) => view! {
                    <table class="bookings" id="pool-list">
                        <thead><tr><th>"Pool"</th><th>"GPU"</th><th>"Kinds"</th><th>"Approval"</th><th>"Tenants"</th><th><span class="visually-hidden">"Actions"</span></th></tr></thead>
                        <tbody>
                            {list.into_iter().map(|p| view! {
                                <tr>
                                    <td><a href=format!("/admin/pools/{}", p.id)>{p.name.clone()}</a>
                                        {p.retired.then(|| view! { " " <span class="badge state-canceled">"retired"</span> })}</td>
                                    <td>{p.gpu_model.clone()}</td>
                                    <td>{p.kinds.iter().map(|k| format!("{} × {}", short_kind(&k.kind), k.capacity)).collect::<Vec<_>>().join(", ")}</td>
                                    <td>{if p.requires_approval { "required" } else { "—" }}</td>
                                    <td>{if p.tenants.is_empty() { "all".to_string() } else { p.tenants.join(", ") }}</td>
                                    <td><a href=format!("/calendar?pool={}", p.id)>"calendar"</a></td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                    <h2>"New pool"</h2>
                    <PoolFormView id=String::new() form=PoolForm::default() currency save/>
                }.into_any(),
                Err(err) => super::forbidden::or_refusal(super::forbidden::ADMINS, "Could not load pools: ", err),
            })}
        </Transition>
    }
}

#[component]
pub fn PoolAdminPage() -> impl IntoView {
    let params = use_params_map();
    let save = ServerAction::<SavePool>::new();
    let retire = ServerAction::<RetirePool>::new();
    let delete = ServerAction::<DeletePool>::new();
    let add_blackout = ServerAction::<super::blackouts::CreateBlackout>::new();
    let remove_blackout = ServerAction::<super::blackouts::DeleteBlackout>::new();
    let save_idle = ServerAction::<super::idle_policy::SaveIdlePolicy>::new();
    let from_query = query_notice();
    // Fetched again for what an answer did, not for a refusal, which would
    // draw the forms anew over what was typed.
    let (saved, retired, idle_saved) = (deeds(save), deeds(retire), deeds(save_idle));
    let (scheduled, unscheduled) = (deeds(add_blackout), deeds(remove_blackout));
    let pool = Resource::new(
        move || {
            let versions = (saved.get(), retired.get(), idle_saved.get());
            (params.with(|p| p.get("id")), versions, scheduled.get(), unscheduled.get())
        },
        |(id, _, _, _)| async move {
            match id.and_then(|id| id.parse::<Uuid>().ok()) {
                Some(id) => {
                    let (pool, currency) = get_pool_admin(id).await?;
                    let blackouts = super::blackouts::list_blackouts(id).await?;
                    let idle = super::idle_policy::load_idle_policy(id).await?;
                    Ok((pool, currency, blackouts, idle))
                }
                None => Err(RpcError::refused("pool not found")),
            }
        },
    );
    // The newest answer of any of the page's actions.
    let newest = RwSignal::new(None::<Result<ActionNotice, RpcError>>);
    for value in
        [save.value(), retire.value(), delete.value(), add_blackout.value(), remove_blackout.value(), save_idle.value()]
    {
        Effect::new(move |_| {
            if let Some(answer) = value.get() {
                newest.set(Some(answer));
            }
        });
    }
    let last = move || newest.get();
    // A script-less "Delete" came back here to be asked (`AskFirst`).
    let query = leptos_router::hooks::use_query_map();
    let asked_delete = move || query.with_untracked(|q| q.get("confirm").as_deref() == Some("delete"));
    view! {
        <p><a href="/admin/pools">"‹ All pools"</a></p>
        {move || notice_view(last(), from_query.get())}
        <Transition fallback=|| view! { <p class="loading">"Loading the pool…"</p> }>
            {move || pool.get().map(|result| match result {
                Ok((pool, currency, blackouts, idle)) => {
                    let id = pool.id.to_string();
                    let (form_id, retire_id, retired_value) = (id.clone(), id.clone(), (!pool.retired).to_string());
                    view! {
                        <section class="page-head"><h1>{pool.name.clone()}
                            {pool.retired.then(|| view! { " " <span class="badge state-canceled">"retired"</span> })}</h1></section>
                        <PoolFormView id=form_id form=PoolForm::of(&pool) currency save/>
                        <super::blackouts::BlackoutsSection pool_id=pool.id kinds=pool.kinds.clone()
                            items=blackouts.1 tz=blackouts.0
                            create=add_blackout remove=remove_blackout/>
                        <super::idle_policy::IdlePolicySection pool_id=pool.id policy=idle save=save_idle/>
                        <section class="danger-zone">
                            <ActionForm action=retire attr:class="inline">
                                <input type="hidden" name="id" value=retire_id/>
                                <input type="hidden" name="retired" value=retired_value/>
                                <button class="button secondary" type="submit" id="retire">
                                    {if pool.retired { "Reopen for bookings" } else { "Retire (no new bookings)" }}
                                </button>
                            </ActionForm>
                            <super::confirm::AskFirst page=format!("/admin/pools/{id}") asked="delete" key=id.clone()
                                label="Delete (only without bookings)" open=asked_delete() keep="Keep the pool" danger=true
                                question=format!("Delete the pool {}? Its kinds, rules and maintenance windows go; \
                                    a pool that was ever booked cannot be deleted (retire it instead).", pool.name)>
                                <ActionForm action=delete attr:class="inline">
                                    <input type="hidden" name="id" value=id.clone()/>
                                    <button class="button danger" type="submit" id="delete">
                                        {format!("Yes, delete {}", pool.name)}
                                    </button>
                                </ActionForm>
                            </super::confirm::AskFirst>
                        </section>
                    }.into_any()
                }
                Err(err) => super::forbidden::or_refusal(super::forbidden::ADMINS, "Could not load the pool: ", err),
            })}
        </Transition>
    }
}

/// What one unit of each kind gets in its session namespace: the same
/// per-unit grants the worker writes into the ResourceQuota, from the kind
/// rows as typed (hydrated: on every keystroke; without JavaScript: as
/// rendered, i.e. the saved values).
#[component]
fn QuotaPreview(rows: Vec<RwSignal<KindForm>>) -> impl IntoView {
    let lines = move || {
        rows.iter()
            .enumerate()
            .filter_map(|(i, row)| row.with(|k| k.per_unit(i)).map(|spec| (i, row.with(|k| k.kind.clone()), spec)))
            .collect::<Vec<_>>()
    };
    view! {
        <super::table::TableScroll label="What a one-unit session gets">
        <table class="bookings" id="quota-preview" aria-live="polite">
            <caption>"A one-unit session of each kind gets (updates as you type)"</caption>
            <thead><tr><th>"Kind"</th><th>"Schedulable devices"</th><th>"VRAM"</th><th>"CPU"</th><th>"Memory"</th><th>"Storage"</th></tr></thead>
            <tbody>
                {move || lines().into_iter().map(|(i, kind, spec)| match spec {
                    Ok(k) => view! {
                        <tr>
                            <td><code>{kind}</code></td>
                            <td>{format!("{} × {}", k.replicas_per_unit, k.kind)}</td>
                            <td>{format!("{} GB", k.vram_gb_per_unit)}</td>
                            <td>{format!("{} cores", f64::from(k.cpu_millis_per_unit) / 1000.0)}</td>
                            <td>{format!("{} GiB", f64::from(k.memory_mib_per_unit) / 1024.0)}</td>
                            <td>{format!("{} GiB", k.storage_gib_per_unit)}</td>
                        </tr>
                    }.into_any(),
                    Err(err) => view! {
                        <tr><td><code>{kind}</code></td><td colspan="5" class="error">{format!("row {}: {}", i + 1, err.reason)}</td></tr>
                    }.into_any(),
                }).collect_view()}
            </tbody>
        </table>
        </super::table::TableScroll>
    }
}

#[component]
fn PoolFormView(id: String, form: PoolForm, currency: String, save: ServerAction<SavePool>) -> impl IntoView {
    let creating = id.is_empty();
    let mut kinds = form.kinds.clone();
    // Room for new kinds: two on a new pool, one on an existing one.
    kinds.extend(std::iter::repeat_with(KindForm::default).take(if creating { 2 } else { 1 }));
    let rows: Vec<RwSignal<KindForm>> = kinds.into_iter().map(RwSignal::new).collect();
    let from_query = query_notice();
    let refused = Memo::new(move |_| {
        super::field::refused_field(save.value().get(), from_query.get()).map(crate::model::refusal_on_form)
    });
    // A field with its label, and the sentence why when a save refused it.
    let text = move |label: &'static str, name: &'static str, value: String, hint: &'static str| {
        view! {
            <Field form="pool" name label refused let:aria>
                <input name=format!("form[{name}]") value=value.clone() placeholder=hint
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
        }
    };
    // A field of one entry per line.
    let lines = move |label: &'static str, name: &'static str, value: String, hint: &'static str, rows: u8| {
        view! {
            <Field form="pool" name label hint refused let:aria>
                <textarea name=format!("form[{name}]") rows=rows
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()>{value.clone()}</textarea>
            </Field>
        }
    };
    view! {
        <ActionForm action=save attr:class="pool-form" attr:id=if creating { "new-pool" } else { "edit-pool" }>
            <input type="hidden" name="id" value=id/>
            <fieldset><legend>"Pool"</legend>
                {text("Name", "name", form.name.clone(), "lab-h100")}
                {text("Description", "description", form.description.clone(), "")}
                {text("GPU model", "gpu_model", form.gpu_model.clone(), "NVIDIA H100 NVL 96GB")}
                {text("Time zone (weekly quotas)", "time_zone", form.time_zone.clone(), "UTC")}
                <label class="check"><input type="checkbox" name="form[requires_approval]" checked=form.requires_approval.is_some()/>
                    " Bookings need an admin's approval"</label>
                {text("Tenants allowed (empty = all)", "tenants", form.tenants.clone(), "team-a, team-b")}
                {text("Cluster its sessions run on (empty: default)", "cluster", form.cluster.clone(), "default")}
            </fieldset>
            <fieldset><legend>"Booking rules"</legend>
                {text("Slot granularity (minutes)", "granularity_minutes", form.granularity_minutes.clone(), "15")}
                {text("Longest booking (minutes)", "max_booking_minutes", form.max_booking_minutes.clone(), "10080")}
                {text("Horizon (days ahead)", "horizon_days", form.horizon_days.clone(), "28")}
                {text("Minimum notice (minutes)", "min_notice_minutes", form.min_notice_minutes.clone(), "0")}
                {text("A click on the calendar books (minutes)", "default_booking_minutes", form.default_booking_minutes.clone(), "60")}
                <Field form="pool" name="price_per_gpu_hour" label=format!("Price per GPU-hour ({currency})")
                    hint="showback; a kind without its own price pays its share" refused let:aria>
                    <input name="form[price_per_gpu_hour]" value=form.price_per_gpu_hour.clone() placeholder="0"
                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                </Field>
            </fieldset>
            <fieldset><legend>"Workspace and placement"</legend>
                {lines("Workspace images", "images", form.images.clone(), "one per line; the first is the default", 3)}
                {lines("Node selector", "node_selector", form.node_selector.clone(), "key=value, one per line", 2)}
                {lines("Tolerations", "tolerations", form.tolerations.clone(),
                    "taint syntax, one per line: key=value:NoSchedule, key:NoSchedule or key", 2)}
                {text("Priority class (the only one session pods may name; empty: none)",
                    "priority_class", form.priority_class.clone(), "")}
                {text("Runtime class (the only one session pods may name, e.g. nvidia; empty: none)",
                    "runtime_class", form.runtime_class.clone(), "")}
                {text("Seconds the workspace has to stop when the window ends (SIGTERM first; 0–30)",
                    "end_grace_seconds", form.end_grace_seconds.clone(), "30")}
                {text("Team model cache: a ReadWriteMany storage class with volumes made per tenant (empty: each person's own)",
                    "team_cache_class", form.team_cache_class.clone(), "")}
            </fieldset>
            <fieldset><legend>"Cluster schedulers"</legend>
                <p class="hint">"Act only when the worker runs with --kueue (lending) or --scale-ahead (lead time)."</p>
                {text("Backfill namespace (Kueue: preemptible Jobs there run on idle booked units of lending kinds)",
                    "backfill_namespace", form.backfill_namespace.clone(), "batch-backfill")}
                {text("Nodes ready ahead (minutes before a window; empty: the site's, 0: none)",
                    "scale_ahead_minutes", form.scale_ahead_minutes.clone(), "")}
            </fieldset>
            <table class="bookings kinds-form">
                <caption>"Resource kinds (a kind is never removed; lower its capacity to 0 instead)"</caption>
                <thead><tr><th>"Kind"</th><th>"Physical units"</th><th>"Time-slice replicas per unit"</th><th>"VRAM GB"</th>
                    <th>"CPU millicores"</th><th>"Memory MiB"</th><th>"Storage GiB"</th>
                    <th>"Units per GPU (empty: the MIG profile's)"</th>
                    <th>{format!("Price per unit-hour, {currency} (empty: share of the GPU's)")}</th>
                    <th>"Lends idle units"</th></tr></thead>
                <tbody>
                    {rows.iter().copied().enumerate().map(|(i, row)| {
                        // Each input writes its field of the row, which the preview reads.
                        let cell = move |name: &'static str, field: fn(&mut KindForm) -> &mut String, label: &'static str| {
                            let value = row.with_untracked(|k| { let mut k = k.clone(); field(&mut k).clone() });
                            view! {
                                <td><input name=format!("form[kinds][{i}][{name}]") value=value size="8"
                                    aria-label=format!("{label}, kind row {}", i + 1)
                                    aria-invalid=move || refused.with(|f| f.as_ref()
                                        .is_some_and(|f| f.field == format!("kinds[{i}].{name}")).then_some("true"))
                                    on:input=move |ev| row.update(|k| *field(k) = event_target_value(&ev))/></td>
                            }
                        };
                        view! {
                            <tr>
                                {cell("kind", |k| &mut k.kind, "Kind")}
                                {cell("capacity", |k| &mut k.capacity, "Physical units")}
                                {cell("replicas_per_unit", |k| &mut k.replicas_per_unit, "Replicas per unit")}
                                {cell("vram_gb_per_unit", |k| &mut k.vram_gb_per_unit, "VRAM GB")}
                                {cell("cpu_millis_per_unit", |k| &mut k.cpu_millis_per_unit, "CPU millicores")}
                                {cell("memory_mib_per_unit", |k| &mut k.memory_mib_per_unit, "Memory MiB")}
                                {cell("storage_gib_per_unit", |k| &mut k.storage_gib_per_unit, "Storage GiB")}
                                {cell("slices_per_gpu", |k| &mut k.slices_per_gpu, "Units per GPU")}
                                {cell("price_per_unit_hour", |k| &mut k.price_per_unit_hour, "Price per unit-hour")}
                                <td><input type="checkbox" name=format!("form[kinds][{i}][lend_idle]")
                                    checked=row.with_untracked(|k| k.lend_idle.is_some())
                                    aria-label=format!("Lends idle units, kind row {}", i + 1)/></td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
            <QuotaPreview rows=rows/>
            <button class="button" type="submit" id="save-pool">{if creating { "Create pool" } else { "Save" }}</button>
        </ActionForm>
    }
}
