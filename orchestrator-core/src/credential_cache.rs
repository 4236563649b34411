//! A short-lived cache of verified API key rows and session states, so a busy
//! agent does not cost a key (and session) lookup per request.

use crate::keys::KeyRow;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Recently verified keys, by key id, so a busy agent does not cost a key
/// lookup per request. Entries live a few seconds at most.
#[derive(Default)]
pub(crate) struct CredentialCache {
    by_hash: Mutex<HashMap<String, (Instant, KeyRow)>>,
    /// Session id → (when looked up, live). A revoked session stays known
    /// (revocation is final); a live one for the TTL only.
    sessions: Mutex<HashMap<Uuid, (Instant, bool)>>,
}

/// Entries kept before the cache is simply emptied (it refills on demand).
const CACHE_CAPACITY: usize = 10_000;

impl CredentialCache {
    pub(crate) fn get(&self, hash: &str, ttl: Duration) -> Option<KeyRow> {
        let map = self.by_hash.lock().expect("credential cache poisoned");
        map.get(hash)
            .filter(|(at, _)| at.elapsed() < ttl)
            .map(|(_, row)| row.clone())
    }

    pub(crate) fn put(&self, hash: String, row: KeyRow) {
        let mut map = self.by_hash.lock().expect("credential cache poisoned");
        if map.len() >= CACHE_CAPACITY {
            map.clear();
        }
        map.insert(hash, (Instant::now(), row));
    }

    pub(crate) fn forget(&self, key_id: Uuid) {
        let mut map = self.by_hash.lock().expect("credential cache poisoned");
        map.retain(|_, (_, row)| row.id != key_id);
    }

    /// Whether session `id` is live, when known: a revocation is remembered,
    /// a live state for at most `ttl`.
    pub(crate) fn session(&self, id: Uuid, ttl: Duration) -> Option<bool> {
        let map = self.sessions.lock().expect("session cache poisoned");
        map.get(&id)
            .filter(|(at, live)| !live || at.elapsed() < ttl)
            .map(|(_, live)| *live)
    }

    /// Records what the database said about session `id`. A live state read
    /// before a revocation made here never overwrites that revocation.
    pub(crate) fn put_session(&self, id: Uuid, live: bool) {
        let mut map = self.sessions.lock().expect("session cache poisoned");
        if live && matches!(map.get(&id), Some((_, false))) {
            return;
        }
        if map.len() >= CACHE_CAPACITY {
            map.clear();
        }
        map.insert(id, (Instant::now(), live));
    }
}
