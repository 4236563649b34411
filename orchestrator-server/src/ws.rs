//! Websocket plumbing (RFC 6455 over hyper's HTTP/1.1 upgrade): recognising
//! an upgrade request, the `101 Switching Protocols` answer and turning the
//! upgraded connection into a [`WebSocketStream`]. Routes opt in through
//! `Route::upgrade` in the route table; the pipeline sends upgrades there.

use crate::error::ApiError;
use crate::request::Req;
use crate::response::{self, Reply};
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use orchestrator_core::Error;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

pub(crate) type Socket = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

/// Whether `headers` ask for a websocket: a `GET` with `Upgrade: websocket`
/// and an `upgrade` token in `Connection`.
pub(crate) fn is_upgrade(method: &Method, headers: &HeaderMap) -> bool {
    let has_token = |name: header::HeaderName, token: &str| {
        headers.get_all(name).iter().any(|v| {
            v.to_str().is_ok_and(|v| {
                v.split(',')
                    .any(|part| part.trim().eq_ignore_ascii_case(token))
            })
        })
    };
    method == Method::GET
        && has_token(header::UPGRADE, "websocket")
        && has_token(header::CONNECTION, "upgrade")
}

/// A pending websocket: the `101` answer to return and the connection to
/// await once it is sent.
pub(crate) struct Pending {
    pub reply: Reply,
    pub upgrade: OnUpgrade,
}

/// Checks the handshake headers (`Sec-WebSocket-Version: 13`, a
/// `Sec-WebSocket-Key`; 400 otherwise) and takes the connection.
pub(crate) fn accept(req: &mut Req) -> Result<Pending, ApiError> {
    if req.header("sec-websocket-version") != Some("13") {
        return Err(Error::validation("websocket upgrade needs Sec-WebSocket-Version: 13").into());
    }
    let key = req
        .header("sec-websocket-key")
        .ok_or_else(|| Error::validation("websocket upgrade needs a Sec-WebSocket-Key"))?;
    let accept = HeaderValue::from_str(&derive_accept_key(key.as_bytes()))
        .map_err(|e| Error::internal(e.to_string()))?;
    let upgrade = req
        .parts
        .extensions
        .remove::<OnUpgrade>()
        .ok_or_else(|| Error::validation("this connection cannot be upgraded"))?;
    let reply = Reply::stream(StatusCode::SWITCHING_PROTOCOLS, response::empty())
        .with_header(header::UPGRADE, HeaderValue::from_static("websocket"))
        .with_header(header::CONNECTION, HeaderValue::from_static("Upgrade"))
        .with_header(header::SEC_WEBSOCKET_ACCEPT, accept);
    Ok(Pending { reply, upgrade })
}

/// The websocket once the `101` went out.
pub(crate) async fn open(upgrade: OnUpgrade) -> Result<Socket, hyper::Error> {
    let upgraded = upgrade.await?;
    Ok(WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await)
}
