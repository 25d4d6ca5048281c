//! Request logging at `-v 6` and up, as kubectl prints it: `GET https://host/api/v1/pods 200 OK
//! in 12 milliseconds`. A tower layer on every client [`super::client::connect`] builds.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use http::{Request, Response};
use tower::{Layer, Service};

/// Wraps a client's service to log each request with its status and latency (at trace level,
/// which `-v 6` turns on).
#[derive(Debug, Clone, Copy)]
pub struct RequestLog;

impl<S> Layer<S> for RequestLog {
    type Service = Logged<S>;

    fn layer(&self, inner: S) -> Logged<S> {
        Logged { inner }
    }
}

/// The service [`RequestLog`] makes.
#[derive(Debug, Clone)]
pub struct Logged<S> {
    inner: S,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S, B, R> Service<Request<B>> for Logged<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
    S::Error: std::fmt::Display + 'static,
    R: 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<Result<Response<R>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let method = req.method().clone();
        let uri = req.uri().clone();
        let start = Instant::now();
        let future = self.inner.call(req);
        Box::pin(async move {
            let result = future.await;
            let ms = start.elapsed().as_millis();
            match &result {
                Ok(response) => {
                    tracing::trace!("{method} {uri} {} in {ms} milliseconds", response.status())
                }
                Err(e) => tracing::trace!("{method} {uri} failed in {ms} milliseconds: {e}"),
            }
            result
        })
    }
}
