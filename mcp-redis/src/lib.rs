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
//! | `{prefix}:dpop:{{thumbprint}}:{jti}` | a DPoP proof an instance accepted (`Redis::replay_cache`, feature `dpop`) | the proof's acceptance window, twice |
//! | `{prefix}:dpop-count:{{thumbprint}}` | how many proofs that client sent in the current window (bounded by `RedisReplayCache::per_client`) | one proof lifetime from its first |
//! | `{prefix}:task:{id}` | a task's record as JSON ([`RedisTaskStore`]): status, input requests, result or error, owner, running instance | the task's `ttlMs` from its creation (a day for a task without one) |
//!
//! The bus (what the instances tell each other: answers and cancellations for replicas,
//! notifications, URL-mode completions, tasks) is Redis pub/sub on `{prefix}:bus:deployment`,
//! which every instance reads, and `{prefix}:bus:deployment:{tag}`, which the instances with that
//! tag (20 bits of their id) read, each message naming the instance meant in full: nothing of it
//! is stored. Each message is sealed with the
//! deployment secret (`Backplane::secret`), when the deployment has one: see "Trust" in the
//! deployment guide for what access to this Redis then allows. On a Cluster whose nodes have it (Redis 7 and later) it is sharded pub/sub
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

mod bus;
mod connection;
mod events;
#[cfg(feature = "dpop")]
mod replay;
mod sessions;
mod tasks;
#[cfg(feature = "testing")]
pub mod testing;

pub use bus::RedisBus;
pub use connection::Topology;
pub use events::{DEFAULT_EVENT_TTL, DEFAULT_EVENTS_PER_SESSION, RedisEvents};
#[cfg(feature = "dpop")]
pub use replay::{DEFAULT_PROOFS_PER_CLIENT, RedisReplayCache};
pub use sessions::{RUNNER_GRACE, RedisSessions};
pub use tasks::{DEFAULT_UNBOUNDED_TTL, RedisTaskStore};

use std::sync::Arc;
use std::time::Duration;

use typed_mcp::transport::http::{Backplane, BackplaneError};

use connection::{Connection, Subscriber};

/// The default key prefix.
pub const DEFAULT_PREFIX: &str = "mcp";

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
    /// The key prefix given to [`Redis::with_prefix`] is not one.
    #[error("invalid Redis key prefix {0:?}: 1 to 64 characters among letters, digits, `_`, `-` and `.`")]
    Prefix(String),
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

    /// Puts every key and bus channel under `prefix` instead of [`DEFAULT_PREFIX`]. Give each
    /// deployment sharing a Redis its own: deployments under one prefix share their sessions,
    /// their secrets ([`shared_secret`](Self::shared_secret)), their announcements and their
    /// URL-mode flows. 1 to 64 characters among ASCII letters, digits, `_`, `-` and `.` (no
    /// `:`, which separates the parts of a key, and no `{`/`}`, which make Cluster hash tags).
    ///
    /// # Errors
    ///
    /// [`ConnectError::Prefix`] when `prefix` breaks those rules.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Result<Self, ConnectError> {
        let prefix = prefix.into();
        let valid = !prefix.is_empty()
            && prefix.len() <= 64
            && prefix.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if !valid {
            return Err(ConnectError::Prefix(prefix));
        }
        self.prefix = prefix.into();
        Ok(self)
    }

    /// Warns, once per process, when the deployment's records go under [`DEFAULT_PREFIX`]:
    /// every deployment that keeps it shares them with the others on the same Redis.
    fn warn_if_default_prefix(&self) {
        static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if &*self.prefix == DEFAULT_PREFIX && !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
            tracing::warn!(
                "this deployment keeps its records under the default Redis prefix `{DEFAULT_PREFIX}`: any other \
                 deployment doing the same on this Redis shares its sessions, secrets and messages (give each \
                 its own with `Redis::with_prefix`)"
            );
        }
    }

    /// The session registry on this Redis.
    pub fn sessions(&self) -> RedisSessions {
        RedisSessions::new(self.clone())
    }

    /// The message bus on this Redis (pub/sub).
    pub fn bus(&self) -> RedisBus {
        RedisBus::new(self.clone())
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
        self.warn_if_default_prefix();
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
        self.warn_if_default_prefix();
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
}

fn unavailable(e: redis::RedisError) -> BackplaneError {
    BackplaneError::Unavailable(Box::new(e))
}

/// Milliseconds for `PX`/`PEXPIRE`, at least one.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}
