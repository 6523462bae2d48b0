//! MCP's Streamable HTTP transport (revision 2025-11-25), client side.
//!
//! Every message the client sends is a `POST` to the endpoint with
//! `Accept: application/json, text/event-stream`, the session id the server gave in answer to
//! `initialize` (`Mcp-Session-Id`) and, after `initialize`, the negotiated revision
//! (`MCP-Protocol-Version`). A request is answered with JSON or with an SSE stream carrying the
//! server's messages about it and then the response; the server's own requests found there
//! are answered with new POSTs. After `notifications/initialized` the client opens the
//! session's `GET` stream (a server may decline with 405), and on close it sends `DELETE`.
//!
//! A stream that ends before the response arrived is resumed with `GET` and `Last-Event-ID`,
//! after the delay the server asked for with `retry:` (a few times at most); the `GET` stream is
//! reopened the same way when it ends.
//!
//! The session's `GET` stream is opened before anything else is sent, so that a server that
//! sends there what a later request causes has the stream first; sending waits for its response
//! headers a few seconds at most ([`HttpClientConfig::standalone_stream_wait`]). A server slower
//! than that keeps its stream: the request stays open and the stream is read as soon as the
//! server answers. A `GET` that fails (the server unreachable, or HTTP 5xx or 429) is tried
//! again with growing delays. What the client does about the stream is logged at `warn` level.
//!
//! # TLS
//!
//! With the feature `rustls` (on by default) `https://` endpoints work as they are, trusting
//! the platform's certificate store; a server whose certificate comes from a private CA is
//! trusted once the CA is added with `HttpClientConfig::root_certificates`. A certificate
//! that is not trusted fails the connection with [`ClientError::UntrustedCertificate`].
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use typed_mcp::client::{Client, http::HttpClientConfig};
//! # #[cfg(feature = "rustls")]
//! use typed_mcp::tls::RootCertificates;
//!
//! let config = HttpClientConfig::default();
//! # #[cfg(feature = "rustls")]
//! let config = config.root_certificates(RootCertificates::from_pem_file("ca.pem")?);
//! let client = Client::builder("my-app", "1.0.0").connect_http_with("https://mcp.example.com/mcp", config).await?;
//! # client.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! Without the `rustls` feature the transport has no TLS of its own: `http://` endpoints work,
//! and for `https://` the application passes a `reqwest::Client` built with a TLS backend of
//! its choice to [`HttpClientConfig::http_client`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{RequestBuilder, Response, StatusCode};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::ClientError;
use super::connection::Connection;
use super::http_headers::ToolHeaders;
use super::oauth::{OAuth, OAuthError, OAuthSession};
use super::service::ClientService;
use super::sse::SseParser;
use crate::engine::{BoxFuture, Outbound, OutboundKind, PeerError, Session};
use crate::protocol::jsonrpc::DecodeError;
use crate::protocol::{ErrorObject, Message, RequestId};

/// The header carrying the session id.
const SESSION_HEADER: &str = "mcp-session-id";
/// The header carrying the negotiated protocol revision.
const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
/// How long sending waits for the session's GET stream to open (its response headers) by default.
const STANDALONE_STREAM_WAIT: Duration = Duration::from_secs(5);
/// The longest delay between two attempts to open the session's GET stream.
const MAX_REOPEN_DELAY: Duration = Duration::from_secs(30);
/// How long closing waits for the server to acknowledge `DELETE`.
const DELETE_TIMEOUT: Duration = Duration::from_secs(5);
/// How many more times an answer to a server's question is sent after a retryable failure.
const ANSWER_REDELIVERIES: u32 = 4;

/// Whether delivering an answer failed in a way worth trying again: no connection, a failing
/// gateway, or an instance that is busy or leaving (`502`, `503`, `504`). `None` (the client
/// is closing) is not.
fn answer_delivery_failed(sent: Option<&Result<Response, PeerError>>) -> bool {
    match sent {
        None => false,
        Some(Err(PeerError::UntrustedCertificate { .. })) => false,
        Some(Err(_)) => true,
        Some(Ok(response)) => matches!(
            response.status(),
            StatusCode::BAD_GATEWAY | StatusCode::SERVICE_UNAVAILABLE | StatusCode::GATEWAY_TIMEOUT
        ),
    }
}

/// The wait a response's `Retry-After` asks for (in seconds), if it has one.
fn retry_after(sent: Option<&Result<Response, PeerError>>) -> Option<Duration> {
    let Some(Ok(response)) = sent else { return None };
    let seconds = response.headers().get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim().parse::<u64>().ok()?;
    Some(Duration::from_secs(seconds))
}

/// Settings of the Streamable HTTP client transport.
#[derive(Debug, Clone)]
pub struct HttpClientConfig {
    client: Option<reqwest::Client>,
    #[cfg(feature = "rustls")]
    roots: Option<crate::tls::RootCertificates>,
    headers: HeaderMap,
    standalone_stream: bool,
    standalone_wait: Duration,
    max_message_size: usize,
    max_reconnects: u32,
    default_retry: Duration,
}

impl Default for HttpClientConfig {
    fn default() -> Self {
        HttpClientConfig {
            client: None,
            #[cfg(feature = "rustls")]
            roots: None,
            headers: HeaderMap::new(),
            standalone_stream: true,
            standalone_wait: STANDALONE_STREAM_WAIT,
            max_message_size: crate::transport::DEFAULT_MAX_LINE,
            max_reconnects: 3,
            default_retry: Duration::from_secs(1),
        }
    }
}

impl HttpClientConfig {
    /// Sends `name: value` with every HTTP request (for example `Authorization`).
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// Sends `Authorization: Bearer <token>` with every HTTP request: a token obtained
    /// elsewhere. Connecting fails when [`ClientBuilder::oauth`](super::ClientBuilder::oauth)
    /// is also set, since the OAuth flow obtains the token and sends the header itself.
    pub fn bearer_token(self, token: &str) -> Result<Self, ClientError> {
        let value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| ClientError::Transport("the token is not a valid header value".into()))?;
        Ok(self.header(reqwest::header::AUTHORIZATION, value))
    }

    /// Uses `client` for every HTTP request (its TLS, proxy and timeout settings). Connecting
    /// fails when `root_certificates` (feature `rustls`) are also set: add them to
    /// `client` instead.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// Trusts `roots` for `https://` besides the platform's certificate store: the MCP server's
    /// and, unless [`OAuth`] is given other roots or a client of its own, the authorization
    /// server's certificates may be issued by them (feature `rustls`).
    #[cfg(feature = "rustls")]
    pub fn root_certificates(mut self, roots: crate::tls::RootCertificates) -> Self {
        self.roots = Some(roots);
        self
    }

    /// The HTTP client of the connection: the application's, or one of ours.
    fn build_client(&self) -> Result<reqwest::Client, ClientError> {
        #[cfg(feature = "rustls")]
        if self.client.is_some() && self.roots.is_some() {
            return Err(ClientError::Transport(
                "root certificates are configured along with an HTTP client of the application's: \
                 add them to that client instead"
                    .into(),
            ));
        }
        if let Some(client) = &self.client {
            return Ok(client.clone());
        }
        #[cfg(feature = "rustls")]
        return new_client(self.roots.as_ref());
        #[cfg(not(feature = "rustls"))]
        new_client()
    }
}

/// A client of ours, trusting `roots` besides the platform's roots.
#[cfg(feature = "rustls")]
pub(crate) fn new_client(roots: Option<&crate::tls::RootCertificates>) -> Result<reqwest::Client, ClientError> {
    let builder = reqwest::Client::builder().connect_timeout(Duration::from_secs(10));
    let builder = match roots {
        Some(roots) => roots.apply(builder),
        None => builder,
    };
    builder.build().map_err(|e| ClientError::Transport(format!("cannot build the HTTP client: {e}")))
}

/// A client of ours (plain HTTP).
#[cfg(not(feature = "rustls"))]
pub(crate) fn new_client() -> Result<reqwest::Client, ClientError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| ClientError::Transport(format!("cannot build the HTTP client: {e}")))
}

/// The error for a request to `url` that got no answer: a certificate that was not trusted,
/// or any other failure to reach the server.
fn unreached(url: &reqwest::Url, error: &reqwest::Error) -> PeerError {
    #[cfg(feature = "rustls")]
    if let Some(reason) = crate::tls::untrusted_certificate(error) {
        return PeerError::UntrustedCertificate { url: url.to_string(), reason };
    }
    transport_error(format!("could not reach {url}: {error}"))
}

impl HttpClientConfig {
    /// The settings for the OAuth flow's own client: `Some` when the flow needs one (roots of
    /// its own), with the connection's roots as well.
    fn oauth_client(&self, oauth: &OAuth) -> Result<Option<reqwest::Client>, ClientError> {
        #[cfg(feature = "rustls")]
        if oauth.http.is_none()
            && let Some(extra) = &oauth.roots
        {
            let roots = match &self.roots {
                Some(mine) => mine.merged(extra),
                None => extra.clone(),
            };
            return new_client(Some(&roots)).map(Some);
        }
        let _ = oauth;
        Ok(None)
    }

    /// Whether to open the session's `GET` stream after initialization (default true).
    pub fn standalone_stream(mut self, open: bool) -> Self {
        self.standalone_stream = open;
        self
    }

    /// How long sending waits for the session's `GET` stream to open, after initialization,
    /// before it goes on (default 5 seconds). The stream is not given up then: its request
    /// stays open, and what the server sends there is read as soon as it answers.
    pub fn standalone_stream_wait(mut self, wait: Duration) -> Self {
        self.standalone_wait = wait;
        self
    }

    /// The largest accepted message from the server (default 4 MiB).
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes.max(1024);
        self
    }

    /// How many times in a row a stream is resumed, and how long to wait before resuming when
    /// the server gave no `retry:` (defaults: 3 times, 1 second).
    pub fn reconnect(mut self, max_attempts: u32, default_retry: Duration) -> Self {
        self.max_reconnects = max_attempts;
        self.default_retry = default_retry;
        self
    }
}

struct Shared {
    http: reqwest::Client,
    url: reqwest::Url,
    config: HttpClientConfig,
    session: Arc<Session<ClientService>>,
    session_id: RwLock<Option<String>>,
    protocol_version: RwLock<Option<String>>,
    /// Set in the stateless era: each POST's headers mirror its body.
    stateless: RwLock<Option<Arc<ToolHeaders>>>,
    /// Stateless era: closes the stream of a request in flight when it is cancelled.
    open_requests: Mutex<HashMap<RequestId, CancellationToken>>,
    stop: CancellationToken,
    ended: CancellationToken,
    tasks: TaskTracker,
    standalone_opened: AtomicBool,
    /// The OAuth flow, when the client authorizes with protected servers.
    oauth: Option<OAuthSession>,
    /// How many step-up authorizations one request may cause.
    max_step_ups: u32,
}

/// A client session over Streamable HTTP.
pub(crate) struct HttpConnection {
    shared: Arc<Shared>,
    pump: Mutex<Option<JoinHandle<()>>>,
    closing: AtomicBool,
}

impl HttpConnection {
    /// Starts delivering the session's messages to `url`.
    pub(crate) fn start(
        session: Session<ClientService>,
        outbound: mpsc::Receiver<Outbound>,
        url: &str,
        config: HttpClientConfig,
        oauth: Option<OAuth>,
    ) -> Result<Self, ClientError> {
        let url = reqwest::Url::parse(url).map_err(|e| ClientError::Transport(format!("invalid URL {url:?}: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ClientError::Transport(format!("{url} is not an http:// or https:// URL")));
        }
        let http = config.build_client()?;
        if oauth.is_some() && config.headers.contains_key(reqwest::header::AUTHORIZATION) {
            return Err(ClientError::Transport(
                "an `Authorization` header is configured and OAuth is enabled: use one or the other".into(),
            ));
        }
        let max_step_ups = oauth.as_ref().map_or(0, |o| o.max_step_ups);
        let oauth = match oauth {
            Some(o) => {
                let flow_http = config.oauth_client(&o)?.unwrap_or_else(|| http.clone());
                Some(OAuthSession::new(o, flow_http, url.clone()))
            }
            None => None,
        };
        let shared = Arc::new(Shared {
            http,
            url,
            config,
            session: Arc::new(session),
            session_id: RwLock::default(),
            protocol_version: RwLock::default(),
            stateless: RwLock::default(),
            open_requests: Mutex::default(),
            stop: CancellationToken::new(),
            ended: CancellationToken::new(),
            tasks: TaskTracker::new(),
            standalone_opened: AtomicBool::new(false),
            oauth,
            max_step_ups,
        });
        let pump = tokio::spawn(pump(shared.clone(), outbound));
        Ok(HttpConnection { shared, pump: Mutex::new(Some(pump)), closing: AtomicBool::new(false) })
    }
}

impl Connection for HttpConnection {
    fn negotiated(&self, version: &str) {
        if let Ok(mut v) = self.shared.protocol_version.write() {
            *v = Some(version.to_owned());
        }
    }

    fn stateless(&self, headers: Option<Arc<ToolHeaders>>) {
        if let Ok(mut s) = self.shared.stateless.write() {
            *s = headers;
        }
    }

    fn authorizing(&self) -> bool {
        self.shared.oauth.as_ref().is_some_and(OAuthSession::authorizing)
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.closing.swap(true, Ordering::AcqRel) {
                self.shared.ended.cancelled().await;
                return;
            }
            let shared = &self.shared;
            shared.stop.cancel();
            shared.delete_session().await;
            shared.session.shutdown().await;
            shared.tasks.close();
            shared.tasks.wait().await;
            let pump = self.pump.lock().ok().and_then(|mut p| p.take());
            if let Some(pump) = pump {
                let _ = pump.await;
            }
            shared.ended.cancel();
        })
    }

    fn ended(&self) -> CancellationToken {
        self.shared.ended.clone()
    }

    fn abort(&self) {
        if self.closing.swap(true, Ordering::AcqRel) {
            return;
        }
        self.shared.stop.cancel();
        self.shared.ended.cancel();
        // Best effort: tell the server, if there is a runtime to do it on.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let shared = self.shared.clone();
            runtime.spawn(async move { shared.delete_session().await });
        }
    }
}

/// Delivers the session's outbound messages, one POST each, in order.
async fn pump(shared: Arc<Shared>, mut outbound: mpsc::Receiver<Outbound>) {
    loop {
        let out = tokio::select! {
            biased;
            () = shared.stop.cancelled() => break,
            out = outbound.recv() => match out {
                Some(out) => out,
                None => break,
            },
        };
        shared.deliver(out).await;
    }
}

/// The id of an encoded request.
fn request_id(frame: &str) -> Option<RequestId> {
    match Message::decode(frame) {
        Ok(Message::Request(r)) => Some(r.id),
        _ => None,
    }
}

fn is_notification(frame: &str, method: &str) -> bool {
    matches!(Message::decode(frame), Ok(Message::Notification(n)) if n.method == method)
}

fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/event-stream"))
}

/// A failure of the transport (the server was not reached, or broke the protocol), reported
/// as [`ClientError::Transport`].
fn transport_error(message: impl Into<String>) -> PeerError {
    PeerError::Transport(message.into())
}

/// A failure to authorize, reported as [`ClientError::Authorization`].
fn authorization_error(error: OAuthError) -> PeerError {
    PeerError::Authorization(Box::new(error))
}

/// Whether a `WWW-Authenticate` header is a `Bearer` challenge with `error="insufficient_scope"`.
fn is_insufficient_scope(header: &str) -> bool {
    super::oauth::challenge_error(header).as_deref() == Some("insufficient_scope")
}

/// How reading a stream ended.
enum StreamEnd {
    /// The awaited response arrived.
    Answered,
    /// The server ended the stream (or it broke).
    Ended,
    /// The connection is closing.
    Stopped,
}

/// Where a stream is, for resuming it.
#[derive(Default)]
struct StreamPosition {
    last_event_id: Option<String>,
    retry: Option<Duration>,
}

impl Shared {
    fn with_session(&self, mut request: RequestBuilder) -> RequestBuilder {
        request = request.headers(self.config.headers.clone());
        if let Some(id) = self.session_id.read().ok().and_then(|s| s.clone()) {
            request = request.header(SESSION_HEADER, id);
        }
        if let Some(v) = self.protocol_version.read().ok().and_then(|v| v.clone())
            && self.stateless.read().map(|s| s.is_none()).unwrap_or(true)
        {
            request = request.header(PROTOCOL_VERSION_HEADER, v);
        }
        request
    }

    fn has_session_id(&self) -> bool {
        self.session_id.read().map(|s| s.is_some()).unwrap_or(false)
    }

    /// Remembers the session id the server assigned (on the `initialize` response).
    fn capture_session_id(&self, response: &Response) {
        let Some(id) = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else { return };
        if self.stateless.read().is_ok_and(|s| s.is_some()) {
            // The stateless era has no sessions: an id a server sends anyway is not one.
            return;
        }
        if let Ok(mut current) = self.session_id.write()
            && current.is_none()
        {
            tracing::debug!(session = id, "the server assigned a session");
            *current = Some(id.to_owned());
        }
    }

    /// Sends `body` with POST (with the access token, if any), unless the connection closes
    /// first.
    async fn post_once(&self, body: String, token: Option<&str>) -> Option<Result<Response, reqwest::Error>> {
        let mut request = self
            .with_session(self.http.post(self.url.clone()))
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream");
        if let (Some(token), Some(oauth)) = (token, &self.oauth) {
            request = oauth.authorize_request(request, token, "POST");
        }
        let stateless = self.stateless.read().ok().and_then(|s| s.clone());
        if let Some(headers) = stateless {
            for (name, value) in headers.headers(&body) {
                request = request.header(name, value);
            }
        }
        let request = request.body(body);
        tokio::select! {
            biased;
            () = self.stop.cancelled() => None,
            r = request.send() => Some(r),
        }
    }

    /// Sends `body` with POST, unless the connection closes first. With OAuth, a 401 runs the
    /// authorization flow (or a refresh) once and a 403 `insufficient_scope` steps up (a few
    /// times at most) before the message is sent again.
    async fn post(&self, body: String) -> Option<Result<Response, PeerError>> {
        let unreachable = |e: reqwest::Error| unreached(&self.url, &e);
        let Some(oauth) = &self.oauth else {
            return self.post_once(body, None).await.map(|r| r.map_err(unreachable));
        };
        let mut reauthorized = false;
        let mut step_ups = 0;
        let mut nonce_retries = 0;
        loop {
            let token = tokio::select! {
                biased;
                () = self.stop.cancelled() => return None,
                t = oauth.bearer() => t,
            };
            let response = match self.post_once(body.clone(), token.as_deref()).await? {
                Ok(response) => response,
                Err(e) => return Some(Err(unreachable(e))),
            };
            let status = response.status();
            let challenge = response
                .headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let new_nonce = oauth.observe_nonce(response.headers());
            if status == StatusCode::UNAUTHORIZED
                && new_nonce
                && nonce_retries < 2
                && challenge.as_deref().and_then(super::oauth::challenge_error).as_deref() == Some("use_dpop_nonce")
            {
                // RFC 9449 section 9: the same token again, with a proof carrying the nonce.
                tracing::debug!("the server asks for a DPoP nonce; retrying with it");
                nonce_retries += 1;
                continue;
            }
            let authorized = if status == StatusCode::UNAUTHORIZED {
                if reauthorized {
                    return Some(Err(authorization_error(OAuthError::Unauthorized { status: status.as_u16() })));
                }
                reauthorized = true;
                tracing::debug!("the server asks for authorization");
                tokio::select! {
                    biased;
                    () = self.stop.cancelled() => return None,
                    r = oauth.unauthorized(token.as_deref(), challenge.as_deref()) => r,
                }
            } else if let Some(challenge) =
                challenge.filter(|c| status == StatusCode::FORBIDDEN && is_insufficient_scope(c))
            {
                if step_ups >= self.max_step_ups {
                    let scope = super::oauth::challenge_scope(&challenge);
                    return Some(Err(authorization_error(OAuthError::InsufficientScope { scope })));
                }
                step_ups += 1;
                tokio::select! {
                    biased;
                    () = self.stop.cancelled() => return None,
                    r = oauth.insufficient_scope(token.as_deref(), &challenge) => r,
                }
            } else {
                return Some(Ok(response));
            };
            if let Err(e) = authorized {
                tracing::warn!(error = %e, "authorization failed");
                return Some(Err(authorization_error(e)));
            }
        }
    }

    /// Opens (or resumes, after `last_event_id`) a GET stream, unless the connection closes first.
    async fn get(&self, last_event_id: Option<&str>) -> Option<Result<Response, reqwest::Error>> {
        let mut request = self.with_session(self.http.get(self.url.clone())).header(ACCEPT, "text/event-stream");
        if let Some(oauth) = &self.oauth
            && let Some(token) = oauth.current()
        {
            request = oauth.authorize_request(request, &token, "GET");
        }
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        tokio::select! {
            biased;
            () = self.stop.cancelled() => None,
            r = request.send() => Some(r),
        }
    }

    async fn delete_session(&self) {
        if !self.has_session_id() {
            return;
        }
        let mut request = self.with_session(self.http.delete(self.url.clone()));
        if let Some(oauth) = &self.oauth
            && let Some(token) = oauth.current()
        {
            request = oauth.authorize_request(request, &token, "DELETE");
        }
        let request = request.send();
        match tokio::time::timeout(DELETE_TIMEOUT, request).await {
            Ok(Ok(r)) if r.status().is_success() || r.status() == StatusCode::METHOD_NOT_ALLOWED => {}
            Ok(Ok(r)) => tracing::debug!(status = %r.status(), "the server refused to end the session"),
            Ok(Err(e)) => tracing::debug!(error = %e, "could not end the session"),
            Err(_) => tracing::debug!("the server did not answer DELETE in time"),
        }
    }

    /// Fails the pending request `id` with `error`.
    async fn fail(&self, id: &RequestId, error: PeerError) {
        tracing::debug!(%id, %error, "request failed in the transport");
        self.session.peer().fail(id, error);
    }

    /// The server forgot the session (404): nothing more can be done on it.
    fn session_lost(self: &Arc<Self>) {
        tracing::warn!("the server no longer knows this session; the connection is closed");
        let shared = self.clone();
        tokio::spawn(async move {
            shared.stop.cancel();
            shared.session.shutdown().await;
            shared.ended.cancel();
        });
    }

    /// POSTs one outbound message and routes what comes back. A request is sent from a task of
    /// its own: a server may hold its answer's headers until it has something to say, and
    /// everything after it (other requests, cancellations, answers to the server's own
    /// requests) must not wait for that.
    async fn deliver(self: &Arc<Self>, out: Outbound) {
        let stateless = self.stateless.read().is_ok_and(|s| s.is_some());
        if out.kind == OutboundKind::Request
            && let Some(id) = request_id(&out.frame)
        {
            let shared = self.clone();
            if !stateless {
                self.tasks.spawn(async move { shared.send_request(id, out.frame).await });
                return;
            }
            // A stateless request has no session to cancel it in: closing its stream does.
            let abort = CancellationToken::new();
            if let Ok(mut open) = self.open_requests.lock() {
                open.insert(id.clone(), abort.clone());
            }
            self.tasks.spawn(async move {
                tokio::select! {
                    () = abort.cancelled() => {}
                    () = shared.clone().send_request(id.clone(), out.frame) => {}
                }
                if let Ok(mut open) = shared.open_requests.lock() {
                    open.remove(&id);
                }
            });
            return;
        }
        if stateless && out.kind == OutboundKind::Notification {
            let cancelled = crate::client::http_headers::cancelled_request(&out.frame);
            let abort = cancelled.and_then(|id| self.open_requests.lock().ok()?.remove(&id));
            if let Some(abort) = abort {
                abort.cancel();
            }
        }
        let initialized =
            out.kind == OutboundKind::Notification && is_notification(&out.frame, "notifications/initialized");
        if out.kind == OutboundKind::Response {
            // An answer to the server's question: the request waiting for it hangs if it is
            // lost, and a server ignores an answer it already has, so one that met a gateway's
            // or an instance's passing trouble is sent again (from a task of its own: what
            // follows does not wait for it).
            let first = self.post(out.frame.clone()).await;
            if answer_delivery_failed(first.as_ref()) {
                let shared = self.clone();
                self.tasks.spawn(async move { shared.redeliver_answer(out.frame).await });
            } else {
                match first {
                    Some(Err(e)) => tracing::warn!(error = %e, "could not deliver an answer to the server"),
                    Some(Ok(r)) if !r.status().is_success() => {
                        tracing::warn!(status = %r.status(), "the server refused an answer");
                    }
                    _ => {}
                }
            }
            return;
        }
        match self.post(out.frame).await {
            None => return,
            Some(Err(e)) => tracing::warn!(error = %e, "could not deliver a message to the server"),
            Some(Ok(response)) => {
                if !response.status().is_success() {
                    tracing::warn!(status = %response.status(), "the server refused a message");
                }
            }
        }
        if initialized && self.config.standalone_stream && !self.standalone_opened.swap(true, Ordering::AcqRel) {
            self.open_standalone().await;
        }
    }

    /// Sends an answer to a server's question again, after its first delivery met a retryable
    /// failure: a few times, waiting a little longer each time (what `Retry-After` asks, up to
    /// a second).
    async fn redeliver_answer(self: Arc<Self>, frame: String) {
        let mut wait = Duration::from_millis(100);
        for attempt in 1..=ANSWER_REDELIVERIES {
            tokio::select! {
                biased;
                () = self.stop.cancelled() => return,
                () = tokio::time::sleep(wait) => {}
            }
            let sent = self.post(frame.clone()).await;
            if !answer_delivery_failed(sent.as_ref()) {
                tracing::debug!(attempt, "an answer to the server was delivered again");
                return;
            }
            wait = retry_after(sent.as_ref()).unwrap_or(wait * 2).min(Duration::from_secs(1));
        }
        tracing::warn!("could not deliver an answer to the server; the request that asked will not get it");
    }

    /// Opens the session's GET stream in a task of its own, and waits until it is open (or
    /// refused), [`HttpClientConfig::standalone_stream_wait`] at most: a server may send there
    /// what a later request causes, and a stream opened after that would miss it. A server
    /// slower than that keeps its stream; only sending stops waiting for it.
    async fn open_standalone(self: &Arc<Self>) {
        let (opened, settled) = oneshot::channel();
        let shared = self.clone();
        self.tasks.spawn(async move { shared.standalone(opened).await });
        let wait = self.config.standalone_wait;
        tokio::select! {
            biased;
            _ = settled => {}
            () = self.stop.cancelled() => {}
            () = tokio::time::sleep(wait) => tracing::warn!(
                ?wait,
                "the server has not answered the request for the session's GET stream yet; \
                 sending goes on, and the stream is read as soon as the server answers"
            ),
        }
    }

    /// POSTs the request `id` and reads its answer.
    async fn send_request(self: Arc<Self>, id: RequestId, frame: String) {
        match self.post(frame).await {
            None => {}
            Some(Err(e)) => self.fail(&id, e).await,
            Some(Ok(response)) => {
                self.capture_session_id(&response);
                self.read_answer(id, response).await;
            }
        }
    }

    /// Reads the answer to the request `id`: JSON, an SSE stream, or an HTTP error.
    async fn read_answer(self: Arc<Self>, id: RequestId, mut response: Response) {
        let status = response.status();
        if status == StatusCode::NOT_FOUND && self.has_session_id() {
            self.fail(&id, transport_error("the server no longer knows this session (HTTP 404)")).await;
            self.session_lost();
            return;
        }
        let challenge = response
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .filter(|c| super::oauth::is_bearer_challenge(c));
        if let (Some(challenge), StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) = (challenge, status) {
            // A protected server refused with a Bearer challenge: without OAuth (or a token it
            // accepts) nothing more can be done, and the error says so in its type.
            let error = if status == StatusCode::FORBIDDEN && is_insufficient_scope(challenge) {
                OAuthError::InsufficientScope { scope: super::oauth::challenge_scope(challenge) }
            } else {
                OAuthError::Unauthorized { status: status.as_u16() }
            };
            self.fail(&id, authorization_error(error)).await;
            return;
        }
        if !status.is_success() {
            let body = self.read_body(&mut response).await.unwrap_or_default();
            let error = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| serde_json::from_value::<ErrorObject>(v.get("error")?.clone()).ok())
                .map(PeerError::Rpc)
                .unwrap_or_else(|| {
                    let snippet: String = body.chars().take(200).collect();
                    transport_error(format!("HTTP {status}: {snippet}"))
                });
            self.fail(&id, error).await;
            return;
        }
        if is_event_stream(&response) {
            self.read_request_stream(id, response).await;
            return;
        }
        if status == StatusCode::ACCEPTED {
            tracing::debug!(%id, "the server accepted the request without answering it here");
            return;
        }
        match self.read_body(&mut response).await {
            Some(body) if !body.trim().is_empty() => {
                if !self.handle_incoming(&body, Some(&id)).await {
                    self.fail(&id, transport_error("the server's JSON answer is not the response to the request"))
                        .await;
                }
            }
            _ => self.fail(&id, transport_error("the server answered the request with an empty body")).await,
        }
    }

    /// A whole (non-SSE) body, if it fits within the size limit and is UTF-8.
    async fn read_body(&self, response: &mut Response) -> Option<String> {
        let mut body = Vec::new();
        loop {
            let chunk = tokio::select! {
                biased;
                () = self.stop.cancelled() => return None,
                c = response.chunk() => c,
            };
            match chunk {
                Ok(Some(bytes)) => {
                    if body.len() + bytes.len() > self.config.max_message_size {
                        tracing::warn!(limit = self.config.max_message_size, "the server's answer is too large");
                        return None;
                    }
                    body.extend_from_slice(&bytes);
                }
                Ok(None) => return String::from_utf8(body).ok(),
                Err(e) => {
                    tracing::debug!(error = %e, "reading the server's answer failed");
                    return None;
                }
            }
        }
    }

    /// Hands one message from the server to the session; true when it is the response to `awaited`.
    async fn handle_incoming(&self, text: &str, awaited: Option<&RequestId>) -> bool {
        match Message::decode(text) {
            Ok(message) => {
                let answered = matches!((&message, awaited), (Message::Response(r), Some(id)) if &r.id == id);
                self.session.handle_message(message).await;
                answered
            }
            Err(DecodeError { id, error, respond }) => {
                tracing::debug!(code = error.code, message = %error.message, "rejected a message from the server");
                if respond {
                    self.session.send_error(id.as_ref(), &error).await;
                }
                false
            }
        }
    }

    /// Reads one SSE stream until the awaited response, its end, or the connection closing.
    async fn read_stream(
        &self,
        mut response: Response,
        awaited: Option<&RequestId>,
        position: &mut StreamPosition,
    ) -> StreamEnd {
        let mut parser = SseParser::new(self.config.max_message_size);
        let mut events = Vec::new();
        loop {
            let chunk = tokio::select! {
                biased;
                () = self.stop.cancelled() => return StreamEnd::Stopped,
                c = response.chunk() => c,
            };
            let bytes = match chunk {
                Ok(Some(bytes)) => bytes,
                Ok(None) => return StreamEnd::Ended,
                Err(e) => {
                    tracing::debug!(error = %e, "an SSE stream broke");
                    return StreamEnd::Ended;
                }
            };
            parser.feed(&bytes, &mut events);
            position.retry = parser.retry.or(position.retry);
            if parser.last_event_id.is_some() {
                position.last_event_id.clone_from(&parser.last_event_id);
            }
            for data in events.drain(..) {
                if self.handle_incoming(&data, awaited).await {
                    return StreamEnd::Answered;
                }
            }
        }
    }

    /// Waits the delay the server asked for before reconnecting; false if the connection closes.
    async fn pause(&self, position: &StreamPosition) -> bool {
        self.sleep(position.retry.unwrap_or(self.config.default_retry)).await
    }

    /// Reads a request's SSE stream, resuming it with GET when it ends before the response.
    async fn read_request_stream(&self, id: RequestId, response: Response) {
        let mut position = StreamPosition::default();
        let mut response = response;
        let mut attempts = 0;
        loop {
            match self.read_stream(response, Some(&id), &mut position).await {
                StreamEnd::Answered | StreamEnd::Stopped => return,
                StreamEnd::Ended => {}
            }
            let Some(last) = position.last_event_id.clone() else {
                self.fail(
                    &id,
                    transport_error(
                        "the server ended the stream without answering (and gave no event id to resume from)",
                    ),
                )
                .await;
                return;
            };
            if attempts >= self.config.max_reconnects {
                self.fail(&id, transport_error(format!("the stream ended without an answer {attempts} times"))).await;
                return;
            }
            attempts += 1;
            if !self.pause(&position).await {
                return;
            }
            tracing::debug!(%id, last_event_id = %last, "resuming the stream of a request");
            match self.get(Some(&last)).await {
                None => return,
                Some(Ok(r)) if r.status().is_success() && is_event_stream(&r) => response = r,
                Some(Ok(r)) => {
                    let error = transport_error(format!("resuming the stream failed: HTTP {}", r.status()));
                    self.fail(&id, error).await;
                    return;
                }
                Some(Err(e)) => {
                    self.fail(&id, transport_error(format!("resuming the stream failed: {e}"))).await;
                    return;
                }
            }
        }
    }

    /// The session's GET stream: server messages not tied to a request. Reopened (resumed)
    /// when it ends, a few times in a row at most; tried again with growing delays when it
    /// cannot be opened (the server unreachable, HTTP 5xx or 429); given up when the server
    /// declines it. `opened` is told once the stream is open or settled otherwise.
    async fn standalone(&self, opened: oneshot::Sender<()>) {
        let mut opened = Some(opened);
        let mut position = StreamPosition::default();
        let mut failures = 0;
        loop {
            let attempt = match self.get(position.last_event_id.as_deref()).await {
                None => return,
                Some(Ok(response)) if is_transient(response.status()) => Err(format!("HTTP {}", response.status())),
                Some(Ok(response)) => Ok(response),
                Some(Err(e)) => Err(e.to_string()),
            };
            let response = match attempt {
                Ok(response) => response,
                Err(reason) => {
                    failures += 1;
                    if failures > self.config.max_reconnects {
                        tracing::warn!(
                            %reason,
                            attempts = failures,
                            "could not open the session's GET stream; giving up on it: messages the server \
                             sends there are lost"
                        );
                        return;
                    }
                    let delay = reopen_delay(position.retry.unwrap_or(self.config.default_retry), failures);
                    tracing::warn!(%reason, attempt = failures, ?delay, "could not open the session's GET stream; trying again");
                    if !self.sleep(delay).await {
                        return;
                    }
                    continue;
                }
            };
            if let Some(opened) = opened.take() {
                let _ = opened.send(());
            }
            let status = response.status();
            if status == StatusCode::METHOD_NOT_ALLOWED {
                tracing::debug!("the server offers no GET stream");
                return;
            }
            if !status.is_success() || !is_event_stream(&response) {
                tracing::warn!(%status, "the server refused the session's GET stream; messages it would send there are lost");
                return;
            }
            let before = position.last_event_id.clone();
            if let StreamEnd::Stopped = self.read_stream(response, None, &mut position).await {
                return;
            }
            // A stream that delivered something starts the count of failures afresh.
            failures = if position.last_event_id != before { 1 } else { failures + 1 };
            if failures > self.config.max_reconnects {
                tracing::warn!(
                    times = failures,
                    "the session's GET stream ended without news too often; not reopening it"
                );
                return;
            }
            if !self.pause(&position).await {
                return;
            }
        }
    }

    /// Sleeps `delay`; false if the connection closes first.
    async fn sleep(&self, delay: Duration) -> bool {
        tokio::select! {
            biased;
            () = self.stop.cancelled() => false,
            () = tokio::time::sleep(delay) => true,
        }
    }
}

/// Whether a refusal of a GET stream may pass: the server is overloaded or failing for now.
fn is_transient(status: StatusCode) -> bool {
    status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS
}

/// The delay before attempt `failures + 1` to open a stream: `base`, doubled for each failure
/// after the first, [`MAX_REOPEN_DELAY`] at most.
fn reopen_delay(base: Duration, failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    base.saturating_mul(1 << doublings).min(MAX_REOPEN_DELAY)
}
