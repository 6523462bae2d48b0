//! Several instances of one server sharing their sessions through a real Redis (a
//! `redis-server` of each test's own, on a free loopback port, persisting nothing), behind a
//! round-robin proxy that sends each request to the next instance, as a load balancer without
//! sticky sessions does.
//!
//! - The registry itself: owners recorded, found, forgotten; an instance whose heartbeat
//!   lapsed is reported gone.
//! - Three `shared` example processes on one `--redis`, our client through the proxy: a
//!   session opened on one instance is served by all three (each call where it lands), and form
//!   elicitations asked on one instance are answered through the others. Without `--redis` the same spread is not served
//!   (the answer is lost), which shows the proxy really spreads the session.
//! - A URL-mode flow asked on one instance (of the `combined` test server, which serves the
//!   page) is completed by its page on another: the owner's session gets the completion
//!   notification.
//! - A resource updated on one instance reaches a subscriber whose session is on another, and a
//!   2026-era `subscriptions/listen` stream there.
//! - The owner of a session killed (SIGKILL) while a call waits on its user: the call ends
//!   with an error the client receives, and once the owner's heartbeat lapsed another instance
//!   takes the session over from its state in Redis and serves it, elicitations included.
//! - `GET` with `Last-Event-ID`, and `DELETE`, on an instance that does not hold the session.
//! - The pinned TypeScript and Python SDK clients run their Streamable HTTP checks through the
//!   proxy, in front of three `combined` and three quickstart instances (test servers of
//!   `tests/src/bin/`).
//! - Load: 300 sessions over three instances, each eliciting at once, every answer posted to a
//!   random instance: every call gets its own answer, and once the sessions are deleted nothing
//!   of them is left in Redis.
//! - Cost, with a registry and no bus (every request for another instance's session is then
//!   forwarded): a request landing on its session's owner asks the registry nothing; one
//!   landing elsewhere asks it who owns the session, unless it asked within the last heartbeat;
//!   opening a session records it once.
//! - Redis stopped: a request landing on its session's owner, or on an instance that served the
//!   session before, is still served; one for a session the instance never saw gets `503` at
//!   once; once Redis is back, sessions are served everywhere again.
//! - Redis stopped and restarted (empty) under load: six clients calling continuously through
//!   both of two instances get answers or `503` with a JSON-RPC error, never a hang or another
//!   status; the instances record their sessions again, and soon every call is answered.
//! - SSE events written behind to Redis, bounded and expiring; the owner of a session
//!   SIGKILLed, a `GET` stream resumed with `Last-Event-ID` on another instance gets what the
//!   client missed, then the session's new events.
//! - Over TLS: a `redis-server` speaking TLS only, its certificate signed by a CA of the test's
//!   own, which the client trusts (`Redis::connect_with_ca`; `REDIS_CA_FILE` for the `shared`
//!   example): the registry, the bus, the task store contract, and two `shared` processes
//!   serving one session; without the CA the connection is refused.
//! - On a Redis Cluster (six nodes, shared by the tests running at once) and behind Sentinel (a
//!   primary, a replica, three Sentinels): the registry, the bus, the task store contract and
//!   three `shared` processes serving one session, as on one node. A master of a Cluster and
//!   the Sentinels' primary killed under load (four sessions, calls landing on owners and
//!   non-owners): every call is answered or refused with `503` and `Retry-After`, none hangs,
//!   none runs twice, and 3 s after the failover nothing is refused.
//! - An instance shutting down hands its sessions over at once (no waiting for its lease); an
//!   owner killed without leaving (its connections refused) is taken over by the first request
//!   needing it, with no `503` first; a session taken over counts against the new owner's
//!   `max_sessions`. An owner that hangs (a `shared` process stopped with SIGSTOP, which still
//!   accepts connections) is taken over once its one-second lease lapsed, while calls go on
//!   being served where they land; resumed, it ends its copy of the session and leaves it to
//!   the new owner.
//! - A rolling restart of three instances under continuous load (form elicitations and URL-mode
//!   flows in flight, calls, tasks running), each instance out of the balancer's rotation, drained and replaced:
//!   no client sees an error beyond a retryable `503`, no task fails.
//! - A soak: instances killed at random and replaced, and a Sentinel failover, under load
//!   (`MCP_SOAK_SECS` for a longer run): nothing lost, nothing run twice.

use std::net::Ipv4Addr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tests::interop::{example_binary, interop_dir, require_node_package, require_python_package, run_with_deadline};
use tests::stdio::within;
use typed_mcp::client::{Client, ElicitationModes, ProtocolEra, ServerNotification, elicitation_fn};
use typed_mcp::prelude::*;
use typed_mcp::protocol::ElicitResult;
use typed_mcp::protocol::SubscriptionFilter;
use typed_mcp::testing::ToolResultExt;
use typed_mcp::transport::http::{HttpConfig, SessionRegistry, StreamableHttp};
use typed_mcp_redis::Redis;
use typed_mcp_redis::testing::{RedisServer, RoundRobinProxy, free_port};

/// A server process serving Streamable HTTP, killed when dropped: the `shared` example, the
/// `combined` test server, or the `backplane-server` test server with surface `quickstart`
/// or `notes` (named `backplane-quickstart`, `backplane-notes` here).
struct Instance {
    child: Child,
    base: String,
    /// The port of the `combined` server's authorization page.
    page_port: u16,
}

impl Instance {
    fn start(name: &str, redis: Option<&str>) -> Instance {
        Self::start_with(name, redis, &[])
    }

    /// [`start`](Self::start), with `env` in the program's environment.
    fn start_with(name: &str, redis: Option<&str>, env: &[(&str, &std::path::Path)]) -> Instance {
        let binary = match name {
            "combined" => std::path::PathBuf::from(crate::support::servers::COMBINED),
            "backplane-quickstart" | "backplane-notes" => {
                std::path::PathBuf::from(crate::support::servers::BACKPLANE_SERVER)
            }
            example => example_binary(example),
        };
        let port = free_port();
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
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A user who fills in the `create_project` form with `name`.
fn user(name: &'static str) -> impl typed_mcp::client::ElicitationHandler {
    elicitation_fn(ElicitationModes::FORM, move |request| async move {
        request.as_form().map_or_else(ElicitResult::decline, |form| {
            let mut content = form.defaults();
            content.insert("projectName".into(), json!(name));
            form.accept(content).unwrap_or_else(|_| ElicitResult::cancel())
        })
    })
}

#[tokio::test]
async fn the_registry_records_owners_and_notices_lapsed_instances() {
    let server = RedisServer::start();
    registry_contract(&server.url()).await;
}

/// What a registry on the Redis at `url` (any topology) must do, under the prefix `t`.
async fn registry_contract(url: &str) {
    registry_contract_on(&|| Redis::connect(url).unwrap()).await;
}

/// [`registry_contract`] on the Redis that `connect` reaches.
async fn registry_contract_on(connect: &(dyn Fn() -> Redis + Sync)) {
    let redis = connect().with_prefix("t");
    let sessions = redis.sessions();
    // A store no instance has beaten on yet is not known to be complete.
    let recovering = sessions.owner("s1").await;
    assert!(matches!(recovering, Err(typed_mcp::transport::http::BackplaneError::Recovering)), "{recovering:?}");
    sessions.heartbeat("a", "http://a/mcp", Duration::from_millis(300), &[], Duration::from_secs(60)).await.unwrap();
    sessions.claim("s1", "a", "{}", Duration::from_secs(60)).await.unwrap();
    let owner = sessions.owner("s1").await.unwrap().unwrap();
    assert_eq!((owner.instance.as_str(), owner.address.as_deref()), ("a", Some("http://a/mcp")));
    // Only the owner's release forgets the session.
    sessions.release("s1", "b").await.unwrap();
    assert!(sessions.owner("s1").await.unwrap().is_some());
    // The heartbeat lapses: the session is still recorded, its owner reported gone.
    tokio::time::sleep(Duration::from_millis(450)).await;
    let owner = sessions.owner("s1").await.unwrap().unwrap();
    assert_eq!((owner.instance.as_str(), owner.address), ("a", None));
    // One instance takes it over, with its state; a second, later, gets nothing.
    sessions.save_state("s1", "state-1", Duration::from_secs(60)).await.unwrap();
    let taken = sessions.take_over("s1", "a", "b", Duration::from_secs(60)).await.unwrap();
    assert_eq!(taken.as_deref(), Some("state-1"));
    assert_eq!(sessions.take_over("s1", "a", "c", Duration::from_secs(60)).await.unwrap(), None);
    assert_eq!(sessions.owner("s1").await.unwrap().unwrap().instance, "b");
    sessions.release("s1", "a").await.unwrap();
    assert!(sessions.owner("s1").await.unwrap().is_some(), "a no longer owns it");
    sessions.release("s1", "b").await.unwrap();
    assert_eq!(sessions.owner("s1").await.unwrap(), None);
    // A session's record expires unless a heartbeat keeps it.
    sessions.claim("s2", "a", "{}", Duration::from_millis(200)).await.unwrap();
    sessions
        .heartbeat("a", "http://a/mcp", Duration::from_secs(5), &["s2".into()], Duration::from_secs(5))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(sessions.owner("s2").await.unwrap().is_some(), "the heartbeat renewed the session's record");
    sessions.claim("s3", "a", "{}", Duration::from_millis(100)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(sessions.owner("s3").await.unwrap(), None, "an unrenewed record expires");
    // The first beat finds the instance unannounced; the next ones find it announced, until
    // it leaves (or the store loses it).
    assert!(
        !sessions.heartbeat("d", "http://d/mcp", Duration::from_secs(5), &[], Duration::from_secs(5)).await.unwrap()
    );
    assert!(
        sessions.heartbeat("d", "http://d/mcp", Duration::from_secs(5), &[], Duration::from_secs(5)).await.unwrap()
    );
    sessions.claim("s4", "d", "state-4", Duration::from_secs(60)).await.unwrap();
    sessions.leave("d").await.unwrap();
    let owner = sessions.owner("s4").await.unwrap().unwrap();
    assert_eq!((owner.instance.as_str(), owner.address), ("d", None), "a leaving instance is gone at once");
    // Reclaiming records a session only where no owner is recorded, and says whether the
    // instance reclaiming it owns it.
    assert!(!sessions.reclaim("s4", "e", "other", Duration::from_secs(60)).await.unwrap(), "d owns s4");
    assert_eq!(sessions.owner("s4").await.unwrap().unwrap().instance, "d");
    assert!(sessions.reclaim("s4", "d", "state-4", Duration::from_secs(60)).await.unwrap(), "d owns s4");
    assert!(sessions.reclaim("s5", "e", "state-5", Duration::from_secs(60)).await.unwrap(), "s5 was nobody's");
    assert_eq!(sessions.owner("s5").await.unwrap().unwrap().instance, "e");
    assert_eq!(sessions.take_over("s5", "e", "f", Duration::from_secs(60)).await.unwrap().as_deref(), Some("state-5"));
    // Every instance agrees on a shared secret.
    let one = redis.shared_secret("k").await.unwrap();
    let other = connect().with_prefix("t").shared_secret("k").await.unwrap();
    assert_eq!(one, other);
}

#[tokio::test]
async fn events_are_written_behind_to_redis_bounded_and_restored_elsewhere() {
    use typed_mcp::transport::http::{EventId, EventStore};
    let server = RedisServer::start();
    let redis = Redis::connect(&server.url()).unwrap().with_prefix("t");
    let owner = redis.events(3, Duration::from_secs(60));
    let id = |stream, seq| EventId { stream, seq };
    for seq in 1..=4 {
        owner.store("s", id(1, seq), &format!(r#"{{"n":{seq}}}"#));
    }
    owner.store("gone", id(1, 1), "{}");
    owner.forget("gone");
    // Written behind: within moments, and trimmed to the newest three, with an expiry.
    let deadline = Instant::now() + Duration::from_secs(5);
    while typed_mcp_redis::testing::query::<Vec<String>>(&server.url(), &["LRANGE", "t:events:{s}", "0", "-1"])
        .await
        .last()
        != Some(&"1-4\n{\"n\":4}".to_owned())
    {
        assert!(Instant::now() < deadline, "the events did not reach Redis");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let kept: i64 = typed_mcp_redis::testing::query(&server.url(), &["LLEN", "t:events:{s}"]).await;
    assert_eq!(kept, 3);
    let ttl: i64 = typed_mcp_redis::testing::query(&server.url(), &["PTTL", "t:events:{s}"]).await;
    assert!((1..=60_000).contains(&ttl), "the events expire: {ttl}");
    assert!(typed_mcp_redis::testing::keys(&server.url(), "t:events:{gone}").await.is_empty(), "forgotten");
    // Another instance knows nothing of them until it restores the session.
    let heir = redis.events(3, Duration::from_secs(60));
    assert_eq!(heir.replay("s", id(1, 2)), Some(vec![]));
    heir.restore("s").await;
    assert_eq!(
        heir.replay("s", id(1, 2)),
        Some(vec![(id(1, 3), r#"{"n":3}"#.into()), (id(1, 4), r#"{"n":4}"#.into())])
    );
    assert_eq!(heir.replay("s", id(1, 0)), None, "the first event was trimmed: no replay with a gap");
    // Restoring without Redis leaves nothing to replay, and does not hang.
    let mut server = server;
    server.kill();
    let orphan = redis.events(3, Duration::from_secs(60));
    within("restoring without Redis", orphan.restore("s")).await;
    assert_eq!(orphan.replay("s", id(1, 2)), Some(vec![]));
}

#[tokio::test]
async fn three_instances_serve_one_session_and_answer_elicitations_through_each_other() {
    let redis = RedisServer::start();
    three_instances_share_a_session(&redis.url()).await;
}

/// Three `shared` example processes on the Redis of `redis_url` serve one session through a
/// round-robin proxy, elicitations included, and 2026-era requests where they land.
async fn three_instances_share_a_session(redis_url: &str) {
    let instances: Vec<Instance> = (0..3).map(|_| Instance::start("shared", Some(redis_url))).collect();
    let proxy = RoundRobinProxy::start(instances.iter().map(|i| i.base.clone()).collect()).await;
    let url = format!("{}/mcp", proxy.url());
    let client =
        within("connecting", Client::builder("t", "1").elicitation(user("spread")).connect_http(&url)).await.unwrap();
    for _ in 0..4 {
        let created = within("create_project", client.call_tool("create_project", ())).await.unwrap();
        assert_eq!(created.text(), "Created project 'spread'");
    }
    // A session's calls are served where they land, on whichever instance the proxy picks.
    let mut answered_by = std::collections::BTreeSet::new();
    for _ in 0..6 {
        answered_by.insert(within("served_by", client.call_tool("served_by", ())).await.unwrap().text());
    }
    assert_eq!(answered_by.len(), 3, "the session's calls are served where they land: {answered_by:?}");
    // A 2026-07-28 request has no session: it is served where it lands.
    let stateless =
        within("connecting", Client::builder("t", "1").protocol_era(ProtocolEra::Stateless).connect_http(&url))
            .await
            .unwrap();
    let mut landed_on = std::collections::BTreeSet::new();
    for _ in 0..30 {
        landed_on.insert(within("served_by", stateless.call_tool("served_by", ())).await.unwrap().text());
        if landed_on.len() == 3 {
            break;
        }
    }
    assert_eq!(landed_on.len(), 3, "2026-07-28 requests are served where they land: {landed_on:?}");
    within("closing", stateless.close()).await;
    let served = proxy.served();
    for instance in 0..3 {
        assert!(served.contains(&instance), "instance {instance} served nothing: {served:?}");
    }
    assert!(served.len() >= 10, "each call is a request and an answer at least: {served:?}");
    within("closing", client.close()).await;
}

#[tokio::test]
async fn without_a_backplane_another_instance_does_not_know_the_session() {
    // The same three processes as above without `--redis`: a session opened on one is unknown
    // to the others (what the backplane tests show served is not served by accident). Each
    // instance is addressed directly, so the outcome does not depend on how a client's
    // concurrent requests happen to be spread.
    let instances: Vec<Instance> = (0..3).map(|_| Instance::start("shared", None)).collect();
    let urls: Vec<String> = instances.iter().map(|i| format!("{}/mcp", i.base)).collect();
    let (status, session, body) = post(&urls[0], None, initialize()).await;
    assert_eq!(status, 200, "{body}");
    let session = session.expect("a session id");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    for url in &urls[1..] {
        let (status, _, body) = post(url, Some(&session), list.clone()).await;
        assert_eq!(status, 404, "{url} served a session it never opened: {body}");
    }
    let (status, _, body) = post(&urls[0], Some(&session), list).await;
    assert_eq!(status, 200, "the instance that opened the session serves it: {body}");
    assert!(body.contains("create_project"), "{body}");
}

/// Opens the GET stream of 2025-era session `session` at `url`.
async fn open_get_stream(url: &str, session: &str) -> reqwest::Response {
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
async fn post(url: &str, session: Option<&str>, body: serde_json::Value) -> (u16, Option<String>, String) {
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
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Holds its instance busy for `ms` milliseconds.
#[tool]
async fn hold(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("held {ms} ms")
}

/// Reports progress twice, half a second apart.
#[tool]
async fn steps(ctx: Context) -> String {
    let _ = ctx.progress(1.0, Some(2.0), None).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = ctx.progress(2.0, Some(2.0), None).await;
    "steps done".into()
}

/// A `redis-server` started for one test, and a connection to it.
fn started_redis() -> (RedisServer, Redis) {
    let server = RedisServer::start();
    let redis = Redis::connect(&server.url()).unwrap();
    (server, redis)
}

/// An in-process instance on a loopback port, sharing sessions through `redis`.
async fn in_process(redis: &Redis) -> (String, StreamableHttp, tokio::task::JoinHandle<()>) {
    in_process_with(redis, Duration::from_millis(100), HttpConfig::default()).await
}

/// An in-process instance like [`in_process`], beating every `heartbeat`, with `config`'s
/// other settings; `serve` returns once the endpoint is closed (`close_all`).
async fn in_process_with(
    redis: &Redis,
    heartbeat: Duration,
    config: HttpConfig,
) -> (String, StreamableHttp, tokio::task::JoinHandle<()>) {
    let server = Server::builder("t", "1").tools(tools![add, steps, hold]).build().unwrap();
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let http = server.streamable_http(config.backplane(redis.backplane(url.clone()).heartbeat(heartbeat)));
    let serving = http.clone();
    let task = tokio::spawn(async move {
        let _ = serving.serve(listener, std::future::pending()).await;
    });
    (url, http, task)
}

/// Two instances, A and B, of one deployment on `redis`, each beating every `heartbeat`.
async fn two_instances(
    redis: &Redis,
    heartbeat: Duration,
) -> [(String, StreamableHttp, tokio::task::JoinHandle<()>); 2] {
    [
        in_process_with(redis, heartbeat, HttpConfig::default()).await,
        in_process_with(redis, heartbeat, HttpConfig::default()).await,
    ]
}

fn initialize() -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

/// `logging/setLevel`: what only a session's owner serves (it changes the session's record).
fn set_level(id: u32) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "logging/setLevel", "params": {"level": "error"}})
}

/// Asserts that the instance at `address` is the recorded owner of `session`.
async fn assert_owned_by(redis: &Redis, session: &str, address: &str, why: &str) {
    let owner = redis.sessions().owner(session).await.unwrap().expect("still recorded");
    assert_eq!(owner.address.as_deref(), Some(address), "{why}: {owner:?}");
}

fn add_call(id: u32) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": id}}})
}

#[tokio::test]
async fn an_instance_shutting_down_hands_its_sessions_over_at_once() {
    let (_redis_server, redis) = started_redis();
    // A lease of 30 s: a takeover within it cannot be the lease lapsing.
    let beat = Duration::from_secs(10);
    let [(a, a_http, a_task), (b, _b_http, b_task)] = two_instances(&redis, beat).await;
    let (status, session, _) = post(&a, None, initialize()).await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let (status, _, body) = post(&b, Some(&session), add_call(2)).await;
    assert_eq!((status, body.contains(r#""text":"4""#)), (200, true), "forwarded to A: {body}");

    within("A shutting down", a_http.close_all()).await;
    within("A's listener closing", a_task).await.unwrap();
    let left = Instant::now();
    let (status, _, body) = post(&b, Some(&session), add_call(3)).await;
    assert_eq!(status, 200, "B serves the session's calls where they land: {body}");
    assert!(body.contains(r#""text":"5""#), "{body}");
    // What only the owner does (here, changing the session's record) makes B take it over.
    let level = set_level(4);
    let (status, _, body) = post(&b, Some(&session), level).await;
    assert_eq!(status, 200, "B takes the session over at the first request for its owner: {body}");
    assert!(left.elapsed() < Duration::from_secs(10), "taken over after {:?}, not at once", left.elapsed());
    assert_owned_by(&redis, &session, &b, "B owns the session now").await;
    b_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_owner_hands_its_idle_sessions_over_while_it_finishes_the_rest() {
    let (_redis_server, redis) = started_redis();
    // A lease of 30 s: a takeover within it cannot be the lease lapsing.
    let beat = Duration::from_secs(10);
    let [(a, a_http, a_task), (b, _b_http, b_task)] = two_instances(&redis, beat).await;
    let (_, idle, _) = post(&a, None, initialize()).await;
    let (_, busy, _) = post(&a, None, initialize()).await;
    let (idle, busy) = (idle.expect("a session id"), busy.expect("a session id"));
    // The busy session's call holds A for two seconds.
    let holding = {
        let (a, busy) = (a.clone(), busy.clone());
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "hold", "arguments": {"ms": 2000}}});
        tokio::spawn(async move { post(&a, Some(&busy), call).await })
    };
    let started = Instant::now();
    while a_http.busy() == 0 {
        assert!(started.elapsed() < Duration::from_secs(5), "the held call never started on A");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let draining = {
        let a_http = a_http.clone();
        tokio::spawn(async move { a_http.drain(Duration::from_secs(20)).await })
    };
    while a_http.is_ready() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // What only the owner does, for the idle session, reaches B: B forwards it to A, which
    // hands the session back instead of serving it, and B takes it over and serves it.
    let level = set_level(3);
    let (status, _, body) = post(&b, Some(&idle), level).await;
    assert_eq!(status, 200, "served by B, with no 503 on the way: {body}");
    let owner = redis.sessions().owner(&idle).await.unwrap().expect("still recorded");
    assert_eq!(owner.address.as_deref(), Some(b.as_str()), "B owns the idle session now");
    assert!(!draining.is_finished(), "A still drains: the held call runs");
    assert_eq!(a_http.session_count(), 1, "A keeps only the busy session");
    // The held call finishes on A, answered, and the drain ends right after it.
    let (status, _, body) = within("the held call", holding).await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("held 2000 ms"), "{body}");
    within("A draining", draining).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(10), "drained after {:?}", started.elapsed());
    within("A's listener closing", a_task).await.unwrap();
    // The busy session, left when A closed, is B's at its next request.
    let (status, _, body) = post(&b, Some(&busy), add_call(4)).await;
    assert_eq!((status, body.contains(r#""text":"6""#)), (200, true), "{body}");
    b_task.abort();
}

/// Blocks the thread it runs on for `ms` milliseconds, as a handler doing blocking work on the
/// runtime would: a runtime with one worker then runs nothing else meanwhile.
#[tool]
async fn block(ms: u64) -> String {
    std::thread::sleep(Duration::from_millis(ms));
    format!("blocked {ms} ms")
}

/// An instance with `add` and `block`, the default heartbeat (a lease of one second), on a
/// runtime with one worker; and its endpoint.
fn one_worker_instance(redis_url: &str) -> (SoakNode, String) {
    let node = SoakNode::start_with(redis_url, typed_mcp::transport::http::DEFAULT_HEARTBEAT, || {
        Server::builder("t", "1").tools(tools![add, block]).build().unwrap()
    });
    let mcp = format!("{}/mcp", node.base);
    (node, mcp)
}

/// Calls `block` for `held` in `session` at `url`, in a task of its own.
fn call_block(url: &str, session: &str, held: Duration) -> tokio::task::JoinHandle<(u16, Option<String>, String)> {
    let (url, session) = (url.to_owned(), session.to_owned());
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "block", "arguments": {"ms": held.as_millis() as u64}}});
    tokio::spawn(async move { post(&url, Some(&session), call).await })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_whose_runtime_is_busy_for_longer_than_a_lease_keeps_its_sessions() {
    let (redis_server, redis) = started_redis();
    // A: the default heartbeat (a lease of one second), on a runtime with one worker.
    let (_a, a_mcp) = one_worker_instance(&redis_server.url());
    let (b, _b_http, b_task) =
        in_process_with(&redis, typed_mcp::transport::http::DEFAULT_HEARTBEAT, HttpConfig::default()).await;
    let (status, session, body) = post(&a_mcp, None, initialize()).await;
    assert_eq!(status, 200, "{body}");
    let session = session.expect("a session id");
    // A's only worker is held for two and a half leases.
    let blocking = call_block(&a_mcp, &session, Duration::from_millis(2500));
    tokio::time::sleep(Duration::from_millis(300)).await;
    // What only the owner does goes through B meanwhile: B waits for A, whose lease holds (its
    // beats go on, on a thread of their own), rather than taking the session over.
    let level = set_level(3);
    let (status, _, body) = post(&b, Some(&session), level).await;
    assert_eq!(status, 200, "served by A once its worker was free: {body}");
    let (status, _, body) = within("the blocking call", blocking).await.unwrap();
    assert_eq!((status, body.contains("blocked 2500 ms")), (200, true), "{body}");
    assert_owned_by(&redis, &session, &a_mcp, "A still owns the session").await;
    b_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_whose_runtime_is_stuck_stops_beating_after_the_stall_limit_and_resumes_after() {
    use typed_mcp::transport::http::RUNTIME_STALL_LIMIT;
    let (redis_server, redis) = started_redis();
    let (_a, a_mcp) = one_worker_instance(&redis_server.url());
    let (status, session, body) = post(&a_mcp, None, initialize()).await;
    assert_eq!(status, 200, "{body}");
    let session = session.expect("a session id");
    // A's only worker is held for the stall limit and three seconds more.
    let held = RUNTIME_STALL_LIMIT + Duration::from_secs(3);
    let blocking = call_block(&a_mcp, &session, held);
    let started = Instant::now();
    let lapsed = loop {
        let owner = redis.sessions().owner(&session).await.unwrap().expect("still recorded");
        if owner.address.is_none() {
            break started.elapsed();
        }
        assert!(started.elapsed() < held, "A's lease never lapsed while its runtime was stuck");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Beats went on for the stall limit (less the renewals' own period), then stopped: the lease
    // (a second) lapsed after that.
    assert!(lapsed >= RUNTIME_STALL_LIMIT - Duration::from_millis(500), "lapsed after {lapsed:?}, before the limit");
    let (status, _, body) = within("the blocking call", blocking).await.unwrap();
    assert_eq!(status, 200, "{body}");
    // The runtime runs again: A beats again, and records again the session nobody took.
    let resumed = Instant::now();
    loop {
        let owner = redis.sessions().owner(&session).await.unwrap().expect("still recorded");
        if owner.address.as_deref() == Some(a_mcp.as_str()) {
            break;
        }
        assert!(resumed.elapsed() < Duration::from_secs(3), "A did not announce itself again: {owner:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, _, body) = post(&a_mcp, Some(&session), add_call(3)).await;
    assert_eq!((status, body.contains(r#""text":"5""#)), (200, true), "A serves its session again: {body}");
}

#[tokio::test]
async fn an_answer_no_instance_hears_is_refused_for_the_client_to_send_it_again() {
    let (_redis_server, redis) = started_redis();
    let (a, _a_http, a_task) = in_process_with(&redis, Duration::from_secs(10), HttpConfig::default()).await;
    let (_, session, _) = post(&a, None, initialize()).await;
    let session = session.expect("a session id");
    // The answer to a question an instance of tag 77,777 asked (how the ids of questions asked
    // on another instance read): none listens under that tag.
    let id = (1_i64 << 52) | (77_777_i64 << 32) | 1;
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"action": "decline"}});
    let http = crate::support::http_client();
    let response = http
        .post(&a)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .body(answer.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503, "an answer nobody heard is refused, not dropped");
    assert_eq!(response.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("1"));
    a_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ended_on_its_owner_is_gone_at_once_on_the_instances_serving_it_where_requests_land() {
    let (_redis_server, redis) = started_redis();
    let beat = Duration::from_secs(10);
    let [(a, _a_http, a_task), (b, _b_http, b_task)] = two_instances(&redis, beat).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    for round in 0..10 {
        let (_, session, _) = post(&a, None, initialize()).await;
        let session = session.expect("a session id");
        // B serves the session's requests where they land, on a replica of it.
        let (status, _, body) = post(&b, Some(&session), list.clone()).await;
        assert_eq!(status, 200, "{body}");
        let ended = crate::support::http_client()
            .delete(&a)
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &session)
            .send()
            .await
            .unwrap();
        assert_eq!(ended.status(), 200);
        // The very next request, on B, finds it gone.
        let (status, _, body) = post(&b, Some(&session), list.clone()).await;
        assert_eq!(status, 404, "round {round}: B still served the ended session: {body}");
    }
    a_task.abort();
    b_task.abort();
}

#[tokio::test]
async fn an_owner_whose_connection_is_refused_is_taken_over_at_once_whatever_its_lease() {
    let (_redis_server, redis) = started_redis();
    // A lease of 30 s, which A keeps: it is killed without leaving the registry.
    let beat = Duration::from_secs(10);
    let [(a, _a_http, a_task), (b, _b_http, b_task)] = two_instances(&redis, beat).await;
    let (status, session, _) = post(&a, None, initialize()).await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    a_task.abort();
    let _ = a_task.await;
    let killed = Instant::now();
    let level = set_level(2);
    let (status, _, body) = post(&b, Some(&session), level).await;
    assert_eq!(status, 200, "the first request for the owner takes the session over, no 503 first: {body}");
    assert!(killed.elapsed() < Duration::from_secs(2), "taken over after {:?}", killed.elapsed());
    assert_owned_by(&redis, &session, &b, "B owns the session now").await;
    let (status, _, body) = post(&b, Some(&session), add_call(5)).await;
    assert_eq!((status, body.contains(r#""text":"7""#)), (200, true), "{body}");
    b_task.abort();
}

/// Sends `signal` (`-STOP`, `-CONT`) to the process of `instance`.
fn signal(instance: &Instance, signal: &str) {
    let status = Command::new("kill").args([signal, &instance.child.id().to_string()]).status().expect("kill runs");
    assert!(status.success(), "kill {signal} failed");
}

/// Resumes a stopped instance when dropped (a failed test must not leave it stopped: its
/// `Drop` kills it, which a stopped process obeys too, but resuming first is tidier).
struct Resume<'a>(&'a Instance);

impl Drop for Resume<'_> {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-CONT", &self.0.child.id().to_string()]).status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_owner_is_taken_over_within_a_second_and_ends_its_copy_once_resumed() {
    let (redis_server, redis) = started_redis();
    // Two `shared` processes with the default heartbeat (a lease of one second).
    let a = Instance::start("shared", Some(&redis_server.url()));
    let b = Instance::start("shared", Some(&redis_server.url()));
    let (a_mcp, b_mcp) = (format!("{}/mcp", a.base), format!("{}/mcp", b.base));
    let (status, session, body) = post(&a_mcp, None, initialize()).await;
    assert_eq!(status, 200, "{body}");
    let session = session.expect("a session id");
    let level =
        |id: u32| json!({"jsonrpc": "2.0", "id": id, "method": "logging/setLevel", "params": {"level": "error"}});
    let served_by = |id: u32| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "served_by", "arguments": {}}});
    // `logging/setLevel` runs on the owner: through B it takes a hop to A.
    let (status, _, body) = post(&b_mcp, Some(&session), level(2)).await;
    assert_eq!(status, 200, "forwarded to A: {body}");
    let (status, _, body) = post(&b_mcp, Some(&session), served_by(3)).await;
    assert!(status == 200 && body.contains(&b.base), "a call is served where it lands: {body}");
    // The client's GET stream, held by the owner.
    let mut stream = open_get_stream(&a_mcp, &session).await;
    assert_eq!(stream.status(), 200);

    // A hangs: its kernel still accepts connections, but it answers nothing and renews nothing.
    signal(&a, "-STOP");
    let resume = Resume(&a);
    let stopped = Instant::now();
    // Meanwhile, calls through B go on being served where they land.
    let calls = {
        let b_mcp = b_mcp.clone();
        let session = session.clone();
        tokio::spawn(async move {
            let mut answered = 0;
            for id in 100..120 {
                let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "served_by", "arguments": {}}});
                let (status, _, body) = post(&b_mcp, Some(&session), call).await;
                assert_eq!(status, 200, "a call through B while A hangs: {body}");
                assert!(body.contains("Served by"), "{body}");
                answered += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            answered
        })
    };
    // What must run on the owner, retried as a client does on `503` (after `Retry-After`).
    let mut refused = 0;
    let mut id = 10;
    let gap = loop {
        id += 1;
        let (status, _, body) = post(&b_mcp, Some(&session), level(id)).await;
        match status {
            200 => break stopped.elapsed(),
            503 => {
                refused += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            other => panic!("a request for the hung owner got {other}: {body}"),
        }
        assert!(stopped.elapsed() < Duration::from_secs(10), "never taken over");
    };
    println!("a hung owner's session served again {gap:?} after it stopped, after {refused} 503");
    assert!(refused <= 1, "{refused} refusals before the takeover");
    assert!(gap < Duration::from_millis(1500), "served again only {gap:?} after the owner hung");
    assert_owned_by(&redis, &session, &b_mcp, "B owns the session now").await;
    assert_eq!(within("the calls through B", calls).await.unwrap(), 20);

    // A resumes: at its first beat it finds its lease lapsed and the session another's, and
    // ends its copy (the GET stream it held closes); it does not take the session back.
    drop(resume);
    let ended = within("A's GET stream closing after it resumed", async {
        while stream.chunk().await.map(|c| c.is_some()).unwrap_or(false) {}
    });
    ended.await;
    assert_owned_by(&redis, &session, &b_mcp, "B still owns the session").await;
    // The session is whole, through either instance.
    let (status, _, body) = post(&a_mcp, Some(&session), level(50)).await;
    assert_eq!(status, 200, "through A, forwarded to B now: {body}");
    let (status, _, body) = post(&a_mcp, Some(&session), served_by(51)).await;
    assert!(status == 200 && body.contains(&a.base), "{body}");
    let (status, _, body) = post(&b_mcp, Some(&session), served_by(52)).await;
    assert!(status == 200 && body.contains(&b.base), "{body}");
    let reopened = open_get_stream(&a_mcp, &session).await;
    assert_eq!(reopened.status(), 200, "the GET stream opens again, through A, on B");
}

#[tokio::test]
async fn a_session_taken_over_counts_against_the_new_owners_session_cap() {
    let (_redis_server, redis) = started_redis();
    let beat = Duration::from_secs(10);
    let (a, a_http, a_task) = in_process_with(&redis, beat, HttpConfig::default()).await;
    let (b, b_http, b_task) = in_process_with(&redis, beat, HttpConfig::default().max_sessions(1)).await;
    let (status, on_b, _) = post(&b, None, initialize()).await;
    assert_eq!(status, 200);
    let on_b = on_b.expect("a session id");
    let (status, on_a, _) = post(&a, None, initialize()).await;
    assert_eq!(status, 200);
    let on_a = on_a.expect("a session id");
    assert_eq!(b_http.session_count(), 1);

    within("A shutting down", a_http.close_all()).await;
    within("A's listener closing", a_task).await.unwrap();
    let (status, _, body) = post(&b, Some(&on_a), add_call(2)).await;
    assert_eq!(status, 200, "taken over: {body}");
    assert_eq!(b_http.session_count(), 1, "B holds one session at most: the idle one made room");
    let (status, _, _) = post(&b, Some(&on_b), json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})).await;
    assert_eq!(status, 404, "B's idle session was closed to make room");
    let (status, _, body) = post(&b, Some(&on_a), add_call(4)).await;
    assert_eq!((status, body.contains(r#""text":"6""#)), (200, true), "{body}");
    b_task.abort();
}

#[tokio::test]
async fn with_redis_down_the_owner_serves_and_the_others_refuse_at_once() {
    let (mut redis_server, redis) = started_redis();
    let (a, _a_http, a_task) = in_process(&redis).await;
    let (b, _b_http, b_task) = in_process(&redis).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, session, _) = post(&a, None, init.clone()).await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let (status, unseen, _) = post(&a, None, init.clone()).await;
    assert_eq!(status, 200);
    let unseen = unseen.expect("a session id");
    let call = |id: u32| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": id}}});
    let (status, _, body) = post(&b, Some(&session), call(2)).await;
    assert_eq!(status, 200, "served by B: {body}");
    assert!(body.contains(r#""text":"4""#), "{body}");

    redis_server.kill();
    let (status, _, body) = post(&a, Some(&session), call(3)).await;
    assert_eq!(status, 200, "the owner needs no Redis: {body}");
    assert!(body.contains(r#""text":"5""#), "{body}");
    // B serves the session it served before from what it read then; one it never saw needs
    // Redis.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, _, body) = post(&b, Some(&session), call(6)).await;
    assert_eq!(status, 200, "B needs no Redis for a session it serves: {body}");
    assert!(body.contains(r#""text":"8""#), "{body}");
    let started = Instant::now();
    let (status, _, body) = post(&b, Some(&unseen), call(4)).await;
    assert_eq!(status, 503, "{body}");
    assert!(started.elapsed() < Duration::from_secs(5), "refused after {:?}", started.elapsed());
    let (status, _, _) = post(&a, None, init.clone()).await;
    assert_eq!(status, 503, "a new session cannot be recorded");

    let _back = RedisServer::start_on(redis_server.port());
    // Nothing was persisted, so the Redis that came back knows no session: a new one, recorded
    // once the connection is made again, is served across instances.
    let deadline = Instant::now() + Duration::from_secs(10);
    let fresh = loop {
        let (status, session, _) = post(&a, None, init.clone()).await;
        if status == 200 {
            break session.expect("a session id");
        }
        assert!(Instant::now() < deadline, "no reconnection to Redis within 10 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (status, _, body) = post(&b, Some(&fresh), call(5)).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""text":"7""#), "{body}");
    a_task.abort();
    b_task.abort();
}

/// How one call went while Redis was stopped and restarted.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Answered,
    /// `503` with a JSON-RPC error saying why.
    Refused,
    /// Anything else: a wrong answer, another status, no answer in time.
    Wrong(String),
}

/// Calls `add` in `session` at `url`, within 10 s.
async fn call_once(http: &reqwest::Client, url: &str, session: &str, id: u32) -> Outcome {
    let request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", session)
        .body(add_call(id).to_string());
    let answered = tokio::time::timeout(Duration::from_secs(10), async {
        let response = request.send().await?;
        let status = response.status().as_u16();
        Ok::<_, reqwest::Error>((status, response.text().await?))
    });
    match answered.await {
        Err(_) => Outcome::Wrong(format!("no answer within 10 s from {url}")),
        Ok(Err(e)) => Outcome::Wrong(format!("{url}: {e}")),
        Ok(Ok((200, body))) if body.contains(&format!(r#""text":"{}""#, id + 2)) => Outcome::Answered,
        Ok(Ok((503, body))) if body.contains(r#""error""#) && body.contains("retry") => Outcome::Refused,
        Ok(Ok((status, body))) => Outcome::Wrong(format!("{status} from {url}: {body}")),
    }
}

/// Opens a session at `url`, within 10 s.
async fn open_once(url: &str) -> Outcome {
    match tokio::time::timeout(Duration::from_secs(10), post(url, None, initialize())).await {
        Err(_) => Outcome::Wrong(format!("no answer within 10 s from {url}")),
        Ok((200, Some(_), _)) => Outcome::Answered,
        Ok((503, _, body)) if body.contains(r#""error""#) && body.contains("retry") => Outcome::Refused,
        Ok((status, _, body)) => Outcome::Wrong(format!("{status} from {url}: {body}")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stopped_and_restarted_under_load_is_no_outage() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    let (mut redis_server, redis) = started_redis();
    let beat = Duration::from_millis(200);
    let [(a, _a_http, a_task), (b, _b_http, b_task)] = two_instances(&redis, beat).await;
    let urls = Arc::new([a, b]);
    let mut sessions = Vec::new();
    for i in 0..4 {
        let (status, session, _) = post(&urls[i % 2], None, initialize()).await;
        assert_eq!(status, 200);
        sessions.push(session.expect("a session id"));
    }
    let sessions = Arc::new(sessions);
    // Six clients call continuously, each request to either instance, in each session.
    let stop = Arc::new(AtomicBool::new(false));
    let ids = Arc::new(AtomicU32::new(10));
    let clients: Vec<_> = (0..6)
        .map(|c| {
            let (urls, sessions, stop, ids) = (urls.clone(), sessions.clone(), stop.clone(), ids.clone());
            tokio::spawn(async move {
                let http = crate::support::http_client();
                let mut outcomes = Vec::new();
                let mut n = c;
                while !stop.load(Ordering::Relaxed) {
                    let id = ids.fetch_add(1, Ordering::Relaxed);
                    let started = Instant::now();
                    // Every fifth operation opens a session (which needs Redis to record it).
                    let outcome = if n % 5 == 4 {
                        open_once(&urls[(n / 4) % 2]).await
                    } else {
                        call_once(&http, &urls[(n / 4) % 2], &sessions[n % 4], id).await
                    };
                    outcomes.push((started, outcome));
                    n += 1;
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                outcomes
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(1)).await;
    redis_server.kill();
    let killed = Instant::now();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let _back = RedisServer::start_on(redis_server.port());
    let restarted = Instant::now();
    // Back in full: every session answered through both instances, and new sessions open.
    let deadline = Instant::now() + Duration::from_secs(15);
    let http = crate::support::http_client();
    let mut id = 1_000_000;
    let recovered = loop {
        let mut all = true;
        for session in sessions.iter() {
            for url in urls.iter() {
                id += 1;
                all &= call_once(&http, url, session, id).await == Outcome::Answered;
            }
        }
        if all && post(&urls[0], None, initialize()).await.0 == 200 {
            break Instant::now();
        }
        assert!(Instant::now() < deadline, "not back within 15 s of Redis's restart");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    let mut counts = [0usize; 2];
    for client in clients {
        let outcomes = within("a client finishing", client).await.expect("no client panicked");
        for (started, outcome) in outcomes {
            match outcome {
                Outcome::Answered => counts[0] += 1,
                Outcome::Refused if started < recovered => counts[1] += 1,
                Outcome::Refused => panic!("refused after the service was back in full"),
                Outcome::Wrong(what) => panic!(
                    "a call neither answered nor clearly refused, {:?} after the kill: {what}",
                    started.checked_duration_since(killed)
                ),
            }
        }
    }
    println!(
        "{} calls answered, {} refused with 503; back in full {:?} after Redis restarted",
        counts[0],
        counts[1],
        recovered - restarted
    );
    assert!(counts[0] > 0, "nothing was answered");
    assert!(counts[1] > 0, "nothing needed Redis while it was down: the test did not test the outage");
    a_task.abort();
    b_task.abort();
}

/// Waits for a notification `wanted` accepts.
async fn expect_notification(
    events: &mut tokio::sync::broadcast::Receiver<ServerNotification>,
    what: &str,
    wanted: impl Fn(&ServerNotification) -> bool,
) {
    within(what, async {
        loop {
            match events.recv().await {
                Ok(n) if wanted(&n) => return,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(e) => panic!("no more notifications while waiting for {what}: {e}"),
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_url_flow_asked_on_one_instance_completes_from_another_instances_page() {
    let redis = RedisServer::start();
    let instances: Vec<Instance> = (0..3).map(|_| Instance::start("combined", Some(&redis.url()))).collect();
    let proxy = RoundRobinProxy::start(instances.iter().map(|i| i.base.clone()).collect()).await;
    let (pages, mut page) = tokio::sync::mpsc::unbounded_channel();
    let user = elicitation_fn(ElicitationModes::URL, move |request| {
        let pages = pages.clone();
        async move {
            if let Some(url) = request.as_url() {
                let _ = pages.send(url.url.clone());
            }
            ElicitResult::accept_url()
        }
    });
    let url = format!("{}/mcp", proxy.url());
    let client = within("connecting", Client::builder("t", "1").elicitation(user).connect_http(&url)).await.unwrap();
    let mut events = client.notifications();
    let started = within("auth_via_url", client.call_tool("auth_via_url", ())).await.unwrap();
    assert!(started.text().starts_with("Authorization flow "), "{}", started.text());
    let page = within("the page's URL", page.recv()).await.unwrap();
    let mut address = reqwest::Url::parse(&page).unwrap();
    let owner = address.port().unwrap();
    let elsewhere = instances.iter().map(|i| i.page_port).find(|p| *p != owner).unwrap();
    address.set_port(Some(elsewhere)).unwrap();
    let id = address.query_pairs().find(|(k, _)| k == "id").map(|(_, v)| v.into_owned()).unwrap();
    let status = crate::support::press_authorize(address.as_str()).await;
    assert_eq!(status, reqwest::StatusCode::OK, "the page on another instance completes the flow");
    expect_notification(
        &mut events,
        "the completion notification",
        |n| matches!(n, ServerNotification::ElicitationComplete { elicitation_id } if *elicitation_id == id),
    )
    .await;
    // Completed once, wherever it is asked again.
    let again = within("the page again", reqwest::get(address.as_str())).await.unwrap();
    assert_eq!(again.status(), reqwest::StatusCode::CONFLICT, "the flow is done, on every instance");
    within("closing", client.close()).await;
}

#[tokio::test]
async fn a_resource_updated_on_one_instance_reaches_a_subscriber_on_another() {
    let (_redis_server, redis) = started_redis();
    let (a, a_task) = notes_instance(&redis).await;
    let (b, b_task) = notes_instance(&redis).await;
    let subscriber = within("connecting to A", Client::builder("t", "1").connect_http(&a)).await.unwrap();
    let mut events = subscriber.notifications();
    within("subscribing", subscriber.subscribe_resource("notes://shared")).await.unwrap();
    let writer = within("connecting to B", Client::builder("t", "1").connect_http(&b)).await.unwrap();
    let written =
        within("write_note", writer.call_tool("write_note", json!({"name": "shared", "text": "hi"}))).await.unwrap();
    assert_eq!(written.text(), "saved `shared`");
    expect_notification(
        &mut events,
        "the update from B",
        |n| matches!(n, ServerNotification::ResourceUpdated { uri } if uri == "notes://shared"),
    )
    .await;
    // A 2026-era subscription (`subscriptions/listen`) on A hears it too.
    let listener = within(
        "a 2026-era client on A",
        Client::builder("t", "1").protocol_era(ProtocolEra::Stateless).connect_http(&a),
    )
    .await
    .unwrap();
    let filter =
        SubscriptionFilter { resource_subscriptions: Some(vec!["notes://later".into()]), ..Default::default() };
    let mut heard = listener.notifications();
    let subscription = within("the acknowledgement", listener.listen(filter)).await.unwrap();
    within("write_note", writer.call_tool("write_note", json!({"name": "later", "text": "hi"}))).await.unwrap();
    expect_notification(
        &mut heard,
        "the update from B on a listen stream on A",
        |n| matches!(n, ServerNotification::ResourceUpdated { uri } if uri == "notes://later"),
    )
    .await;
    subscription.end().await;
    within("closing", listener.close()).await;
    within("closing", subscriber.close()).await;
    within("closing", writer.close()).await;
    a_task.abort();
    b_task.abort();
}

/// Announces that note `name` changed (the notes themselves are kept nowhere: only the
/// announcements cross instances).
///
/// # Arguments
/// * `name` - The note.
/// * `text` - Its new text.
#[tool]
async fn write_note(ctx: Context, name: String, text: String) -> String {
    let _ = text;
    ctx.server_handle().notify_resource_updated(&format!("notes://{name}")).await;
    format!("saved `{name}`")
}

/// A note (its text is its name).
#[resource("notes://{name}", name = "note", mime_type = "text/plain")]
fn note(name: String) -> Option<String> {
    Some(name)
}

/// An in-process notes server (resource subscriptions, `write_note`) on a loopback port,
/// sharing sessions through `redis`; returns its URL and its serving task.
async fn notes_instance(redis: &Redis) -> (String, tokio::task::JoinHandle<()>) {
    let server = Server::builder("notes", "1")
        .tools(tools![write_note])
        .resources(resources![note])
        .resource_subscriptions()
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let http = server.streamable_http(HttpConfig::default().backplane(redis.backplane(url.clone())));
    let task = tokio::spawn(async move {
        let _ = http.serve(listener, std::future::pending()).await;
    });
    (url, task)
}

#[tokio::test]
async fn when_the_owner_is_killed_its_call_fails_and_another_instance_takes_the_session_over() {
    let redis = RedisServer::start();
    let mut instances: Vec<Instance> = (0..3).map(|_| Instance::start("shared", Some(&redis.url()))).collect();
    let proxy = RoundRobinProxy::start(instances.iter().map(|i| i.base.clone()).collect()).await;
    // The first question is held until the owner is dead; later ones are answered at once.
    let (asked, mut question) = tokio::sync::mpsc::unbounded_channel::<()>();
    let held = std::sync::Arc::new(tokio::sync::Mutex::new(true));
    let user = elicitation_fn(ElicitationModes::FORM, move |request| {
        let (asked, held) = (asked.clone(), held.clone());
        async move {
            let hold = std::mem::replace(&mut *held.lock().await, false);
            if hold {
                let _ = asked.send(());
                std::future::pending::<()>().await;
            }
            request.as_form().map_or_else(ElicitResult::decline, |form| {
                let mut content = form.defaults();
                content.insert("projectName".into(), json!("after"));
                form.accept(content).unwrap_or_else(|_| ElicitResult::cancel())
            })
        }
    });
    let url = format!("{}/mcp", proxy.url());
    let client = within("connecting", Client::builder("t", "1").elicitation(user).connect_http(&url)).await.unwrap();
    let owner = proxy.served()[0];
    let call = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("create_project", ()).await })
    };
    within("the question", question.recv()).await.unwrap();
    let killed = &mut instances[owner];
    let _ = killed.child.kill();
    let _ = killed.child.wait();
    let failed = within("the call on the killed instance", call).await.unwrap();
    assert!(failed.is_err(), "the killed instance's call must end with an error: {failed:?}");

    // The heartbeat lapses (6 s by default); then any instance takes the session over.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match tokio::time::timeout(Duration::from_secs(5), client.call_tool("served_by", ())).await {
            Ok(Ok(done)) => {
                assert!(done.text().starts_with("Served by http://127.0.0.1:"), "{}", done.text());
                break;
            }
            other => assert!(Instant::now() < deadline, "the session was not taken over: {other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The client's capabilities came along: the new owner can ask it questions.
    let created = within("create_project after the takeover", client.call_tool("create_project", ())).await.unwrap();
    assert_eq!(created.text(), "Created project 'after'");
    within("closing", client.close()).await;
}

#[tokio::test]
async fn a_stream_resumes_and_a_session_ends_through_another_instance() {
    let (_redis_server, redis) = started_redis();
    let (a, _a_http, a_task) = in_process(&redis).await;
    let (b, _b_http, b_task) = in_process(&redis).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, session, _) = post(&a, None, init).await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let http = crate::support::http_client();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "steps", "arguments": {}, "_meta": {"progressToken": "p"}}});
    let mut response = within(
        "the call",
        http.post(&a)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &session)
            .body(call.to_string())
            .send(),
    )
    .await
    .unwrap();
    // Read up to the first event's id, then drop the connection.
    let mut seen = String::new();
    let last = loop {
        let chunk = within("the first event", response.chunk()).await.unwrap().expect("an event before the end");
        seen.push_str(&String::from_utf8_lossy(&chunk));
        let first_id = seen.lines().find(|l| l.starts_with("id: ")).filter(|_| seen.contains("\n\n"));
        if let Some(line) = first_id {
            break line.trim_start_matches("id: ").to_owned();
        }
    };
    assert!(seen.contains(r#""progress":1"#), "{seen}");
    drop(response);
    let resumed = within(
        "resuming on B",
        http.get(&b)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &session)
            .header("last-event-id", &last)
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(resumed.status(), 200);
    let rest = within("the rest of the stream", resumed.text()).await.unwrap();
    assert!(rest.contains(r#""progress":2"#) && rest.contains("steps done"), "{rest}");
    assert!(!rest.contains(r#""progress":1"#), "what the client saw is not sent again: {rest}");

    let ended = within(
        "DELETE on B",
        http.delete(&b).header("mcp-protocol-version", "2025-11-25").header("mcp-session-id", &session).send(),
    )
    .await
    .unwrap();
    assert_eq!(ended.status(), 200);
    let (status, _, _) = post(&a, Some(&session), json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})).await;
    assert_eq!(status, 404, "the session ended on its owner");
    let (status, _, _) = post(&b, Some(&session), json!({"jsonrpc": "2.0", "id": 4, "method": "ping"})).await;
    assert_eq!(status, 404, "on every instance");
    a_task.abort();
    b_task.abort();
}

/// Reads `response` (an SSE stream) until `done` accepts what arrived so far; returns it.
async fn read_until(response: &mut reqwest::Response, what: &str, done: impl Fn(&str) -> bool) -> String {
    let mut seen = String::new();
    within(what, async {
        while !done(&seen) {
            let chunk = response.chunk().await.unwrap().unwrap_or_else(|| panic!("the stream ended: {seen}"));
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    seen
}

/// The ids and `data:` lines of the complete SSE events in `text`.
fn events_of(text: &str) -> Vec<(Option<String>, String)> {
    text.split("\n\n")
        .filter(|block| block.contains("data: "))
        .map(|block| {
            let id = block.lines().find_map(|l| l.strip_prefix("id: ")).map(str::to_owned);
            let data = block.lines().filter_map(|l| l.strip_prefix("data: ")).collect::<Vec<_>>().join("\n");
            (id, data)
        })
        .collect()
}

#[tokio::test]
async fn a_stream_resumes_on_another_instance_after_its_owner_was_killed() {
    let redis = RedisServer::start();
    let mut a = Instance::start("backplane-notes", Some(&redis.url()));
    let b = Instance::start("backplane-notes", Some(&redis.url()));
    let (a_url, b_url) = (format!("{}/mcp", a.base), format!("{}/mcp", b.base));
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, session, _) = post(&a_url, None, init).await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let (status, _, _) =
        post(&a_url, Some(&session), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(status, 202);
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "notes://kept"}});
    assert_eq!(post(&a_url, Some(&session), subscribe).await.0, 200);
    let http = crate::support::http_client();
    let get = |url: &str, last: Option<&str>| {
        let mut request = http
            .get(url)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &session);
        if let Some(last) = last {
            request = request.header("last-event-id", last);
        }
        request.send()
    };
    let write = |id: u32, text: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "write_note", "arguments": {"name": "kept", "text": text}}})
    };
    // The session's GET stream on A sees the first update; then the client goes away.
    let mut stream = within("the GET stream on A", get(&a_url, None)).await.unwrap();
    assert_eq!(stream.status(), 200);
    assert_eq!(post(&a_url, Some(&session), write(3, "one")).await.0, 200);
    let seen = read_until(&mut stream, "the first update", |t| !events_of(t).is_empty()).await;
    let (last, first) = events_of(&seen).remove(0);
    let last = last.expect("events carry ids");
    assert!(first.contains("notifications/resources/updated"), "{first}");
    drop(stream);
    // Two more updates the client misses; once Redis holds them, A dies.
    assert_eq!(post(&a_url, Some(&session), write(4, "two")).await.0, 200);
    assert_eq!(post(&a_url, Some(&session), write(5, "three")).await.0, 200);
    let key = format!("mcp:events:{{{session}}}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while typed_mcp_redis::testing::query::<i64>(&redis.url(), &["LLEN", &key]).await < 3 {
        assert!(Instant::now() < deadline, "the events did not reach Redis");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = a.child.kill();
    let _ = a.child.wait();

    // B takes the session over once A's lease lapses (503 until then), and replays what the
    // client missed from Redis.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut resumed = loop {
        let response = within("resuming on B", get(&b_url, Some(&last))).await.unwrap();
        if response.status() == 200 {
            break response;
        }
        assert_eq!(response.status(), 503, "refused only while A's lease runs");
        assert!(Instant::now() < deadline, "the session was not taken over");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let replayed = read_until(&mut resumed, "the missed updates", |t| events_of(t).len() >= 2).await;
    let replayed = events_of(&replayed);
    let (stream, seq) = last.split_once('-').unwrap();
    let next = |n: u64| format!("{stream}-{}", seq.parse::<u64>().unwrap() + n);
    assert_eq!(replayed[0].0.as_deref(), Some(next(1).as_str()), "{replayed:?}");
    assert_eq!(replayed[1].0.as_deref(), Some(next(2).as_str()), "{replayed:?}");
    assert!(replayed.iter().all(|(_, data)| data.contains("notifications/resources/updated")), "{replayed:?}");
    // The resumed stream is the session's live stream on its new owner: the subscription came
    // along, and new events get ids the client has not seen.
    assert_eq!(post(&b_url, Some(&session), write(6, "four")).await.0, 200);
    let more = read_until(&mut resumed, "an update after the takeover", |t| !events_of(t).is_empty()).await;
    let (id, data) = events_of(&more).remove(0);
    assert!(data.contains("notifications/resources/updated"), "{data}");
    let id = id.expect("an id");
    assert!(![last.clone(), next(1), next(2)].contains(&id), "a new id, not one the client saw: {id}");
    // Resuming from the new event replays nothing twice.
    drop(resumed);
    let mut again = within("resuming again", get(&b_url, Some(&id))).await.unwrap();
    assert_eq!(again.status(), 200);
    assert_eq!(post(&b_url, Some(&session), write(7, "five")).await.0, 200);
    let after = read_until(&mut again, "the next update", |t| !events_of(t).is_empty()).await;
    assert_eq!(events_of(&after).len(), 1, "{after}");
}

/// What `ask` asks for.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Reply {
    /// The reply.
    text: String,
}

/// Asks the user for a reply and returns it.
#[tool]
async fn ask(ctx: Context) -> Result<String, String> {
    match ctx.elicit::<Reply>("Your reply?").await {
        Ok(Elicitation::Accept(reply)) => Ok(reply.text),
        other => Err(format!("no reply: {other:?}")),
    }
}

/// A small pseudo-random sequence (xorshift), seeded per test run.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % sides as u64).unwrap_or(0)
    }
}

/// One session's run: initialize, a call that elicits, the answer, the result, DELETE, each at
/// the instance `at` picks.
async fn one_session(urls: &[String], at: [usize; 4], n: usize) {
    let http = crate::support::http_client();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "load", "version": "1"}}});
    let (status, session, body) = post(&urls[at[0]], None, init).await;
    assert_eq!(status, 200, "{body}");
    let session = session.expect("a session id");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask", "arguments": {}}});
    let mut response = http
        .post(&urls[at[1]])
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .body(call.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut text = String::new();
    let mut answered = false;
    loop {
        let Some(chunk) = response.chunk().await.unwrap() else { break };
        text.push_str(&String::from_utf8_lossy(&chunk));
        if !answered && text.contains("elicitation/create") && text.contains("\n\n") {
            let data = text.lines().find(|l| l.starts_with("data: ") && l.contains("elicitation/create")).unwrap();
            let question: serde_json::Value = serde_json::from_str(data.trim_start_matches("data: ")).unwrap();
            let answer = json!({"jsonrpc": "2.0", "id": question["id"],
                "result": {"action": "accept", "content": {"text": format!("reply {n}")}}});
            let (status, _, body) = post(&urls[at[2]], Some(&session), answer).await;
            assert_eq!(status, 202, "{body}");
            answered = true;
        }
    }
    assert!(answered, "session {n} was never asked: {text}");
    assert!(text.contains(&format!(r#""text":"reply {n}""#)), "session {n} got another answer: {text}");
    let ended = http
        .delete(&urls[at[3]])
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_sessions_over_three_instances_each_get_their_own_answer() {
    let (redis_server, redis) = started_redis();
    let mut urls = Vec::new();
    let mut tasks = Vec::new();
    for _ in 0..3 {
        let server = Server::builder("t", "1").tools(tools![ask]).build().unwrap();
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let http = server.streamable_http(HttpConfig::default().backplane(redis.backplane(url.clone())));
        tasks.push(tokio::spawn(async move {
            let _ = http.serve(listener, std::future::pending()).await;
        }));
        urls.push(url);
    }
    let urls = std::sync::Arc::new(urls);
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    let mut dice = Dice(seed);
    let sessions: Vec<_> = (0..300)
        .map(|n| {
            let at = [dice.roll(3), dice.roll(3), dice.roll(3), dice.roll(3)];
            let urls = urls.clone();
            tokio::spawn(async move { one_session(&urls, at, n).await })
        })
        .collect();
    let all = futures_util::future::join_all(sessions);
    for outcome in tokio::time::timeout(Duration::from_secs(60), all).await.expect("300 sessions within 60 s") {
        outcome.unwrap_or_else(|e| panic!("a session failed (seed {seed}): {e}"));
    }
    // Releasing a deleted session's records runs in the background: give it a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut left = typed_mcp_redis::testing::keys(&redis_server.url(), "mcp:s*").await;
        left.extend(typed_mcp_redis::testing::keys(&redis_server.url(), "mcp:events:*").await);
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "left in Redis after every session was deleted: {left:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for task in tasks {
        task.abort();
    }
}

/// Three instances each of `combined` and `backplane-quickstart` on one Redis, each trio behind a
/// round-robin proxy, and runs `script` (one of the interop clients) against the two proxies.
async fn interop_through_proxies(program: std::path::PathBuf, script: &'static [&'static str], passed: &str) {
    let redis = RedisServer::start();
    let elicitation: Vec<Instance> = (0..3).map(|_| Instance::start("combined", Some(&redis.url()))).collect();
    let quickstart: Vec<Instance> =
        (0..3).map(|_| Instance::start("backplane-quickstart", Some(&redis.url()))).collect();
    let front = RoundRobinProxy::start(elicitation.iter().map(|i| i.base.clone()).collect()).await;
    let back = RoundRobinProxy::start(quickstart.iter().map(|i| i.base.clone()).collect()).await;
    let urls = [format!("{}/mcp", front.url()), format!("{}/mcp", back.url())];
    let output = tokio::task::spawn_blocking(move || {
        run_with_deadline(
            Command::new(program).args(script).args(urls).current_dir(interop_dir()),
            Duration::from_secs(180),
        )
    })
    .await
    .unwrap();
    print!("{}", output.stdout);
    assert!(output.success() && output.stdout.contains(passed), "{}", output.describe());
    let served = front.served();
    assert!((0..3).all(|i| served.contains(&i)), "the requests were not spread: {served:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_client_runs_its_http_checks_across_three_instances() {
    println!("node {}", require_node_package("@modelcontextprotocol/sdk"));
    interop_through_proxies(tests::interop::node_program(), &["http_client.mjs"], "all checks passed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_runs_its_http_checks_across_three_instances() {
    let (python, version) = require_python_package("mcp");
    println!("{version}");
    let script: &[&str] = &["http_client.py", "--mode", "both"];
    interop_through_proxies(python, script, "all checks passed (legacy, auto, 2026-07-28)").await;
}

/// A registry counting the calls made of it, passing them on to Redis.
struct Counting {
    inner: typed_mcp_redis::RedisSessions,
    claims: std::sync::atomic::AtomicUsize,
    lookups: std::sync::atomic::AtomicUsize,
    saves: std::sync::atomic::AtomicUsize,
}

impl SessionRegistry for Counting {
    fn heartbeat<'a>(
        &'a self,
        instance: &'a str,
        address: &'a str,
        lease: Duration,
        active: &'a [String],
        session_ttl: Duration,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<bool, typed_mcp::transport::http::BackplaneError>> {
        self.inner.heartbeat(instance, address, lease, active, session_ttl)
    }

    fn leave<'a>(
        &'a self,
        instance: &'a str,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<(), typed_mcp::transport::http::BackplaneError>> {
        self.inner.leave(instance)
    }

    fn claim<'a>(
        &'a self,
        session: &'a str,
        instance: &'a str,
        state: &'a str,
        session_ttl: Duration,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<(), typed_mcp::transport::http::BackplaneError>> {
        self.claims.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.claim(session, instance, state, session_ttl)
    }

    fn save_state<'a>(
        &'a self,
        session: &'a str,
        state: &'a str,
        session_ttl: Duration,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<(), typed_mcp::transport::http::BackplaneError>> {
        self.saves.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.save_state(session, state, session_ttl)
    }

    fn take_over<'a>(
        &'a self,
        session: &'a str,
        gone: &'a str,
        instance: &'a str,
        session_ttl: Duration,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<Option<String>, typed_mcp::transport::http::BackplaneError>> {
        self.inner.take_over(session, gone, instance, session_ttl)
    }

    fn owner<'a>(
        &'a self,
        session: &'a str,
    ) -> typed_mcp::engine::BoxFuture<
        'a,
        Result<Option<typed_mcp::transport::http::Owner>, typed_mcp::transport::http::BackplaneError>,
    > {
        self.lookups.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.owner(session)
    }

    fn release<'a>(
        &'a self,
        session: &'a str,
        instance: &'a str,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<(), typed_mcp::transport::http::BackplaneError>> {
        self.inner.release(session, instance)
    }
}

#[tokio::test]
async fn a_request_on_its_owner_asks_the_registry_nothing_and_forwarded_ones_remember_the_owner() {
    use std::sync::atomic::Ordering::Relaxed;
    let (_redis_server, redis) = started_redis();
    let registry = std::sync::Arc::new(Counting {
        inner: redis.sessions(),
        claims: Default::default(),
        lookups: Default::default(),
        saves: Default::default(),
    });
    let mut urls = Vec::new();
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let server = Server::builder("t", "1").tools(tools![add]).build().unwrap();
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let backplane = typed_mcp::transport::http::Backplane::new(registry.clone(), url.clone());
        let http = server.streamable_http(HttpConfig::default().backplane(backplane));
        tasks.push(tokio::spawn(async move {
            let _ = http.serve(listener, std::future::pending()).await;
        }));
        urls.push(url);
    }
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, session, _) = post(&urls[0], None, init).await;
    assert_eq!(status, 200);
    let session = session.unwrap();
    assert_eq!((registry.claims.load(Relaxed), registry.lookups.load(Relaxed)), (1, 0), "initialize records once");
    for id in 2..12 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1}}});
        let (status, _, body) = post(&urls[0], Some(&session), call).await;
        assert_eq!(status, 200, "{body}");
    }
    assert_eq!(registry.lookups.load(Relaxed), 0, "requests on the owner never ask the registry");
    for id in 12..22 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1}}});
        let (status, _, body) = post(&urls[1], Some(&session), call).await;
        assert_eq!(status, 200, "{body}");
    }
    let lookups = registry.lookups.load(Relaxed);
    assert!(
        (1..=2).contains(&lookups),
        "the first forwarded request asks who owns the session, the next ones (within a heartbeat) remember it: {lookups}"
    );
    assert_eq!((registry.claims.load(Relaxed), registry.saves.load(Relaxed)), (1, 0));
    for task in tasks {
        task.abort();
    }
}

/// The test binary's Redis Cluster, shared by the tests running at once (each under its own key
/// prefix or its own session ids); made again by the next test once every user dropped it.
fn shared_cluster() -> std::sync::Arc<typed_mcp_redis::testing::RedisCluster> {
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

/// The bus on the Redis at `url`: a message published by one connection reaches a subscriber
/// on another (on a Cluster, through sharded pub/sub).
async fn bus_delivers(url: &str) {
    bus_delivers_on(&|| Redis::connect(url).unwrap()).await;
}

/// [`bus_delivers`] on the Redis that `connect` reaches.
async fn bus_delivers_on(connect: &(dyn Fn() -> Redis + Sync)) {
    use typed_mcp::transport::http::MessageBus;
    let (sender, mut received) = tokio::sync::mpsc::unbounded_channel();
    let stop = tokio_util::sync::CancellationToken::new();
    let listener = connect().with_prefix("b").bus();
    listener.subscribe("instance:x".into(), Box::new(move |m| drop(sender.send(m))), stop.clone());
    let speaker = connect().with_prefix("b").bus();
    // Subscribing takes a moment: publish until the subscriber hears.
    let heard = within("a message on the bus", async {
        loop {
            speaker.publish("instance:x", "hello".into()).await.unwrap();
            if let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(200), received.recv()).await {
                return m;
            }
        }
    })
    .await;
    assert_eq!(heard, "hello");
    // The bus counts who heard (on a Cluster, where the channel is sharded): one subscriber
    // here, nobody on a channel nobody listens to.
    let counted = speaker.publish_counted("instance:x", "again".into()).await.unwrap();
    assert_eq!(counted, Some(1), "one subscriber heard");
    let counted = speaker.publish_counted("instance:nobody", "hello?".into()).await.unwrap();
    assert_eq!(counted, Some(0), "nobody listens there");
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_bus_and_task_store_work_on_a_cluster_and_behind_sentinel() {
    let cluster = shared_cluster();
    let sentinel = typed_mcp_redis::testing::RedisSentinel::start();
    for url in [cluster.url(), sentinel.url()] {
        registry_contract(&url).await;
        bus_delivers(&url).await;
        let redis = Redis::connect(&url).unwrap().with_prefix(format!("c{}", free_port()));
        typed_mcp::testing::assert_task_store_contract(&redis.task_store()).await;
    }
    // A session's records share one slot (the scripts touching them all are refused otherwise).
    assert!(!cluster.keys("t:state:{s5}").is_empty(), "{:?}", cluster.keys("t:*"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_backplane_runs_over_tls_trusting_a_private_ca() {
    // A `redis-server` speaking TLS only, its certificate signed by a CA of the test's own.
    let ca = crate::support::pki::TestCa::new("Redis test CA");
    let (ca_file, cert_file, key_file) = ca.write_files("redis-tls");
    let server = RedisServer::start_tls(&cert_file, &key_file, &ca_file);
    let url = server.url();
    assert!(url.starts_with("rediss://"), "{url}");
    // The platform's roots do not know the CA: the connection is refused, not made unchecked.
    let untrusted = Redis::connect(&url).unwrap().sessions().owner("s").await;
    assert!(
        matches!(untrusted, Err(typed_mcp::transport::http::BackplaneError::Unavailable(_))),
        "a certificate of an unknown CA must not be accepted: {untrusted:?}"
    );
    // A CA that is not PEM, or given for a connection without TLS, is refused at once.
    assert!(Redis::connect_with_ca(&url, b"not a certificate").is_err());
    assert!(Redis::connect_with_ca("redis://127.0.0.1:6379/", ca.pem.as_bytes()).is_err());
    let connect = || Redis::connect_with_ca(&url, ca.pem.as_bytes()).unwrap();
    registry_contract_on(&connect).await;
    bus_delivers_on(&connect).await;
    let redis = connect().with_prefix("tasks");
    typed_mcp::testing::assert_task_store_contract(&redis.task_store()).await;
    // Two `shared` processes on it (`REDIS_CA_FILE` names the CA): a session opened on one is
    // served through the other, elicitations answered across them.
    let env = [("REDIS_CA_FILE", ca_file.as_path())];
    let instances: Vec<Instance> = (0..2).map(|_| Instance::start_with("shared", Some(&url), &env)).collect();
    let proxy = RoundRobinProxy::start(instances.iter().map(|i| i.base.clone()).collect()).await;
    let client = within(
        "connecting",
        Client::builder("t", "1").elicitation(user("over tls")).connect_http(&format!("{}/mcp", proxy.url())),
    )
    .await
    .unwrap();
    let mut answered_by = std::collections::BTreeSet::new();
    for _ in 0..4 {
        let created = within("create_project", client.call_tool("create_project", ())).await.unwrap();
        assert_eq!(created.text(), "Created project 'over tls'");
        answered_by.insert(within("served_by", client.call_tool("served_by", ())).await.unwrap().text());
    }
    assert_eq!(answered_by.len(), 2, "both instances served the session: {answered_by:?}");
    within("closing", client.close()).await;
}

#[tokio::test]
async fn three_instances_share_a_session_on_a_cluster() {
    let cluster = shared_cluster();
    three_instances_share_a_session(&cluster.url()).await;
}

#[tokio::test]
async fn three_instances_share_a_session_behind_sentinel() {
    let sentinel = typed_mcp_redis::testing::RedisSentinel::start();
    three_instances_share_a_session(&sentinel.url()).await;
}

/// How many times each call's handler ran, by the call's number.
static RUNS: std::sync::Mutex<std::collections::BTreeMap<u32, u32>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// Counts its runs under `n`, and answers `n`.
#[tool]
async fn count(n: u32) -> String {
    *RUNS.lock().unwrap().entry(n).or_default() += 1;
    format!("ran {n}")
}

/// What the calls during a failover got.
#[derive(Debug, Default)]
struct Tally {
    answered: u32,
    retryable: u32,
    wrong: Vec<String>,
}

/// Two in-process instances on `url`; four sessions, each called in a loop through both
/// instances in turn (half the calls land on a non-owner), while `failover` runs. Every call
/// must end within 10 s with its answer or a `503` with `Retry-After`, no handler may run
/// twice, and once Redis settled every call is answered again.
async fn calls_survive(url: &str, base: u32, failover: impl std::future::Future<Output = ()>) -> Tally {
    let redis = Redis::connect(url).unwrap();
    let mut urls = Vec::new();
    let mut serving = Vec::new();
    for _ in 0..2 {
        let server = Server::builder("t", "1").tools(tools![count]).build().unwrap();
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let address = format!("http://{}/mcp", listener.local_addr().unwrap());
        let http = server.streamable_http(
            HttpConfig::default().backplane(redis.backplane(address.clone()).heartbeat(Duration::from_millis(200))),
        );
        serving.push(tokio::spawn(async move {
            let _ = http.serve(listener, std::future::pending()).await;
        }));
        urls.push(address);
    }
    let mut sessions = Vec::new();
    for i in 0..4 {
        let (status, session, body) = post(&urls[i % 2], None, initialize()).await;
        assert_eq!(status, 200, "{body}");
        sessions.push(session.expect("a session id"));
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let tally = std::sync::Arc::new(std::sync::Mutex::new(Tally::default()));
    let mut clients = Vec::new();
    for (c, session) in sessions.into_iter().enumerate() {
        let (urls, stop, tally) = (urls.clone(), stop.clone(), tally.clone());
        clients.push(tokio::spawn(async move {
            let http = crate::support::http_client();
            let mut k = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                k += 1;
                let n = base + u32::try_from(c).unwrap() * 100_000 + k;
                let call = json!({"jsonrpc": "2.0", "id": k, "method": "tools/call",
                    "params": {"name": "count", "arguments": {"n": n}}});
                let request = http
                    .post(&urls[usize::try_from(k).unwrap() % 2])
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2025-11-25")
                    .header("mcp-session-id", &session)
                    .body(call.to_string());
                let outcome = tokio::time::timeout(Duration::from_secs(10), async {
                    let response = request.send().await?;
                    let retry_after = response.headers().contains_key("retry-after");
                    Ok::<_, reqwest::Error>((response.status().as_u16(), retry_after, response.text().await?))
                })
                .await;
                let refused = matches!(outcome, Ok(Ok((503, true, _))));
                {
                    let mut t = tally.lock().unwrap();
                    match outcome {
                        Ok(Ok((200, _, body))) if body.contains(&format!("ran {n}")) => t.answered += 1,
                        Ok(Ok((503, true, _))) => t.retryable += 1,
                        Ok(Ok((status, _, body))) => t.wrong.push(format!("call {n}: {status} {body}")),
                        Ok(Err(e)) => t.wrong.push(format!("call {n}: {e}")),
                        Err(_) => t.wrong.push(format!("call {n}: no answer within 10 s")),
                    }
                }
                if refused {
                    // As a client honouring `Retry-After` would, a little sooner.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    failover.await;
    // Settled: every call is answered again.
    let settled = tally.lock().unwrap().answered;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = tally.lock().unwrap().retryable;
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for c in clients {
        c.await.unwrap();
    }
    for s in serving {
        s.abort();
    }
    let tally = std::mem::take(&mut *tally.lock().unwrap());
    assert!(tally.wrong.is_empty(), "calls neither answered nor refused as retryable: {:?}", tally.wrong);
    assert!(tally.answered > settled, "no call was answered after the failover: {tally:?}");
    assert_eq!(tally.retryable, before, "calls were still refused 3 s after the failover: {tally:?}");
    let runs = RUNS.lock().unwrap();
    let twice: Vec<_> = runs.iter().filter(|(n, r)| **n >= base && **n < base + 1_000_000 && **r > 1).collect();
    assert!(twice.is_empty(), "calls ran twice: {twice:?}");
    tally
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_during_a_cluster_master_failover_get_an_answer_or_a_retryable_error() {
    // A cluster of its own: one of its masters is killed.
    let mut cluster = typed_mcp_redis::testing::RedisCluster::start();
    let url = cluster.url();
    let masters = cluster.masters();
    let victim = masters[0];
    let cluster_ref = &mut cluster;
    let tally = calls_survive(&url, 1_000_000, async move {
        let started = Instant::now();
        cluster_ref.kill(victim);
        tokio::task::block_in_place(|| cluster_ref.wait_healthy());
        eprintln!("cluster failover: a master killed, its replica serving after {:?}", started.elapsed());
    })
    .await;
    eprintln!("cluster failover under load: {tally:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_during_a_sentinel_failover_get_an_answer_or_a_retryable_error() {
    let mut sentinel = typed_mcp_redis::testing::RedisSentinel::start();
    let url = sentinel.url();
    let sentinel_ref = &mut sentinel;
    let tally = calls_survive(&url, 2_000_000, async move {
        let took = tokio::task::block_in_place(|| sentinel_ref.kill_primary());
        eprintln!("sentinel failover: the primary killed, the replica promoted after {took:?}");
    })
    .await;
    eprintln!("sentinel failover under load: {tally:?}");
}

/// Brews for a moment, as a task when the client wants one.
#[tool(task = "optional")]
async fn brew(kind: String) -> String {
    tokio::time::sleep(Duration::from_millis(300)).await;
    format!("brewed {kind}")
}

/// The URL-mode flows of the instance serving a call (set once its server is built).
#[derive(Default)]
struct Flows(std::sync::OnceLock<typed_mcp::server::UrlElicitations>);

/// Asks the user to visit a page (URL mode), and waits until the visit completed the flow.
#[tool]
async fn visit(ctx: Context, flows: State<Flows>) -> Result<String, String> {
    let id = ctx.new_url_elicitation_id();
    match ctx.elicit_url_with_id(&id, format!("https://pages.test/visit?id={id}"), "Visit the page.").await {
        Ok(Elicitation::Accept(_)) => {}
        other => return Err(format!("the visit was not accepted: {other:?}")),
    }
    let flows = flows.0.0.get().ok_or("no flows")?;
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if flows.state(&id).await == Some(typed_mcp::server::UrlFlowState::Completed) {
            return Ok("visited".into());
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Err(format!("flow {id} was never completed"))
}

/// An in-process instance for the rolling restart: `add`, `ask` (a form elicitation), `visit`
/// (a URL-mode flow) and `brew` (a task), tasks in Redis, and a shutdown grace long enough for
/// any of them; with its URL-mode flows, where a page completes them.
async fn rolling_instance(
    redis: &Redis,
) -> (String, StreamableHttp, tokio::task::JoinHandle<()>, typed_mcp::server::UrlElicitations) {
    let flows = std::sync::Arc::new(Flows::default());
    let server = Server::builder("t", "1")
        .tools(tools![add, ask, visit, brew])
        .state_arc(flows.clone())
        .task_store(redis.task_store())
        .build()
        .unwrap();
    let _ = flows.0.set(server.url_elicitations().clone());
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let address = listener.local_addr().unwrap();
    let url = format!("http://{address}/mcp");
    let backplane = redis.backplane(url.clone()).heartbeat(Duration::from_millis(200));
    let config = HttpConfig::default().backplane(backplane).shutdown_grace(Duration::from_secs(10));
    let http = server.streamable_http(config);
    let serving = http.clone();
    let task = tokio::spawn(async move {
        let _ = serving.serve(listener, std::future::pending()).await;
    });
    (format!("http://{address}"), http, task, server.url_elicitations().clone())
}

/// What the clients of the rolling restart saw.
#[derive(Default, Debug)]
struct Seen {
    answered: usize,
    /// `503` with `Retry-After`, retried.
    retried: usize,
    errors: Vec<String>,
    /// URL-mode flows completed (counted in `answered` too).
    visits: usize,
}

/// Calls `call` until it is answered, retrying what is documented as retryable (`503`), at most
/// five times; anything else is an error.
async fn until_answered<F, Fut>(seen: &std::sync::Mutex<Seen>, expected: &str, mut call: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<String, String>>,
{
    for _ in 0..5 {
        match tokio::time::timeout(Duration::from_secs(15), call()).await {
            Ok(Ok(text)) if text == expected => {
                seen.lock().unwrap().answered += 1;
                return;
            }
            Ok(Err(e)) if e.contains("503") => {
                seen.lock().unwrap().retried += 1;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Ok(other) => {
                seen.lock().unwrap().errors.push(format!("{other:?}"));
                return;
            }
            Err(_) => {
                seen.lock().unwrap().errors.push(format!("no answer within 15 s (expected {expected})"));
                return;
            }
        }
    }
    seen.lock().unwrap().errors.push(format!("still 503 after five tries (expected {expected})"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_of_three_instances_under_load_is_invisible_to_clients() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let (_redis_server, redis) = started_redis();
    let mut instances = Vec::new();
    for _ in 0..3 {
        instances.push(rolling_instance(&redis).await);
    }
    let proxy = RoundRobinProxy::start(instances.iter().map(|(base, ..)| base.clone()).collect()).await;
    // The page of the URL-mode flows, as served by whichever instance in rotation the balancer
    // picks: it completes each flow a moment after its user opened it.
    let pages: Arc<std::sync::Mutex<Vec<Option<typed_mcp::server::UrlElicitations>>>> =
        Arc::new(std::sync::Mutex::new(instances.iter().map(|(.., flows)| Some(flows.clone())).collect()));
    let (opened, mut visits) = tokio::sync::mpsc::unbounded_channel::<String>();
    let page_failures = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let page = {
        let (pages, seen) = (pages.clone(), page_failures.clone());
        tokio::spawn(async move {
            let mut turn = 0usize;
            while let Some(id) = visits.recv().await {
                tokio::time::sleep(Duration::from_millis(100)).await;
                // The balancer's next instance in rotation; a page that fails is reloaded.
                let mut done = false;
                for _ in 0..10 {
                    let flows = {
                        let pages = pages.lock().unwrap();
                        let live: Vec<_> = pages.iter().flatten().cloned().collect();
                        turn += 1;
                        live[turn % live.len()].clone()
                    };
                    match flows.complete(&id).await {
                        Ok(_) => {
                            done = true;
                            break;
                        }
                        Err(e) => {
                            seen.lock().unwrap().push(format!("{e}"));
                            tokio::time::sleep(Duration::from_millis(200)).await;
                        }
                    }
                }
                assert!(done, "the page never completed flow {id}");
            }
        })
    };
    let url = format!("{}/mcp", proxy.url());
    let seen = Arc::new(std::sync::Mutex::new(Seen::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let replying = || {
        elicitation_fn(ElicitationModes::FORM, |request| async move {
            request.as_form().map_or_else(ElicitResult::decline, |form| {
                form.accept(json!({"text": "fine"}).as_object().unwrap().clone())
                    .unwrap_or_else(|_| ElicitResult::cancel())
            })
        })
    };
    // Two 2025-era sessions asking forms and adding, and a 2026-era client running tasks, all
    // through the balancer, continuously.
    let mut load = Vec::new();
    for c in 0..2u32 {
        let client =
            within("connecting", Client::builder("t", "1").elicitation(replying()).connect_http(&url)).await.unwrap();
        let (seen, stop) = (seen.clone(), stop.clone());
        load.push(tokio::spawn(async move {
            let mut n = 0u32;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                until_answered(&seen, "fine", || async {
                    client.call_tool("ask", ()).await.map(|r| r.text()).map_err(|e| e.to_string())
                })
                .await;
                let sum = (c * 1000 + n + 2).to_string();
                until_answered(&seen, &sum, || async {
                    client
                        .call_tool("add", json!({"a": 2, "b": c * 1000 + n}))
                        .await
                        .map(|r| r.text())
                        .map_err(|e| e.to_string())
                })
                .await;
            }
            within("closing", client.close()).await;
        }));
    }
    // A 2025-era session whose user is sent to pages (URL mode), one flow after the other.
    let visitor = {
        let opened = opened.clone();
        elicitation_fn(ElicitationModes::URL, move |request| {
            let opened = opened.clone();
            async move {
                match request.as_url() {
                    Some(url) => {
                        let _ = opened.send(url.elicitation_id.clone());
                        ElicitResult::accept_url()
                    }
                    None => ElicitResult::decline(),
                }
            }
        })
    };
    let visiting =
        within("connecting", Client::builder("t", "1").elicitation(visitor).connect_http(&url)).await.unwrap();
    {
        let (seen, stop) = (seen.clone(), stop.clone());
        load.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                until_answered(&seen, "visited", || async {
                    visiting.call_tool("visit", ()).await.map(|r| r.text()).map_err(|e| e.to_string())
                })
                .await;
                seen.lock().unwrap().visits += 1;
            }
            within("closing", visiting.close()).await;
        }));
    }
    let tasks = within("connecting", Client::builder("t", "1").protocol_era(ProtocolEra::Stateless).connect_http(&url))
        .await
        .unwrap();
    {
        let (seen, stop) = (seen.clone(), stop.clone());
        load.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                until_answered(&seen, "brewed tea", || async {
                    tasks
                        .call_tool_as_task("brew", json!({"kind": "tea"}))
                        .await
                        .map(|r| r.text())
                        .map_err(|e| e.to_string())
                })
                .await;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    // One instance after the other: out of the balancer's rotation, drained, replaced.
    for (i, slot) in instances.iter_mut().enumerate() {
        proxy.set_backend(i, None);
        pages.lock().unwrap()[i] = None;
        let (_, http, task, _) = std::mem::replace(slot, rolling_instance(&redis).await);
        let started = Instant::now();
        within("draining", http.drain(Duration::from_secs(10))).await;
        within("the listener closing", task).await.unwrap();
        println!("instance {i} drained in {:?}", started.elapsed());
        proxy.set_backend(i, Some(slot.0.clone()));
        pages.lock().unwrap()[i] = Some(slot.3.clone());
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::Relaxed);
    for client in load {
        within("a client finishing", client).await.unwrap();
    }
    drop(opened);
    within("the page finishing", page).await.unwrap();
    let seen = seen.lock().unwrap();
    println!(
        "rolling restart: {} answered ({} URL-mode flows), {} retried on 503, {} errors",
        seen.answered,
        seen.visits,
        seen.retried,
        seen.errors.len()
    );
    assert!(seen.errors.is_empty(), "clients saw errors beyond retryable ones: {:?}", seen.errors);
    assert!(seen.answered > 20, "the load was too light to tell: {seen:?}");
    assert!(seen.visits >= 5, "too few URL-mode flows to tell: {seen:?}");
    // A page that failed (and was reloaded) is the page's trouble, not the client's: printed.
    println!("rolling restart: the page failed {:?}", page_failures.lock().unwrap());
    for (_, _, task, _) in instances {
        task.abort();
    }
}

/// One instance of the soak, in a runtime of its own: killing it (shutting its runtime down)
/// drops its listener, connections, heartbeat and subscriptions at once, as the death of its
/// process would, leaving its records in Redis.
struct SoakNode {
    base: String,
    runtime: Option<tokio::runtime::Runtime>,
}

impl SoakNode {
    fn start(redis_url: &str) -> SoakNode {
        SoakNode::start_with(redis_url, Duration::from_millis(200), || {
            Server::builder("t", "1").tools(tools![count]).build().unwrap()
        })
    }

    /// An instance of the server `make` builds, beating every `heartbeat`, on a runtime of its
    /// own with one worker.
    fn start_with(redis_url: &str, heartbeat: Duration, make: fn() -> Server) -> SoakNode {
        let url = redis_url.to_owned();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
            let base = runtime.block_on(async {
                let redis = Redis::connect(&url).unwrap();
                let server = make();
                let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
                let base = format!("http://{}", listener.local_addr().unwrap());
                let backplane = redis.backplane(format!("{base}/mcp")).heartbeat(heartbeat);
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

    fn kill(&mut self) {
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

/// What the soak's calls got.
#[derive(Debug, Default)]
struct Soak {
    calls: u32,
    answered: u32,
    /// `503` with `Retry-After`: sent again, under the same number.
    retried: u32,
    /// Cut off by the death of the instance serving them (the balancer's `502`, or the JSON-RPC
    /// error saying the instance stopped): not sent again, as they may have run.
    cut: u32,
    /// Neither answered nor refused within 10 s.
    lost: Vec<u32>,
    /// Anything else.
    wrong: Vec<String>,
}

/// Instances killed and restarted at random and a Sentinel failover, under continuous load, for
/// `MCP_SOAK_SECS` seconds (8 by default; the guide gives the last long run): every call gets
/// an answer, a retryable `503`, or the error of its instance's death; none is lost, none runs
/// twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_with_instances_killed_and_a_redis_failover_loses_and_duplicates_nothing() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let seconds: u64 = std::env::var("MCP_SOAK_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    let base_n = 3_000_000u32;
    let mut sentinel = typed_mcp_redis::testing::RedisSentinel::start();
    let redis_url = sentinel.url();
    let mut nodes: Vec<SoakNode> = (0..3).map(|_| SoakNode::start(&redis_url)).collect();
    let proxy = RoundRobinProxy::start(nodes.iter().map(|n| n.base.clone()).collect()).await;
    let url = format!("{}/mcp", proxy.url());
    let stop = Arc::new(AtomicBool::new(false));
    let soak = Arc::new(std::sync::Mutex::new(Soak::default()));
    let mut clients = Vec::new();
    for c in 0..4u32 {
        let (url, stop, soak) = (url.clone(), stop.clone(), soak.clone());
        clients.push(tokio::spawn(async move {
            let http = crate::support::http_client();
            let mut session = None;
            let mut k = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let Some(id) = session.clone() else {
                    match tokio::time::timeout(Duration::from_secs(10), post(&url, None, initialize())).await {
                        Ok((200, Some(id), _)) => session = Some(id),
                        _ => tokio::time::sleep(Duration::from_millis(100)).await,
                    }
                    continue;
                };
                k += 1;
                let n = base_n + c * 100_000 + k;
                soak.lock().unwrap().calls += 1;
                loop {
                    let call = json!({"jsonrpc": "2.0", "id": k, "method": "tools/call",
                        "params": {"name": "count", "arguments": {"n": n}}});
                    let request = http
                        .post(&url)
                        .header("content-type", "application/json")
                        .header("accept", "application/json, text/event-stream")
                        .header("mcp-protocol-version", "2025-11-25")
                        .header("mcp-session-id", &id)
                        .body(call.to_string());
                    let outcome = tokio::time::timeout(Duration::from_secs(10), async {
                        let response = request.send().await?;
                        let retry = response.headers().contains_key("retry-after");
                        Ok::<_, reqwest::Error>((response.status().as_u16(), retry, response.text().await?))
                    })
                    .await;
                    let retry = matches!(outcome, Ok(Ok((503, true, _))));
                    {
                        let mut s = soak.lock().unwrap();
                        match outcome {
                            Ok(Ok((200, _, body))) if body.contains(&format!("ran {n}")) => s.answered += 1,
                            Ok(Ok((503, true, _))) => s.retried += 1,
                            Ok(Ok((502, _, _))) => s.cut += 1,
                            Ok(Ok((200, _, body))) if body.contains("instance running this request stopped") => {
                                s.cut += 1;
                            }
                            // The session's id is unknown after all: a new one.
                            Ok(Ok((404, _, _))) => {
                                s.wrong.push(format!("call {n}: the session was lost"));
                                session = None;
                            }
                            Ok(Ok((status, _, body))) => s.wrong.push(format!("call {n}: {status} {body}")),
                            Ok(Err(e)) => s.wrong.push(format!("call {n}: {e}")),
                            Err(_) => s.lost.push(n),
                        }
                    }
                    if !retry {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }));
    }
    // The chaos: every second or so an instance is killed and, a moment later, replaced; half
    // way, the Sentinels' primary is killed.
    let mut dice = Dice(u64::from(std::process::id()) | 1);
    let started = Instant::now();
    let mut failed_over = false;
    let mut kills = 0;
    while started.elapsed() < Duration::from_secs(seconds) {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let victim = dice.roll(3);
        nodes[victim].kill();
        kills += 1;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let fresh = tokio::task::block_in_place(|| SoakNode::start(&redis_url));
        proxy.set_backend(victim, Some(fresh.base.clone()));
        nodes[victim] = fresh;
        if !failed_over && started.elapsed() >= Duration::from_secs(seconds / 2) {
            failed_over = true;
            let took = tokio::task::block_in_place(|| sentinel.kill_primary());
            println!("soak: the Redis primary killed, a replica promoted after {took:?}");
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        within("a soak client finishing", client).await.unwrap();
    }
    let soak = std::mem::take(&mut *soak.lock().unwrap());
    let runs = RUNS.lock().unwrap();
    let ran: Vec<(u32, u32)> =
        runs.iter().filter(|(n, _)| (base_n..base_n + 1_000_000).contains(*n)).map(|(n, r)| (*n, *r)).collect();
    let duplicated: Vec<_> = ran.iter().filter(|(_, r)| *r > 1).collect();
    println!(
        "soak of {seconds} s, {kills} instances killed, one Redis failover: {} calls, {} answered, {} retried on 503, \
         {} cut by a kill, {} lost, {} ran twice, {} other errors",
        soak.calls,
        soak.answered,
        soak.retried,
        soak.cut,
        soak.lost.len(),
        duplicated.len(),
        soak.wrong.len()
    );
    assert!(failed_over, "the soak was too short for its Redis failover");
    assert!(soak.lost.is_empty(), "calls neither answered nor refused: {:?}", soak.lost);
    assert!(duplicated.is_empty(), "calls ran twice: {duplicated:?}");
    assert!(soak.wrong.is_empty(), "unexpected outcomes: {:?}", soak.wrong);
    assert!(u32::try_from(ran.len()).unwrap() >= soak.answered, "an answered call did not run");
    assert!(soak.answered > 50, "too few calls answered to tell: {soak:?}");
}
