//! Where the deployment's Redis is ([`Topology`]: one node, a Cluster, or a primary watched by
//! Sentinel), and one connection to it whatever its shape.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::sentinel::{SentinelClient, SentinelNodeConnectionInfo, SentinelServerType};
use redis::{AsyncConnectionConfig, Cmd, IntoConnectionInfo as _, Pipeline, RedisFuture, Value};

use crate::ConnectError;

/// How long a command may take before it fails (so a request never hangs on Redis).
pub(crate) const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long making a connection may take.
pub(crate) const CONNECTION_TIMEOUT: Duration = Duration::from_secs(1);
/// How long a command on a Cluster is tried again while its slot changes hands: a master failing
/// over (its replica is promoted within a few seconds, and every node, the one the client reads
/// the slots from included, learns of it a moment later). Only what ran nowhere is tried again
/// (see [`ran_nowhere`]), so nothing runs twice.
const FAILOVER_PATIENCE: Duration = Duration::from_secs(3);
/// How long a command waits before it is tried again during a failover.
const FAILOVER_PAUSE: Duration = Duration::from_millis(150);

/// Whether what began at `started` (one command, or `pipeline`) and got `answer` is to be tried
/// again after [`FAILOVER_PAUSE`]: it [ran nowhere](ran_nowhere), and [`FAILOVER_PATIENCE`] has
/// not run out.
fn again_after_failover<T>(
    answer: &redis::RedisResult<T>,
    pipeline: Option<&Pipeline>,
    started: tokio::time::Instant,
) -> bool {
    let Err(error) = answer else { return false };
    let commands = pipeline.map_or(1, |p| p.cmd_iter().count());
    ran_nowhere(error, commands) && started.elapsed() + FAILOVER_PAUSE < FAILOVER_PATIENCE
}

/// Whether `error` says that the command ran on no node because its slot is changing hands: the
/// node the client knew refused the connection (it died), a node answered that another serves
/// the slot (`MOVED`: the client's map of the slots is out of date), that it is a replica now
/// (`READONLY`: a write refused before it ran), or that the cluster cannot serve it yet
/// (`CLUSTERDOWN`, `TRYAGAIN`, `MASTERDOWN`); for a transaction or a pipeline of `commands`,
/// when every one failed for those reasons (the client follows none of them there).
fn ran_nowhere(error: &redis::RedisError, commands: usize) -> bool {
    use redis::ServerErrorKind as S;
    if error.is_connection_refusal() {
        return true;
    }
    let moving =
        |kind: Option<S>| matches!(kind, Some(S::Moved | S::ClusterDown | S::TryAgain | S::MasterDown | S::ReadOnly));
    let aborted = matches!(error.kind(), redis::ErrorKind::Server(S::ExecAbort));
    match error.clone().into_server_errors() {
        // An aborted transaction ran nothing: its errors say why.
        Some(errors) if aborted => errors.iter().all(|(_, e)| moving(e.kind())),
        // Otherwise each command that failed says why, and those not named ran.
        Some(errors) => errors.len() == commands && errors.iter().all(|(_, e)| moving(e.kind())),
        None => false,
    }
}

/// A command that makes the cluster client learn where `pipeline`'s slot is now (`EXISTS` of its
/// first key): unlike a transaction, a plain command follows a `MOVED` answer, and the client
/// then reads the slots again.
fn locate(pipeline: &Pipeline) -> Option<Cmd> {
    let key = pipeline.cmd_iter().next()?.args_iter().nth(1)?;
    let redis::Arg::Simple(key) = key else { return None };
    let mut exists = redis::cmd("EXISTS");
    exists.arg(key);
    Some(exists)
}

/// The shape of a deployment's Redis, as [`Redis::connect`](crate::Redis::connect) reads it from
/// one connection string:
///
/// | form | topology |
/// |---|---|
/// | `redis://host:6379/0`, `rediss://host:6380/0` (TLS) | one node |
/// | `redis://a:7000,redis://b:7000,redis://c:7000` (any of the nodes; one is enough) | a Redis Cluster |
/// | `redis+sentinel://host:26379,host:26380/mymaster` (`/mymaster/0` for a database, `rediss+sentinel://` for TLS, `user:password@` before the hosts for the primary's credentials) | the primary named `mymaster`, as the Sentinels tell it |
///
/// A URL's user and password (`redis://:secret@host/`) are sent with `AUTH`; `rediss://` checks
/// the server's certificate against the platform's roots (the file `SSL_CERT_FILE` names
/// replaces them), or against the certificate authorities given to
/// [`Redis::connect_with_ca`](crate::Redis::connect_with_ca); `#insecure` at the end of the URL
/// checks nothing (for tests only).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Topology {
    /// One Redis node (or a managed service's single endpoint).
    Single(String),
    /// A Redis Cluster, reached first through these nodes' URLs; the rest are discovered.
    Cluster(Vec<String>),
    /// A primary and its replicas, watched by Sentinels.
    Sentinel {
        /// The Sentinels' URLs (`redis://host:port`).
        sentinels: Vec<String>,
        /// The name the Sentinels know the primary by.
        service: String,
        /// The database on the primary.
        db: i64,
        /// Whether the primary and Sentinels speak TLS.
        tls: bool,
        /// The primary's user name, if any.
        username: Option<String>,
        /// The primary's password, if any.
        password: Option<String>,
    },
}

impl Topology {
    /// Reads a connection string (see [`Topology`] for the forms).
    pub fn parse(spec: &str) -> Result<Self, ConnectError> {
        let spec = spec.trim();
        let bad = |why: &str| ConnectError::Spec(format!("{why}: `{}`", redacted(spec)));
        if let Some((scheme, rest)) = spec.split_once("://")
            && let Some(node_scheme) = scheme.strip_suffix("+sentinel")
        {
            if node_scheme != "redis" && node_scheme != "rediss" {
                return Err(bad("a Sentinel URL starts with `redis+sentinel://` or `rediss+sentinel://`"));
            }
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            let (credentials, hosts) = match authority.rsplit_once('@') {
                Some((c, h)) => (Some(c), h),
                None => (None, authority),
            };
            let sentinels: Vec<String> = hosts
                .split(',')
                .map(str::trim)
                .filter(|h| !h.is_empty())
                .map(|h| format!("{node_scheme}://{h}/"))
                .collect();
            if sentinels.is_empty() {
                return Err(bad("a Sentinel URL names at least one Sentinel (`host:port`)"));
            }
            for url in &sentinels {
                url.as_str().into_connection_info().map_err(ConnectError::Url)?;
            }
            let mut segments = path.split('/').filter(|s| !s.is_empty());
            let service = segments.next().ok_or_else(|| bad("a Sentinel URL ends with the primary's name"))?;
            let db = match segments.next() {
                Some(db) => db.parse().map_err(|_| bad("the database after the primary's name is a number"))?,
                None => 0,
            };
            if segments.next().is_some() {
                return Err(bad("a Sentinel URL's path is `/name` or `/name/db`"));
            }
            let (username, password) = match credentials {
                None => (None, None),
                Some(c) => {
                    let (user, password) = c.split_once(':').unwrap_or((c, ""));
                    let decode = |s: &str| -> Result<Option<String>, ConnectError> {
                        if s.is_empty() {
                            return Ok(None);
                        }
                        percent_encoding::percent_decode_str(s)
                            .decode_utf8()
                            .map(|d| Some(d.into_owned()))
                            .map_err(|_| bad("the credentials are not UTF-8"))
                    };
                    (decode(user)?, decode(password)?)
                }
            };
            return Ok(Topology::Sentinel {
                sentinels,
                service: service.to_owned(),
                db,
                tls: node_scheme == "rediss",
                username,
                password,
            });
        }
        let nodes: Vec<&str> = spec.split(',').map(str::trim).filter(|n| !n.is_empty()).collect();
        match nodes.as_slice() {
            [] => Err(bad("no Redis URL")),
            [one] => {
                one.into_connection_info().map_err(ConnectError::Url)?;
                Ok(Topology::Single((*one).to_owned()))
            }
            [first, ..] => {
                // A node without a scheme takes the first one's.
                let scheme = first.split_once("://").map_or("redis", |(s, _)| s);
                let nodes: Vec<String> = nodes
                    .iter()
                    .map(|n| if n.contains("://") { (*n).to_owned() } else { format!("{scheme}://{n}") })
                    .collect();
                for node in &nodes {
                    node.as_str().into_connection_info().map_err(ConnectError::Url)?;
                }
                Ok(Topology::Cluster(nodes))
            }
        }
    }

    /// Whether the connection speaks TLS.
    fn uses_tls(&self) -> bool {
        match self {
            Topology::Single(url) => url.starts_with("rediss://"),
            Topology::Cluster(nodes) => nodes.iter().any(|n| n.starts_with("rediss://")),
            Topology::Sentinel { tls, .. } => *tls,
        }
    }
}

/// `spec` with any password replaced by `***`, for error messages.
fn redacted(spec: &str) -> String {
    spec.split(',')
        .map(|part| match (part.find("://"), part.rfind('@')) {
            (Some(s), Some(at)) if at > s => format!("{}***{}", &part[..s + 3], &part[at..]),
            (None, Some(at)) => format!("***{}", &part[at..]),
            _ => part.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// One connection to the deployment's Redis: multiplexed, made on first use and made again
/// whenever it breaks. Cheap to clone.
#[derive(Clone)]
pub(crate) enum Connection {
    Single(ConnectionManager),
    Cluster(Arc<LazyCluster>),
    Sentinel(Arc<SentinelPrimary>),
}

/// A cluster connection, made on first use (making it needs a reachable node).
pub(crate) struct LazyCluster {
    client: ClusterClient,
    connection: tokio::sync::OnceCell<ClusterConnection>,
}

/// The connection to the primary the Sentinels name, asked again after the connection failed
/// (the primary may have changed).
pub(crate) struct SentinelPrimary {
    sentinel: tokio::sync::Mutex<SentinelClient>,
    current: Mutex<Option<MultiplexedConnection>>,
}

/// What the topology needs to subscribe: see [`crate::RedisBus`].
#[derive(Clone)]
pub(crate) enum Subscriber {
    Single(Box<redis::Client>),
    Cluster(Vec<String>, Option<redis::TlsCertificates>),
    Sentinel(Arc<SentinelPrimary>),
}

fn io_error(why: &'static str) -> redis::RedisError {
    redis::RedisError::from(std::io::Error::new(std::io::ErrorKind::TimedOut, why))
}

impl Connection {
    /// The connection to `topology`, made lazily; and what subscribing needs. With `roots`,
    /// TLS connections trust the certificate authorities in it (PEM) instead of the platform's.
    pub(crate) fn open(topology: &Topology, roots: Option<&[u8]>) -> Result<(Self, Subscriber), ConnectError> {
        let certificates = match roots {
            Some(_) if !topology.uses_tls() => {
                return Err(ConnectError::Spec(
                    "certificate authorities were given for a connection without TLS (use `rediss://`)".into(),
                ));
            }
            Some(_) if matches!(topology, Topology::Sentinel { .. }) => {
                return Err(ConnectError::Spec(
                    "certificate authorities of its own are not supported behind Sentinel yet: \
                     add them to the file `SSL_CERT_FILE` names"
                        .into(),
                ));
            }
            Some(pem) => {
                use rustls::pki_types::CertificateDer;
                use rustls::pki_types::pem::PemObject as _;
                let certificates: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(pem).collect();
                match certificates {
                    Ok(certificates) if !certificates.is_empty() => {}
                    Ok(_) => {
                        return Err(ConnectError::Spec("the certificate authorities hold no PEM certificate".into()));
                    }
                    Err(e) => {
                        return Err(ConnectError::Spec(format!(
                            "the certificate authorities are not PEM certificates: {e}"
                        )));
                    }
                }
                Some(redis::TlsCertificates { client_tls: None, root_cert: Some(pem.to_vec()) })
            }
            None => None,
        };
        if topology.uses_tls() {
            // The provider this crate brings, unless the application chose one.
            let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        }
        match topology {
            Topology::Single(url) => {
                let client = match &certificates {
                    Some(certificates) => {
                        redis::Client::build_with_tls(url.as_str(), certificates.clone()).map_err(ConnectError::Tls)?
                    }
                    None => redis::Client::open(url.as_str()).map_err(ConnectError::Url)?,
                };
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(CONNECTION_TIMEOUT))
                    .set_response_timeout(Some(RESPONSE_TIMEOUT))
                    .set_number_of_retries(1)
                    .set_max_delay(Duration::from_millis(200));
                let manager =
                    ConnectionManager::new_lazy_with_config(client.clone(), config).map_err(ConnectError::Url)?;
                Ok((Connection::Single(manager), Subscriber::Single(Box::new(client))))
            }
            Topology::Cluster(nodes) => {
                let client = cluster_client(nodes, None, certificates.as_ref()).map_err(ConnectError::Tls)?;
                let lazy = LazyCluster { client, connection: tokio::sync::OnceCell::new() };
                Ok((Connection::Cluster(Arc::new(lazy)), Subscriber::Cluster(nodes.clone(), certificates)))
            }
            Topology::Sentinel { sentinels, service, db, tls, username, password } => {
                let mut info = redis::RedisConnectionInfo::default().set_db(*db);
                if let Some(user) = username {
                    info = info.set_username(user);
                }
                if let Some(password) = password {
                    info = info.set_password(password);
                }
                let mut node = SentinelNodeConnectionInfo::default().set_redis_connection_info(info);
                if *tls {
                    node = node.set_tls_mode(redis::TlsMode::Secure);
                }
                let client = SentinelClient::build(
                    sentinels.iter().map(String::as_str).collect(),
                    service.clone(),
                    Some(node),
                    SentinelServerType::Master,
                )
                .map_err(ConnectError::Url)?;
                let primary =
                    Arc::new(SentinelPrimary { sentinel: tokio::sync::Mutex::new(client), current: Mutex::default() });
                Ok((Connection::Sentinel(primary.clone()), Subscriber::Sentinel(primary)))
            }
        }
    }

    /// Whether this is a Redis Cluster (where a pipeline may not cross slots).
    pub(crate) fn is_cluster(&self) -> bool {
        matches!(self, Connection::Cluster(_))
    }

    /// Runs `commands` (each with the key that places it) in as few round trips as the topology
    /// allows: one pipeline, or on a Cluster one pipeline per hash slot, sent at once. The
    /// answers come back in order. Not atomic.
    pub(crate) async fn batch(&self, commands: Vec<(String, Cmd)>) -> redis::RedisResult<Vec<Value>> {
        if commands.is_empty() {
            return Ok(Vec::new());
        }
        if !self.is_cluster() {
            let mut pipe = redis::pipe();
            for (_, cmd) in commands {
                pipe.add_command(cmd);
            }
            return pipe.query_async(&mut self.clone()).await;
        }
        // Grouped by hash tag (keys with the same tag share a slot).
        let mut groups: Vec<(String, Vec<usize>, Pipeline)> = Vec::new();
        let total = commands.len();
        for (i, (key, cmd)) in commands.into_iter().enumerate() {
            let tag = hash_tag(&key).to_owned();
            match groups.iter_mut().find(|(t, _, _)| *t == tag) {
                Some((_, indices, pipe)) => {
                    indices.push(i);
                    pipe.add_command(cmd);
                }
                None => {
                    let mut pipe = redis::pipe();
                    pipe.add_command(cmd);
                    groups.push((tag, vec![i], pipe));
                }
            }
        }
        let answers = futures_util::future::try_join_all(groups.iter().map(|(_, _, pipe)| {
            let mut connection = self.clone();
            async move { pipe.query_async::<Vec<Value>>(&mut connection).await }
        }))
        .await?;
        let mut out = vec![Value::Nil; total];
        for ((_, indices, _), values) in groups.iter().zip(answers) {
            for (i, v) in indices.iter().zip(values) {
                out[*i] = v;
            }
        }
        Ok(out)
    }
}

/// The part of `key` Redis Cluster hashes: the text between the first `{` and the next `}`
/// when it is not empty, else the whole key.
pub(crate) fn hash_tag(key: &str) -> &str {
    if let Some(open) = key.find('{')
        && let Some(len) = key[open + 1..].find('}')
        && len > 0
    {
        return &key[open + 1..open + 1 + len];
    }
    key
}

/// A cluster client; with `pushes`, one speaking RESP3 that sends what it is pushed there (to
/// subscribe); with `certificates`, trusting their roots.
pub(crate) fn cluster_client(
    nodes: &[String],
    pushes: Option<tokio::sync::mpsc::UnboundedSender<redis::PushInfo>>,
    certificates: Option<&redis::TlsCertificates>,
) -> redis::RedisResult<ClusterClient> {
    let mut builder = redis::cluster::ClusterClientBuilder::new(nodes.iter().map(String::as_str))
        .connection_timeout(CONNECTION_TIMEOUT)
        .response_timeout(RESPONSE_TIMEOUT)
        // A master's failover is retried through (MOVED, then the replica promoted), the client
        // trying again for up to FAILOVER_PATIENCE while the node refuses connections; then the
        // command fails and the request gets a retryable `503`.
        .retries(4)
        .min_retry_wait(100)
        .max_retry_wait(500);
    if let Some(pushes) = pushes {
        builder = builder.use_protocol(redis::ProtocolVersion::RESP3).push_sender(pushes);
    }
    if let Some(certificates) = certificates {
        builder = builder.certs(certificates.clone());
    }
    builder.build()
}

impl LazyCluster {
    /// `attempt` (one command, or `pipeline`) on the cluster connection, made again after
    /// [`FAILOVER_PAUSE`] while it [ran nowhere](ran_nowhere) and [`FAILOVER_PATIENCE`] lasts;
    /// before a pipeline is sent again, the client is made to look its slot up ([`locate`]).
    async fn through_failover<T, Fut>(
        &self,
        pipeline: Option<&Pipeline>,
        attempt: impl Fn(ClusterConnection) -> Fut,
    ) -> redis::RedisResult<T>
    where
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        let started = tokio::time::Instant::now();
        loop {
            let answer = attempt(self.get().await?).await;
            if !again_after_failover(&answer, pipeline, started) {
                return answer;
            }
            tokio::time::sleep(FAILOVER_PAUSE).await;
            if let Some(exists) = pipeline.and_then(locate) {
                let _ = self.get().await?.req_packed_command(&exists).await;
            }
        }
    }

    async fn get(&self) -> redis::RedisResult<ClusterConnection> {
        let made = tokio::time::timeout(
            CONNECTION_TIMEOUT * 2,
            self.connection.get_or_try_init(|| self.client.get_async_connection()),
        )
        .await
        .map_err(|_| io_error("connecting to the Redis Cluster timed out"))??;
        Ok(made.clone())
    }
}

impl SentinelPrimary {
    /// The connection to the primary, asking the Sentinels for it when there is none.
    pub(crate) async fn get(&self) -> redis::RedisResult<MultiplexedConnection> {
        if let Some(c) = self.current.lock().ok().and_then(|c| c.clone()) {
            return Ok(c);
        }
        let mut sentinel = self.sentinel.lock().await;
        // Made by another caller while this one waited.
        if let Some(c) = self.current.lock().ok().and_then(|c| c.clone()) {
            return Ok(c);
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(CONNECTION_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT));
        let made = tokio::time::timeout(CONNECTION_TIMEOUT * 3, sentinel.get_async_connection_with_config(&config))
            .await
            .map_err(|_| io_error("asking the Sentinels for the primary timed out"))??;
        if let Ok(mut current) = self.current.lock() {
            *current = Some(made.clone());
        }
        Ok(made)
    }

    /// A Redis client for the primary the Sentinels name now (to subscribe).
    pub(crate) async fn client(&self) -> redis::RedisResult<redis::Client> {
        let mut sentinel = self.sentinel.lock().await;
        tokio::time::timeout(CONNECTION_TIMEOUT * 3, sentinel.async_get_client())
            .await
            .map_err(|_| io_error("asking the Sentinels for the primary timed out"))?
    }

    /// Forgets the connection after `error`, when it says the primary may have changed.
    fn failed(&self, error: &redis::RedisError) {
        let stale = error.is_io_error()
            || error.is_connection_dropped()
            || error.is_connection_refusal()
            || error.is_timeout()
            || error.is_unrecoverable_error()
            || matches!(error.kind(), redis::ErrorKind::Server(redis::ServerErrorKind::ReadOnly));
        if stale && let Ok(mut current) = self.current.lock() {
            *current = None;
        }
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Connection::Single(c) => c.req_packed_command(cmd),
            Connection::Cluster(lazy) => {
                Box::pin(lazy.through_failover(None, move |mut connection| async move {
                    connection.req_packed_command(cmd).await
                }))
            }
            Connection::Sentinel(primary) => Box::pin(async move {
                let answer = primary.get().await?.req_packed_command(cmd).await;
                if let Err(e) = &answer {
                    primary.failed(e);
                }
                answer
            }),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Connection::Single(c) => c.req_packed_commands(cmd, offset, count),
            Connection::Cluster(lazy) => Box::pin(lazy.through_failover(Some(cmd), move |mut connection| async move {
                connection.req_packed_commands(cmd, offset, count).await
            })),
            Connection::Sentinel(primary) => Box::pin(async move {
                let answer = primary.get().await?.req_packed_commands(cmd, offset, count).await;
                if let Err(e) = &answer {
                    primary.failed(e);
                }
                answer
            }),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Connection::Single(c) => c.get_db(),
            Connection::Cluster(_) | Connection::Sentinel(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error a node answers with `line` (RESP, `-CODE detail`).
    fn answered(line: &str) -> redis::RedisError {
        let value = redis::parse_redis_value(format!("-{line}\r\n").as_bytes()).unwrap();
        value.extract_error().unwrap_err()
    }

    #[test]
    fn only_what_ran_nowhere_is_tried_again_through_a_failover() {
        let refused = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(ran_nowhere(&refused, 1));
        for line in [
            "MOVED 5670 127.0.0.1:7001",
            "READONLY You can't write against a read only replica.",
            "CLUSTERDOWN The cluster is down",
            "TRYAGAIN",
            "MASTERDOWN Link with MASTER is down",
        ] {
            assert!(ran_nowhere(&answered(line), 1), "{line}");
        }
        // What may have run, or failed for good, is not.
        let dropped = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(!ran_nowhere(&dropped, 1));
        assert!(!ran_nowhere(&answered("ERR unknown command"), 1));
        assert!(!ran_nowhere(&answered("NOSCRIPT No matching script"), 1));
    }

    #[test]
    fn one_url_is_one_node_and_several_are_a_cluster() {
        assert_eq!(
            Topology::parse("redis://127.0.0.1:6379/").unwrap(),
            Topology::Single("redis://127.0.0.1:6379/".into())
        );
        assert_eq!(
            Topology::parse("rediss://a:7000, redis://b:7001,c:7002").unwrap(),
            Topology::Cluster(vec!["rediss://a:7000".into(), "redis://b:7001".into(), "rediss://c:7002".into()])
        );
        assert!(matches!(Topology::parse(""), Err(ConnectError::Spec(_))));
        assert!(matches!(Topology::parse("http://a/"), Err(ConnectError::Url(_))));
    }

    #[test]
    fn the_sentinel_form_names_the_sentinels_the_primary_and_its_database() {
        let parsed = Topology::parse("rediss+sentinel://me:p%40ss@s1:26379,s2:26380/mymaster/3").unwrap();
        assert_eq!(
            parsed,
            Topology::Sentinel {
                sentinels: vec!["rediss://s1:26379/".into(), "rediss://s2:26380/".into()],
                service: "mymaster".into(),
                db: 3,
                tls: true,
                username: Some("me".into()),
                password: Some("p@ss".into()),
            }
        );
        for bad in
            ["redis+sentinel://s1:26379", "redis+sentinel:///m", "redis+sentinel://s1/m/x", "http+sentinel://s/m"]
        {
            let e = Topology::parse(bad).unwrap_err().to_string();
            assert!(e.contains("Sentinel") || e.contains("database"), "{bad}: {e}");
        }
        let e = Topology::parse("redis+sentinel://u:secret@s1/m/x").unwrap_err().to_string();
        assert!(!e.contains("secret"), "the password stays out of errors: {e}");
    }

    #[test]
    fn a_hash_tag_is_the_first_non_empty_braced_part() {
        assert_eq!(hash_tag("mcp:session:{abc}"), "abc");
        assert_eq!(hash_tag("mcp:{deployment}:started"), "deployment");
        assert_eq!(hash_tag("mcp:task:x"), "mcp:task:x");
        assert_eq!(hash_tag("a{}b"), "a{}b");
    }
}
