//! What a claim reads besides the task, kept in memory so that the common
//! claim costs its one `UPDATE` and nothing else (issue 14: the agent read
//! before each claim and the three credential reads after it were half of
//! the statements of a claim).
//!
//! Two things are cached:
//! - **Agent rows**, by tenant and id. The fields a claim uses (tenant,
//!   worker, protocol, routing tags, execution mode, ACP profile, creation
//!   time) are written once at registration and never change; agents are
//!   never deleted. A cached row is therefore right on every replica for as
//!   long as it is kept, with no expiry. Its status and heartbeat are as of
//!   the first read and must not be used from here.
//! - **The tenant's credential inputs**: which LLM secrets are set and which
//!   remote MCP servers are enabled by default, from which the claim's
//!   credential handles are made. Kept [`CREDENTIAL_INPUTS_TTL`] at most and
//!   dropped at once when this process writes either (settings, servers).
//!   Another replica's write is seen within the TTL. A handle issued from a
//!   stale list is harmless: handles are resolved against the stored rows,
//!   and one whose secret or server is gone answers 404 like any stale handle.
//!
//! A read that started before an invalidation must not store what it read
//! after it: each invalidation bumps a generation, and a read stores its
//! result only if the generation has not moved since the read began.
//!
//! The control plane holds this cache, so it names no resource module (that
//! would be an import circle): agent rows are kept as `dyn Any` and handed
//! back as the type they were stored as, and the LLM settings only as what a
//! claim needs to know of them ([`LlmHandles`]).

use chrono::{DateTime, Utc};
use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// How long another replica's change to the LLM settings or the remote MCP
/// servers may go unseen by this one's claims.
pub(crate) const CREDENTIAL_INPUTS_TTL: Duration = Duration::from_secs(1);

/// Entries kept before a map is simply emptied (it refills on demand).
const CAPACITY: usize = 10_000;

/// What a claim's credential handles are made from (module docs).
#[derive(Debug, Clone)]
pub(crate) struct CredentialInputs {
    pub llm: Option<LlmHandles>,
    /// Every server enabled by default, in listing order; a claim keeps
    /// those enabled since before its agent registered.
    pub servers: Vec<EnabledServer>,
}

/// The tenant's LLM settings, as far as a claim needs them: which handles
/// to issue (the values are read from the stored row at resolution).
#[derive(Debug, Clone)]
pub(crate) struct LlmHandles {
    pub provider: String,
    pub api_key: bool,
    pub extra_headers: bool,
}

/// A remote MCP server enabled by default, as far as a claim needs it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct EnabledServer {
    pub id: Uuid,
    pub name: String,
    /// When the flag was last turned on: agents registered since get it.
    pub enabled_since: Option<DateTime<Utc>>,
}

/// The generation a read began in; hand it back to store the result.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Generation(u64);

#[derive(Default)]
pub(crate) struct ClaimCache {
    agents: Mutex<HashMap<(Uuid, Uuid), Arc<dyn Any + Send + Sync>>>,
    inputs: Mutex<HashMap<Uuid, (Instant, Arc<CredentialInputs>)>>,
    generation: AtomicU64,
}

impl ClaimCache {
    /// Agent `id` of the tenant, if cached as a `T`.
    pub(crate) fn agent<T: Any + Send + Sync>(&self, tenant_id: Uuid, id: Uuid) -> Option<Arc<T>> {
        let map = self.agents.lock().expect("claim cache poisoned");
        map.get(&(tenant_id, id))
            .cloned()
            .and_then(|row| row.downcast::<T>().ok())
    }

    pub(crate) fn put_agent<T: Any + Send + Sync>(
        &self,
        tenant_id: Uuid,
        id: Uuid,
        row: T,
    ) -> Arc<T> {
        let row = Arc::new(row);
        let mut map = self.agents.lock().expect("claim cache poisoned");
        insert_bounded(&mut map, (tenant_id, id), row.clone());
        row
    }

    /// The tenant's credential inputs when known and fresh, else the
    /// generation to hand to [`ClaimCache::put_inputs`] after reading them.
    pub(crate) fn inputs(
        &self,
        tenant_id: Uuid,
    ) -> std::result::Result<Arc<CredentialInputs>, Generation> {
        let generation = Generation(self.generation.load(Ordering::Acquire));
        let map = self.inputs.lock().expect("claim cache poisoned");
        map.get(&tenant_id)
            .filter(|(at, _)| at.elapsed() < CREDENTIAL_INPUTS_TTL)
            .map(|(_, inputs)| inputs.clone())
            .ok_or(generation)
    }

    /// Stores what a read begun in `generation` found, unless an
    /// invalidation came in between.
    pub(crate) fn put_inputs(
        &self,
        tenant_id: Uuid,
        generation: Generation,
        inputs: CredentialInputs,
    ) -> Arc<CredentialInputs> {
        let inputs = Arc::new(inputs);
        let mut map = self.inputs.lock().expect("claim cache poisoned");
        // Checked under the lock, which invalidations also take.
        if self.generation.load(Ordering::Acquire) == generation.0 {
            insert_bounded(&mut map, tenant_id, (Instant::now(), inputs.clone()));
        }
        inputs
    }

    /// Forgets the tenant's credential inputs: call after committing a change
    /// to its LLM settings or remote MCP servers.
    pub(crate) fn forget_inputs(&self, tenant_id: Uuid) {
        let mut map = self.inputs.lock().expect("claim cache poisoned");
        self.generation.fetch_add(1, Ordering::AcqRel);
        map.remove(&tenant_id);
    }
}

/// Inserts into one of the cache's maps, emptying it first when it holds
/// [`CAPACITY`] entries: every entry is cheap to read again, and the bound
/// keeps a deployment with many tenants or agents from growing it forever.
fn insert_bounded<K: std::hash::Hash + Eq, V>(map: &mut HashMap<K, V>, key: K, value: V) {
    if map.len() >= CAPACITY {
        map.clear();
    }
    map.insert(key, value);
}
