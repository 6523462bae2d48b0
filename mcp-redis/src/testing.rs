//! Test support for shared deployments: a private `redis-server` per test run, and a
//! round-robin HTTP proxy that spreads requests over several instances the way a load balancer
//! without sticky sessions would.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};

/// A `redis-server` of its own, on a free loopback port, persisting nothing; killed when dropped.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    /// Whether it speaks TLS only.
    tls: bool,
}

/// A free loopback port for a server a test starts as another process, which binds it a moment
/// later.
///
/// Chosen at random below the system's ephemeral range: a port the OS hands out for `bind(0)`
/// is also what it hands out as the local port of outgoing connections, so under a busy test
/// run such a port is often taken again before the server binds it. Checked free when chosen.
pub fn free_port() -> u16 {
    use std::hash::{BuildHasher, Hasher};
    // Linux's default ephemeral range starts at 32768; read the machine's own where there is one.
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next().and_then(|low| low.parse::<u16>().ok()))
        .unwrap_or(32768);
    let (low, high) = (10_000u16, ephemeral_low.max(10_001));
    let state = std::collections::hash_map::RandomState::new();
    for attempt in 0u32..200 {
        let mut hasher = state.build_hasher();
        hasher.write_u32(attempt);
        hasher.write_u128(
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos(),
        );
        let port = low + (hasher.finish() % u64::from(high - low)) as u16;
        if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
            return port;
        }
    }
    // Everything tried was taken: let the OS choose.
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).and_then(|l| l.local_addr()).map(|a| a.port()).unwrap_or_else(|e| {
        panic!("cannot find a free loopback port: {e}");
    })
}

impl RedisServer {
    /// Starts `redis-server` on a free loopback port with persistence off, and waits until it
    /// answers. Panics when `redis-server` is not installed, saying how to install it.
    pub fn start() -> Self {
        Self::start_on(free_port())
    }

    /// Starts `redis-server` on `port` (to bring back one that was stopped, at the same place).
    pub fn start_on(port: u16) -> Self {
        Self::start_with(port, &[])
    }

    /// Starts `redis-server` on `port` with `extra` arguments (`--cluster-enabled yes`, a
    /// config file and `--sentinel`, …), and waits until it listens.
    pub fn start_with(port: u16, extra: &[&str]) -> Self {
        let mut command = Command::new("redis-server");
        // A config file comes first.
        let (file, rest) = match extra.first() {
            Some(f) if !f.starts_with("--") => (Some(*f), &extra[1..]),
            _ => (None, extra),
        };
        command.args(file);
        // Whatever a server writes (a replica's sync file, say) goes to the temporary
        // directory, not to the directory the tests run in.
        command.current_dir(std::env::temp_dir());
        let spawned = command
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--protected-mode", "no", "--loglevel", "warning"])
            // A replica syncs at once (the default waits 5 s for more replicas).
            .args(["--repl-diskless-sync-delay", "0"])
            .args(rest)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
                "these tests need a real Redis: `redis-server` is not installed \
                 (Debian/Ubuntu: `apt-get install redis-server`; macOS: `brew install redis`)"
            ),
            Err(e) => panic!("cannot start redis-server: {e}"),
        };
        let tls = rest.contains(&"--tls-port");
        let mut server = RedisServer { child: Some(child), port, tls };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            if let Some(Ok(Some(status))) = server.child.as_mut().map(Child::try_wait) {
                panic!("redis-server on port {port} exited ({status}) before listening");
            }
            assert!(Instant::now() < deadline, "redis-server did not start listening on port {port} within 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    /// Starts `redis-server` speaking TLS only (its plain port closed) on a free loopback port,
    /// with the certificate and key in the PEM files `cert` and `key` (for `127.0.0.1`), and
    /// `ca` as the authority it trusts for clients' certificates (which it does not ask for).
    pub fn start_tls(cert: &std::path::Path, key: &std::path::Path, ca: &std::path::Path) -> Self {
        let port = free_port().to_string();
        let path = |p: &std::path::Path| p.to_str().expect("a UTF-8 path").to_owned();
        let (cert, key, ca) = (path(cert), path(key), path(ca));
        let args = ["--port", "0", "--tls-port", &port, "--tls-cert-file", &cert, "--tls-key-file", &key];
        let args = [&args[..], &["--tls-ca-cert-file", &ca, "--tls-auth-clients", "no"]].concat();
        Self::start_with(port.parse().expect("a port"), &args)
    }

    /// The server's URL, `redis://127.0.0.1:{port}/` (`rediss://` for one started with
    /// [`start_tls`](Self::start_tls)).
    pub fn url(&self) -> String {
        let scheme = if self.tls { "rediss" } else { "redis" };
        format!("{scheme}://127.0.0.1:{}/", self.port)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the server at once (SIGKILL), as if the machine running it went away.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The keys of the Redis at `url` matching `pattern` (`KEYS`: for tests, not for production).
pub async fn keys(url: &str, pattern: &str) -> Vec<String> {
    let client = redis::Client::open(url).expect("a Redis URL");
    let mut connection = client.get_multiplexed_async_connection().await.expect("a connection to Redis");
    redis::cmd("KEYS").arg(pattern).query_async(&mut connection).await.expect("KEYS")
}

/// A loopback HTTP proxy sending each request to the next of its backends in turn (not each
/// connection: a client keeping one connection open still reaches every backend); a backend
/// that refuses connections is skipped, as by a load balancer's health check. Stops when
/// dropped.
#[derive(Debug)]
pub struct RoundRobinProxy {
    address: SocketAddr,
    backends: Arc<Backends>,
    stop: tokio::sync::watch::Sender<bool>,
}

struct Backends {
    /// Each backend's base URL; `None` while it is out of rotation.
    base: std::sync::RwLock<Vec<Option<String>>>,
    next: AtomicUsize,
    client: hyper_util::client::legacy::Client<hyper_util::client::legacy::connect::HttpConnector, Body>,
    /// Which backend served each request so far, in order.
    served: std::sync::Mutex<Vec<usize>>,
}

impl RoundRobinProxy {
    /// A proxy on a free loopback port in front of `backends` (`http://host:port` each; the
    /// request's path and query are kept). Call within a tokio runtime.
    pub async fn start(backends: Vec<String>) -> Self {
        assert!(!backends.is_empty(), "a proxy needs at least one backend");
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.expect("a loopback port");
        let address = listener.local_addr().expect("the proxy's address");
        let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build(hyper_util::client::legacy::connect::HttpConnector::new());
        let state = Arc::new(Backends {
            base: std::sync::RwLock::new(
                backends.into_iter().map(|b| Some(b.trim_end_matches('/').to_owned())).collect(),
            ),
            next: AtomicUsize::new(0),
            client,
            served: std::sync::Mutex::default(),
        });
        let app = axum::Router::new().fallback(relay).with_state(state.clone());
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopped.wait_for(|s| *s).await;
            };
            let _ = axum::serve(listener, app).with_graceful_shutdown(shutdown).await;
        });
        RoundRobinProxy { address, backends: state, stop }
    }

    /// The proxy's base URL, `http://127.0.0.1:{port}`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }
}

impl RoundRobinProxy {
    /// Puts backend `index` out of rotation (`None`: no request goes to it, as when a load
    /// balancer's readiness check fails), or back in at `base` (a restarted instance).
    pub fn set_backend(&self, index: usize, base: Option<String>) {
        if let Ok(mut backends) = self.backends.base.write()
            && let Some(slot) = backends.get_mut(index)
        {
            *slot = base.map(|b| b.trim_end_matches('/').to_owned());
        }
    }

    /// Which backend (by its index in the list given to [`start`](Self::start)) each request
    /// went to so far, in order.
    pub fn served(&self) -> Vec<usize> {
        self.backends.served.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl std::fmt::Debug for Backends {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backends").field("base", &self.base).finish_non_exhaustive()
    }
}

impl Drop for RoundRobinProxy {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

async fn relay(State(backends): State<Arc<Backends>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    // Buffered, so that a request a dead backend refused can go to the next one, as a load
    // balancer whose health check noticed would send it.
    let Ok(body) = axum::body::to_bytes(body, usize::MAX).await else {
        return (StatusCode::BAD_REQUEST, "unreadable request body").into_response();
    };
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let mut last_error = String::from("no backend in rotation");
    let bases: Vec<Option<String>> = backends.base.read().map(|b| b.clone()).unwrap_or_default();
    for _ in 0..bases.len() {
        let index = backends.next.fetch_add(1, Ordering::Relaxed) % bases.len();
        let Some(base) = &bases[index] else { continue };
        let Ok(uri) = format!("{base}{path}").parse::<Uri>() else {
            return (StatusCode::BAD_GATEWAY, "bad backend address").into_response();
        };
        let mut forwarded = axum::http::Request::new(Body::from(body.clone()));
        *forwarded.method_mut() = parts.method.clone();
        *forwarded.uri_mut() = uri;
        *forwarded.headers_mut() = parts.headers.clone();
        match backends.client.request(forwarded).await {
            Ok(response) => {
                if let Ok(mut served) = backends.served.lock() {
                    served.push(index);
                }
                return response.map(Body::new);
            }
            Err(e) if e.is_connect() => last_error = format!("backend {index} unreachable: {e}"),
            Err(e) => return (StatusCode::BAD_GATEWAY, format!("backend {index} failed: {e}")).into_response(),
        }
    }
    (StatusCode::BAD_GATEWAY, last_error).into_response()
}

/// Runs one command (`args`, the command's name first) on the Redis at `url` and reads its
/// answer as `T`: for tests looking at what the backplane keeps.
pub async fn query<T: redis::FromRedisValue>(url: &str, args: &[&str]) -> T {
    let client = redis::Client::open(url).expect("a Redis URL");
    let mut connection = client.get_multiplexed_async_connection().await.expect("a connection to Redis");
    let mut command = redis::cmd(args[0]);
    for arg in &args[1..] {
        command.arg(*arg);
    }
    command.query_async(&mut connection).await.unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// A directory of its own under the system's temporary directory, removed when dropped.
#[derive(Debug)]
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(what: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("typed-mcp-{what}-{}-{}", std::process::id(), free_port()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot make {}: {e}", dir.display()));
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs one command on the node at `port` (blocking; for setting topologies up).
fn node_query<T: redis::FromRedisValue>(port: u16, args: &[&str]) -> redis::RedisResult<T> {
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/"))?;
    let mut connection = client.get_connection_with_timeout(Duration::from_secs(2))?;
    let mut command = redis::cmd(args[0]);
    for arg in &args[1..] {
        command.arg(*arg);
    }
    command.query(&mut connection)
}

/// Waits until `ready` holds, or panics naming `what` after `limit`.
fn wait_until(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !ready() {
        assert!(Instant::now() < deadline, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A Redis Cluster of its own: six `redis-server` processes in cluster mode on free loopback
/// ports, three masters with a replica each (made with `redis-cli --cluster create`), a node
/// timeout of one second (a master killed is replaced within about two), persisting nothing;
/// killed when dropped.
#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
    _dir: Scratch,
}

impl RedisCluster {
    /// Starts the six nodes and makes them a cluster, waiting until every slot is served.
    /// Panics when `redis-server` or `redis-cli` is missing, saying how to install them.
    pub fn start() -> Self {
        let dir = Scratch::new("cluster");
        let mut nodes = Vec::new();
        for _ in 0..6 {
            let port = free_port();
            // Its own cluster bus port (by default the port plus 10000, which may be another
            // server's).
            let bus = free_port().to_string();
            let conf = dir.0.join(format!("nodes-{port}.conf"));
            let conf = conf.to_string_lossy();
            let dirname = dir.0.to_string_lossy();
            nodes.push(RedisServer::start_with(
                port,
                &[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-port",
                    &bus,
                    "--cluster-config-file",
                    &conf,
                    "--cluster-node-timeout",
                    "1000",
                    "--cluster-require-full-coverage",
                    "no",
                    "--dir",
                    &dirname,
                ],
            ));
        }
        let addresses: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect();
        let created = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addresses)
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .stdin(Stdio::null())
            .output();
        match created {
            Ok(out) if out.status.success() => {}
            Ok(out) => panic!(
                "redis-cli --cluster create failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
                "these tests need `redis-cli` to make a Redis Cluster (Debian/Ubuntu: `apt-get install redis-tools`)"
            ),
            Err(e) => panic!("cannot run redis-cli: {e}"),
        }
        let cluster = RedisCluster { nodes, _dir: dir };
        cluster.wait_healthy();
        // A replica that has not synced yet is not promoted when its master fails.
        wait_until("the Redis Cluster's replicas did not sync", Duration::from_secs(20), || {
            let synced = cluster
                .live_ports()
                .iter()
                .filter(|port| {
                    node_query::<String>(**port, &["INFO", "replication"])
                        .is_ok_and(|info| info.contains("master_link_status:up"))
                })
                .count();
            synced == 3
        });
        cluster
    }

    /// Waits until every live node says the cluster is `ok` and has three masters.
    pub fn wait_healthy(&self) {
        wait_until("the Redis Cluster is not ok", Duration::from_secs(20), || {
            self.live_ports().iter().all(|port| {
                node_query::<String>(*port, &["CLUSTER", "INFO"]).is_ok_and(|info| info.contains("cluster_state:ok"))
            }) && self.masters().len() == 3
        });
    }

    fn live_ports(&self) -> Vec<u16> {
        self.nodes.iter().filter(|n| n.child.is_some()).map(|n| n.port).collect()
    }

    /// The connection string of the cluster: its nodes' URLs, comma-separated.
    pub fn url(&self) -> String {
        self.nodes.iter().map(|n| format!("redis://127.0.0.1:{}/", n.port)).collect::<Vec<_>>().join(",")
    }

    /// The ports of the live masters.
    pub fn masters(&self) -> Vec<u16> {
        self.live_ports()
            .into_iter()
            .filter(|port| {
                node_query::<redis::Value>(*port, &["ROLE"]).is_ok_and(|role| match role {
                    redis::Value::Array(parts) => {
                        matches!(parts.first(), Some(redis::Value::BulkString(r)) if r == b"master")
                    }
                    _ => false,
                })
            })
            .collect()
    }

    /// The port of the master serving `key`'s slot.
    pub fn master_of(&self, key: &str) -> u16 {
        let slot: i64 = node_query(self.live_ports()[0], &["CLUSTER", "KEYSLOT", key]).expect("CLUSTER KEYSLOT");
        let slot = u16::try_from(slot).expect("a slot");
        let masters = self.masters();
        masters
            .into_iter()
            .find(|port| {
                let mine: Vec<Vec<redis::Value>> = node_query(*port, &["CLUSTER", "SLOTS"]).unwrap_or_default();
                let me = format!("{port}");
                mine.iter().any(|range| {
                    let n = |i: usize| match range.get(i) {
                        Some(redis::Value::Int(v)) => *v,
                        _ => -1,
                    };
                    let owner_port = match range.get(2) {
                        Some(redis::Value::Array(node)) => match node.get(1) {
                            Some(redis::Value::Int(p)) => p.to_string(),
                            _ => String::new(),
                        },
                        _ => String::new(),
                    };
                    n(0) <= i64::from(slot) && i64::from(slot) <= n(1) && owner_port == me
                })
            })
            .expect("a master serving the slot")
    }

    /// Kills (SIGKILL) the node on `port`: its replica takes over its slots after the node
    /// timeout.
    pub fn kill(&mut self, port: u16) {
        if let Some(node) = self.nodes.iter_mut().find(|n| n.port == port) {
            node.kill();
        }
    }

    /// The keys matching `pattern` on every live master.
    pub fn keys(&self, pattern: &str) -> Vec<String> {
        let mut all: Vec<String> = self
            .masters()
            .into_iter()
            .flat_map(|p| node_query::<Vec<String>>(p, &["KEYS", pattern]).unwrap_or_default())
            .collect();
        all.sort();
        all.dedup();
        all
    }
}

/// A primary with one replica, watched by three Sentinels (quorum two, a primary down after
/// one second), each a process of its own on a free loopback port; killed when dropped.
#[derive(Debug)]
pub struct RedisSentinel {
    servers: Vec<RedisServer>,
    sentinels: Vec<RedisServer>,
    _dir: Scratch,
}

/// The name the Sentinels of [`RedisSentinel`] know the primary by.
pub const SENTINEL_SERVICE: &str = "mymaster";

impl RedisSentinel {
    /// Starts the primary, its replica and the three Sentinels, and waits until every Sentinel
    /// knows the replica and the other Sentinels.
    pub fn start() -> Self {
        let dir = Scratch::new("sentinel");
        let primary = RedisServer::start();
        let replica_port = free_port();
        let primary_port = primary.port.to_string();
        let replica = RedisServer::start_with(replica_port, &["--replicaof", "127.0.0.1", &primary_port]);
        let mut sentinels = Vec::new();
        for _ in 0..3 {
            let port = free_port();
            let conf = dir.0.join(format!("sentinel-{port}.conf"));
            let text = format!(
                "sentinel monitor {SENTINEL_SERVICE} 127.0.0.1 {primary_port} 2\n\
                 sentinel down-after-milliseconds {SENTINEL_SERVICE} 1000\n\
                 sentinel failover-timeout {SENTINEL_SERVICE} 3000\n\
                 sentinel parallel-syncs {SENTINEL_SERVICE} 1\n"
            );
            std::fs::write(&conf, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", conf.display()));
            let conf = conf.to_string_lossy();
            sentinels.push(RedisServer::start_with(port, &[&conf, "--sentinel"]));
        }
        let setup = RedisSentinel { servers: vec![primary, replica], sentinels, _dir: dir };
        wait_until("the replica did not sync with the primary", Duration::from_secs(20), || {
            node_query::<String>(replica_port, &["INFO", "replication"])
                .is_ok_and(|info| info.contains("master_link_status:up"))
        });
        wait_until("the Sentinels did not discover each other and the replica", Duration::from_secs(30), || {
            setup.sentinels.iter().all(|s| {
                let others: Vec<redis::Value> =
                    node_query(s.port, &["SENTINEL", "SENTINELS", SENTINEL_SERVICE]).unwrap_or_default();
                let replicas: Vec<redis::Value> =
                    node_query(s.port, &["SENTINEL", "REPLICAS", SENTINEL_SERVICE]).unwrap_or_default();
                others.len() == 2 && replicas.len() == 1
            })
        });
        setup
    }

    /// The connection string: `redis+sentinel://` with the three Sentinels and the primary's name.
    pub fn url(&self) -> String {
        let hosts: Vec<String> = self.sentinels.iter().map(|s| format!("127.0.0.1:{}", s.port)).collect();
        format!("redis+sentinel://{}/{SENTINEL_SERVICE}", hosts.join(","))
    }

    /// The port of the primary as the first Sentinel names it.
    pub fn primary(&self) -> u16 {
        let (_, port): (String, String) =
            node_query(self.sentinels[0].port, &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", SENTINEL_SERVICE])
                .expect("the Sentinel names the primary");
        port.parse().expect("a port")
    }

    /// A URL of the primary itself (to look at what it keeps).
    pub fn primary_url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.primary())
    }

    /// Kills (SIGKILL) the primary, and waits until the Sentinels promoted the replica.
    pub fn kill_primary(&mut self) -> Duration {
        let old = self.primary();
        let started = Instant::now();
        if let Some(server) = self.servers.iter_mut().find(|s| s.port == old) {
            server.kill();
        }
        wait_until("the Sentinels did not promote the replica", Duration::from_secs(30), || {
            self.sentinels.iter().all(|s| {
                node_query::<(String, String)>(s.port, &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", SENTINEL_SERVICE])
                    .is_ok_and(|(_, port)| port != old.to_string())
            })
        });
        started.elapsed()
    }
}
