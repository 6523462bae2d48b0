//! DPoP proofs seen by any instance ([`RedisReplayCache`]): a proof replayed on another instance
//! is refused too.

use std::time::Duration;

use typed_mcp::auth::ReplayCache;
use typed_mcp::engine::BoxFuture;

use super::{Redis, millis};

/// A [`ReplayCache`] on Redis, shared by every instance of the deployment: one key per accepted
/// proof (`{prefix}:dpop:{key thumbprint}:{jti}`), made with `SET NX` and expiring when the
/// proof's `iat` would no longer be accepted anyway. Give it to
/// `typed_mcp::auth::Dpop::replay_cache` on each instance.
#[derive(Clone)]
pub struct RedisReplayCache {
    connection: crate::connection::Connection,
    prefix: String,
}

impl std::fmt::Debug for RedisReplayCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisReplayCache").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

impl Redis {
    /// The DPoP replay cache of the deployment (see [`RedisReplayCache`]).
    pub fn replay_cache(&self) -> RedisReplayCache {
        RedisReplayCache { connection: self.connection(), prefix: self.key("dpop", "") }
    }
}

impl ReplayCache for RedisReplayCache {
    fn first_use<'a>(&'a self, key: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            let mut connection = self.connection.clone();
            let set: Option<String> = redis::cmd("SET")
                .arg(format!("{}{key}", self.prefix))
                .arg(1)
                .arg("NX")
                .arg("PX")
                .arg(millis(ttl))
                .query_async(&mut connection)
                .await
                .map_err(|e| e.to_string())?;
            Ok(set.is_some())
        })
    }
}
