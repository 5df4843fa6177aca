//! The maintenance windows of one pool on its admin page: listed, created
//! (over bookings: the admin keeps or cancels them), removed.

use super::field::Field;
use crate::model::{ActionNotice, Blackout, PoolKind};
use crate::rpc::RpcError;
use leptos::prelude::*;
use uuid::Uuid;

/// The pool's maintenance windows, each with its window in the pool's
/// zone, and that zone: the form reads wall-clock times in it.
#[server(prefix = "/rpc", endpoint = "admin/blackouts", output = crate::codec::JsonText)]
pub async fn list_blackouts(pool_id: Uuid) -> Result<(String, Vec<(Blackout, String)>), RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    principal.require_admin("only admins schedule maintenance")?;
    let tz = crate::backend::pools::get(&ctx.db, &principal, pool_id).await?.time_zone;
    let items = crate::backend::pools::blackouts::list(&ctx.db, &principal, pool_id).await?;
    let items = items
        .into_iter()
        .map(|b| {
            let when = crate::rules::local_time::local_window(crate::model::Window { start: b.start, end: b.end }, &tz);
            (b, when)
        })
        .collect();
    Ok((tz, items))
}

/// `start`/`end` as `2026-11-23T08:00` in the pool's zone; `kind` empty
/// for every kind; `overlapping` empty (ask), `keep` or `cancel`.
#[server(prefix = "/rpc", endpoint = "admin/blackouts/create", output = crate::codec::JsonText)]
pub async fn create_blackout(
    pool_id: Uuid,
    #[server(default)] kind: String,
    start: String,
    end: String,
    reason: String,
    #[server(default)] overlapping: String,
) -> Result<ActionNotice, RpcError> {
    use crate::backend::pools::blackouts;
    let (principal, ctx) = crate::rpc::ctx()?;
    let tz = match crate::backend::pools::get(&ctx.db, &principal, pool_id).await {
        Ok(pool) => pool.time_zone,
        Err(err) => return crate::rpc::act_at(Some(OUTCOME), Err(err), |_: ()| String::new()),
    };
    let result = match blackouts::from_form((&kind, &start, &end), reason, &overlapping, &tz) {
        Ok(new) => blackouts::create(&ctx.db, &principal, pool_id, new).await,
        Err(field) => Err(field.into()),
    };
    crate::rpc::act_at(Some(OUTCOME), result, |created| match (created.overlapping.len(), created.canceled) {
        (0, _) => "Maintenance window scheduled.".to_string(),
        (n, true) => format!(
            "Maintenance window scheduled; {} canceled.",
            crate::model::counted(n as i64, "overlapping booking", "overlapping bookings")
        ),
        (n, false) => format!(
            "Maintenance window scheduled; {} kept.",
            crate::model::counted(n as i64, "overlapping booking", "overlapping bookings")
        ),
    })
}

#[server(prefix = "/rpc", endpoint = "admin/blackouts/delete", output = crate::codec::JsonText)]
pub async fn delete_blackout(id: Uuid) -> Result<ActionNotice, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    crate::backend::pools::blackouts::delete(&ctx.db, &principal, id).await?;
    crate::rpc::act_at(Some(OUTCOME), Ok(()), |_| "Maintenance window removed.".into())
}

/// The section's notice: what scheduling (or removing) led to, the list of
/// overlapping bookings to keep or cancel among it, beside the form.
const OUTCOME: &str = "blackout-outcome";

#[component]
pub fn BlackoutsSection(
    pool_id: Uuid,
    kinds: Vec<PoolKind>,
    items: Vec<(Blackout, String)>,
    /// The pool's zone, which the form and the list use.
    tz: String,
    create: ServerAction<CreateBlackout>,
    remove: ServerAction<DeleteBlackout>,
) -> impl IntoView {
    let from_query = super::notice::query_notice();
    // The newest answer of the section's two forms.
    let newest = RwSignal::new(None::<Result<ActionNotice, RpcError>>);
    for value in [create.value(), remove.value()] {
        Effect::new(move |_| {
            if let Some(answer) = value.get() {
                newest.set(Some(answer));
            }
        });
    }
    // The field the last scheduling refused, said beside its input.
    let refused = Signal::derive(move || {
        let query = from_query.get().filter(|n| n.at.as_deref() == Some(OUTCOME));
        super::field::refused_field(create.value().get(), query)
    });
    let listed = if items.is_empty() {
        view! { <p class="muted" id="blackout-list">"None scheduled."</p> }.into_any()
    } else {
        view! {
            <ul id="blackout-list">
                {items.into_iter().map(|(b, when)| view! {
                    <li>
                        {when} " · "
                        {b.kind.clone().unwrap_or_else(|| "every kind".into())} " · " {b.reason.clone()}
                        <ActionForm action=remove attr:class="inline">
                            <input type="hidden" name="id" value=b.id.to_string()/>
                            <button class="link" type="submit" aria-label=format!("Remove maintenance {}", b.reason)>"remove"</button>
                        </ActionForm>
                    </li>
                }).collect_view()}
            </ul>
        }
        .into_any()
    };
    view! {
        <section class="blackouts" aria-labelledby="blackouts-title">
            <h2 id="blackouts-title">"Maintenance windows"</h2>
            <p class="muted zone-note">"Times in " {tz.clone()} ", the pool's zone."</p>
            {listed}
            <ActionForm action=create attr:class="fields-row" attr:id="new-blackout">
                <input type="hidden" name="pool_id" value=pool_id.to_string()/>
                <Field form="blackout" name="kind" label="Kind" refused let:aria>
                    <select name="kind" id="blackout-kind" aria-invalid=move || aria.invalid()
                        aria-describedby=move || aria.described_by()>
                        <option value="">"every kind"</option>
                        {kinds.iter().map(|k| view! { <option value=k.kind.clone()>{k.kind.clone()}</option> }).collect_view()}
                    </select>
                </Field>
                <Field form="blackout" name="start" label=format!("From ({tz})") refused let:aria>
                    <input type="datetime-local" name="start" id="blackout-start" required
                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                </Field>
                <Field form="blackout" name="end" label=format!("To ({tz})") refused let:aria>
                    <input type="datetime-local" name="end" id="blackout-end" required
                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                </Field>
                <Field form="blackout" name="reason" label="Reason" refused let:aria>
                    <input name="reason" id="blackout-reason" required maxlength="500"
                        aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
                </Field>
                <fieldset>
                    <legend>"Bookings it overlaps"</legend>
                    <label><input type="radio" name="overlapping" value="" checked/> " list them first"</label>
                    <label><input type="radio" name="overlapping" value="keep"/> " keep them"</label>
                    <label><input type="radio" name="overlapping" value="cancel"/> " cancel them"</label>
                </fieldset>
                <button class="button secondary" type="submit" id="blackout-submit">"Schedule"</button>
            </ActionForm>
            {move || super::notice::section_notice(OUTCOME, newest.get(), from_query.get())}
        </section>
    }
}
