//! The pool page's idle-reclaim form (admins): off by default; when on,
//! idle bookings are warned then ended and no-shows released.

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
    crate::rpc::act(saved, |policy| format!("Idle reclaim {}.", policy.describe()))
}

/// The form, filled from the pool page's own load (like its blackouts), so
/// it hydrates with the page; saving refetches the page's data.
#[component]
pub fn IdlePolicySection(pool_id: Uuid, policy: IdlePolicy, save: ServerAction<SaveIdlePolicy>) -> impl IntoView {
    let p = policy;
    view! {
        <section class="idle-policy" aria-labelledby="idle-policy-title">
            <h2 id="idle-policy-title">"Idle reclaim"</h2>
            <p class="muted">"Measured GPU use, not browser activity. A live booking below the threshold for the idle \
                minutes is warned on its card; still idle after the grace minutes, it is ended and its GPUs return \
                to the pool. An interactive booking never opened and idle for the idle minutes after its start is \
                released as a no-show."</p>
            <ActionForm action=save attr:class="inline-form" attr:id="idle-policy-form">
                <input type="hidden" name="pool_id" value=pool_id.to_string()/>
                <label><input type="checkbox" name="enabled" id="idle-enabled" checked=p.enabled/> " On"</label>
                <label>"Idle below (%) " <input name="threshold_pct" id="idle-threshold" inputmode="numeric" size="4" value=p.threshold_pct.to_string()/></label>
                <label>"for (min) " <input name="idle_minutes" id="idle-minutes" inputmode="numeric" size="5" value=p.idle_minutes.to_string()/></label>
                <label>"grace (min) " <input name="grace_minutes" id="idle-grace" inputmode="numeric" size="5" value=p.grace_minutes.to_string()/></label>
                <button class="button secondary" type="submit" id="idle-save">"Save idle reclaim"</button>
            </ActionForm>
        </section>
    }
}
