//! Request logging at `-v 6` and up, as kubectl prints it: `GET https://host/api/v1/pods 200 OK
//! in 12 milliseconds`. A tower layer on every client [`super::client::connect`] builds.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use http::{Request, Response};
use tower::{Layer, Service};

/// Wraps a client's service to log each request with its status and latency (at trace level,
/// which `-v 6` turns on). The requests it sees carry only the path: it prints them after the
/// cluster's server URL, as kubectl does.
#[derive(Debug, Clone)]
pub struct RequestLog {
    base: String,
}

impl RequestLog {
    /// A log for requests to the server at `cluster_url` (`https://10.0.0.1:6443`).
    pub fn new(cluster_url: &http::Uri) -> RequestLog {
        RequestLog {
            base: cluster_url.to_string().trim_end_matches('/').to_string(),
        }
    }
}

impl<S> Layer<S> for RequestLog {
    type Service = Logged<S>;

    fn layer(&self, inner: S) -> Logged<S> {
        Logged {
            inner,
            base: self.base.clone(),
        }
    }
}

/// The service [`RequestLog`] makes.
#[derive(Debug, Clone)]
pub struct Logged<S> {
    inner: S,
    base: String,
}

/// The URL as kubectl prints it: the server's URL before a bare path, and no empty first query
/// parameter (`?&limit=500` -> `?limit=500`).
pub fn display_url(base: &str, uri: &http::Uri) -> String {
    let text = uri.to_string().replacen("?&", "?", 1);
    if uri.scheme().is_some() {
        text
    } else {
        format!("{base}{text}")
    }
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
        let uri = display_url(&self.base, req.uri());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_printed_whole_as_kubectl_does() {
        let log = RequestLog::new(&"https://10.0.0.1:6443/".parse().unwrap());
        assert_eq!(log.base, "https://10.0.0.1:6443");
        let path: http::Uri = "/api/v1/pods?&limit=500".parse().unwrap();
        assert_eq!(
            display_url(&log.base, &path),
            "https://10.0.0.1:6443/api/v1/pods?limit=500"
        );
        let full: http::Uri = "http://127.0.0.1:9/apis/karpenter.sh/v1/nodeclaims"
            .parse()
            .unwrap();
        assert_eq!(
            display_url(&log.base, &full),
            "http://127.0.0.1:9/apis/karpenter.sh/v1/nodeclaims"
        );
    }
}
