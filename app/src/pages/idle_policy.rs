//! The pool page's idle-reclaim form (admins): off by default; when on,
//! idle bookings are warned then ended and no-shows released.

use super::field::Field;
use crate::model::{ActionNotice, IdlePolicy};
use crate::rpc::RpcError;
use leptos::prelude::*;
use uuid::Uuid;

#[server(prefix = "/rpc", endpoint = "admin/pools/idle-policy", output = crate::codec::JsonText)]
pub async fn load_idle_policy(pool_id: Uuid) -> Result<IdlePolicy, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    principal.require_admin("admins only")?;
    Ok(crate::backend::sessions::idle_reclaim::policy(&ctx.db, pool_id).await?)
}

#[server(prefix = "/rpc", endpoint = "admin/pools/idle-policy/save", output = crate::codec::JsonText)]
pub async fn save_idle_policy(
    pool_id: Uuid,
    #[server(default)] enabled: Option<String>,
    threshold_pct: String,
    idle_minutes: String,
    grace_minutes: String,
) -> Result<ActionNotice, RpcError> {
    use crate::rules::FieldError;
    let (principal, ctx) = crate::rpc::ctx()?;
    let number = |field: &str, text: &str| {
        text.trim().parse::<i32>().map_err(|_| FieldError::new(field, "must be a whole number"))
    };
    let parsed = (|| {
        Ok::<_, FieldError>(IdlePolicy {
            enabled: enabled.is_some_and(|v| v == "on" || v == "true"),
            threshold_pct: number("threshold_pct", &threshold_pct)?,
            idle_minutes: number("idle_minutes", &idle_minutes)?,
            grace_minutes: number("grace_minutes", &grace_minutes)?,
        })
    })();
    let saved = match parsed {
        Ok(policy) => crate::backend::sessions::idle_reclaim::set_policy(&ctx.db, &principal, pool_id, policy).await,
        Err(field) => Err(field.into()),
    };
    crate::rpc::act_at(Some(OUTCOME), saved, |policy| format!("Idle reclaim {}.", policy.describe()))
}

/// The section's notice, under its form (a refused number is also said
/// beside its field).
const OUTCOME: &str = "idle-policy-outcome";

/// The form, filled from the pool page's own load (like its blackouts), so
/// it hydrates with the page; saving refetches the page's data.
#[component]
pub fn IdlePolicySection(pool_id: Uuid, policy: IdlePolicy, save: ServerAction<SaveIdlePolicy>) -> impl IntoView {
    let p = policy;
    let from_query = super::notice::query_notice();
    let refused = Signal::derive(move || {
        let query = from_query.get().filter(|n| n.at.as_deref() == Some(OUTCOME));
        super::field::refused_field(save.value().get(), query)
    });
    // One numeric field of the form: what it was, refused beside it.
    let number = move |name: &'static str, label: &'static str, id: &'static str, value: i32| {
        view! {
            <Field form="idle-policy" name label refused let:aria>
                <input name=name id=id inputmode="numeric" size="5" value=value.to_string()
                    aria-invalid=move || aria.invalid() aria-describedby=move || aria.described_by()/>
            </Field>
        }
    };
    view! {
        <section class="idle-policy" aria-labelledby="idle-policy-title">
            <h2 id="idle-policy-title">"Idle reclaim"</h2>
            <p class="muted">"Measured GPU use, not browser activity. A live booking below the threshold for the idle \
                minutes is warned on its card; still idle after the grace minutes, it is ended and its GPUs return \
                to the pool. An interactive booking never opened and idle for the idle minutes after its start is \
                released as a no-show."</p>
            <ActionForm action=save attr:class="fields-row" attr:id="idle-policy-form">
                <input type="hidden" name="pool_id" value=pool_id.to_string()/>
                <label class="check"><input type="checkbox" name="enabled" id="idle-enabled" checked=p.enabled/> " On"</label>
                {number("threshold_pct", "Idle below (%)", "idle-threshold", p.threshold_pct)}
                {number("idle_minutes", "Idle for (minutes)", "idle-minutes", p.idle_minutes)}
                {number("grace_minutes", "Grace (minutes)", "idle-grace", p.grace_minutes)}
                <button class="button secondary" type="submit" id="idle-save">"Save idle reclaim"</button>
            </ActionForm>
            // What was saved; a refused number is said beside its field alone.
            {move || super::notice::section_notice(
                OUTCOME,
                super::notice::unless_beside(save.value().get()),
                from_query.get().filter(|n| n.field.is_none()),
            )}
        </section>
    }
}
