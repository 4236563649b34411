//! `request_id` idempotency, shared by every mutating write.
//!
//! A write that carries a `request_id` is recorded, in the same transaction as
//! the write, together with a fingerprint of the request and the result it
//! produced. Replaying the same write returns the recorded result without
//! running it again; the same `request_id` with a different request is a
//! conflict. Results that carry secrets (a freshly issued key) are stored
//! encrypted.
//!
//! Use `begin_write!`: it returns the recorded result from the enclosing
//! function on a replay, and otherwise gives an [`IdempotentWrite`] whose
//! `tx` takes the write; `write.finish(result)` records and commits.
//!
//! ```ignore
//! let mut write = begin_write!(self, caller, "api_keys.create", request, Storage::Encrypted);
//! let row = insert(&mut write.tx, ...).await?;
//! write.finish(CreatedApiKey { ... }).await
//! ```

use crate::caller::Caller;
use crate::control_plane::ControlPlane;
use crate::error::{Error, Result};
use crate::secrets::sha256_hex;
use crate::store::{Access, Tx, is_unique_violation, on_db};
use serde::Serialize;
use serde::de::DeserializeOwned;
use uuid::Uuid;

/// Opens an idempotent write for `$request` (which has a `request_id:
/// Option<String>` field), or returns the recorded result from the enclosing
/// function when the same request was already carried out.
macro_rules! begin_write {
    ($control_plane:expr, $caller:expr, $operation:literal, $request:expr, $storage:expr) => {
        $crate::idempotency::begin_write!(
            $control_plane, $caller, $operation, $request, $storage, guarded: true
        )
    };
    // `guarded: false`: begun with [`crate::store::Store::begin_unguarded`]
    // when the request has no `request_id` (which needs more statements).
    ($control_plane:expr, $caller:expr, $operation:literal, $request:expr, $storage:expr, guarded: $guarded:expr) => {
        match $control_plane
            .begin_idempotent_as(
                $caller,
                $operation,
                $request.request_id.as_deref(),
                &$request,
                $storage,
                $guarded,
            )
            .await?
        {
            $crate::idempotency::Begun::Replayed(recorded) => return Ok(recorded),
            $crate::idempotency::Begun::Fresh(write) => write,
        }
    };
}
pub(crate) use begin_write;

/// How a recorded result is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// The result holds nothing secret: store it as JSON.
    Plain,
    /// The result holds a secret: store it encrypted.
    Encrypted,
}

#[derive(Debug, Clone)]
struct Key {
    tenant_id: Uuid,
    operation: &'static str,
    request_id: String,
    fingerprint: String,
    storage: Storage,
}

/// The start of an idempotent write.
#[allow(clippy::large_enum_variant)] // short-lived; `Fresh` is the common case
pub enum Begun<T> {
    /// The same request was already carried out: its result.
    Replayed(T),
    /// A new write: do it in `tx`, then call [`IdempotentWrite::finish`].
    Fresh(IdempotentWrite),
}

/// A write transaction that records its result under the request's key.
pub struct IdempotentWrite {
    /// The write transaction: do the write in it, then
    /// [`IdempotentWrite::finish`] records the result and commits.
    pub tx: Tx,
    key: Option<Key>,
    control_plane: ControlPlane,
}

impl ControlPlane {
    /// Opens a write transaction for `operation`, or answers with the recorded
    /// result when `request_id` was already used for the same request.
    pub(crate) async fn begin_idempotent<R: Serialize, T: DeserializeOwned>(
        &self,
        caller: &Caller,
        operation: &'static str,
        request_id: Option<&str>,
        request: &R,
        storage: Storage,
    ) -> Result<Begun<T>> {
        self.begin_idempotent_as(caller, operation, request_id, request, storage, true)
            .await
    }

    /// [`ControlPlane::begin_idempotent`]; `guarded: false` begins without a
    /// savepoint ([`crate::store::Store::begin_unguarded`]) when there is no
    /// `request_id` to record.
    pub(crate) async fn begin_idempotent_as<R: Serialize, T: DeserializeOwned>(
        &self,
        caller: &Caller,
        operation: &'static str,
        request_id: Option<&str>,
        request: &R,
        storage: Storage,
        guarded: bool,
    ) -> Result<Begun<T>> {
        let mut tx = if guarded || request_id.is_some() {
            self.store().begin().await?
        } else {
            self.store().begin_unguarded().await?
        };
        let key = match request_id {
            None => None,
            Some(request_id) => {
                if request_id.is_empty() || request_id.len() > 200 {
                    return Err(Error::invalid_field(
                        "request_id",
                        "must be 1 to 200 characters",
                    ));
                }
                let key = Key {
                    tenant_id: caller.tenant_id,
                    operation,
                    request_id: request_id.to_owned(),
                    fingerprint: fingerprint(request)?,
                    storage,
                };
                if let Some(found) = self.replay(&mut tx, &key).await? {
                    return Ok(Begun::Replayed(found));
                }
                // Claim the key before the write: a concurrent request with
                // the same key waits here for this transaction and then
                // replays its result, instead of running the write against
                // the state this one left (a second `complete` answering
                // 409). The response is filled in by `finish`.
                let now = tx.now().as_datetime();
                let claimed = on_db!(&mut tx, c => sqlx::query(
                    "INSERT INTO idempotency_records (tenant_id, operation, request_id, fingerprint, response, created_at) \
                     VALUES ($1, $2, $3, $4, '', $5)",
                )
                .bind(key.tenant_id)
                .bind(key.operation)
                .bind(&key.request_id)
                .bind(&key.fingerprint)
                .bind(now)
                .execute(c).await.map(|r| r.rows_affected()));
                match claimed {
                    Ok(_) => {}
                    Err(e) if is_unique_violation(&e) => {
                        drop(tx);
                        let mut conn = self.store().read().await?;
                        return match self.replay(&mut conn, &key).await? {
                            Some(found) => Ok(Begun::Replayed(found)),
                            None => Err(Error::conflict(
                                "a concurrent request with the same request_id did not finish",
                            )),
                        };
                    }
                    Err(e) => return Err(e.into()),
                }
                Some(key)
            }
        };
        Ok(Begun::Fresh(IdempotentWrite {
            tx,
            key,
            control_plane: self.clone(),
        }))
    }

    async fn replay<T: DeserializeOwned>(
        &self,
        access: &mut impl Access,
        key: &Key,
    ) -> Result<Option<T>> {
        let stored: Option<(String, String)> = on_db!(access, c => sqlx::query_as(
            "SELECT fingerprint, response FROM idempotency_records \
             WHERE tenant_id = $1 AND operation = $2 AND request_id = $3",
        )
        .bind(key.tenant_id)
        .bind(key.operation)
        .bind(&key.request_id)
        .fetch_optional(c)
        .await)?;
        let Some((fingerprint, response)) = stored else {
            return Ok(None);
        };
        if fingerprint != key.fingerprint {
            return Err(Error::Conflict {
                message: format!("request_id `{}` was already used for a different request", key.request_id),
                hint: Some("use a new request_id for a new write; reuse one only to retry the exact same write".into()),
            });
        }
        let json = match key.storage {
            Storage::Plain => response.into_bytes(),
            Storage::Encrypted => self
                .secrets()
                .decrypt(&response, key.context().as_bytes())?,
        };
        Ok(Some(serde_json::from_slice(&json)?))
    }
}

impl Key {
    fn context(&self) -> String {
        format!(
            "idempotency:{}:{}:{}",
            self.tenant_id, self.operation, self.request_id
        )
    }
}

impl IdempotentWrite {
    /// A write without a `request_id` in a transaction begun elsewhere.
    pub(crate) fn plain(control_plane: &ControlPlane, tx: Tx) -> Self {
        Self {
            tx,
            key: None,
            control_plane: control_plane.clone(),
        }
    }

    /// Records `result` under the request's key (when it has one) and commits.
    /// A concurrent request with the same key is waiting on this
    /// transaction's claim of the key, and replays `result` once it commits.
    pub async fn finish<T: Serialize + DeserializeOwned>(mut self, result: T) -> Result<T> {
        let Some(key) = self.key.take() else {
            self.tx.commit().await?;
            return Ok(result);
        };
        let json = serde_json::to_string(&result)?;
        let response = match key.storage {
            Storage::Plain => json,
            Storage::Encrypted => self
                .control_plane
                .secrets()
                .encrypt(json.as_bytes(), key.context().as_bytes()),
        };
        // The key was claimed (with an empty response) in this transaction
        // by `begin_idempotent`.
        on_db!(&mut self.tx, c => sqlx::query(
            "UPDATE idempotency_records SET response = $4 \
             WHERE tenant_id = $1 AND operation = $2 AND request_id = $3",
        )
        .bind(key.tenant_id)
        .bind(key.operation)
        .bind(&key.request_id)
        .bind(response)
        .execute(c).await.map(|r| r.rows_affected()))?;
        self.tx.commit().await?;
        Ok(result)
    }
}

/// A stable hash of the request body (struct fields serialize in declaration
/// order and JSON objects in key order, so equal requests hash equally).
fn fingerprint<R: Serialize>(request: &R) -> Result<String> {
    Ok(sha256_hex(&serde_json::to_string(request)?))
}
