//! `/reports/tokenomics` (managers and admins): a pool's cost per GPU-hour
//! and per million tokens, the utilisation that beats a price, and the GPUs
//! a token demand needs. Results follow the inputs as you type (hydrated);
//! without JavaScript, "Save and calculate" posts and the page shows them.

use super::field::{refused_field, Field};
use super::notice::{notice_view, query_notice, unless_beside};
use crate::model::{ActionNotice, CostModelForm, FieldError, TokenomicsView};
use crate::rpc::RpcError;
use crate::rules::tokenomics::{evaluate, TokenomicsResult, PRESETS};
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;
use uuid::Uuid;

#[server(prefix = "/rpc", endpoint = "reports/tokenomics", output = crate::codec::JsonText)]
pub async fn load_tokenomics(pool: Option<Uuid>) -> Result<TokenomicsView, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::reports::tokenomics::view(&ctx.db, &principal, pool, &ctx.currency).await?)
}

#[server(prefix = "/rpc", endpoint = "reports/tokenomics/save", output = crate::codec::JsonText)]
pub async fn save_tokenomics(pool_id: Uuid, form: CostModelForm) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    crate::backend::reports::tokenomics::require_reader(&principal)?;
    let gpu_model = crate::backend::reports::tokenomics::gpu_model(&ctx.db, pool_id).await?;
    let saved = match form.parse(crate::model::gpu_of(&gpu_model)) {
        Ok(model) => crate::backend::reports::tokenomics::save(&ctx.db, &principal, pool_id, model).await,
        Err(field) => Err(field.into()),
    };
    crate::rpc::act(saved, |result| format!("Saved: {:.2} per GPU-hour.", result.cost_per_gpu_hour))
}

#[component]
pub fn TokenomicsPage() -> impl IntoView {
    let query = use_query_map();
    let save = ServerAction::<SaveTokenomics>::new();
    let data = Resource::new(
        move || (query.with(|q| q.get("pool")), save.version().get()),
        |(pool, _)| load_tokenomics(pool.and_then(|p| p.parse().ok())),
    );
    let from_query = query_notice();
    view! {
        <h1>"Tokenomics"</h1>
        <p class="muted">"What a pool's GPUs cost per hour and per million tokens, the utilisation that beats a price, \
            and the GPUs a token demand needs."</p>
        // What was saved; a refused figure is said beside its field alone.
        {move || notice_view(unless_beside(save.value().get()), from_query.get().filter(|n| n.field.is_none()))}
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            {move || data.get().zip(super::reader_clock()).map(|(loaded, clock)| match loaded {
                Ok(view) => view! { <CostModelView view save from_query clock/> }.into_any(),
                Err(err) => super::forbidden::or_refusal(super::forbidden::READERS, "Could not load the cost model: ", err),
            })}
        </Transition>
    }
}

#[component]
fn CostModelView(
    view: TokenomicsView,
    save: ServerAction<SaveTokenomics>,
    from_query: Memo<Option<ActionNotice>>,
    clock: crate::model::Clock,
) -> impl IntoView {
    let TokenomicsView {
        pools,
        pool_id,
        pool_name,
        model,
        gpus_available,
        measured,
        updated,
        currency,
        gpu_model,
        demo_history,
    } = view;
    let gpu = crate::model::gpu_of(&gpu_model);
    let form = RwSignal::new(CostModelForm::from(&model));
    let measured_value = measured.value;
    let result = Memo::new(move |_| {
        form.with(|f| f.parse(gpu)).and_then(|m| evaluate(&m.inputs(measured_value, gpus_available))).map_err(|e| {
            // The rules check utilisation as a fraction; the form types a percentage.
            if e.field == "utilization" {
                FieldError::new("utilization_pct", "must be between 0 and 100 %")
            } else {
                e
            }
        })
    });
    // The field at fault: hydrated, the figures as typed (the same check
    // the save makes); without JavaScript, the one a save came back with.
    let refused = Memo::new(move |_| {
        result.with(|r| r.as_ref().err().cloned()).or_else(|| refused_field(save.value().get(), from_query.get()))
    });
    let field = move |label: &'static str,
                      name: &'static str,
                      get: fn(&CostModelForm) -> String,
                      set: fn(&mut CostModelForm, String),
                      placeholder: &'static str| {
        let value = form.with_untracked(get);
        view! {
            <Field form="tk" name label refused let:aria>
                <input name=format!("form[{name}]") id=format!("tk-{name}") value=value.clone() placeholder=placeholder
                    inputmode="decimal" on:input=move |ev| form.update(|f| set(f, event_target_value(&ev)))
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
        }
    };
    let simulated = measured.simulated.then_some(" (simulated)");
    view! {
        <form method="get" action="/reports/tokenomics" class="fields-row" id="tk-pool-choice">
            <Field form="tk-choice" name="pool" label="Pool" let:_aria>
                <select name="pool" id="tk-pool">
                    {pools.iter().map(|(id, name)| view! {
                        <option value=id.to_string() selected=*id == pool_id>{name.clone()}</option>
                    }).collect_view()}
                </select>
            </Field>
            <button class="button secondary" type="submit">"Show"</button>
        </form>
        <section aria-labelledby="tk-title">
            <h2 id="tk-title">{format!("Pool {pool_name}")}</h2>
            <p class="muted" id="tk-capacity">
                {format!(
                    "{gpus_available:.2} GPUs (whole-GPU equivalent: a unit counts 1 / its kind's slices per GPU). \
                     Default utilisation: {:.1} % of its GPU-hours, {}. Amounts in {currency}.",
                    measured.value * 100.0,
                    measured.source
                )}
                {simulated}
            </p>
            {demo_history.map(|text| view! { <p class="notice demo-data" id="tk-demo">{text}</p> })}
            {updated.map(|(at, by)| view! { <p class="muted">"Last saved " {clock.when(at)} " (" {clock.tz.clone()} ") by " {by}</p> })}
            <ActionForm action=save attr:class="pool-form" attr:id="tk-form">
                <input type="hidden" name="pool_id" value=pool_id.to_string()/>
                <fieldset><legend>"Cost of one GPU"</legend>
                    {field("Capex per GPU", "capex_per_gpu", |f| f.capex_per_gpu.clone(), |f, v| f.capex_per_gpu = v, "30000")}
                    {field("Amortisation (years)", "amortization_years", |f| f.amortization_years.clone(), |f, v| f.amortization_years = v, "4")}
                    {field("Power per GPU (kW)", "power_kw", |f| f.power_kw.clone(), |f, v| f.power_kw = v, "0.7")}
                    {field("PUE", "pue", |f| f.pue.clone(), |f, v| f.pue = v, "1.2")}
                    {field("Electricity per kWh", "electricity_per_kwh", |f| f.electricity_per_kwh.clone(), |f, v| f.electricity_per_kwh = v, "0.083")}
                    {field("Maintenance (% of capex per year)", "maintenance_pct_per_year", |f| f.maintenance_pct_per_year.clone(), |f, v| f.maintenance_pct_per_year = v, "10")}
                    {field("Rent per GPU-hour (optional)", "rent_per_gpu_hour", |f| f.rent_per_gpu_hour.clone(), |f, v| f.rent_per_gpu_hour = v, "")}
                </fieldset>
                <fieldset><legend>"Tokens"</legend>
                    <Field form="tk" name="preset" label="Model class" refused let:aria>
                        <select name="form[preset]" id="tk-preset" aria-invalid=move || aria.invalid()
                            aria-describedby=move || aria.described_by() on:change=move |ev| {
                            let id = event_target_value(&ev);
                            form.update(|f| {
                                if let Some(tokens) = crate::rules::tokenomics::preset(&id).and_then(|p| p.on(gpu).tokens_per_second) {
                                    f.tokens_per_second = tokens.to_string();
                                }
                                f.preset = id;
                            });
                        }>
                            <option value="" selected=model.preset.is_empty()>"Typed in"</option>
                            {PRESETS.iter().map(|p| {
                                let on = p.on(gpu);
                                // A model that does not fit the pool's GPU is listed, not offered.
                                let text = match on.tokens_per_second {
                                    Some(tokens) => format!("{} — {tokens} tokens/s", p.label),
                                    None => format!("{} — does not fit this pool's GPU", p.label),
                                };
                                view! { <option value=p.id selected=model.preset == p.id disabled=on.tokens_per_second.is_none()>{text}</option> }
                            }).collect_view()}
                        </select>
                    </Field>
                    <div class="muted" id="tk-hardware">
                        <p>{match gpu {
                            Some(g) => format!("Presets assume this pool's GPU, {} ({gpu_model}): {:.0} GB at {} TB/s.", g.name, g.memory_gb, g.bandwidth_tb_s),
                            None => format!("This pool's GPU model ({}) is not one the presets know: they give the figures as measured on {}.",
                                if gpu_model.trim().is_empty() { "not named" } else { gpu_model.as_str() }, crate::model::REFERENCE_GPU.name),
                        }}</p>
                        <ul>{PRESETS.iter().map(|p| view! { <li>{p.label} ": " {p.on(gpu).note}</li> }).collect_view()}</ul>
                    </div>
                    // Hydrated, the preset fills the field; without JavaScript an empty field takes the preset's figure.
                    <Field form="tk" name="tokens_per_second" label="Output tokens/s per GPU" refused let:aria>
                        <input name="form[tokens_per_second]" id="tk-tokens_per_second" inputmode="decimal"
                            prop:value=move || form.with(|f| f.tokens_per_second.clone())
                            on:input=move |ev| form.update(|f| f.tokens_per_second = event_target_value(&ev))
                            aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                    </Field>
                    <Field form="tk" name="utilization_pct" label="Utilisation %" hint="empty: the default above" refused let:aria>
                        <input name="form[utilization_pct]" id="tk-utilization_pct" inputmode="decimal"
                            value=form.with_untracked(|f| f.utilization_pct.clone())
                            on:input=move |ev| form.update(|f| f.utilization_pct = event_target_value(&ev))
                            aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                    </Field>
                    {field("Price to beat per million tokens (optional)", "price_per_million_tokens", |f| f.price_per_million_tokens.clone(), |f, v| f.price_per_million_tokens = v, "0.10")}
                    {field("Token demand per day (optional)", "tokens_per_day", |f| f.tokens_per_day.clone(), |f, v| f.tokens_per_day = v, "1000000000")}
                    {field("Budget per day (optional)", "budget_per_day", |f| f.budget_per_day.clone(), |f, v| f.budget_per_day = v, "")}
                </fieldset>
                <button class="button" type="submit" id="tk-save">"Save and calculate"</button>
            </ActionForm>
            <Results result/>
            <details class="muted">
                <summary>"Sources of the presets"</summary>
                <ul>
                    {PRESETS.iter().map(|p| view! { <li>{p.label} ": " {p.source}</li> }).collect_view()}
                    {crate::model::GPUS.iter().map(|g| view! { <li>{g.name} ": " {g.source}</li> }).collect_view()}
                </ul>
            </details>
        </section>
    }
}

/// The figures (or why one is missing), updated on every keystroke once hydrated.
#[component]
fn Results(result: Memo<Result<TokenomicsResult, FieldError>>) -> impl IntoView {
    let row = |label: &'static str, id: &'static str, value: String| {
        view! { <tr><th scope="row">{label}</th><td id=id>{value}</td></tr> }
    };
    view! {
        <div aria-live="polite" id="tk-results">
            {move || match result.get() {
                // The sentence why is beside the field; this says where the figures went.
                Err(_) => view! { <p class="muted" id="tk-waiting">"The results follow once the marked field holds a figure it can use."</p> }.into_any(),
                Ok(r) => view! {
                    <super::table::TableScroll label="The results"><table class="bookings">
                        <caption>"Results (update as you type)"</caption>
                        <tbody>
                            {row("Cost per GPU-hour", "tk-cost-hour", format!("{:.2}", r.cost_per_gpu_hour))}
                            {row("Cost per million tokens", "tk-cost-mtok", r.cost_per_million_tokens.map_or("—".into(), |c| format!("{c:.3}")))}
                            {row("Break-even utilisation", "tk-break-even", r.break_even_utilization.map_or("—".into(), |u| format!("{:.1} %", u * 100.0)))}
                            {row("GPUs needed for the demand", "tk-gpus", r.gpus_needed.map_or("—".into(), |g| g.to_string()))}
                            {row("Their cost per day", "tk-cost-day", r.cost_per_day.map_or("—".into(), |c| format!("{c:.2}")))}
                            {row("Within budget", "tk-budget", r.within_budget.map_or("—".into(), |w| if w { "yes".into() } else { "no".into() }))}
                            {row("The pool is", "tk-verdict", r.provisioning.map_or("—".into(), |p| p.label().into()))}
                        </tbody>
                    </table></super::table::TableScroll>
                    <ul id="tk-notes">{r.notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
                }.into_any(),
            }}
        </div>
    }
}
