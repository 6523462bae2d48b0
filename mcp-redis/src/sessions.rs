//! The session registry ([`RedisSessions`]): which instance owns each session and what another
//! needs to take it over, and the heartbeat that keeps an instance's records alive.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use typed_mcp::transport::http::{BackplaneError, Owner, SessionRegistry};

use crate::{Redis, millis, unavailable};

/// How long an instance counts as alive for the tasks it runs after its last beat (or its lease,
/// if longer): `{prefix}:alive:{id}`.
pub const RUNNER_GRACE: Duration = Duration::from_secs(6);

/// Whether `session` is an id no instance made (empty, or one that Cluster would not hash as one
/// tag): nobody's, and not looked up.
fn unmade(session: &str) -> bool {
    session.is_empty() || session.starts_with('}')
}

/// The [`SessionRegistry`] of a deployment on Redis.
#[derive(Clone, Debug)]
pub struct RedisSessions {
    redis: Redis,
    /// Whether a heartbeat through this registry succeeded before: the deployment's records
    /// were complete then, so finding them gone later means Redis lost them.
    beaten: Arc<std::sync::atomic::AtomicBool>,
}

impl RedisSessions {
    /// The registry on `redis`, with no heartbeat through it yet.
    pub(crate) fn new(redis: Redis) -> Self {
        RedisSessions { redis, beaten: Arc::default() }
    }
}

/// Whether a session not recorded is unknown (0) or not known yet (1): the store is recovering
/// its records (it came back empty: no heartbeat has marked it started since, or one did less
/// than a lease ago). KEYS: `started`, `recovering` (one slot). One read of both, so that no
/// lookup finds `started` made and `recovering` not yet.
static RECOVERING_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[1]) == 0 then return 1 end
return 0
",
    )
});

/// Deletes a session's records only if the instance releasing it still owns it.
static RELEASE_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1], KEYS[2]) end
return 0
",
    )
});

/// Makes ARGV[2] the owner if ARGV[1] still is, and returns the state (nil otherwise).
static TAKE_OVER_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return nil end
local state = redis.call('GET', KEYS[2])
if not state then return nil end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return state
",
    )
});

/// Marks the deployment's records started; when they were not, but the instance beating saw
/// them started before (ARGV[2] is 1: Redis came back empty), marks them recovering for a
/// lease (ARGV[1]). A new deployment starts without recovering.
const STARTED_SCRIPT: &str = r"
if redis.call('SET', KEYS[1], 1, 'NX') and ARGV[2] == '1' then
  redis.call('SET', KEYS[2], 1, 'PX', ARGV[1])
end
return 0
";

/// Records ARGV[1] as the owner, with the state ARGV[2], unless an owner is recorded; returns
/// whether ARGV[1] owns the session now.
static RECLAIM_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local owner = redis.call('GET', KEYS[1])
if owner then
  if owner == ARGV[1] then return 1 end
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
return 1
",
    )
});

impl SessionRegistry for RedisSessions {
    fn heartbeat<'a>(
        &'a self,
        instance: &'a str,
        address: &'a str,
        lease: Duration,
        active: &'a [String],
        session_ttl: Duration,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<bool, BackplaneError>> {
        Box::pin(async move {
            // Sent at once, a pipeline per slot on a Cluster; not atomic (nothing here needs
            // to be). `GET`: the previous address, absent when the store lost (or never had) it.
            let instance_key = self.redis.key("instance", instance);
            let mut announce = redis::cmd("SET");
            announce.arg(&instance_key).arg(address).arg("PX").arg(millis(lease)).arg("GET");
            // A longer-lived mark of the same: a task's runner counts as dead after it lapsed
            // (`RedisTaskStore`), so that a runner stalled for longer than its lease, but not
            // for long, does not fail its tasks.
            let alive_key = self.redis.key("alive", instance);
            let mut alive = redis::cmd("SET");
            alive.arg(&alive_key).arg(1).arg("PX").arg(millis(lease.max(RUNNER_GRACE)));
            let mut commands = vec![(instance_key, announce), (alive_key, alive)];
            for session in active {
                let ttl = millis(session_ttl);
                for kind in ["session", "state"] {
                    let key = self.redis.session_key(kind, session);
                    let mut renew = redis::cmd("PEXPIRE");
                    renew.arg(&key).arg(ttl);
                    commands.push((key, renew));
                }
            }
            // Made by the first beat of all: when it is made again, the store lost its
            // records (it was restarted empty), and for a lease (every instance beats within
            // it, recording its sessions again) a session not recorded is not unknown yet.
            // Both at once: no lookup may find `started` made and `recovering` not yet.
            let started = self.redis.deployment_key("started");
            let mut mark = redis::cmd("EVAL");
            mark.arg(STARTED_SCRIPT)
                .arg(2)
                .arg(&started)
                .arg(self.redis.deployment_key("recovering"))
                .arg(millis(lease))
                .arg(u8::from(self.beaten.load(std::sync::atomic::Ordering::Relaxed)));
            commands.push((started, mark));
            let answers = self.redis.connection.batch(commands).await.map_err(unavailable)?;
            let previous: Option<String> = match answers.into_iter().next() {
                Some(value) => redis::from_redis_value(value).map_err(|e| unavailable(e.into()))?,
                None => None,
            };
            self.beaten.store(true, std::sync::atomic::Ordering::Relaxed);
            Ok(previous.is_some())
        })
    }

    fn reclaim<'a>(
        &'a self,
        session: &'a str,
        instance: &'a str,
        state: &'a str,
        session_ttl: Duration,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<bool, BackplaneError>> {
        Box::pin(async move {
            RECLAIM_SCRIPT
                .key(self.redis.session_key("session", session))
                .key(self.redis.session_key("state", session))
                .arg(instance)
                .arg(state)
                .arg(millis(session_ttl))
                .invoke_async::<i64>(&mut self.redis.connection())
                .await
                .map(|owned| owned == 1)
                .map_err(unavailable)
        })
    }

    fn leave<'a>(&'a self, instance: &'a str) -> typed_mcp::engine::BoxFuture<'a, Result<(), BackplaneError>> {
        Box::pin(async move {
            let commands = ["instance", "alive"].map(|kind| {
                let key = self.redis.key(kind, instance);
                let mut delete = redis::cmd("DEL");
                delete.arg(&key);
                (key, delete)
            });
            self.redis.connection.batch(commands.into()).await.map(|_| ()).map_err(unavailable)
        })
    }

    fn claim<'a>(
        &'a self,
        session: &'a str,
        instance: &'a str,
        state: &'a str,
        session_ttl: Duration,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<(), BackplaneError>> {
        Box::pin(async move {
            let ttl = millis(session_ttl);
            redis::pipe()
                .atomic()
                .cmd("SET")
                .arg(self.redis.session_key("session", session))
                .arg(instance)
                .arg("PX")
                .arg(ttl)
                .ignore()
                .cmd("SET")
                .arg(self.redis.session_key("state", session))
                .arg(state)
                .arg("PX")
                .arg(ttl)
                .ignore()
                .query_async::<()>(&mut self.redis.connection())
                .await
                .map_err(unavailable)
        })
    }

    fn save_state<'a>(
        &'a self,
        session: &'a str,
        state: &'a str,
        session_ttl: Duration,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<(), BackplaneError>> {
        Box::pin(async move {
            redis::cmd("SET")
                .arg(self.redis.session_key("state", session))
                .arg(state)
                .arg("PX")
                .arg(millis(session_ttl))
                .query_async::<()>(&mut self.redis.connection())
                .await
                .map_err(unavailable)
        })
    }

    fn take_over<'a>(
        &'a self,
        session: &'a str,
        gone: &'a str,
        instance: &'a str,
        session_ttl: Duration,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<Option<String>, BackplaneError>> {
        Box::pin(async move {
            TAKE_OVER_SCRIPT
                .key(self.redis.session_key("session", session))
                .key(self.redis.session_key("state", session))
                .arg(gone)
                .arg(instance)
                .arg(millis(session_ttl))
                .invoke_async(&mut self.redis.connection())
                .await
                .map_err(unavailable)
        })
    }

    fn address_of<'a>(
        &'a self,
        instance: &'a str,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<Option<String>, BackplaneError>> {
        Box::pin(async move {
            redis::cmd("GET")
                .arg(self.redis.key("instance", instance))
                .query_async(&mut self.redis.connection())
                .await
                .map_err(unavailable)
        })
    }

    fn owner<'a>(
        &'a self,
        session: &'a str,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<Option<Owner>, BackplaneError>> {
        Box::pin(async move {
            if unmade(session) {
                return Ok(None);
            }
            let mut connection = self.redis.connection();
            let owner: Option<String> = redis::cmd("GET")
                .arg(self.redis.session_key("session", session))
                .query_async(&mut connection)
                .await
                .map_err(unavailable)?;
            let Some(instance) = owner else {
                let recovering: i64 = RECOVERING_SCRIPT
                    .key(self.redis.deployment_key("started"))
                    .key(self.redis.deployment_key("recovering"))
                    .invoke_async(&mut connection)
                    .await
                    .map_err(unavailable)?;
                // Not recorded, but the store is getting its records back: not known yet.
                return if recovering == 1 { Err(BackplaneError::Recovering) } else { Ok(None) };
            };
            if instance.is_empty() {
                return Err(BackplaneError::Corrupt("an empty owner".into()));
            }
            // Its address while its heartbeat is fresh.
            let address: Option<String> = redis::cmd("GET")
                .arg(self.redis.key("instance", &instance))
                .query_async(&mut connection)
                .await
                .map_err(unavailable)?;
            Ok(Some(Owner { instance, address }))
        })
    }

    fn state<'a>(
        &'a self,
        session: &'a str,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<Option<String>, BackplaneError>> {
        Box::pin(async move {
            if unmade(session) {
                return Ok(None);
            }
            redis::cmd("GET")
                .arg(self.redis.session_key("state", session))
                .query_async(&mut self.redis.connection())
                .await
                .map_err(unavailable)
        })
    }

    fn for_heartbeat(&self) -> Option<Arc<dyn SessionRegistry>> {
        match self.redis.reopened() {
            Ok(redis) => Some(Arc::new(RedisSessions { redis, beaten: self.beaten.clone() })),
            Err(e) => {
                tracing::warn!(error = %e, "cannot open the heartbeat's own connection: it beats on the server's runtime");
                None
            }
        }
    }

    fn release<'a>(
        &'a self,
        session: &'a str,
        instance: &'a str,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<(), BackplaneError>> {
        Box::pin(async move {
            RELEASE_SCRIPT
                .key(self.redis.session_key("session", session))
                .key(self.redis.session_key("state", session))
                .arg(instance)
                .invoke_async::<i64>(&mut self.redis.connection())
                .await
                .map(|_| ())
                .map_err(unavailable)
        })
    }
}
