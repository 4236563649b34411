//! The `otel` feature: request spans leave the server as OTLP traces.
//! Run with `cargo nextest run -p orchestrator-tests --features otel --test otel`
//! (`.ci/otel.sh`).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use orchestrator_server::otel::{OtelTraces, traces_url};
use orchestrator_tests::TestServer;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tracing_subscriber::prelude::*;

/// One request the receiver got.
struct Received {
    method: String,
    path: String,
    content_type: Option<String>,
    body: Bytes,
}

/// A tiny OTLP/HTTP receiver on loopback: answers 200 to everything and
/// hands each request over. Returns its base URL.
async fn receiver() -> (String, mpsc::UnboundedReceiver<Received>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<hyper::body::Incoming>| {
                    let tx = tx.clone();
                    async move {
                        let method = request.method().to_string();
                        let path = request.uri().path().to_owned();
                        let content_type = request
                            .headers()
                            .get("content-type")
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned);
                        let body = request.into_body().collect().await?.to_bytes();
                        let _ = tx.send(Received {
                            method,
                            path,
                            content_type,
                            body,
                        });
                        Ok::<_, hyper::Error>(Response::new(Full::new(Bytes::new())))
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(socket), service)
                    .await;
            });
        }
    });
    (url, rx)
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

#[tokio::test]
async fn request_spans_are_posted_to_the_otlp_receiver() {
    orchestrator_client::install_crypto_provider();
    let (endpoint, mut received) = receiver().await;
    assert_eq!(
        traces_url(&format!("{endpoint}/")),
        format!("{endpoint}/v1/traces")
    );
    let traces = Arc::new(OtelTraces::new(&endpoint).expect("the exporter starts"));
    tracing_subscriber::registry()
        .with(traces.layer())
        .try_init()
        .expect("the only subscriber of this test process");

    let server = TestServer::start().await;
    server.admin().auth().me().await.unwrap();
    // Send the batch now rather than on the exporter's schedule (the flush
    // blocks, so not on this runtime's thread, which also runs the receiver).
    let flushing = traces.clone();
    tokio::task::spawn_blocking(move || flushing.flush())
        .await
        .unwrap();

    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let post = tokio::time::timeout_at(deadline, received.recv())
            .await
            .expect("an OTLP export arrives")
            .expect("the receiver runs");
        assert_eq!(post.method, "POST");
        assert_eq!(post.path, "/v1/traces");
        assert_eq!(post.content_type.as_deref(), Some("application/x-protobuf"));
        // The protobuf carries the span's name, service and attributes as
        // plain strings: the request span of `GET /api/v1/auth/me`.
        if contains(&post.body, "/api/v1/auth/me") {
            assert!(contains(&post.body, "request"));
            assert!(contains(&post.body, "request_id"));
            assert!(contains(&post.body, "orch"), "service.name");
            break;
        }
    }
}
