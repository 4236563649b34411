//! A webhook receiver on loopback that records every post and answers
//! from a script (or holds its answers, so a test can kill the server with
//! deliveries in flight), and a signature check written from the Standard
//! Webhooks specification (its own HMAC over SHA-256, not the server's).
//! Used by `tests/webhooks` and by the `kill -9` test of `orch serve`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use sha2::{Digest, Sha256};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// One post the receiver got.
#[derive(Debug, Clone)]
pub struct Call {
    pub id: String,
    pub timestamp: String,
    pub signature: String,
    pub body: Vec<u8>,
    /// What the receiver answered.
    pub answered: u16,
}

impl Call {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

#[derive(Default)]
struct State {
    calls: Vec<Call>,
    /// Answers to give, in order; then `fallback`.
    script: VecDeque<u16>,
    fallback: u16,
}

/// The running receiver.
#[derive(Clone)]
pub struct Receiver {
    pub url: String,
    state: Arc<Mutex<State>>,
    /// While true, posts are recorded on arrival but answered only once it
    /// turns false (the sender waits: its delivery is in flight).
    hold: Arc<watch::Sender<bool>>,
}

impl Receiver {
    /// Answers `script` in order, then `fallback` to every post.
    pub async fn start(script: &[u16], fallback: u16) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(State {
            calls: Vec::new(),
            script: script.iter().copied().collect(),
            fallback,
        }));
        let shared = state.clone();
        let hold = Arc::new(watch::channel(false).0);
        let held = hold.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let state = shared.clone();
                let held = held.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                        let state = state.clone();
                        let mut hold = held.subscribe();
                        async move {
                            let (parts, body) = req.into_parts();
                            let body = body
                                .collect()
                                .await
                                .map(|b| b.to_bytes())
                                .unwrap_or_default();
                            let header = |name: &str| {
                                parts
                                    .headers
                                    .get(name)
                                    .and_then(|v| v.to_str().ok())
                                    .unwrap_or_default()
                                    .to_owned()
                            };
                            let answered = {
                                let mut state = state.lock().unwrap();
                                let answered = state.script.pop_front().unwrap_or(state.fallback);
                                state.calls.push(Call {
                                    id: header("webhook-id"),
                                    timestamp: header("webhook-timestamp"),
                                    signature: header("webhook-signature"),
                                    body: body.to_vec(),
                                    answered,
                                });
                                answered
                            };
                            let _ = hold.wait_for(|held| !held).await;
                            Ok::<_, Infallible>(
                                Response::builder()
                                    .status(answered)
                                    .body(Full::new(Bytes::new()))
                                    .unwrap(),
                            )
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self { url, state, hold }
    }

    pub fn calls(&self) -> Vec<Call> {
        self.state.lock().unwrap().calls.clone()
    }

    /// From now on every post is answered `status`.
    pub fn answer_all(&self, status: u16) {
        let mut state = self.state.lock().unwrap();
        state.script.clear();
        state.fallback = status;
    }

    /// From now on posts are recorded but not answered until
    /// [`Receiver::release`].
    pub fn hold(&self) {
        self.hold.send_replace(true);
    }

    /// Answers the held posts and every later one at once.
    pub fn release(&self) {
        self.hold.send_replace(false);
    }

    /// Waits (up to 20 s) until at least `n` posts arrived.
    pub async fn wait_for(&self, n: usize) -> Vec<Call> {
        for _ in 0..400 {
            let calls = self.calls();
            if calls.len() >= n {
                return calls;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("expected {n} posts, got {}", self.calls().len());
    }
}

/// HMAC-SHA256 as RFC 2104 defines it (block size 64).
fn hmac_sha256(key: &[u8], message: &[u8]) -> Vec<u8> {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(message);
    let inner = inner.finalize();
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner);
    outer.finalize().to_vec()
}

/// Whether `call` carries a valid signature by `secret` (`whsec_` +
/// base64 key): the specification's check, over `id.timestamp.body`,
/// against each space-separated `v1,` signature of the header.
pub fn verifies(call: &Call, secret: &str) -> bool {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").expect("whsec_ prefix"))
        .expect("a base64 secret");
    let mut signed = format!("{}.{}.", call.id, call.timestamp).into_bytes();
    signed.extend_from_slice(&call.body);
    let expected = STANDARD.encode(hmac_sha256(&key, &signed));
    call.signature.split(' ').any(|part| {
        part.split_once(',')
            .is_some_and(|(version, sig)| version == "v1" && sig == expected)
    })
}
