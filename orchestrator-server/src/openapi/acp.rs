//! ACP sessions: each route's input and output types.

use super::describe::*;
use http::Method as M;
use orchestrator_core::api::acp::{AcpClaim, AcpClaimed, AcpHeartbeat, AcpSession, AcpSessionFilter, CreateAcpSession};

/// ACP sessions.
pub(super) fn docs() -> Vec<Doc> {
    vec![
        op(M::POST, "/api/v1/acp/sessions", "Open an ACP session (200 when an open one is reused)", created::<AcpSession>()).body::<CreateAcpSession>(),
        op(M::GET, "/api/v1/acp/sessions", "List ACP sessions", page::<AcpSession>()).query::<AcpSessionFilter>(),
        op(M::GET, "/api/v1/acp/sessions/{id}", "Get an ACP session", ok::<AcpSession>()),
        op(M::POST, "/api/v1/acp/sessions/{id}/heartbeat", "ACP session heartbeat", ok::<AcpSession>()).body::<AcpHeartbeat>(),
        op(M::POST, "/api/v1/acp/sessions/{id}/close", "Close an ACP session", ok::<AcpSession>()),
        op(M::POST, "/api/v1/acp/claim", "Claim a task over ACP", ok::<AcpClaimed>()).body::<AcpClaim>().or_no_content(),
    ]
}
