//! Stopping on SIGTERM (Kubernetes stopping the pod) or Ctrl-C.

/// How long in-flight requests may finish after SIGTERM (Kubernetes waits
/// `terminationGracePeriodSeconds`, 40 s in deploy/, before SIGKILL).
pub(super) const DRAIN: std::time::Duration = std::time::Duration::from_secs(30);

/// SIGTERM (Kubernetes stopping the pod) or Ctrl-C.
async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate => {}
    }
}

/// A stop flag raised by the first SIGTERM or Ctrl-C.
pub(super) fn stop_on_signal() -> tokio::sync::watch::Receiver<bool> {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("stopping: no new connections; requests in flight finish; the worker lets go of the lead");
        let _ = stop.send(true);
    });
    stopped
}

pub(super) async fn stopped(mut flag: tokio::sync::watch::Receiver<bool>) {
    while !*flag.borrow_and_update() {
        if flag.changed().await.is_err() {
            return;
        }
    }
}
