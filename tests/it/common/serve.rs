//! The in-memory API served on a localhost port, for tests that run the binary (assert_cmd)
//! against it: a kubeconfig naming `http://127.0.0.1:PORT` reaches the same [`FakeApi`] whose
//! objects and request log the test then reads.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use http::Request;
use http_body_util::BodyExt;

use super::FakeApi;

/// Serves `api` on 127.0.0.1 from a thread of its own (for the rest of the test process);
/// returns its URL.
pub fn serve(api: &FakeApi) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let api = api.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            while let Ok((stream, _)) = listener.accept().await {
                let api = api.clone();
                tokio::spawn(async move {
                    let service =
                        hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                            let mut api = api.clone();
                            async move {
                                let (parts, body) = req.into_parts();
                                let bytes = body
                                    .collect()
                                    .await
                                    .map(|b| b.to_bytes())
                                    .unwrap_or_default();
                                let req = Request::from_parts(
                                    parts,
                                    kube::client::Body::from(bytes.to_vec()),
                                );
                                tower::Service::call(&mut api, req).await
                            }
                        });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
    });
    format!("http://{addr}")
}

/// A kubeconfig file in `dir` for `server` (context `ctx`, namespace `default`).
pub fn kubeconfig(dir: &Path, name: &str, server: &str) -> PathBuf {
    let path = dir.join(name);
    let mut f = std::fs::File::create(&path).unwrap();
    write!(
        f,
        "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: \"{server}\"}}}}]\n\
         users: [{{name: u, user: {{token: t}}}}]\ncontexts: [{{name: ctx, context: {{cluster: c, user: u}}}}]\n\
         current-context: ctx\n"
    )
    .unwrap();
    path
}
