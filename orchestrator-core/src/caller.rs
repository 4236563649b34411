//! [`Caller`]: who is calling, as every core method sees it.
//!
//! Kept apart from [`crate::auth`] (which finds the caller behind a credential)
//! so the modules every operation uses (events, idempotency, logs) depend on
//! this small type and never on authentication itself.

use crate::api::{Me, Scope};
use crate::error::{Error, Result};
use uuid::Uuid;

/// The authenticated party of a request. Every core method takes one and
/// works inside `tenant_id` only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The tenant every read and write of the request is confined to.
    pub tenant_id: Uuid,
    /// What the credential may do; checked by each operation.
    pub scope: Scope,
    /// The API key behind the credential.
    pub key_id: Uuid,
    /// Who the key acts for: `user`, `agent`, `worker` or `service`.
    pub owner_type: String,
    /// The agent, worker or user the key belongs to; `None` for a key owned
    /// by no one in particular (service and bootstrap keys, the system
    /// caller).
    pub owner_id: Option<Uuid>,
}

impl Caller {
    /// The control plane itself, as an in-process principal with admin
    /// scope in `tenant_id`: what an embedder (or an offline command such as
    /// `orch admin create-key`) acts as, so it need not invent a key and
    /// bootstrap it. It has no key row (`key_id` is nil) and events name it
    /// as actor type `system`. Never hand it to code serving a network
    /// request.
    pub fn system(tenant_id: Uuid) -> Self {
        Self {
            tenant_id,
            scope: Scope::Admin,
            key_id: Uuid::nil(),
            owner_type: "system".into(),
            owner_id: None,
        }
    }

    /// Fails with `FORBIDDEN` unless the caller's scope ranks at least `scope`.
    pub fn require(&self, scope: Scope) -> Result<()> {
        if self.scope.satisfies(scope) {
            Ok(())
        } else {
            Err(Error::forbidden(format!(
                "this route needs {scope} scope or higher; the credential has {}",
                self.scope
            )))
        }
    }

    /// `GET /auth/me`.
    pub fn me(&self) -> Me {
        Me {
            authenticated: true,
            scope: self.scope,
            tenant_id: self.tenant_id,
            owner_type: self.owner_type.clone(),
            owner_id: self.owner_id,
            key_id: self.key_id,
        }
    }
}
