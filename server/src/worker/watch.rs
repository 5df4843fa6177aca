//! Watch events of managed namespaces as an extra wake-up: a namespace
//! deleted by hand, or one that finished terminating, gets a pass at once
//! instead of at the next resync. Only ever a hint — the pass reads
//! everything it needs itself, and a failed or missing watch just means the
//! timers do the waking.

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, WatchParams};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// Pause before watching again after the watch ended or failed.
const REWATCH: Duration = Duration::from_secs(5);

/// Watches managed namespaces until the task is dropped, waking each of
/// `wakes` on every event.
pub async fn namespaces(client: kube::Client, wakes: Vec<Arc<Notify>>) {
    let namespaces: Api<Namespace> = Api::all(client);
    let params = WatchParams::default().labels(&super::manifests::managed_selector());
    loop {
        match namespaces.watch(&params, "0").await {
            Ok(stream) => {
                let mut stream = std::pin::pin!(stream);
                while let Some(event) = stream.next().await {
                    match event {
                        Ok(_) => wakes.iter().for_each(|wake| wake.notify_one()),
                        Err(err) => {
                            tracing::debug!(error = %err, "namespace watch ended");
                            break;
                        }
                    }
                }
            }
            Err(err) => tracing::debug!(error = %err, "cannot watch namespaces; relying on timers"),
        }
        tokio::time::sleep(REWATCH).await;
    }
}
