//! The Streamable HTTP transport (MCP 2025-11-25) in process, driven by a plain HTTP client:
//! sessions, header checks, where each server message travels (the POST's own SSE stream, or
//! the session's GET stream), resumption with `Last-Event-ID`, DNS-rebinding protection,
//! sessionless serving, idle expiry, principals, and that nothing is kept once requests finish.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::support::http::principal_from_header;
use futures_util::{Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HOST, ORIGIN};
use reqwest::{RequestBuilder, Response, StatusCode};
use serde_json::{Value, json};
use tests::stdio::within;
use tokio::sync::oneshot;
use typed_mcp::prelude::*;
use typed_mcp::transport::http::{HttpConfig, MemoryEventStore, StreamableHttp};

const PROTOCOL: &str = "2025-11-25";
const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// Adds two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Reports progress and logs, waits `pause_ms`, reports progress again, then answers.
#[tool]
async fn chatty(ctx: Context, pause_ms: u64) -> Result<String, String> {
    ctx.progress(1.0, Some(2.0), Some("half way")).await.map_err(|e| e.to_string())?;
    ctx.peer()
        .notify("notifications/message", &json!({"level": "info", "data": "working on it"}))
        .await
        .map_err(|e| e.to_string())?;
    tokio::time::sleep(Duration::from_millis(pause_ms)).await;
    ctx.progress(2.0, Some(2.0), None).await.map_err(|e| e.to_string())?;
    Ok("done".into())
}

/// Asks the user for a word.
#[tool]
async fn ask(ctx: Context) -> String {
    match ctx.elicit_value::<String>("Say a word").await {
        Ok(Elicitation::Accept(word)) => format!("got {word}"),
        Ok(Elicitation::Decline) => "declined".into(),
        Ok(Elicitation::Cancel) => "cancelled".into(),
        Err(ElicitError::NotSupported { mode }) => format!("not supported: {mode}"),
        Err(e) => format!("error: {e}"),
    }
}

/// Creates a URL-mode elicitation id owned by this session.
#[tool]
fn start_flow(ctx: Context) -> String {
    ctx.new_url_elicitation_id()
}

/// Sleeps for `ms` milliseconds, sending nothing meanwhile.
#[tool]
async fn nap(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    "rested".into()
}

/// Never answers: waits until cancelled.
#[tool]
async fn wait_forever(ctx: Context) -> String {
    ctx.cancelled().await;
    "cancelled".into()
}

/// Logs a message whose JSON text spans several lines, then answers.
#[tool]
async fn raw_log(ctx: Context) -> Result<String, String> {
    let params =
        serde_json::value::RawValue::from_string("{\n  \"level\": \"info\",\r\n  \"data\": \"two\\nlines\"\n}".into())
            .map_err(|e| e.to_string())?;
    ctx.peer().notify("notifications/message", &params).await.map_err(|e| e.to_string())?;
    Ok("logged".into())
}

/// Returns the principal of the session.
#[tool]
fn whoami(ctx: Context) -> String {
    ctx.principal().unwrap_or("nobody").to_owned()
}

fn server() -> Server {
    Server::builder("http-tests", "1.0.0")
        .tools(tools![add, chatty, ask, start_flow, nap, wait_forever, whoami, raw_log])
        .build()
        .expect("the test server builds")
}

/// A server listening on `127.0.0.1:0`, its endpoint at `/mcp`.
struct Harness {
    server: Server,
    http: StreamableHttp,
    port: u16,
    url: String,
    client: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Harness {
    async fn start(config: HttpConfig) -> Self {
        let server = server();
        let http = server.streamable_http(config);
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.expect("bind 127.0.0.1:0");
        let port = listener.local_addr().unwrap().port();
        let (stop, stopped) = oneshot::channel::<()>();
        let serving = http.clone();
        tokio::spawn(async move {
            serving
                .serve(listener, async {
                    let _ = stopped.await;
                })
                .await
        });
        Self::new(server, http, port, stop)
    }

    /// Serves `router(endpoint)` instead of the plain endpoint (to add layers).
    async fn start_with(config: HttpConfig, router: impl FnOnce(axum::Router) -> axum::Router) -> Self {
        let server = server();
        let http = server.streamable_http(config);
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.expect("bind 127.0.0.1:0");
        let port = listener.local_addr().unwrap().port();
        let (stop, stopped) = oneshot::channel::<()>();
        let app = router(http.router_at("/mcp"));
        tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
        });
        Self::new(server, http, port, stop)
    }

    fn new(server: Server, http: StreamableHttp, port: u16, stop: oneshot::Sender<()>) -> Self {
        let client = reqwest::Client::builder().no_proxy().build().expect("an HTTP client");
        Harness { server, http, port, url: format!("http://127.0.0.1:{port}/mcp"), client, stop: Some(stop) }
    }

    /// A POST of `body` with the headers every client message needs, and no session.
    fn post(&self, body: &Value) -> RequestBuilder {
        self.client
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, ACCEPT_BOTH)
            .body(body.to_string())
    }

    async fn initialize_as(&self, capabilities: Value, user: Option<&str>) -> Response {
        let mut post = self.post(&initialize_request(capabilities));
        if let Some(user) = user {
            post = post.header("x-user", user);
        }
        within("the initialize response", post.send()).await.expect("POST initialize")
    }

    /// Opens a session: `initialize`, then `notifications/initialized`.
    async fn session(&self, capabilities: Value) -> Session<'_> {
        self.session_as(capabilities, None).await
    }

    async fn session_as(&self, capabilities: Value, user: Option<&str>) -> Session<'_> {
        let response = self.initialize_as(capabilities, user).await;
        assert_eq!(response.status(), StatusCode::OK, "initialize failed");
        let id = header(&response, "mcp-session-id").expect("initialize answers with Mcp-Session-Id");
        let session = Session { h: self, id, user: user.map(str::to_owned) };
        let body: Value = response.json_body().await;
        assert_eq!(body["result"]["protocolVersion"], PROTOCOL, "{body}");
        let ack = session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        assert_eq!(ack.status(), StatusCode::ACCEPTED);
        session
    }

    /// Waits until the endpoint has `n` sessions.
    async fn until_sessions(&self, n: usize) {
        within(&format!("{n} sessions"), async {
            while self.http.session_count() != n {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
    }
}

fn initialize_request(capabilities: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}},
    })
}

fn form_capable() -> Value {
    json!({"elicitation": {"form": {}}})
}

/// Sets header `name` to `value`, replacing what the builder had (`RequestBuilder::header` appends).
fn replace(builder: RequestBuilder, name: &str, value: &str) -> RequestBuilder {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::HeaderName::from_bytes(name.as_bytes()).expect("a header name"),
        value.parse().expect("a header value"),
    );
    builder.headers(headers)
}

fn header(response: &Response, name: &str) -> Option<String> {
    response.headers().get(name).map(|v| v.to_str().expect("a visible ASCII header").to_owned())
}

fn content_type(response: &Response) -> String {
    header(response, "content-type").unwrap_or_default()
}

trait JsonBody {
    async fn json_body(self) -> Value;
}

impl JsonBody for Response {
    async fn json_body(self) -> Value {
        let status = self.status();
        let text = within("a response body", self.text()).await.expect("read the body");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{status}: body is not JSON ({e}): {text:?}"))
    }
}

/// One open session.
struct Session<'h> {
    h: &'h Harness,
    id: String,
    user: Option<String>,
}

impl Session<'_> {
    fn with_headers(&self, builder: RequestBuilder) -> RequestBuilder {
        let builder = builder.header("mcp-session-id", &self.id).header("mcp-protocol-version", PROTOCOL);
        match &self.user {
            Some(user) => builder.header("x-user", user),
            None => builder,
        }
    }

    fn post(&self, body: &Value) -> RequestBuilder {
        self.with_headers(self.h.post(body))
    }

    fn get(&self) -> RequestBuilder {
        self.with_headers(self.h.client.get(&self.h.url).header(ACCEPT, "text/event-stream"))
    }

    fn delete(&self) -> RequestBuilder {
        self.with_headers(self.h.client.delete(&self.h.url))
    }

    async fn send(&self, body: &Value) -> Response {
        within("a POST response", self.post(body).send()).await.expect("POST")
    }

    /// Calls `tool` and returns the HTTP response (JSON or SSE).
    async fn call(&self, id: i64, tool: &str, arguments: Value) -> Response {
        self.send(&tool_call(id, tool, arguments)).await
    }

    /// Calls a tool whose response comes as plain JSON and returns its text.
    async fn call_text(&self, id: i64, tool: &str, arguments: Value) -> String {
        let response = self.call(id, tool, arguments).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(content_type(&response), "application/json");
        text_of(&response.json_body().await)
    }

    async fn answer(&self, request: &Value, result: Value) {
        let response = self.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": result})).await;
        assert_eq!(response.status(), StatusCode::ACCEPTED, "a response POSTed by the client gets 202");
    }
}

fn tool_call(id: i64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

fn text_of(response: &Value) -> String {
    response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {response}")).to_owned()
}

/// One SSE event.
#[derive(Debug)]
struct Event {
    id: Option<String>,
    data: String,
}

/// The events of an SSE response, read as they arrive.
struct Sse {
    body: Pin<Box<dyn Stream<Item = reqwest::Result<axum::body::Bytes>> + Send>>,
    buffer: String,
}

impl Sse {
    fn new(response: Response) -> Self {
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(content_type(&response), "text/event-stream", "an SSE stream was expected");
        Sse { body: Box::pin(response.bytes_stream()), buffer: String::new() }
    }

    /// The next event with data (comments and keep-alives are skipped); `None` when the
    /// stream ends.
    async fn next(&mut self) -> Option<Event> {
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut id = None;
                let mut data: Option<String> = None;
                for line in block.lines() {
                    let (field, value) = line.split_once(':').unwrap_or((line, ""));
                    let value = value.strip_prefix(' ').unwrap_or(value);
                    match field {
                        "id" => id = Some(value.to_owned()),
                        "data" => match &mut data {
                            Some(d) => {
                                d.push('\n');
                                d.push_str(value);
                            }
                            None => data = Some(value.to_owned()),
                        },
                        _ => {}
                    }
                }
                if let Some(data) = data.filter(|d| !d.is_empty()) {
                    return Some(Event { id, data });
                }
            }
            match self.body.next().await {
                Some(Ok(chunk)) => self.buffer.push_str(std::str::from_utf8(chunk.as_ref()).expect("UTF-8 SSE")),
                Some(Err(e)) => panic!("the SSE stream failed: {e}"),
                None => return None,
            }
        }
    }

    /// The next message and its event id, failing the test if none arrives soon.
    async fn message(&mut self) -> (Option<String>, Value) {
        let event = within("an SSE event", self.next()).await.expect("the SSE stream ended early");
        let message = serde_json::from_str(&event.data).unwrap_or_else(|e| panic!("not JSON ({e}): {}", event.data));
        (event.id, message)
    }

    /// Asserts the stream ends without another event.
    async fn ends(&mut self) {
        if let Some(event) = within("the end of the SSE stream", self.next()).await {
            panic!("the stream should have ended, but sent {event:?}");
        }
    }
}

fn stream_of(event_id: &str) -> (u64, u64) {
    let (stream, seq) =
        event_id.split_once('-').unwrap_or_else(|| panic!("event id {event_id:?} is not <stream>-<seq>"));
    (stream.parse().expect("a stream number"), seq.parse().expect("a sequence number"))
}

#[tokio::test]
async fn initialize_assigns_a_distinct_random_session_id() {
    let h = Harness::start(HttpConfig::default()).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let response = h.initialize_as(json!({}), None).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(content_type(&response), "application/json");
        let id = header(&response, "mcp-session-id").expect("Mcp-Session-Id");
        assert!(id.len() >= 32 && id.bytes().all(|b| b.is_ascii_hexdigit()), "128 random bits as hex: {id}");
        let body = response.json_body().await;
        assert_eq!(body["id"], 0);
        assert_eq!(body["result"]["serverInfo"]["name"], "http-tests");
        ids.push(id);
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "every session gets its own id");
    assert_eq!(h.http.session_count(), 3);
}

#[tokio::test]
async fn requests_need_a_known_session_id() {
    let h = Harness::start(HttpConfig::default()).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let missing = h.post(&list).header("mcp-protocol-version", PROTOCOL).send().await.unwrap();
    assert_eq!(missing.status(), StatusCode::BAD_REQUEST);
    let unknown = h.post(&list).header("mcp-session-id", "0123456789abcdef0123456789abcdef").send().await.unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    let get = h.client.get(&h.url).header(ACCEPT, "text/event-stream").send().await.unwrap();
    assert_eq!(get.status(), StatusCode::BAD_REQUEST);
    let delete = h.client.delete(&h.url).header("mcp-session-id", "nope").send().await.unwrap();
    assert_eq!(delete.status(), StatusCode::NOT_FOUND);

    let session = h.session(json!({})).await;
    let listed = session.send(&list).await;
    assert_eq!(listed.status(), StatusCode::OK);
    assert_eq!(listed.json_body().await["result"]["tools"].as_array().map(Vec::len), Some(8));
}

#[tokio::test]
async fn an_unsupported_protocol_version_header_is_refused_on_every_method() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(json!({})).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let post = replace(session.post(&list), "mcp-protocol-version", "1999-01-01").send().await.unwrap();
    assert_eq!(post.status(), StatusCode::BAD_REQUEST);
    let get = replace(session.get(), "mcp-protocol-version", "1999-01-01").send().await.unwrap();
    assert_eq!(get.status(), StatusCode::BAD_REQUEST, "GET checks MCP-Protocol-Version too");
    let delete = replace(session.delete(), "mcp-protocol-version", "1999-01-01").send().await.unwrap();
    assert_eq!(delete.status(), StatusCode::BAD_REQUEST, "DELETE checks MCP-Protocol-Version too");
    assert_eq!(h.http.session_count(), 1, "a refused DELETE ends nothing");
    // A version the server supports, though not the negotiated one, is accepted, and so is none.
    let older = replace(session.post(&list), "mcp-protocol-version", "2025-06-18").send().await.unwrap();
    assert_eq!(older.status(), StatusCode::OK);
    let unversioned = h.post(&list).header("mcp-session-id", &session.id).send().await.unwrap();
    assert_eq!(unversioned.status(), StatusCode::OK);
}

#[tokio::test]
async fn content_type_and_accept_are_checked() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(json!({})).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let text = replace(session.post(&list), "content-type", "text/plain").send().await.unwrap();
    assert_eq!(text.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let json_only = replace(session.post(&list), "accept", "application/json").send().await.unwrap();
    assert_eq!(json_only.status(), StatusCode::NOT_ACCEPTABLE);
    let sse_only = replace(session.post(&list), "accept", "text/event-stream").send().await.unwrap();
    assert_eq!(sse_only.status(), StatusCode::NOT_ACCEPTABLE);
    let get_json = replace(session.get(), "accept", "application/json").send().await.unwrap();
    assert_eq!(get_json.status(), StatusCode::NOT_ACCEPTABLE);
    let with_charset =
        replace(session.post(&list), "content-type", "application/json; charset=utf-8").send().await.unwrap();
    assert_eq!(with_charset.status(), StatusCode::OK);
    // Accept may come as several header lines.
    let split_accept = session
        .with_headers(h.client.post(&h.url))
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json")
        .header(ACCEPT, "text/event-stream")
        .body(list.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(split_accept.status(), StatusCode::OK, "Accept split over two header lines");
    let put = session.with_headers(h.client.put(&h.url)).send().await.unwrap();
    assert_eq!(put.status(), StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn notifications_and_responses_are_accepted_with_202() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(json!({})).await;
    let notification = session.send(&json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})).await;
    assert_eq!(notification.status(), StatusCode::ACCEPTED);
    assert!(within("the body", notification.bytes()).await.unwrap().is_empty(), "202 has no body");
    let stray = session.send(&json!({"jsonrpc": "2.0", "id": 77, "result": {}})).await;
    assert_eq!(stray.status(), StatusCode::ACCEPTED);
}

#[tokio::test]
async fn a_tool_that_sends_nothing_else_is_answered_with_json() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(json!({})).await;
    assert_eq!(session.call_text(1, "add", json!({"a": 2, "b": 3})).await, "5");
    // Even when it takes a while.
    assert_eq!(session.call_text(2, "nap", json!({"ms": 50})).await, "rested");
}

#[tokio::test]
async fn progress_and_logs_travel_on_the_posts_stream_before_the_response() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(json!({})).await;
    let mut call = tool_call(5, "chatty", json!({"pause_ms": 20}));
    call["params"]["_meta"] = json!({"progressToken": "p1"});
    let mut sse = Sse::new(session.send(&call).await);
    let mut ids = Vec::new();
    let (id, first) = sse.message().await;
    ids.push(id.expect("events carry ids"));
    assert_eq!(first["method"], "notifications/progress");
    assert_eq!(first["params"]["progressToken"], "p1");
    assert_eq!(first["params"]["progress"], 1.0);
    let (id, log) = sse.message().await;
    ids.push(id.expect("events carry ids"));
    assert_eq!(log["method"], "notifications/message");
    assert_eq!(log["params"]["data"], "working on it");
    let (id, second) = sse.message().await;
    ids.push(id.expect("events carry ids"));
    assert_eq!(second["params"]["progress"], 2.0);
    let (id, response) = sse.message().await;
    ids.push(id.expect("events carry ids"));
    assert_eq!(response["id"], 5);
    assert_eq!(text_of(&response), "done");
    sse.ends().await;

    let parsed: Vec<(u64, u64)> = ids.iter().map(|i| stream_of(i)).collect();
    let stream = parsed[0].0;
    assert_ne!(stream, 0, "stream 0 is the GET stream");
    assert_eq!(parsed, vec![(stream, 1), (stream, 2), (stream, 3), (stream, 4)]);

    // Another request gets another stream.
    let mut sse = Sse::new(session.send(&tool_call(6, "chatty", json!({"pause_ms": 0}))).await);
    let (id, _) = sse.message().await;
    let (other, seq) = stream_of(&id.unwrap());
    assert_ne!(other, stream);
    assert_eq!(seq, 1);
}

#[tokio::test]
async fn a_message_whose_json_spans_lines_is_framed_as_one_event() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(json!({})).await;
    let mut sse = Sse::new(session.call(1, "raw_log", json!({})).await);
    let (_, log) = sse.message().await;
    assert_eq!(log["method"], "notifications/message");
    assert_eq!(log["params"]["data"], "two\nlines");
    assert_eq!(text_of(&sse.message().await.1), "logged");
    sse.ends().await;
}

#[tokio::test]
async fn an_elicitation_travels_on_the_posts_stream_and_the_answer_on_a_new_post() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(form_capable()).await;
    let mut sse = Sse::new(session.call(3, "ask", json!({})).await);
    let (_, request) = sse.message().await;
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Say a word");
    session.answer(&request, json!({"action": "accept", "content": {"value": "blue"}})).await;
    let (_, response) = sse.message().await;
    assert_eq!(response["id"], 3);
    assert_eq!(text_of(&response), "got blue");
    sse.ends().await;

    // A client without the capability is never asked.
    let plain = h.session(json!({})).await;
    assert_eq!(plain.call_text(4, "ask", json!({})).await, "not supported: form");
}

#[tokio::test]
async fn the_get_stream_carries_unrelated_messages_and_only_one_is_open() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(json!({"elicitation": {"form": {}, "url": {}}})).await;
    let mut stream = Sse::new(within("GET", session.get().send()).await.unwrap());
    let second = within("a second GET", session.get().send()).await.unwrap();
    assert_eq!(second.status(), StatusCode::CONFLICT);

    let flow = session.call_text(1, "start_flow", json!({})).await;
    h.server.url_elicitations().complete(&flow).await.expect("the flow completes");
    let (id, note) = stream.message().await;
    assert_eq!(note["method"], "notifications/elicitation/complete");
    assert_eq!(note["params"]["elicitationId"], flow);
    assert_eq!(stream_of(&id.expect("an event id")), (0, 1));

    // Once the first GET is gone, another may attach.
    drop(stream);
    let again = within("a GET after the first closed", async {
        loop {
            let r = session.get().send().await.unwrap();
            if r.status() != StatusCode::CONFLICT {
                return r;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert_eq!(again.status(), StatusCode::OK);
}

#[tokio::test]
async fn an_idle_stream_gets_keep_alive_comments() {
    let h = Harness::start(HttpConfig::default().keep_alive(Duration::from_millis(50))).await;
    let session = h.session(json!({})).await;
    let response = within("GET", session.get().send()).await.unwrap();
    assert_eq!(content_type(&response), "text/event-stream");
    assert_eq!(header(&response, "cache-control").as_deref(), Some("no-cache"));
    let mut body = Box::pin(response.bytes_stream());
    let mut seen = String::new();
    within("a keep-alive comment", async {
        while !seen.contains(": keep-alive\n\n") {
            let chunk = body.next().await.expect("the stream stays open").expect("a chunk");
            seen.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    })
    .await;
}

#[tokio::test]
async fn delete_ends_the_session() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(json!({})).await;
    let other = h.session(json!({})).await;
    let mut stream = Sse::new(within("GET", session.get().send()).await.unwrap());
    let deleted = within("DELETE", session.delete().send()).await.unwrap();
    assert!(deleted.status().is_success(), "DELETE: {}", deleted.status());
    stream.ends().await;
    assert_eq!(h.http.session_count(), 1);
    let after = session.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await;
    assert_eq!(after.status(), StatusCode::NOT_FOUND);
    assert_eq!(within("DELETE again", session.delete().send()).await.unwrap().status(), StatusCode::NOT_FOUND);
    assert_eq!(other.call_text(1, "add", json!({"a": 1, "b": 1})).await, "2");
}

#[tokio::test]
async fn a_dropped_stream_resumes_with_last_event_id_during_an_elicitation() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(form_capable()).await;
    let mut sse = Sse::new(session.call(8, "ask", json!({})).await);
    let (event_id, request) = sse.message().await;
    let event_id = event_id.expect("the elicitation has an event id");
    assert_eq!(request["method"], "elicitation/create");
    drop(sse);

    session.answer(&request, json!({"action": "accept", "content": {"value": "green"}})).await;
    let resumed = within("the resuming GET", session.get().header("last-event-id", &event_id).send()).await.unwrap();
    let mut sse = Sse::new(resumed);
    let (id, response) = sse.message().await;
    assert_eq!(response["id"], 8);
    assert_eq!(text_of(&response), "got green");
    let (stream, seq) = stream_of(&id.expect("an event id"));
    assert_eq!((stream, seq), (stream_of(&event_id).0, 2), "the same stream, continued");
    sse.ends().await;

    // The stream is over: resuming it again replays what came after the given event.
    let again = within("another resuming GET", session.get().header("last-event-id", &event_id).send()).await.unwrap();
    let mut sse = Sse::new(again);
    assert_eq!(text_of(&sse.message().await.1), "got green");
    sse.ends().await;
    let garbage = within("a bad Last-Event-ID", session.get().header("last-event-id", "x").send()).await.unwrap();
    assert_eq!(garbage.status(), StatusCode::BAD_REQUEST);
    let unknown = within("an unknown stream", session.get().header("last-event-id", "999-1").send()).await.unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn plain_json_answers_do_not_push_a_streams_events_out_of_the_store() {
    let store = Arc::new(MemoryEventStore::new(4));
    let h = Harness::start(HttpConfig::default().event_store(store)).await;
    let session = h.session(json!({})).await;
    let mut call = tool_call(1, "chatty", json!({"pause_ms": 600}));
    call["params"]["_meta"] = json!({"progressToken": "p"});
    let mut sse = Sse::new(session.send(&call).await);
    let (seen, _) = sse.message().await;
    drop(sse);
    // Quick requests answered with plain JSON while the stream is away: nobody can resume
    // them, so they must not take the place of the stream's events.
    for id in 10..16 {
        assert_eq!(session.call_text(id, "add", json!({"a": id, "b": 0})).await, id.to_string());
    }
    let resumed =
        within("the resuming GET", session.get().header("last-event-id", seen.unwrap()).send()).await.unwrap();
    let mut sse = Sse::new(resumed);
    assert_eq!(sse.message().await.1["method"], "notifications/message", "the event after the last one seen");
    assert_eq!(sse.message().await.1["params"]["progress"], 2.0);
    assert_eq!(text_of(&sse.message().await.1), "done");
    sse.ends().await;
}

#[tokio::test]
async fn resuming_after_events_were_dropped_is_refused_not_silently_lossy() {
    let store = Arc::new(MemoryEventStore::new(3));
    let h = Harness::start(HttpConfig::default().event_store(store)).await;
    let session = h.session(json!({})).await;
    let mut call = tool_call(1, "chatty", json!({"pause_ms": 600}));
    call["params"]["_meta"] = json!({"progressToken": "p"});
    let mut sse = Sse::new(session.send(&call).await);
    let (seen, _) = sse.message().await;
    drop(sse);
    // Two other streams push the first one's events out of the store.
    for id in 2..4 {
        let mut other = Sse::new(session.call(id, "chatty", json!({"pause_ms": 0})).await);
        while other.next().await.is_some() {}
    }
    let resumed =
        within("the resuming GET", session.get().header("last-event-id", seen.unwrap()).send()).await.unwrap();
    assert_eq!(resumed.status(), StatusCode::NOT_FOUND, "the log message after the last event seen is gone");
}

#[tokio::test]
async fn a_stream_resumes_while_the_request_is_still_running() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(form_capable()).await;
    let mut sse = Sse::new(session.call(9, "ask", json!({})).await);
    let (event_id, request) = sse.message().await;
    drop(sse);
    let resumed =
        within("the resuming GET", session.get().header("last-event-id", event_id.unwrap()).send()).await.unwrap();
    let mut sse = Sse::new(resumed);
    session.answer(&request, json!({"action": "decline"})).await;
    let (_, response) = sse.message().await;
    assert_eq!(text_of(&response), "declined");
    sse.ends().await;
}

#[tokio::test]
async fn concurrent_sessions_each_get_their_own_answers() {
    let h = Harness::start(HttpConfig::default()).await;
    let alice = h.session(form_capable()).await;
    let bob = h.session(form_capable()).await;
    let mut alice_sse = Sse::new(alice.call(1, "ask", json!({})).await);
    let mut bob_sse = Sse::new(bob.call(1, "ask", json!({})).await);
    let (_, alice_request) = alice_sse.message().await;
    let (_, bob_request) = bob_sse.message().await;
    // Both sessions number their requests alike; the session id keeps them apart.
    assert_eq!(alice_request["id"], bob_request["id"]);
    bob.answer(&bob_request, json!({"action": "accept", "content": {"value": "bob's"}})).await;
    alice.answer(&alice_request, json!({"action": "accept", "content": {"value": "alice's"}})).await;
    assert_eq!(text_of(&bob_sse.message().await.1), "got bob's");
    assert_eq!(text_of(&alice_sse.message().await.1), "got alice's");
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused() {
    let h = Harness::start(HttpConfig::default()).await;
    let init = initialize_request(json!({}));
    let evil_host = h.post(&init).header(HOST, "evil.example").send().await.unwrap();
    assert_eq!(evil_host.status(), StatusCode::FORBIDDEN);
    let evil_host_port = h.post(&init).header(HOST, format!("evil.example:{}", h.port)).send().await.unwrap();
    assert_eq!(evil_host_port.status(), StatusCode::FORBIDDEN);
    let evil_origin = h.post(&init).header(ORIGIN, "http://evil.example").send().await.unwrap();
    assert_eq!(evil_origin.status(), StatusCode::FORBIDDEN);
    let evil_origin_port =
        h.post(&init).header(ORIGIN, format!("http://evil.example:{}", h.port)).send().await.unwrap();
    assert_eq!(evil_origin_port.status(), StatusCode::FORBIDDEN);
    assert_eq!(h.http.session_count(), 0, "a refused request creates nothing");

    for host in [format!("localhost:{}", h.port), format!("127.0.0.1:{}", h.port), format!("[::1]:{}", h.port)] {
        let ok = h.post(&init).header(HOST, &host).send().await.unwrap();
        assert_eq!(ok.status(), StatusCode::OK, "Host: {host}");
    }
    let local_origin = h.post(&init).header(ORIGIN, format!("http://localhost:{}", h.port)).send().await.unwrap();
    assert_eq!(local_origin.status(), StatusCode::OK);

    // A session's later requests are checked too.
    let session = h.session(json!({})).await;
    let get = session.get().header(ORIGIN, "https://evil.example").send().await.unwrap();
    assert_eq!(get.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn sessionless_mode_serves_each_post_on_its_own() {
    let h = Harness::start(HttpConfig::default().sessionless(true)).await;
    let response = h.post(&tool_call(1, "add", json!({"a": 20, "b": 22}))).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(header(&response, "mcp-session-id").is_none(), "no session ids when sessionless");
    assert_eq!(text_of(&response.json_body().await), "42");

    let init = h.post(&initialize_request(form_capable())).send().await.unwrap();
    assert_eq!(init.status(), StatusCode::OK);
    assert!(header(&init, "mcp-session-id").is_none());

    // Nobody could answer an elicitation: the client declared nothing to this session.
    let asked = h.post(&tool_call(2, "ask", json!({}))).send().await.unwrap();
    assert_eq!(text_of(&asked.json_body().await), "not supported: form");

    // Messages sent while handling the request still come on its stream, then the response.
    let mut call = tool_call(3, "chatty", json!({"pause_ms": 100}));
    call["params"]["_meta"] = json!({"progressToken": 7});
    let mut sse = Sse::new(h.post(&call).send().await.unwrap());
    assert_eq!(sse.message().await.1["method"], "notifications/progress");
    assert_eq!(sse.message().await.1["method"], "notifications/message");
    assert_eq!(sse.message().await.1["params"]["progress"], 2.0);
    let (_, response) = sse.message().await;
    assert_eq!(text_of(&response), "done");
    sse.ends().await;

    let get = h.client.get(&h.url).header(ACCEPT, "text/event-stream").send().await.unwrap();
    assert_eq!(get.status(), StatusCode::METHOD_NOT_ALLOWED);
    let delete = h.client.delete(&h.url).send().await.unwrap();
    assert_eq!(delete.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(h.http.session_count(), 0);
}

#[tokio::test]
async fn idle_sessions_expire_but_not_while_an_elicitation_is_pending() {
    let h = Harness::start(HttpConfig::default().idle_timeout(Duration::from_millis(200))).await;
    let waiting = h.session(form_capable()).await;
    let mut sse = Sse::new(waiting.call(1, "ask", json!({})).await);
    let (_, request) = sse.message().await;
    let _idle = h.session(json!({})).await;
    assert_eq!(h.http.session_count(), 2);
    h.until_sessions(1).await;
    // Well past the timeout, the session with the elicitation is still there.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(h.http.session_count(), 1);
    waiting.answer(&request, json!({"action": "accept", "content": {"value": "late"}})).await;
    assert_eq!(text_of(&sse.message().await.1), "got late");
    h.until_sessions(0).await;
    let gone = waiting.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn idleness_counts_from_the_end_of_the_last_request() {
    // Idle sessions are looked for every quarter of the timeout (750 ms here). The timeout is
    // long enough that a busy machine's delay between `initialize` and the call cannot expire
    // the session before the call starts.
    let h = Harness::start(HttpConfig::default().idle_timeout(Duration::from_millis(3000))).await;
    let session = h.session(json!({})).await;
    // The request lasts longer than the idle timeout...
    assert_eq!(session.call_text(1, "nap", json!({"ms": 4000})).await, "rested");
    // ...and the session must not expire the moment it ends (the sweep runs at least once).
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let list = session.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    assert_eq!(list.status(), StatusCode::OK, "the session expired right after a long request");
}

#[tokio::test]
async fn a_principal_binds_the_session() {
    let h = Harness::start_with(HttpConfig::default(), |router| {
        router.layer(axum::middleware::from_fn(principal_from_header))
    })
    .await;
    let alice = h.session_as(json!({}), Some("alice")).await;
    assert_eq!(alice.call_text(1, "whoami", json!({})).await, "alice");

    let mallory = Session { h: &h, id: alice.id.clone(), user: Some("mallory".into()) };
    let stolen = mallory.send(&tool_call(2, "whoami", json!({}))).await;
    assert_eq!(stolen.status(), StatusCode::NOT_FOUND, "another principal cannot use the session");
    assert_eq!(within("GET", mallory.get().send()).await.unwrap().status(), StatusCode::NOT_FOUND);
    assert_eq!(within("DELETE", mallory.delete().send()).await.unwrap().status(), StatusCode::NOT_FOUND);
    let anonymous = Session { h: &h, id: alice.id.clone(), user: None };
    assert_eq!(anonymous.send(&tool_call(3, "whoami", json!({}))).await.status(), StatusCode::NOT_FOUND);

    assert_eq!(alice.call_text(4, "whoami", json!({})).await, "alice", "the owner still can");
}

#[tokio::test]
async fn an_oversized_body_is_refused_with_413() {
    let h = Harness::start(HttpConfig::default().max_body(1024)).await;
    let session = h.session(json!({})).await;
    let big = tool_call(1, "add", json!({"a": 1, "b": 2, "padding": "x".repeat(4096)}));
    let response = session.send(&big).await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    // The rest of the body is not read, so the connection cannot carry another request: say so.
    assert_eq!(header(&response, "connection").as_deref(), Some("close"));
    assert_eq!(session.call_text(2, "add", json!({"a": 1, "b": 2})).await, "3", "the session is unharmed");
}

#[tokio::test]
async fn malformed_json_is_a_400_with_a_parse_error() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(json!({})).await;
    let response = within(
        "POST",
        session
            .with_headers(h.client.post(&h.url))
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, ACCEPT_BOTH)
            .body("{\"jsonrpc\": \"2.0\", \"id\": 1,")
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(content_type(&response), "application/json");
    let body = response.json_body().await;
    assert_eq!(body["error"]["code"], -32700, "{body}");
    assert_eq!(body["jsonrpc"], "2.0");
}

#[tokio::test]
async fn a_cancelled_request_ends_its_post_and_leaves_nothing_behind() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(json!({})).await;
    let pending = tokio::spawn({
        let post = session.post(&tool_call(11, "wait_forever", json!({})));
        async move { post.send().await }
    });
    within("the request to be in flight", async {
        while h.http.request_streams() != 1 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 11}});
    assert_eq!(session.send(&cancel).await.status(), StatusCode::ACCEPTED);
    let response = within("the cancelled POST to end", pending).await.unwrap().unwrap();
    // No JSON-RPC response is sent for a cancelled request; the HTTP exchange still ends, as
    // an SSE stream with nothing on it.
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(content_type(&response), "text/event-stream");
    let body = within("its body", response.text()).await.unwrap();
    assert!(!body.contains("\"result\""), "a cancelled request got a result: {body}");
    within("no request state left", async {
        while h.http.request_streams() != 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    // The id may be used again.
    assert_eq!(session.call_text(11, "add", json!({"a": 1, "b": 1})).await, "2");
}

#[tokio::test]
async fn cancelling_a_request_mid_stream_ends_its_stream() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(form_capable()).await;
    let mut sse = Sse::new(session.call(12, "ask", json!({})).await);
    let (_, request) = sse.message().await;
    assert_eq!(request["method"], "elicitation/create");
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12}});
    assert_eq!(session.send(&cancel).await.status(), StatusCode::ACCEPTED);
    // The server withdraws its own pending request on the same stream, then the stream ends
    // without a response.
    let (_, withdrawn) = sse.message().await;
    assert_eq!(withdrawn["method"], "notifications/cancelled");
    assert_eq!(withdrawn["params"]["requestId"], request["id"]);
    sse.ends().await;
    assert_eq!(h.http.request_streams(), 0);
}

#[tokio::test]
async fn finished_requests_leave_no_per_request_state() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(form_capable()).await;
    let _get = Sse::new(within("GET", session.get().send()).await.unwrap());
    assert_eq!(session.call_text(1, "add", json!({"a": 1, "b": 1})).await, "2");
    let mut sse = Sse::new(session.call(2, "chatty", json!({"pause_ms": 0})).await);
    while sse.next().await.is_some() {}
    let mut sse = Sse::new(session.call(3, "ask", json!({})).await);
    let (_, request) = sse.message().await;
    assert_eq!(h.http.request_streams(), 1, "the request in flight has its stream");
    drop(sse);
    session.answer(&request, json!({"action": "cancel"})).await;
    within("the last request to finish", async {
        while h.http.request_streams() != 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    // And the session is still usable, its GET stream still attached.
    assert_eq!(session.call_text(4, "add", json!({"a": 2, "b": 2})).await, "4");
    assert_eq!(h.http.request_streams(), 0);
}

#[tokio::test]
async fn closing_all_sessions_ends_their_streams() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(form_capable()).await;
    let mut get = Sse::new(within("GET", session.get().send()).await.unwrap());
    let mut post = Sse::new(session.call(1, "ask", json!({})).await);
    let _ = post.message().await;
    within("close_all", h.http.close_all()).await;
    get.ends().await;
    post.ends().await;
    assert_eq!(h.http.session_count(), 0);
}

/// Sends one POST on `tcp` with the body written separately from the head (as many clients do),
/// and returns the response head and body, up to the end of the body.
async fn raw_post(tcp: &mut tokio::net::TcpStream, head: &str, body: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let head = format!("POST /mcp HTTP/1.1\r\n{head}content-length: {}\r\n\r\n", body.len());
    tcp.write_all(head.as_bytes()).await.expect("write the head");
    tcp.flush().await.expect("flush");
    tokio::time::sleep(Duration::from_millis(20)).await;
    tcp.write_all(body.as_bytes()).await.expect("write the body");
    let mut response = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&response).to_string();
        if let Some((head, rest)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length: ").map(str::to_owned))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .expect("a content-length");
            if rest.len() >= length {
                return text;
            }
        }
        let n = within("a response", tcp.read(&mut buf)).await.expect("read");
        assert!(n > 0, "the server closed the connection without a complete response: {text:?}");
        response.extend_from_slice(&buf[..n]);
    }
}

#[tokio::test]
async fn a_request_refused_before_its_body_was_read_leaves_the_connection_usable() {
    let h = Harness::start(HttpConfig::default()).await;
    let session = h.session(json!({})).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let head = |extra: &str| {
        format!(
            "host: 127.0.0.1:{}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n\
             mcp-session-id: {}\r\n{extra}",
            h.port, session.id
        )
    };
    let mut tcp = tokio::net::TcpStream::connect(("127.0.0.1", h.port)).await.unwrap();
    // Refused on its headers alone: a revision the server does not speak (as a client probing
    // for a newer revision sends), then a foreign origin.
    let refused = raw_post(&mut tcp, &head("mcp-protocol-version: 2099-01-01\r\n"), &body).await;
    assert!(refused.starts_with("HTTP/1.1 400"), "{refused}");
    let refused = raw_post(&mut tcp, &head("origin: http://evil.example\r\n"), &body).await;
    assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
    // The same connection carries the next request: the server did not hang up on a client
    // that had no way to know.
    let served = raw_post(&mut tcp, &head(""), &body).await;
    assert!(served.starts_with("HTTP/1.1 200"), "{served}");
}
