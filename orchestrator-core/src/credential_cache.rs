//! A short-lived cache of verified API key rows, so a busy agent does not
//! cost a key lookup per request.

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
}
