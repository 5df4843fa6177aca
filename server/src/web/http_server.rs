//! The portal's HTTP server: axum's router on hyper, as `axum::serve` runs
//! it, plus what that leaves out. A client that dribbles its request
//! headers (slowloris) is cut off after `--header-read-timeout` (10 s)
//! instead of holding its connection for ever; each request carries its
//! peer address (`ConnectInfo`) for the sign-in rate limit; a stop lets
//! the requests in flight finish.

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// Serves `app` on `listener` until `stop` completes, then waits for the
/// connections' requests in flight (callers bound that wait).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    header_read_timeout: Duration,
    stop: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let mut builder = Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(header_read_timeout);
    let graceful = GracefulShutdown::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors and the like: pause rather than spin.
                    tracing::warn!(error = %err, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = stop.as_mut() => break,
        };
        // Without it, a response's last small write (a chunked body's end)
        // waits for the client's delayed ACK: +40 ms on a tenth of pages.
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!(error = %err, %peer, "cannot set TCP_NODELAY");
        }
        let service = app.clone().map_request(move |request: axum::http::Request<Incoming>| {
            let mut request = request.map(Body::new);
            request.extensions_mut().insert(ConnectInfo(peer));
            request
        });
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(service))
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(err) = connection.await {
                tracing::debug!(error = %err, %peer, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// The peer address of a request served by `serve` (absent in-process, as
/// in tests that call the router directly).
pub fn peer(request: &axum::http::Request<Body>) -> Option<SocketAddr> {
    request.extensions().get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(addr)| *addr)
}
