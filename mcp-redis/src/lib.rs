//! A Redis backplane for `typed-mcp`'s Streamable HTTP server: N identical instances behind any
//! load balancer, each serving any session.
//!
//! ```no_run
//! # async fn run(server: typed_mcp::Server) -> Result<(), Box<dyn std::error::Error>> {
//! use typed_mcp::transport::http::HttpConfig;
//!
//! let redis = typed_mcp_redis::Redis::connect("redis://127.0.0.1:6379/")?;
//! let config = HttpConfig::default().backplane(redis.backplane("http://10.0.0.7:8080/mcp"));
//! let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?;
//! server.streamable_http(config).serve(listener, std::future::pending()).await?;
//! # Ok(())
//! # }
//! ```
//!
//! [`Redis::connect`] takes one connection string for every topology ([`Topology`]): a single
//! node (`redis://host:6379/0`, `rediss://` for TLS), a Redis Cluster as its nodes' URLs
//! separated by commas (`redis://a:7000,redis://b:7000`), or a primary watched by Sentinels
//! (`redis+sentinel://host:26379,host:26380/mymaster`). The examples' `--redis` and `REDIS_URL`
//! take the same strings.
//!
//! What lives in Redis (every key under a prefix, `mcp` by default, and every key expiring). A
//! session's keys carry its id as their hash tag (`{id}`), so that on a Cluster they are in one
//! slot and every script touching them runs on one node; every script names its keys in
//! `KEYS`:
//!
//! | key | value | lifetime |
//! |---|---|---|
//! | `{prefix}:instance:{id}` | the instance's endpoint address | the heartbeat lease (3 × the heartbeat, 1 s by default), renewed by each beat (every ⅓ s by default) |
//! | `{prefix}:alive:{id}` | that the instance lives, for the tasks it runs ([`RedisTaskStore`]): a runner stalled for a lease, but less than this, does not fail its tasks | [`RUNNER_GRACE`] (6 s), or the lease if longer, renewed by each beat |
//! | `{prefix}:session:{{id}}` | the id of the instance owning the session | the server's idle timeout plus the renewal period (2 s) and the lease, renewed (every 2 s) while the session is used; deleted when the session ends |
//! | `{prefix}:state:{{id}}` | what another instance needs to take the session over (protocol version, client capabilities and info, log level, subscriptions, user) | as the session's record |
//! | `{prefix}:events:{{id}}` | the session's newest SSE events (256 by default), for `Last-Event-ID` after a takeover ([`RedisEvents`]) | [`DEFAULT_EVENT_TTL`] (31 minutes) after the newest; deleted when the session ends |
//! | `{prefix}:{deployment}:started` | that the deployment's records are complete (made by the first heartbeat of all) | until deleted (one small key) |
//! | `{prefix}:{deployment}:recovering` | made when an instance that beat before has to make `started` again (Redis came back empty): while it lives, or `started` is missing, a session not recorded is answered `503`, not `404` (its owner is recording it again) | one lease |
//! | `{prefix}:secret:{name}` | a secret the instances share ([`Redis::shared_secret`]) | until deleted (one per name) |
//! | `{prefix}:dpop:{thumbprint}:{jti}` | a DPoP proof an instance accepted (`Redis::replay_cache`, feature `dpop`) | the proof's acceptance window, twice |
//! | `{prefix}:task:{id}` | a task's record as JSON ([`RedisTaskStore`]): status, input requests, result or error, owner, running instance | the task's `ttlMs` from its creation (a day for a task without one) |
//!
//! The bus (notifications, URL-mode completions, task answers) is Redis pub/sub on
//! `{prefix}:bus:broadcast`, `{prefix}:bus:instance:{id}` and `{prefix}:bus:tasks:…`: nothing
//! of it is stored. On a Cluster whose nodes have it (Redis 7 and later) it is sharded pub/sub
//! (`SPUBLISH`/`SSUBSCRIBE`): a channel's messages go to the shard owning the channel only,
//! instead of to every node of the cluster; elsewhere it is classic pub/sub.
//!
//! On a Cluster, a command for a slot whose master failed is retried (MOVED, the replica
//! promoted) for about a second and a half, then fails: requests needing it get `503` with
//! `Retry-After` until the replica serves the slot (the cluster's node timeout, plus its
//! election). Behind Sentinel, the connection to the primary is dropped when a command fails
//! on it, and the Sentinels are asked again for the primary by the next command: requests get
//! `503` until the Sentinels promoted a replica. A command that failed may have been applied
//! (the answer was lost, not the write); none is sent twice.
//!
//! [`Redis`] is one connection (multiplexed, reconnecting by itself) shared by every part of
//! the backplane built from it; the task store ([`Redis::task_store`]) is built from it the
//! same way.
//!
//! When Redis cannot be reached, commands fail after [`Redis::connect`]'s short timeouts rather
//! than waiting: the server answers what needs Redis with `503`, serves what does not, and the
//! connection is made again on the next command once Redis is back.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod connection;
mod events;
#[cfg(feature = "dpop")]
mod replay;
mod tasks;
#[cfg(feature = "testing")]
pub mod testing;

pub use connection::Topology;
pub use events::{DEFAULT_EVENT_TTL, DEFAULT_EVENTS_PER_SESSION, RedisEvents};
#[cfg(feature = "dpop")]
pub use replay::RedisReplayCache;
pub use tasks::{DEFAULT_UNBOUNDED_TTL, RedisTaskStore};

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use futures_util::StreamExt as _;
use tokio_util::sync::CancellationToken;
use typed_mcp::transport::http::{Backplane, BackplaneError, MessageBus, Owner, SessionRegistry};

/// The default key prefix.
pub const DEFAULT_PREFIX: &str = "mcp";

use connection::{CONNECTION_TIMEOUT, Connection, Subscriber};

/// Why a connection to Redis could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The URL is not a Redis URL.
    #[error("invalid Redis URL: {0}")]
    Url(#[source] redis::RedisError),
    /// The connection string is none of the forms [`Topology`] reads, or does not go with the
    /// options given.
    #[error("invalid Redis connection string: {0}")]
    Spec(String),
    /// The TLS settings cannot be used (the certificate authorities are not PEM certificates).
    #[error("unusable TLS settings for Redis: {0}")]
    Tls(#[source] redis::RedisError),
}

/// A connection to the Redis of a shared deployment, and the key prefix its records use.
/// Cheap to clone: clones share the connection.
#[derive(Clone)]
pub struct Redis {
    connection: Connection,
    subscriber: Subscriber,
    topology: Arc<Topology>,
    prefix: Arc<str>,
    /// Whether the bus uses sharded pub/sub (a Cluster whose nodes have `SPUBLISH`), once known.
    sharded: Arc<tokio::sync::OnceCell<bool>>,
    /// The certificate authorities given to [`Redis::connect_with_ca`], for connections made
    /// again.
    roots: Option<Arc<[u8]>>,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

impl Redis {
    /// Connects to the Redis that `spec` names: one node's URL (`redis://host:port/db`, or
    /// `rediss://` for TLS), a Cluster's nodes as comma-separated URLs, or a primary behind
    /// Sentinels (`redis+sentinel://host:26379,host:26380/mymaster`); see [`Topology`]. The
    /// connection is made on first use and made again whenever it breaks, so this succeeds while
    /// Redis is down. Call within a tokio runtime.
    pub fn connect(spec: &str) -> Result<Self, ConnectError> {
        Self::connect_to(Topology::parse(spec)?)
    }

    /// Connects like [`connect`](Self::connect) to a Redis speaking TLS (`rediss://`, one node
    /// or a Cluster), whose certificate is checked against the certificate authorities in
    /// `ca_pem` (one or more PEM certificates) instead of the platform's roots: for a Redis whose
    /// certificate a private authority signed, as managed services often give. The examples
    /// read such a file from `--redis-ca` (or `REDIS_CA_FILE`).
    ///
    /// ```no_run
    /// # fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let ca = std::fs::read("/etc/redis/ca.pem")?;
    /// let redis = typed_mcp_redis::Redis::connect_with_ca("rediss://redis.internal:6380/0", ca)?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// Refused for a connection string without TLS, and behind Sentinel (whose primary is
    /// checked against the platform's roots, or those in the file `SSL_CERT_FILE` names).
    pub fn connect_with_ca(spec: &str, ca_pem: impl AsRef<[u8]>) -> Result<Self, ConnectError> {
        Self::open(Topology::parse(spec)?, Some(ca_pem.as_ref()))
    }

    /// Connects to the Redis of `topology` (see [`connect`](Self::connect)).
    pub fn connect_to(topology: Topology) -> Result<Self, ConnectError> {
        Self::open(topology, None)
    }

    fn open(topology: Topology, roots: Option<&[u8]>) -> Result<Self, ConnectError> {
        let (connection, subscriber) = Connection::open(&topology, roots)?;
        Ok(Redis {
            connection,
            subscriber,
            topology: Arc::new(topology),
            prefix: DEFAULT_PREFIX.into(),
            sharded: Arc::default(),
            roots: roots.map(Into::into),
        })
    }

    /// The same Redis, through connections of its own (made on first use, in the runtime that
    /// uses them): for work that must not wait on the runtime this one's connections run on.
    fn reopened(&self) -> Result<Self, ConnectError> {
        let (connection, subscriber) = Connection::open(&self.topology, self.roots.as_deref())?;
        Ok(Redis {
            connection,
            subscriber,
            topology: self.topology.clone(),
            prefix: self.prefix.clone(),
            sharded: Arc::default(),
            roots: self.roots.clone(),
        })
    }

    /// The shape of the Redis this connects to.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Puts every key under `prefix` instead of [`DEFAULT_PREFIX`] (several deployments can
    /// then share one Redis). The prefix must not contain `{` or `}`: the keys' hash tags (which
    /// keep a session's keys in one Cluster slot) follow it.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into().into();
        self
    }

    /// The session registry on this Redis.
    pub fn sessions(&self) -> RedisSessions {
        RedisSessions { redis: self.clone(), beaten: Arc::default() }
    }

    /// The message bus on this Redis (pub/sub).
    pub fn bus(&self) -> RedisBus {
        RedisBus { redis: self.clone() }
    }

    /// The SSE event store on this Redis ([`RedisEvents`]), keeping `per_session` events of
    /// each session for `ttl` after the last. Call within a tokio runtime.
    pub fn events(&self, per_session: usize, ttl: Duration) -> RedisEvents {
        RedisEvents::new(self.clone(), per_session, ttl)
    }

    /// This instance's part in the deployment: `address` is the URL of its MCP endpoint as the
    /// other instances reach it (see [`Backplane::new`]). Sessions are recorded in this Redis,
    /// notifications and URL-mode completions travel through it, and SSE events are kept in it
    /// ([`RedisEvents`], with [`DEFAULT_EVENTS_PER_SESSION`] and [`DEFAULT_EVENT_TTL`]) so that
    /// streams can be resumed after a takeover. Call within a tokio runtime.
    pub fn backplane(&self, address: impl Into<String>) -> Backplane {
        Backplane::new(Arc::new(self.sessions()), address)
            .bus(Arc::new(self.bus()))
            .events(Arc::new(self.events(DEFAULT_EVENTS_PER_SESSION, DEFAULT_EVENT_TTL)))
    }

    /// A 32-byte secret shared by every instance of the deployment under `name`: made at random
    /// by the first instance that asks, read by the others. Use it where instances must agree
    /// on a key, such as the one sealing 2026-era `requestState`
    /// (`ServerBuilder::request_state_key`), so that a retry may land on any instance. Kept
    /// without expiry (one small key per name); delete it to rotate the secret.
    pub async fn shared_secret(&self, name: &str) -> Result<[u8; 32], BackplaneError> {
        let key = self.key("secret", name);
        let mut fresh = [0u8; 32];
        getrandom::fill(&mut fresh).map_err(|e| BackplaneError::Unavailable(Box::new(e)))?;
        let mut connection = self.connection();
        let (_, stored): ((), Vec<u8>) = redis::pipe()
            .cmd("SET")
            .arg(&key)
            .arg(&fresh[..])
            .arg("NX")
            .cmd("GET")
            .arg(&key)
            .query_async(&mut connection)
            .await
            .map_err(unavailable)?;
        stored.try_into().map_err(|_| BackplaneError::Corrupt(format!("`{key}` is not 32 bytes long")))
    }

    fn key(&self, kind: &str, id: &str) -> String {
        format!("{}:{kind}:{id}", self.prefix)
    }

    /// The key of one of a session's records: its id is the hash tag, so that every record of
    /// a session is in one Cluster slot and one script may touch them all.
    fn session_key(&self, kind: &str, session: &str) -> String {
        format!("{}:{kind}:{{{session}}}", self.prefix)
    }

    /// The key of a record of the whole deployment (they share one slot).
    fn deployment_key(&self, name: &str) -> String {
        format!("{}:{{deployment}}:{name}", self.prefix)
    }

    fn connection(&self) -> Connection {
        self.connection.clone()
    }

    /// Whether the bus uses sharded pub/sub: on a Cluster whose nodes know `SPUBLISH`
    /// (Redis 7 and later), each channel's messages then stay on the shard owning it instead of
    /// reaching every node. Asked once.
    async fn sharded(&self) -> Result<bool, redis::RedisError> {
        if !self.connection.is_cluster() {
            return Ok(false);
        }
        self.sharded
            .get_or_try_init(|| async {
                let info: Vec<Option<redis::Value>> =
                    redis::cmd("COMMAND").arg("INFO").arg("SPUBLISH").query_async(&mut self.connection()).await?;
                Ok(info.first().is_some_and(Option::is_some))
            })
            .await
            .copied()
    }
}

fn unavailable(e: redis::RedisError) -> BackplaneError {
    BackplaneError::Unavailable(Box::new(e))
}

/// Whether `session` is an id no instance made (empty, or one that Cluster would not hash as one
/// tag): nobody's, and not looked up.
fn unmade(session: &str) -> bool {
    session.is_empty() || session.starts_with('}')
}

/// How long an instance counts as alive for the tasks it runs after its last beat (or its lease,
/// if longer): `{prefix}:alive:{id}`.
pub const RUNNER_GRACE: Duration = Duration::from_secs(6);

/// Milliseconds for `PX`/`PEXPIRE`, at least one.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// The [`SessionRegistry`] of a deployment on Redis.
#[derive(Clone, Debug)]
pub struct RedisSessions {
    redis: Redis,
    /// Whether a heartbeat through this registry succeeded before: the deployment's records
    /// were complete then, so finding them gone later means Redis lost them.
    beaten: Arc<std::sync::atomic::AtomicBool>,
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

/// The [`MessageBus`] of a deployment on Redis: pub/sub channels `{prefix}:bus:{channel}`.
/// Nothing is stored; a message reaches the instances subscribed when it is published.
#[derive(Clone, Debug)]
pub struct RedisBus {
    redis: Redis,
}

/// How long to wait before subscribing again after the subscription broke.
const RESUBSCRIBE_DELAY: Duration = Duration::from_millis(250);

impl MessageBus for RedisBus {
    fn publish<'a>(
        &'a self,
        channel: &'a str,
        payload: String,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<(), BackplaneError>> {
        Box::pin(async move { self.publish_counted(channel, payload).await.map(|_| ()) })
    }

    /// The count is the number of subscribers Redis delivered to; `None` on a Cluster without
    /// sharded pub/sub, where `PUBLISH` counts only the subscribers of the node it reached.
    fn publish_counted<'a>(
        &'a self,
        channel: &'a str,
        payload: String,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<Option<usize>, BackplaneError>> {
        Box::pin(async move {
            let sharded = self.redis.sharded().await.map_err(unavailable)?;
            let command = if sharded { "SPUBLISH" } else { "PUBLISH" };
            let received = redis::cmd(command)
                .arg(self.redis.key("bus", channel))
                .arg(payload)
                .query_async::<i64>(&mut self.redis.connection())
                .await
                .map_err(unavailable)?;
            let counted = sharded || !self.redis.connection.is_cluster();
            Ok(counted.then(|| usize::try_from(received).unwrap_or(0)))
        })
    }

    fn subscribe(&self, channel: String, deliver: Box<dyn Fn(String) + Send + Sync>, stop: CancellationToken) {
        let redis = self.redis.clone();
        let channel = self.redis.key("bus", &channel);
        tokio::spawn(async move {
            let mut failing = false;
            while !stop.is_cancelled() {
                let subscribed = tokio::select! {
                    r = tokio::time::timeout(CONNECTION_TIMEOUT * 4, subscription(&redis, &channel)) => r,
                    () = stop.cancelled() => return,
                };
                match subscribed {
                    Ok(Ok(mut messages)) => {
                        if std::mem::replace(&mut failing, false) {
                            tracing::info!(channel, "subscribed again to the deployment's bus");
                        }
                        loop {
                            let message = tokio::select! {
                                m = messages.next() => m,
                                () = stop.cancelled() => return,
                            };
                            match message {
                                Some(Ok(payload)) => deliver(payload),
                                Some(Err(e)) => {
                                    tracing::warn!(error = %e, channel, "an unreadable message on the bus");
                                }
                                None => break,
                            }
                        }
                        tracing::warn!(channel, "the subscription to the deployment's bus broke");
                    }
                    Ok(Err(e)) => {
                        if !std::mem::replace(&mut failing, true) {
                            tracing::warn!(error = %e, channel, "cannot subscribe to the deployment's bus");
                        }
                    }
                    Err(_) => {
                        if !std::mem::replace(&mut failing, true) {
                            tracing::warn!(channel, "subscribing to the deployment's bus timed out");
                        }
                    }
                }
                tokio::select! {
                    () = tokio::time::sleep(RESUBSCRIBE_DELAY) => {}
                    () = stop.cancelled() => return,
                }
            }
        });
    }
}

/// The messages of one subscription, until it breaks.
type Messages = futures_util::stream::BoxStream<'static, Result<String, redis::RedisError>>;

/// Subscribes to `channel` on the topology's Redis: on one node, or the primary the Sentinels
/// name now, a classic subscription; on a Cluster, a sharded one (`SSUBSCRIBE`, on the shard
/// owning the channel, followed through resharding and failover by the client) where the nodes
/// have it, else a classic one.
async fn subscription(redis: &Redis, channel: &str) -> Result<Messages, redis::RedisError> {
    let client = match &redis.subscriber {
        Subscriber::Single(client) => (**client).clone(),
        Subscriber::Sentinel(primary) => primary.client().await?,
        Subscriber::Cluster(nodes, certificates) => {
            let sharded = redis.sharded().await?;
            let (sender, pushes) = tokio::sync::mpsc::unbounded_channel();
            let client = connection::cluster_client(nodes, Some(sender), certificates.as_ref())?;
            let mut connection = client.get_async_connection().await?;
            if sharded {
                connection.ssubscribe(channel).await?;
            } else {
                connection.subscribe(channel).await?;
            }
            let stream = tokio_stream_of(pushes).filter_map(move |push| {
                // The connection lives as long as its messages are read.
                let _keep = &connection;
                let message = matches!(push.kind, redis::PushKind::Message | redis::PushKind::SMessage)
                    .then(|| push.data.into_iter().nth(1).map(redis::from_redis_value::<String>))
                    .flatten()
                    .map(|r| r.map_err(Into::into));
                std::future::ready(message)
            });
            return Ok(stream.boxed());
        }
    };
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.subscribe(channel).await?;
    Ok(pubsub.into_on_message().map(|m| m.get_payload::<String>()).boxed())
}

/// The pushes of a cluster subscription as a stream.
fn tokio_stream_of(
    mut pushes: tokio::sync::mpsc::UnboundedReceiver<redis::PushInfo>,
) -> impl futures_util::Stream<Item = redis::PushInfo> + Send + 'static {
    futures_util::stream::poll_fn(move |cx| pushes.poll_recv(cx))
}
