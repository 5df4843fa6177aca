//! Keeps a page's reactive owner current for as long as its response is
//! polled. leptos keeps each request's signals in an arena of its own, made
//! current per thread; but leptos_axum polls parts of a page (the `<head>`
//! it fills in once the body is rendered, the rest of the body stream)
//! outside that arena, on whichever thread tokio picks. There a read finds
//! another request's arena, a finished one or none: the value reads as
//! disposed, the render task panics, and the page never ends.
//! `context` (web.rs) records the owner leptos made for the request; this
//! layer makes it current around every poll of the response and its body.

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use leptos::prelude::Owner;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

/// The owner of the request's render, once leptos has made it.
#[derive(Clone, Default)]
pub struct RenderOwner(Arc<Mutex<Option<Owner>>>);

impl RenderOwner {
    /// Records the current owner (called from within the render).
    pub fn record(&self) {
        *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Owner::current();
    }

    /// Runs `poll` with the recorded owner (and its arena) current. The lock
    /// is not held while polling: the render records the owner from within.
    fn with<T>(&self, poll: impl FnOnce() -> T) -> T {
        let owner = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        match owner {
            Some(owner) => owner.with(poll),
            None => poll(),
        }
    }
}

/// Middleware: gives the request a `RenderOwner` and keeps it current while
/// the response and its body are polled.
pub async fn keep_current(mut request: Request, next: Next) -> Response {
    let owner = RenderOwner::default();
    request.extensions_mut().insert(owner.clone());
    let response = InOwner { owner: owner.clone(), inner: Box::pin(next.run(request)) }.await;
    let (parts, body) = response.into_parts();
    Response::from_parts(parts, Body::new(BodyInOwner { owner, inner: body }))
}

struct InOwner<F> {
    owner: RenderOwner,
    inner: Pin<Box<F>>,
}

impl<F: Future> Future for InOwner<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        this.owner.with(|| this.inner.as_mut().poll(cx))
    }
}

struct BodyInOwner {
    owner: RenderOwner,
    inner: Body,
}

impl http_body::Body for BodyInOwner {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        this.owner.with(|| Pin::new(&mut this.inner).poll_frame(cx))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
