//! A small cache of 2026-07-28 list results (`tools/list`, `prompts/list`,
//! `resources/list`, `resources/templates/list`), kept as long as the server's caching hints
//! (`ttlMs`, `cacheScope`) allow.
//!
//! A client is one user's: results the server marks `private` or `public` may both be kept.
//! A result without hints, with `ttlMs: 0`, or with a scope this client does not know is not
//! kept. A change notification for a list drops what is kept of it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::broadcast;

use super::ServerNotification;
use crate::protocol::JsonObject;

/// Whether the results of `method` may be kept here: the pages of a list, when the server
/// gives caching hints (see the method table).
fn cached(method: &str) -> bool {
    crate::protocol::methods::find(method).is_some_and(|m| m.cacheable && m.paginated)
}

/// At most this many pages are kept (a server with very many pages does not grow the client).
const MAX_ENTRIES: usize = 256;

/// A page's place: the method and the cursor.
type PageKey = (String, Option<String>);

/// List results by method and cursor, with when they go stale.
#[derive(Debug, Default)]
pub(crate) struct ListCache {
    entries: Mutex<HashMap<PageKey, (Instant, JsonObject)>>,
}

impl ListCache {
    /// A fresh result of `method` at `cursor`, if one is kept.
    pub(crate) fn get(&self, method: &str, cursor: Option<&str>) -> Option<JsonObject> {
        let mut entries = self.entries.lock().ok()?;
        let key = (method.to_owned(), cursor.map(str::to_owned));
        match entries.get(&key) {
            Some((until, result)) if Instant::now() < *until => Some(result.clone()),
            Some(_) => {
                entries.remove(&key);
                None
            }
            None => None,
        }
    }

    /// Keeps `result` of `method` at `cursor` for as long as its hints say.
    pub(crate) fn put(&self, method: &str, cursor: Option<&str>, result: &JsonObject) {
        if !cached(method) {
            return;
        }
        let ttl = result.get("ttlMs").and_then(Value::as_u64).unwrap_or(0);
        let scope_ok = matches!(result.get("cacheScope").and_then(Value::as_str), Some("private" | "public"));
        if ttl == 0 || !scope_ok {
            return;
        }
        let Some(until) = Instant::now().checked_add(Duration::from_millis(ttl)) else { return };
        let Ok(mut entries) = self.entries.lock() else { return };
        if entries.len() >= MAX_ENTRIES {
            let now = Instant::now();
            entries.retain(|_, (until, _)| *until > now);
            if entries.len() >= MAX_ENTRIES {
                return;
            }
        }
        entries.insert((method.to_owned(), cursor.map(str::to_owned)), (until, result.clone()));
    }

    /// Drops every page of `method` (its list changed).
    pub(crate) fn invalidate(&self, method: &str) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|(m, _), _| m != method);
        }
    }

    /// Drops what is kept of a list when the server says it changed, until the connection's
    /// notifications end.
    pub(crate) fn watch(self: &Arc<Self>, mut events: broadcast::Receiver<ServerNotification>) {
        let cache = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let method = match events.recv().await {
                    Ok(ServerNotification::ToolListChanged) => "tools/list",
                    Ok(ServerNotification::PromptListChanged) => "prompts/list",
                    Ok(ServerNotification::ResourceListChanged) => {
                        if let Some(cache) = cache.upgrade() {
                            cache.invalidate("resources/templates/list");
                        }
                        "resources/list"
                    }
                    Ok(_) => continue,
                    // Missed some: any of them may have been a change.
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        if let Some(cache) = cache.upgrade() {
                            cache.clear();
                        }
                        continue;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                match cache.upgrade() {
                    Some(cache) => cache.invalidate(method),
                    None => return,
                }
            }
        });
    }

    /// Drops everything.
    pub(crate) fn clear(&self) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(hints: Value) -> JsonObject {
        let mut r = json!({"tools": []});
        r.as_object_mut().unwrap().extend(hints.as_object().unwrap().clone());
        r.as_object().unwrap().clone()
    }

    #[test]
    fn results_are_kept_only_as_the_hints_allow() {
        let cache = ListCache::default();
        cache.put("tools/list", None, &result(json!({"ttlMs": 60_000, "cacheScope": "private"})));
        assert!(cache.get("tools/list", None).is_some());
        assert!(cache.get("tools/list", Some("next")).is_none());
        cache.invalidate("tools/list");
        assert!(cache.get("tools/list", None).is_none());

        for hints in [
            json!({}),
            json!({"ttlMs": 0, "cacheScope": "public"}),
            json!({"ttlMs": 1000}),
            json!({"ttlMs": 1000, "cacheScope": "shared-with-everyone"}),
        ] {
            cache.put("prompts/list", None, &result(hints.clone()));
            assert!(cache.get("prompts/list", None).is_none(), "{hints}");
        }
        cache.put(
            crate::protocol::Method::ToolsCall.name(),
            None,
            &result(json!({"ttlMs": 60_000, "cacheScope": "public"})),
        );
        assert!(cache.get(crate::protocol::Method::ToolsCall.name(), None).is_none());
    }

    #[test]
    fn stale_results_are_dropped() {
        let cache = ListCache::default();
        cache.put("resources/list", None, &result(json!({"ttlMs": 1, "cacheScope": "public"})));
        std::thread::sleep(Duration::from_millis(5));
        assert!(cache.get("resources/list", None).is_none());
        cache.put("resources/list", None, &result(json!({"ttlMs": 60_000, "cacheScope": "public"})));
        cache.clear();
        assert!(cache.get("resources/list", None).is_none());
    }
}
