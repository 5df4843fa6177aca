//! Open pages stay live: once hydrated, the app asks every few seconds for
//! a stamp of what the viewer's pages show (`backend::bookings::live`), and
//! when it changed, bumps `Shared::live`, on which the pages' data depend —
//! so a card turns active, an approval lands or the approvals badge drops
//! without a reload. A quiet page costs one small query per poll.

use crate::rpc::RpcError;
use leptos::prelude::*;

/// How often an open page asks whether anything changed.
#[cfg(feature = "hydrate")]
const POLL_SECONDS: u64 = 4;

#[server(prefix = "/rpc", endpoint = "live", output = crate::codec::JsonText)]
pub async fn live_stamp() -> Result<String, RpcError> {
    let (principal, ctx) = crate::rpc::ctx()?;
    Ok(crate::backend::bookings::live::stamp(&ctx.db, &principal).await?)
}

/// Polls while the page is open and someone is signed in; `live` moves on
/// each change after the first answer.
#[cfg(feature = "hydrate")]
pub fn poll(live: RwSignal<u64>) {
    let last = StoredValue::new(None::<String>);
    let ask = move || {
        leptos::task::spawn_local(async move {
            // A failed poll (signed out, offline) changes nothing; the next one asks again.
            if let Ok(stamp) = live_stamp().await {
                let changed = last.with_value(|seen| seen.as_ref().is_some_and(|seen| *seen != stamp));
                last.set_value(Some(stamp));
                if changed {
                    live.update(|version| *version += 1);
                }
            }
        })
    };
    ask();
    if let Ok(handle) = set_interval_with_handle(ask, std::time::Duration::from_secs(POLL_SECONDS)) {
        on_cleanup(move || handle.clear());
    }
}
