//! DPoP proofs seen by any instance ([`RedisReplayCache`]): a proof replayed on another instance
//! is refused too, and no one client can fill Redis with proofs.

use std::sync::LazyLock;
use std::time::Duration;

use typed_mcp::auth::ReplayCache;
use typed_mcp::engine::BoxFuture;

use super::{Redis, millis};

/// How many proofs one client (proof key) may have recorded in one window, by default: as the
/// in-memory cache's share.
pub const DEFAULT_PROOFS_PER_CLIENT: u64 = 10_000;

/// A replay (the proof is recorded) is `0`; otherwise counts the client's proofs in the current
/// window (which starts with its first proof and lasts one proof's lifetime) and refuses past
/// the share (`-1`), else records the proof (`1`). One script: atomic. The two keys share the
/// client's hash tag: one slot on a Cluster.
static FIRST_USE_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
        if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
        local n = redis.call('INCR', KEYS[2])
        if n == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[1]) end
        if n > tonumber(ARGV[2]) then return -1 end
        redis.call('SET', KEYS[1], 1, 'PX', ARGV[1])
        return 1
        ",
    )
});

/// A [`ReplayCache`] on Redis, shared by every instance of the deployment: one key per accepted
/// proof (`{prefix}:dpop:{{key thumbprint}}:{jti}`), made with `SET NX` and expiring when the
/// proof's `iat` would no longer be accepted anyway, and a count of each client's proofs
/// (`{prefix}:dpop-count:{{key thumbprint}}`): a client past its share
/// ([`per_client`](Self::per_client)) in one proof lifetime has its proofs refused (`503`) until
/// the window ends, while every other client goes on. Give it to
/// `typed_mcp::auth::Dpop::replay_cache` on each instance.
#[derive(Clone)]
pub struct RedisReplayCache {
    connection: crate::connection::Connection,
    prefix: String,
    per_client: u64,
}

impl std::fmt::Debug for RedisReplayCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisReplayCache")
            .field("prefix", &self.prefix)
            .field("per_client", &self.per_client)
            .finish_non_exhaustive()
    }
}

impl Redis {
    /// The DPoP replay cache of the deployment (see [`RedisReplayCache`]).
    pub fn replay_cache(&self) -> RedisReplayCache {
        RedisReplayCache {
            connection: self.connection(),
            prefix: self.prefix.to_string(),
            per_client: DEFAULT_PROOFS_PER_CLIENT,
        }
    }
}

impl RedisReplayCache {
    /// How many proofs one client may have recorded within one proof lifetime
    /// ([`DEFAULT_PROOFS_PER_CLIENT`] by default; at least one).
    pub fn per_client(mut self, proofs: u64) -> Self {
        self.per_client = proofs.max(1);
        self
    }
}

impl ReplayCache for RedisReplayCache {
    fn first_use<'a>(&'a self, key: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            // `<client>:<jti>`; the client (a thumbprint) has no `:`.
            let (client, jti) = key.split_once(':').unwrap_or(("", key));
            let mut connection = self.connection.clone();
            let outcome: i64 = FIRST_USE_SCRIPT
                .key(format!("{}:dpop:{{{client}}}:{jti}", self.prefix))
                .key(format!("{}:dpop-count:{{{client}}}", self.prefix))
                .arg(millis(ttl))
                .arg(self.per_client)
                .invoke_async(&mut connection)
                .await
                .map_err(|e| e.to_string())?;
            match outcome {
                1 => Ok(true),
                0 => Ok(false),
                _ => Err(format!("the client sent more than {} DPoP proofs in one proof lifetime", self.per_client)),
            }
        })
    }
}
