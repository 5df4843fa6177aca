//! Watch events of Berth's objects as an extra wake-up: a namespace deleted
//! by hand, or one that finished terminating, and a workspace that became
//! ready get a pass at once instead of at the next resync (on a real
//! cluster the kubelet reports readiness after the pass that applied the
//! workspace, and a session waited up to 30 s to become active). Only ever a
//! hint — the pass reads everything it needs itself, and a failed or missing
//! watch just means the timers do the waking.

use futures::StreamExt;
use kube::api::{Api, WatchParams};
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// Pause before watching again after the watch ended or failed.
const REWATCH: Duration = Duration::from_secs(5);

/// Watches Berth's objects of `objects` (namespaces, workspace Deployments)
/// until the task is dropped, waking each of `wakes` on every event.
pub async fn managed<K>(objects: Api<K>, wakes: Vec<Arc<Notify>>)
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + 'static,
    K::DynamicType: Default,
{
    let params = WatchParams::default().labels(&super::manifests::managed_selector());
    let kind = K::kind(&Default::default()).to_string();
    loop {
        match objects.watch(&params, "0").await {
            Ok(stream) => {
                let mut stream = std::pin::pin!(stream);
                while let Some(event) = stream.next().await {
                    match event {
                        Ok(_) => wakes.iter().for_each(|wake| wake.notify_one()),
                        Err(err) => {
                            tracing::debug!(error = %err, %kind, "watch ended");
                            break;
                        }
                    }
                }
            }
            Err(err) => tracing::debug!(error = %err, %kind, "cannot watch; relying on timers"),
        }
        tokio::time::sleep(REWATCH).await;
    }
}
