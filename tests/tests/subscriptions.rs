//! `subscriptions/listen` (MCP 2026-07-28) in raw JSON-RPC, in process (over `Server::serve_io`)
//! and over Streamable HTTP: the acknowledgement first, naming what the server honours; only
//! the opted-in notifications afterwards, each tagged with the subscription id; request-scoped
//! messages kept off the stream; the end of a subscription when the client cancels it, closes
//! its HTTP stream, or the application ends it.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Value, json};
use tests::serve::serve;
use tests::stdio::{LineClient, error_code, within};
use tokio::sync::oneshot;
use typed_mcp::prelude::*;
use typed_mcp::transport::http::HttpConfig;

const VERSION: &str = "2026-07-28";
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Logs while it runs (when the request asks for log messages).
#[tool]
async fn chatty(ctx: Context) -> &'static str {
    ctx.info("working").await;
    "done"
}

/// Adds two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// A resource clients watch.
#[resource("test://watched", mime_type = "text/plain")]
fn watched() -> &'static str {
    "watched"
}

/// Another resource.
#[resource("test://other", mime_type = "text/plain")]
fn other() -> &'static str {
    "other"
}

/// A server whose tool list changes and whose resources may be subscribed to; its prompt list
/// is fixed.
fn server() -> Server {
    Server::builder("listen-tests", "1.0.0")
        .tools(tools![chatty])
        .dynamic_tools()
        .resources(resources![watched, other])
        .resource_subscriptions()
        .build()
        .expect("the test server builds")
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/logLevel": "debug",
    })
}

fn listen_params(filter: Value) -> Value {
    json!({"_meta": meta(), "notifications": filter})
}

/// Waits until the server has `n` subscriptions open.
async fn subscriptions(server: &Server, n: usize) {
    within("the subscription count", async {
        while server.subscription_count() != n {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn the_acknowledgement_comes_first_and_names_what_is_honoured() {
    let server = server();
    let mut c = serve(&server);
    let filter =
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["test://watched"]});
    c.send_request(7, "subscriptions/listen", listen_params(filter)).await;
    let ack = c.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], 7, "{ack}");
    // The prompt list never changes here, so that part is not acknowledged.
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://watched"]}),
        "{ack}"
    );
    assert!(ack.get("id").is_none(), "{ack}");
}

#[tokio::test]
async fn only_opted_in_notifications_arrive_each_tagged() {
    let server = server();
    let mut c = serve(&server);
    let filter = json!({"toolsListChanged": true, "resourceSubscriptions": ["test://watched"]});
    c.send_request("sub-1", "subscriptions/listen", listen_params(filter)).await;
    assert_eq!(c.recv().await["method"], "notifications/subscriptions/acknowledged");
    subscriptions(&server, 1).await;

    // Not asked for: updates of another resource, the resource list.
    assert_eq!(server.notify_resource_updated("test://other").await, 0);
    assert_eq!(server.notify_resource_updated("test://watched").await, 1);
    let updated = c.recv().await;
    assert_eq!(updated["method"], "notifications/resources/updated", "{updated}");
    assert_eq!(updated["params"]["uri"], "test://watched", "{updated}");
    assert_eq!(updated["params"]["_meta"][SUBSCRIPTION_ID], "sub-1", "{updated}");

    for tool in tools![add] {
        server.add_tool(tool).await.expect("the tool list is dynamic");
    }
    let changed = c.recv().await;
    assert_eq!(changed["method"], "notifications/tools/list_changed", "{changed}");
    assert_eq!(changed["params"]["_meta"][SUBSCRIPTION_ID], "sub-1", "{changed}");

    // A request made meanwhile is answered on the same channel, its log message untagged: it
    // belongs to the request, not to the subscription.
    let call = json!({"name": "chatty", "arguments": {}, "_meta": meta()});
    let (response, before) = c.request_collect("tools/call", call).await;
    assert_eq!(response["result"]["content"][0]["text"], "done", "{response}");
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(before[0]["method"], "notifications/message", "{before:?}");
    assert!(before[0]["params"].get("_meta").is_none(), "{before:?}");
}

#[tokio::test]
async fn two_subscriptions_get_what_each_asked_for() {
    let server = server();
    let mut c = serve(&server);
    c.send_request(1, "subscriptions/listen", listen_params(json!({"toolsListChanged": true}))).await;
    c.send_request(2, "subscriptions/listen", listen_params(json!({"resourceSubscriptions": ["test://watched"]})))
        .await;
    for _ in 0..2 {
        assert_eq!(c.recv().await["method"], "notifications/subscriptions/acknowledged");
    }
    subscriptions(&server, 2).await;
    server.notify_resource_updated("test://watched").await;
    let updated = c.recv().await;
    assert_eq!(updated["params"]["_meta"][SUBSCRIPTION_ID], 2, "{updated}");
    server.notify_list_changed("tools").await.expect("the tool list is dynamic");
    let changed = c.recv().await;
    assert_eq!(changed["params"]["_meta"][SUBSCRIPTION_ID], 1, "{changed}");
}

#[tokio::test]
async fn cancelling_ends_the_subscription_without_a_response() {
    let server = server();
    let mut c = serve(&server);
    c.send_request(3, "subscriptions/listen", listen_params(json!({"toolsListChanged": true}))).await;
    assert_eq!(c.recv().await["method"], "notifications/subscriptions/acknowledged");
    subscriptions(&server, 1).await;
    c.notify("notifications/cancelled", json!({"requestId": 3})).await;
    subscriptions(&server, 0).await;
    assert_eq!(server.notify_list_changed("tools").await, Ok(()));
    // Nothing more for the subscription: the next message is the answer to this request.
    let listed = c.result("tools/list", json!({"_meta": meta()})).await;
    assert!(listed["tools"].is_array(), "{listed}");
}

#[tokio::test]
async fn the_application_ends_subscriptions_with_a_closing_response() {
    let server = server();
    let mut c = serve(&server);
    c.send_request(4, "subscriptions/listen", listen_params(json!({"toolsListChanged": true}))).await;
    assert_eq!(c.recv().await["method"], "notifications/subscriptions/acknowledged");
    subscriptions(&server, 1).await;
    assert_eq!(server.end_subscriptions(), 1);
    let closing = c.recv().await;
    assert_eq!(closing["id"], 4, "{closing}");
    assert_eq!(closing["result"]["resultType"], "complete", "{closing}");
    assert_eq!(closing["result"]["_meta"][SUBSCRIPTION_ID], 4, "{closing}");
    subscriptions(&server, 0).await;
}

#[tokio::test]
async fn malformed_or_pointless_subscriptions_are_refused() {
    let mut c = serve(&server());
    let missing = c.request("subscriptions/listen", json!({"_meta": meta()})).await;
    assert_eq!(error_code(&missing), -32602, "`notifications` is required: {missing}");
    let no_meta = c.request("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}})).await;
    assert_ne!(no_meta.get("error"), None, "{no_meta}");

    // A server that has no change to announce has nothing to listen to.
    let fixed = Server::builder("fixed", "1.0.0").tools(tools![add]).build().unwrap();
    let mut c = serve(&fixed);
    let refused = c.request("subscriptions/listen", listen_params(json!({"toolsListChanged": true}))).await;
    assert_eq!(error_code(&refused), -32601, "{refused}");
}

#[tokio::test]
async fn a_2025_session_cannot_listen() {
    let server = server();
    let mut c: LineClient = serve(&server);
    c.initialize("2025-11-25").await;
    let refused = c.request("subscriptions/listen", json!({"notifications": {"toolsListChanged": true}})).await;
    assert_eq!(error_code(&refused), -32601, "{refused}");
}

// ---------------------------------------------------------------------------------------------
// Streamable HTTP
// ---------------------------------------------------------------------------------------------

/// Serves `server` over Streamable HTTP on a free loopback port; stops when dropped.
struct Http {
    url: String,
    client: reqwest::Client,
    _stop: oneshot::Sender<()>,
}

impl Http {
    async fn start(server: &Server) -> Self {
        let app = server.streamable_http(HttpConfig::default()).router_at("/mcp");
        let (url, stop) = crate::support::http::serve_router(app).await;
        let client = reqwest::Client::builder().no_proxy().build().expect("an HTTP client");
        Http { url, client, _stop: stop }
    }

    async fn post(&self, id: u64, method: &str, params: Value) -> reqwest::Response {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut post = self
            .client
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", VERSION)
            .header("mcp-method", method);
        if let Some(name) = params.get("name").and_then(Value::as_str) {
            post = post.header("mcp-name", name);
        }
        within("an HTTP response", post.body(body.to_string()).send()).await.expect("POST")
    }
}

/// Reads JSON-RPC messages from an SSE body as they arrive.
struct Events {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buffer: String,
}

impl Events {
    fn new(response: reqwest::Response) -> Self {
        assert!(
            response.headers()[CONTENT_TYPE].to_str().unwrap().starts_with("text/event-stream"),
            "a subscription is an SSE stream"
        );
        Events { body: response.bytes_stream().map(|chunk| chunk.map(|b| b.to_vec())).boxed(), buffer: String::new() }
    }

    async fn next(&mut self) -> Value {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let data: Vec<&str> = event.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).collect();
                if !data.is_empty() {
                    return serde_json::from_str(&data.join("\n")).expect("an event is JSON");
                }
                continue;
            }
            let chunk = within("an SSE event", self.body.next()).await.expect("the stream is open").expect("a chunk");
            self.buffer.push_str(std::str::from_utf8(&chunk).expect("UTF-8"));
        }
    }
}

#[tokio::test]
async fn over_http_a_subscription_is_the_listen_requests_stream() {
    let server = server();
    let http = Http::start(&server).await;
    let response = http.post(9, "subscriptions/listen", listen_params(json!({"toolsListChanged": true}))).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get("mcp-session-id").is_none(), "no sessions in 2026-07-28");
    let mut events = Events::new(response);
    let ack = events.next().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], 9, "{ack}");
    subscriptions(&server, 1).await;

    // A tool call on another POST: its log message travels on its own response, not here.
    let call = http.post(10, "tools/call", json!({"name": "chatty", "arguments": {}, "_meta": meta()})).await;
    let mut call = Events::new(call);
    let log = call.next().await;
    assert_eq!(log["method"], "notifications/message", "{log}");
    assert_eq!(call.next().await["id"], 10);

    for tool in tools![add] {
        server.add_tool(tool).await.expect("the tool list is dynamic");
    }
    let changed = events.next().await;
    assert_eq!(changed["method"], "notifications/tools/list_changed", "only what was asked for: {changed}");
    assert_eq!(changed["params"]["_meta"][SUBSCRIPTION_ID], 9, "{changed}");

    // Closing the stream ends the subscription.
    drop(events);
    subscriptions(&server, 0).await;
}

#[tokio::test]
async fn over_http_the_application_ends_a_subscription_with_its_response() {
    let server = server();
    let http = Http::start(&server).await;
    let response = http.post(5, "subscriptions/listen", listen_params(json!({"toolsListChanged": true}))).await;
    let mut events = Events::new(response);
    assert_eq!(events.next().await["method"], "notifications/subscriptions/acknowledged");
    subscriptions(&server, 1).await;
    server.end_subscriptions();
    let closing = events.next().await;
    assert_eq!(closing["id"], 5, "{closing}");
    assert_eq!(closing["result"]["_meta"][SUBSCRIPTION_ID], 5, "{closing}");
}
