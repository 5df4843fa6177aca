//! The simulated cluster served over plain HTTP, as an API server is: then
//! `berth worker` processes reach it through a kubeconfig, and the cluster
//! outlives them (the reliability run kills workers with `kill -9` and
//! counts what they left behind).

use super::SimulatedCluster;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use std::sync::Arc;

impl SimulatedCluster {
    /// Answers the API on `listener` until the process ends.
    pub async fn serve_http(self: Arc<Self>, listener: tokio::net::TcpListener) {
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let cluster = self.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: http::Request<Incoming>| {
                    let cluster = cluster.clone();
                    async move {
                        let (parts, body) = request.into_parts();
                        let body = http_body_util::BodyExt::collect(body).await.map(|b| b.to_bytes());
                        let request = http::Request::from_parts(parts, kube::client::Body::from(body?));
                        Ok::<_, hyper::Error>(cluster.answer(request).await)
                    }
                });
                // A worker killed mid-request drops its connection: nothing to report.
                let _ = Builder::new(TokioExecutor::new()).serve_connection(TokioIo::new(stream), service).await;
            });
        }
    }

    /// A kubeconfig naming the cluster at `http://{addr}`.
    pub fn kubeconfig(addr: std::net::SocketAddr) -> String {
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: simulated\n\
             clusters:\n- name: simulated\n  cluster:\n    server: http://{addr}\n\
             users:\n- name: berth\n  user: {{}}\n\
             contexts:\n- name: simulated\n  context:\n    cluster: simulated\n    user: berth\n    namespace: default\n"
        )
    }
}
