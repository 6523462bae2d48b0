//! A plain HTTP client for the Streamable HTTP transport, shared by the robustness tests:
//! an endpoint served in this process (or by a child process), sessions, and replies read as
//! JSON or as SSE events as they arrive.

// Each test file uses its own share of these helpers.
#![allow(dead_code)]

use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};

use futures_util::{Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{RequestBuilder, Response, StatusCode};
use serde_json::{Value, json};
use tests::stdio::within;
use tokio::sync::oneshot;
use typed_mcp::Server;
use typed_mcp::transport::http::{HttpConfig, Principal, StreamableHttp};

/// The 2025-era revision the sessions here negotiate.
pub const PROTOCOL: &str = "2025-11-25";
/// What a POST accepts.
pub const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// Serves `app` on `127.0.0.1:<free port>` until the returned sender is dropped or sent to;
/// returns the URL of its `/mcp` endpoint.
pub async fn serve_router(app: axum::Router) -> (String, oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.expect("bind 127.0.0.1:0");
    let url = format!("http://127.0.0.1:{}/mcp", listener.local_addr().expect("a local address").port());
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
    });
    (url, stop)
}

/// A middleware that makes a request's `x-user` header (when present) its [`Principal`]: the
/// stand-in for authentication in the tests of who may use which session. Layer it with
/// `router.layer(axum::middleware::from_fn(principal_from_header))`.
pub async fn principal_from_header(
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    if let Some(user) = request.headers().get("x-user").and_then(|v| v.to_str().ok()).map(str::to_owned) {
        request.extensions_mut().insert(Principal(user));
    }
    next.run(request).await
}

/// An MCP endpoint at `url`, served by this process (`http` is then its transport) or another.
pub struct Endpoint {
    pub url: String,
    pub port: u16,
    pub client: reqwest::Client,
    pub http: Option<StreamableHttp>,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Endpoint {
    /// Serves `server` at `http://127.0.0.1:<free port>/mcp`.
    pub async fn serve(server: &Server, config: HttpConfig) -> Self {
        Self::serve_with(server, config, |router| router).await
    }

    /// Serves `layer(endpoint router)` (to put an authentication layer in front, say).
    pub async fn serve_with(
        server: &Server,
        config: HttpConfig,
        layer: impl FnOnce(axum::Router) -> axum::Router,
    ) -> Self {
        let http = server.streamable_http(config);
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("a local address").port();
        let (stop, stopped) = oneshot::channel::<()>();
        let app = layer(http.router_at("/mcp"));
        let closing = http.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                    closing.close_all().await;
                })
                .await;
        });
        let mut endpoint = Self::at(port);
        endpoint.http = Some(http);
        endpoint.stop = Some(stop);
        endpoint
    }

    /// The endpoint another process serves on `port`.
    pub fn at(port: u16) -> Self {
        let client = reqwest::Client::builder().no_proxy().build().expect("an HTTP client");
        Endpoint { url: format!("http://127.0.0.1:{port}/mcp"), port, client, http: None, stop: None }
    }

    /// The transport, when served here.
    pub fn transport(&self) -> &StreamableHttp {
        self.http.as_ref().expect("an endpoint served by this process")
    }

    /// A POST with the headers every client message needs, and no session.
    pub fn post(&self) -> RequestBuilder {
        self.client.post(&self.url).header(CONTENT_TYPE, "application/json").header(ACCEPT, ACCEPT_BOTH)
    }

    /// Opens a session (`initialize`, then `notifications/initialized`) as `user` (sent as the
    /// `x-user` header, for a layer that makes it the request's `Principal`).
    pub async fn session_as(&self, capabilities: Value, user: Option<&str>) -> Session {
        let init = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": PROTOCOL, "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}},
        });
        let mut post = self.post().body(init.to_string());
        if let Some(user) = user {
            post = post.header("x-user", user);
        }
        let response = within("the initialize response", post.send()).await.expect("POST initialize");
        assert_eq!(response.status(), StatusCode::OK, "initialize failed");
        let id = header(&response, "mcp-session-id").expect("initialize answers with Mcp-Session-Id");
        let body = json_body(response).await;
        assert_eq!(body["result"]["protocolVersion"], PROTOCOL, "{body}");
        let session = Session {
            url: self.url.clone(),
            client: self.client.clone(),
            id,
            user: user.map(str::to_owned),
            next_id: AtomicI64::new(1),
        };
        let ack = session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        assert_eq!(ack.status(), StatusCode::ACCEPTED);
        session
    }

    /// Opens a session with no user.
    pub async fn session(&self, capabilities: Value) -> Session {
        self.session_as(capabilities, None).await
    }
}

/// One open session.
pub struct Session {
    pub url: String,
    pub client: reqwest::Client,
    pub id: String,
    pub user: Option<String>,
    next_id: AtomicI64,
}

impl Session {
    /// The same session id, sent as another user (or none).
    pub fn as_user(&self, user: Option<&str>) -> Session {
        Session {
            url: self.url.clone(),
            client: self.client.clone(),
            id: self.id.clone(),
            user: user.map(str::to_owned),
            next_id: AtomicI64::new(1),
        }
    }

    /// The session `id` at `url` (an instance of a shared deployment), as `user` (or none).
    pub fn join(url: &str, id: &str, user: Option<&str>) -> Session {
        Session {
            url: url.to_owned(),
            client: crate::support::http_client(),
            id: id.to_owned(),
            user: user.map(str::to_owned),
            next_id: AtomicI64::new(1),
        }
    }

    /// The same session, as the instance at `url` reaches it.
    pub fn at(&self, url: &str) -> Session {
        Session { url: url.to_owned(), ..self.as_user(self.user.as_deref()) }
    }

    /// Adds the session's headers.
    pub fn with_headers(&self, builder: RequestBuilder) -> RequestBuilder {
        let builder = builder.header("mcp-session-id", &self.id).header("mcp-protocol-version", PROTOCOL);
        match &self.user {
            Some(user) => builder.header("x-user", user),
            None => builder,
        }
    }

    /// A POST of `body` in this session.
    pub fn post(&self, body: impl Into<reqwest::Body>) -> RequestBuilder {
        let post = self.client.post(&self.url).header(CONTENT_TYPE, "application/json").header(ACCEPT, ACCEPT_BOTH);
        self.with_headers(post).body(body)
    }

    /// The session's GET stream.
    pub fn get(&self) -> RequestBuilder {
        self.with_headers(self.client.get(&self.url).header(ACCEPT, "text/event-stream"))
    }

    /// Sends one message.
    pub async fn send(&self, message: &Value) -> Response {
        within("a POST response", self.post(message.to_string()).send()).await.expect("POST")
    }

    /// A fresh request id.
    pub fn next_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends a request and returns its reply, not yet read.
    pub async fn start(&self, method: &str, params: Value) -> (i64, Reply) {
        let id = self.next_id();
        let response = self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        (id, Reply::new(response).await)
    }

    /// Sends a request and returns its response (whatever came before it on its stream is
    /// dropped).
    pub async fn request(&self, method: &str, params: Value) -> Value {
        let (id, mut reply) = self.start(method, params).await;
        loop {
            let message = reply.message().await;
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    }

    /// Calls a tool and returns its result.
    pub async fn call(&self, tool: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments})).await;
        assert!(response.get("error").is_none(), "`{tool}` failed: {response}");
        response["result"].clone()
    }

    /// Answers a request the server sent (202 expected).
    pub async fn answer(&self, request: &Value, result: Value) {
        let response = self.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": result})).await;
        assert_eq!(response.status(), StatusCode::ACCEPTED, "a response POSTed by the client gets 202");
    }

    /// Ends the session.
    pub async fn delete(&self) -> StatusCode {
        let delete = self.with_headers(self.client.delete(&self.url));
        within("a DELETE response", delete.send()).await.expect("DELETE").status()
    }
}

/// The reply to a POST: one JSON body, an SSE stream, or nothing (202).
pub enum Reply {
    Json(StatusCode, Option<Value>),
    Sse(Sse),
    Empty(StatusCode),
}

impl Reply {
    pub async fn new(response: Response) -> Self {
        let status = response.status();
        match content_type(&response).as_str() {
            "text/event-stream" => Reply::Sse(Sse::new(response)),
            _ => {
                let text = within("a response body", response.text()).await.expect("read the body");
                if text.is_empty() {
                    Reply::Empty(status)
                } else {
                    let value =
                        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{status}: not JSON ({e}): {text:?}"));
                    Reply::Json(status, Some(value))
                }
            }
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Reply::Json(s, _) | Reply::Empty(s) => *s,
            Reply::Sse(_) => StatusCode::OK,
        }
    }

    /// The next message; `None` when there is no more.
    pub async fn next(&mut self) -> Option<Value> {
        match self {
            Reply::Json(_, value) => value.take(),
            Reply::Sse(sse) => within("an SSE event", sse.next()).await.map(|e| e.message()),
            Reply::Empty(_) => None,
        }
    }

    /// The next message, which must come.
    pub async fn message(&mut self) -> Value {
        self.next().await.expect("the reply ended early")
    }

    /// Every remaining message.
    pub async fn rest(&mut self) -> Vec<Value> {
        let mut all = Vec::new();
        while let Some(m) = self.next().await {
            all.push(m);
        }
        all
    }
}

/// One SSE event.
#[derive(Debug)]
pub struct Event {
    pub id: Option<String>,
    pub data: String,
}

impl Event {
    pub fn message(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("an SSE event is not JSON ({e}): {}", self.data))
    }
}

/// The events of an SSE response, read as they arrive.
pub struct Sse {
    body: Pin<Box<dyn Stream<Item = reqwest::Result<axum::body::Bytes>> + Send>>,
    buffer: String,
}

impl Sse {
    pub fn new(response: Response) -> Self {
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(content_type(&response), "text/event-stream", "an SSE stream was expected");
        Sse { body: Box::pin(response.bytes_stream()), buffer: String::new() }
    }

    /// The next event with data (comments are skipped); `None` when the stream ends.
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut id = None;
                let mut data: Option<String> = None;
                for line in block.lines() {
                    let (field, value) = line.split_once(':').unwrap_or((line, ""));
                    let value = value.strip_prefix(' ').unwrap_or(value);
                    match (field, &mut data) {
                        ("id", _) => id = Some(value.to_owned()),
                        ("data", Some(d)) => {
                            d.push('\n');
                            d.push_str(value);
                        }
                        ("data", None) => data = Some(value.to_owned()),
                        _ => {}
                    }
                }
                if let Some(data) = data.filter(|d| !d.is_empty()) {
                    return Some(Event { id, data });
                }
            }
            match self.body.next().await {
                Some(Ok(chunk)) => self.buffer.push_str(std::str::from_utf8(chunk.as_ref()).expect("UTF-8 SSE")),
                Some(Err(_)) | None => return None,
            }
        }
    }

    /// The next message, which must come soon.
    pub async fn message(&mut self) -> Value {
        within("an SSE event", self.next()).await.expect("the SSE stream ended early").message()
    }
}

pub fn header(response: &Response, name: &str) -> Option<String> {
    response.headers().get(name).map(|v| v.to_str().expect("a visible ASCII header").to_owned())
}

pub fn content_type(response: &Response) -> String {
    header(response, "content-type").unwrap_or_default()
}

/// The body of a response, which must be JSON.
pub async fn json_body(response: Response) -> Value {
    let status = response.status();
    let text = within("a response body", response.text()).await.expect("read the body");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{status}: body is not JSON ({e}): {text:?}"))
}

/// The text of a tool result.
pub fn text_of(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {result}")).to_owned()
}

/// A 2025-era POST of `body` to `url` with `client`: JSON, both media types accepted, the
/// session `session` (when given) and `headers` (an `Authorization`, a claim of being
/// forwarded, …). Send it with `.send()`.
pub fn post_2025(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    headers: &[(&str, &str)],
    body: &serde_json::Value,
) -> reqwest::RequestBuilder {
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body.to_string());
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request
}
