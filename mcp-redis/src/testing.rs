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
        let spawned = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--protected-mode", "no", "--loglevel", "warning"])
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
        let server = RedisServer { child: Some(child), port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start listening on port {port} within 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    /// The server's URL, `redis://127.0.0.1:{port}/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
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
    base: Vec<String>,
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
            base: backends.into_iter().map(|b| b.trim_end_matches('/').to_owned()).collect(),
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
    let mut last_error = String::new();
    for _ in 0..backends.base.len() {
        let index = backends.next.fetch_add(1, Ordering::Relaxed) % backends.base.len();
        let Ok(uri) = format!("{}{path}", backends.base[index]).parse::<Uri>() else {
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
