//! What the backplane tests (`backplane_*.rs`) share: several instances of one server sharing
//! their sessions through a real Redis (a `redis-server` of each test's own, on a free loopback
//! port, persisting nothing), often behind a round-robin proxy that sends each request to the
//! next instance, as a load balancer without sticky sessions does.
//!
//! Here: [`Instance`] (a server process: the `shared` example or a test server of
//! `tests/src/bin/`), in-process instances ([`in_process`], [`SoakNode`] on a runtime of its
//! own), the raw 2025-era requests ([`post`], [`initialize`], …) and the tools they serve.

use std::net::Ipv4Addr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tests::interop::example_binary;
use tests::stdio::within;
use typed_mcp::client::{ElicitationModes, elicitation_fn};
use typed_mcp::prelude::*;
use typed_mcp::protocol::ElicitResult;
use typed_mcp::transport::http::{HttpConfig, SessionRegistry, StreamableHttp};
use typed_mcp_redis::Redis;
use typed_mcp_redis::testing::{RedisServer, free_port};

/// A server process serving Streamable HTTP, killed when dropped: the `shared` example, the
/// `combined` test server, or the `backplane-server` test server with surface `quickstart`
/// or `notes` (named `backplane-quickstart`, `backplane-notes` here).
pub struct Instance {
    pub child: Child,
    pub base: String,
    /// The port of the `combined` server's authorization page.
    pub page_port: u16,
}

impl Instance {
    pub fn start(name: &str, redis: Option<&str>) -> Instance {
        Self::start_with(name, redis, &[])
    }

    /// [`start`](Self::start), with `env` in the program's environment.
    pub fn start_with(name: &str, redis: Option<&str>, env: &[(&str, &std::path::Path)]) -> Instance {
        Self::start_on(free_port(), name, redis, env)
    }

    /// [`start_with`](Self::start_with) on `port` (to start an instance again where one was).
    pub fn start_on(port: u16, name: &str, redis: Option<&str>, env: &[(&str, &std::path::Path)]) -> Instance {
        let binary = match name {
            "combined" => std::path::PathBuf::from(crate::support::servers::COMBINED),
            "backplane-quickstart" | "backplane-notes" => {
                std::path::PathBuf::from(crate::support::servers::BACKPLANE_SERVER)
            }
            example => example_binary(example),
        };
        let page_port = free_port();
        let mut command = Command::new(&binary);
        command.args(["--port", &port.to_string()]).env("RUST_LOG", "warn").env_remove("REDIS_URL");
        command.envs(env.iter().copied());
        let extra = match name {
            "combined" => vec!["--url-port".to_owned(), page_port.to_string()],
            "backplane-quickstart" => vec!["--surface".to_owned(), "quickstart".to_owned()],
            "backplane-notes" => vec!["--surface".to_owned(), "notes".to_owned()],
            _ => Vec::new(),
        };
        command.args(extra);
        if let Some(url) = redis {
            command.args(["--redis", url]);
        }
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let mut instance = Instance { child, base: format!("http://127.0.0.1:{port}"), page_port };
        let started = Instant::now();
        while std::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            if let Ok(Some(status)) = instance.child.try_wait() {
                panic!("the {name} example exited ({status}) before listening");
            }
            assert!(started.elapsed() < Duration::from_secs(20), "the {name} example did not listen within 20 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        instance
    }

    /// The instance's MCP endpoint.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// Kills the process and waits for it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A user who fills in the `create_project` form with `name`.
pub fn user(name: &'static str) -> impl typed_mcp::client::ElicitationHandler {
    elicitation_fn(ElicitationModes::FORM, move |request| async move {
        request.as_form().map_or_else(ElicitResult::decline, |form| {
            let mut content = form.defaults();
            content.insert("projectName".into(), json!(name));
            form.accept(content).unwrap_or_else(|_| ElicitResult::cancel())
        })
    })
}

/// Opens the GET stream of 2025-era session `session` at `url`.
pub async fn open_get_stream(url: &str, session: &str) -> reqwest::Response {
    crate::support::http_client()
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", session)
        .send()
        .await
        .unwrap()
}

/// Posts a JSON-RPC message to `url` in session `session` (when given); returns the status, the
/// session id the response names and the body.
pub async fn post(url: &str, session: Option<&str>, body: serde_json::Value) -> (u16, Option<String>, String) {
    let http = crate::support::http_client();
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body.to_string());
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    let response = within("a POST", request.send()).await.unwrap();
    let status = response.status().as_u16();
    let id = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let text = within("a response body", response.text()).await.unwrap();
    (status, id, text)
}

/// Adds two integers.
#[tool]
pub async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Holds its instance busy for `ms` milliseconds.
#[tool]
pub async fn hold(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("held {ms} ms")
}

/// Reports progress twice, half a second apart.
#[tool]
pub async fn steps(ctx: Context) -> String {
    let _ = ctx.progress(1.0, Some(2.0), None).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = ctx.progress(2.0, Some(2.0), None).await;
    "steps done".into()
}

/// A `redis-server` started for one test, and a connection to it.
pub fn started_redis() -> (RedisServer, Redis) {
    let server = RedisServer::start();
    let redis = Redis::connect(&server.url()).unwrap();
    (server, redis)
}

/// The deployment secret of the in-process instances.
pub const SECRET: &[u8] = b"the deployment secret of the in-process instances";

/// An in-process instance on a loopback port, sharing sessions through `redis`.
pub async fn in_process(redis: &Redis) -> (String, StreamableHttp, tokio::task::JoinHandle<()>) {
    in_process_with(redis, Duration::from_millis(100), HttpConfig::default()).await
}

/// An in-process instance like [`in_process`], beating every `heartbeat`, with `config`'s
/// other settings; `serve` returns once the endpoint is closed (`close_all`).
pub async fn in_process_with(
    redis: &Redis,
    heartbeat: Duration,
    config: HttpConfig,
) -> (String, StreamableHttp, tokio::task::JoinHandle<()>) {
    let server = Server::builder("t", "1").tools(tools![add, steps, hold]).build().unwrap();
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let backplane = redis.backplane(url.clone()).heartbeat(heartbeat).secret(SECRET);
    let http = server.streamable_http(config.backplane(backplane));
    let serving = http.clone();
    let task = tokio::spawn(async move {
        let _ = serving.serve(listener, std::future::pending()).await;
    });
    (url, http, task)
}

/// Two instances, A and B, of one deployment on `redis`, each beating every `heartbeat`.
pub async fn two_instances(
    redis: &Redis,
    heartbeat: Duration,
) -> [(String, StreamableHttp, tokio::task::JoinHandle<()>); 2] {
    [
        in_process_with(redis, heartbeat, HttpConfig::default()).await,
        in_process_with(redis, heartbeat, HttpConfig::default()).await,
    ]
}

pub fn initialize() -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

/// Opens a session at `url` (`initialize`, which must succeed) and returns its id.
pub async fn open_session(url: &str) -> String {
    let (status, session, body) = post(url, None, initialize()).await;
    assert_eq!(status, 200, "{body}");
    session.expect("a session id")
}

/// `logging/setLevel`: what only a session's owner serves (it changes the session's record).
pub fn set_level(id: u32) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "logging/setLevel", "params": {"level": "error"}})
}

/// Asserts that the instance at `address` is the recorded owner of `session`.
pub async fn assert_owned_by(redis: &Redis, session: &str, address: &str, why: &str) {
    let owner = redis.sessions().owner(session).await.unwrap().expect("still recorded");
    assert_eq!(owner.address.as_deref(), Some(address), "{why}: {owner:?}");
}

pub fn add_call(id: u32) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": id}}})
}

/// The test binary's Redis Cluster, shared by the tests running at once (each under its own key
/// prefix or its own session ids); made again by the next test once every user dropped it.
pub fn shared_cluster() -> std::sync::Arc<typed_mcp_redis::testing::RedisCluster> {
    static CLUSTER: std::sync::Mutex<std::sync::Weak<typed_mcp_redis::testing::RedisCluster>> =
        std::sync::Mutex::new(std::sync::Weak::new());
    let mut shared = CLUSTER.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(cluster) = shared.upgrade() {
        return cluster;
    }
    let cluster = std::sync::Arc::new(typed_mcp_redis::testing::RedisCluster::start());
    *shared = std::sync::Arc::downgrade(&cluster);
    cluster
}

/// How many times each call's handler ran, by the call's number.
pub static RUNS: std::sync::Mutex<std::collections::BTreeMap<u32, u32>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// Counts its runs under `n`, and answers `n`.
#[tool]
pub async fn count(n: u32) -> String {
    *RUNS.lock().unwrap().entry(n).or_default() += 1;
    format!("ran {n}")
}

/// One instance of the soak, in a runtime of its own: killing it (shutting its runtime down)
/// drops its listener, connections, heartbeat and subscriptions at once, as the death of its
/// process would, leaving its records in Redis.
pub struct SoakNode {
    pub base: String,
    runtime: Option<tokio::runtime::Runtime>,
}

impl SoakNode {
    pub fn start(redis_url: &str) -> SoakNode {
        SoakNode::start_with(redis_url, Duration::from_millis(200), || {
            Server::builder("t", "1").tools(tools![count]).build().unwrap()
        })
    }

    /// An instance of the server `make` builds, beating every `heartbeat`, on a runtime of its
    /// own with one worker.
    pub fn start_with(redis_url: &str, heartbeat: Duration, make: fn() -> Server) -> SoakNode {
        let url = redis_url.to_owned();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
            let base = runtime.block_on(async {
                let redis = Redis::connect(&url).unwrap();
                let server = make();
                let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
                let base = format!("http://{}", listener.local_addr().unwrap());
                let backplane = redis.backplane(format!("{base}/mcp")).heartbeat(heartbeat).secret(SECRET);
                let http = server.streamable_http(HttpConfig::default().backplane(backplane));
                tokio::spawn(async move {
                    let _ = http.serve(listener, std::future::pending()).await;
                });
                base
            });
            SoakNode { base, runtime: Some(runtime) }
        })
        .join()
        .unwrap()
    }

    pub fn kill(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Drop for SoakNode {
    fn drop(&mut self) {
        self.kill();
    }
}
