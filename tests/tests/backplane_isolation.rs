//! Users kept apart across the instances of a deployment (helpers in `support/backplane.rs` and
//! `support/http.rs`): on three instances sharing a Redis, each with an authentication layer
//! (the `x-user` header as the request's `Principal`), a user naming another user's session id
//! gets "session not found" on every path (a request served where it lands, on a replica; an
//! answer to a replica's question, posted on another instance or on the owner and passed over
//! the bus; a `GET` and a `DELETE` forwarded to the owner; a request after the owner was killed,
//! which takes the session over), and the session's own user goes on using it after each.

use crate::support::backplane::SECRET;
use crate::support::http::{Session, principal_from_header, text_of};

use std::net::Ipv4Addr;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tests::stdio::within;
use typed_mcp::prelude::*;
use typed_mcp::transport::http::HttpConfig;
use typed_mcp_redis::Redis;
use typed_mcp_redis::testing::RedisServer;

/// What `ask` asks for.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema, Elicit)]
struct Name {
    /// A name.
    name: String,
}

/// Asks the user for a name and returns it.
#[tool]
async fn ask(ctx: Context) -> Result<String, String> {
    match ctx.elicit::<Name>("Your name?").await {
        Ok(Elicitation::Accept(answer)) => Ok(answer.name),
        other => Err(format!("no name: {other:?}")),
    }
}

/// Adds two integers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// One instance, its users authenticated by their `x-user` header, in a runtime of its own:
/// killing it drops its listener, connections and heartbeat at once, as its process dying would.
struct Node {
    url: String,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Node {
    fn start(redis_url: &str, instance: &'static str) -> Node {
        let redis_url = redis_url.to_owned();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
            let url = runtime.block_on(async {
                let redis = Redis::connect(&redis_url).unwrap();
                let server = Server::builder("t", "1").tools(tools![ask, add]).build().unwrap();
                let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
                let url = format!("http://{}/mcp", listener.local_addr().unwrap());
                let backplane = redis
                    .backplane(url.clone())
                    .instance_id(instance)
                    .heartbeat(Duration::from_millis(200))
                    .secret(SECRET);
                let http = server.streamable_http(HttpConfig::default().backplane(backplane));
                let app = http.router_at("/mcp").layer(axum::middleware::from_fn(principal_from_header));
                tokio::spawn(async move {
                    let _ = axum::serve(listener, app).await;
                });
                url
            });
            Node { url, runtime: Some(runtime) }
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

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Opens a session at `url` as `user`, able to answer form elicitations.
async fn open(url: &str, user: &str) -> Session {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "t", "version": "1"}}});
    let response = within(
        "initialize",
        crate::support::http_client()
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("x-user", user)
            .body(init.to_string())
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let id = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let session = Session::join(url, &id, Some(user));
    let ack = session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(ack.status(), StatusCode::ACCEPTED);
    session
}

/// Asserts that `response` is the "session not found" answer.
async fn assert_not_found(response: reqwest::Response, what: &str) {
    let status = response.status();
    let body = within("the body", response.text()).await.unwrap();
    assert_eq!(status, StatusCode::NOT_FOUND, "{what}: {body}");
    assert!(body.contains("session not found"), "{what}: {body}");
}

/// Asserts that `session` is served, a call on each of `urls`.
async fn assert_served(session: &Session, urls: &[&str], why: &str) {
    for (n, url) in urls.iter().enumerate() {
        let result = session.at(url).call("add", json!({"a": 40, "b": n})).await;
        assert_eq!(text_of(&result), (40 + n).to_string(), "{why}, at {url}: {result}");
    }
}

fn call(id: i64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_user_naming_a_session_finds_it_nowhere_on_any_instance() {
    let redis_server = RedisServer::start();
    let mut a = Node::start(&redis_server.url(), "node-a");
    let b = Node::start(&redis_server.url(), "node-b");
    let c = Node::start(&redis_server.url(), "node-c");
    let (a_url, b_url, c_url) = (a.url.clone(), b.url.clone(), c.url.clone());
    // Alice's session, owned by A; Bob names it everywhere.
    let alice = open(&a_url, "alice").await;
    assert_served(&alice, &[&a_url, &b_url, &c_url], "Alice's session is served where it lands").await;
    let bob = alice.as_user(Some("bob"));

    // A request served where it lands (B and C hold replicas of Alice's session now).
    for url in [&b_url, &c_url, &a_url] {
        assert_not_found(bob.at(url).send(&call(7, "add", json!({"a": 1, "b": 2}))).await, "Bob's call").await;
    }

    // Alice's call on B asks her a question; Bob answers it on C (passed over the bus to B)
    // and on A (the owner, which passes it on too): neither is taken.
    let (_, mut asking) = alice.at(&b_url).start("tools/call", json!({"name": "ask", "arguments": {}})).await;
    let question = asking.message().await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    let forged = json!({"jsonrpc": "2.0", "id": question["id"],
        "result": {"action": "accept", "content": {"name": "bob"}}});
    for url in [&c_url, &a_url, &b_url] {
        assert_not_found(bob.at(url).send(&forged).await, "Bob's answer to Alice's question").await;
    }
    alice.at(&c_url).answer(&question, json!({"action": "accept", "content": {"name": "alice"}})).await;
    let done = asking.message().await;
    assert_eq!(text_of(&done["result"]), "alice", "Alice's own answer is the one taken: {done}");

    // A GET and a DELETE, forwarded to the owner from B and C.
    for url in [&b_url, &c_url] {
        let get = bob.at(url).get().send();
        assert_not_found(within("Bob's GET", get).await.unwrap(), "Bob's GET").await;
        let delete = bob.at(url).with_headers(crate::support::http_client().delete(url.as_str())).send();
        assert_not_found(within("Bob's DELETE", delete).await.unwrap(), "Bob's DELETE").await;
    }
    assert_served(&alice, &[&a_url, &b_url, &c_url], "Alice's session outlives Bob's tries").await;

    // The owner killed: what Bob sends that needs the owner (`logging/setLevel` changes the
    // session's record) may take the session over, and still finds no session of his.
    a.kill();
    let level = json!({"jsonrpc": "2.0", "id": 9, "method": "logging/setLevel", "params": {"level": "error"}});
    for url in [&b_url, &c_url] {
        let response = within("Bob after the owner died", async {
            loop {
                let response = bob.at(url).send(&level).await;
                // The lease runs out within a second: until then the owner may be waited for.
                if response.status() != StatusCode::SERVICE_UNAVAILABLE {
                    return response;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
        .await;
        assert_not_found(response, "Bob's request after the owner died").await;
        assert_not_found(bob.at(url).send(&call(8, "add", json!({"a": 1, "b": 2}))).await, "Bob's call").await;
    }
    let changed = alice.at(&b_url).request("logging/setLevel", json!({"level": "error"})).await;
    assert!(changed.get("error").is_none(), "Alice's own session, taken over, is hers: {changed}");
    assert_served(&alice, &[&b_url, &c_url], "Alice's session is served after the takeover").await;
    drop((b, c));
}
