//! Counts every request the worker makes to the Kubernetes API by verb and
//! answer (`berth_kubernetes_requests_total`): a tower layer under the
//! `kube::Client`, for the real cluster and the simulated one alike.

use futures::future::BoxFuture;
use http::{Method, Request, Response};
use std::task::{Context, Poll};
use tower::{Layer, Service};

#[derive(Clone, Copy, Default)]
pub struct CountRequests;

impl<S> Layer<S> for CountRequests {
    type Service = Counted<S>;
    fn layer(&self, inner: S) -> Counted<S> {
        Counted(inner)
    }
}

#[derive(Clone)]
pub struct Counted<S>(S);

impl<S, B, R> Service<Request<B>> for Counted<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Response<R>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let verb = verb(request.method(), request.uri().query().unwrap_or(""));
        let answer = self.0.call(request);
        Box::pin(async move {
            let result = answer.await;
            let status = match &result {
                Ok(response) => response.status().as_u16().to_string(),
                Err(_) => "error".to_string(),
            };
            crate::metrics::kubernetes_request(verb, &status);
            result
        })
    }
}

/// The API verb of a request. A GET of one object and of a collection look
/// alike on the wire; both count as `get` (the worker lists only in its
/// snapshot and its sweep).
fn verb(method: &Method, query: &str) -> &'static str {
    let watching = query.split('&').any(|pair| pair == "watch=true" || pair == "watch=1");
    match *method {
        Method::GET if watching => "watch",
        Method::GET => "get",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_follow_the_method_and_the_watch_parameter() {
        assert_eq!(verb(&Method::GET, "labelSelector=a&watch=true&resourceVersion=1"), "watch");
        assert_eq!(verb(&Method::GET, "labelSelector=a"), "get");
        assert_eq!(verb(&Method::PATCH, "fieldManager=berth&force=true"), "patch");
        assert_eq!(verb(&Method::DELETE, ""), "delete");
        assert_eq!(verb(&Method::POST, ""), "create");
    }
}
