//! A small bounded cache of verified tokens, keyed by the token's SHA-256 digest (the token
//! itself is not kept).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use sha2::{Digest, Sha256};

use super::AuthInfo;

/// The most tokens remembered at once; when full, expired entries go, then everything.
const CAPACITY: usize = 4096;

pub(crate) struct TokenCache {
    entries: Mutex<HashMap<[u8; 32], (AuthInfo, Instant)>>,
}

impl TokenCache {
    pub(crate) fn new() -> Self {
        TokenCache { entries: Mutex::new(HashMap::new()) }
    }

    pub(crate) fn key(token: &str, resource: &str) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(resource.as_bytes());
        h.update([0]);
        h.update(token.as_bytes());
        h.finalize().into()
    }

    /// The identity remembered for `key`, while its entry is fresh.
    pub(crate) fn get(&self, key: &[u8; 32]) -> Option<AuthInfo> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        match entries.get(key) {
            Some((info, until)) if *until > Instant::now() => Some(info.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Remembers `info` until `until`.
    pub(crate) fn put(&self, key: [u8; 32], info: AuthInfo, until: Instant) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= CAPACITY {
            let now = Instant::now();
            entries.retain(|_, (_, u)| *u > now);
            if entries.len() >= CAPACITY {
                entries.clear();
            }
        }
        entries.insert(key, (info, until));
    }
}
