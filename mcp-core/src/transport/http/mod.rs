//! MCP's Streamable HTTP transport (revision 2025-11-25), server side.
//!
//! One endpoint takes `POST` (a client message), `GET` (the session's stream of server
//! messages not tied to a request) and `DELETE` (end the session). [`StreamableHttp`] is an
//! axum [`Router`](axum::Router) — a tower `Service` — to mount in an existing application, and
//! [`Server::serve_http`](crate::Server::serve_http) runs it standalone. The transport serves
//! whatever implements its `HttpService` trait (the server does): it opens sessions, and moves frames.
//!
//! Messages the server sends while handling a POSTed request (elicitation, sampling, progress,
//! logs) travel on **that POST's own SSE stream**, followed by the response; the client's
//! answers arrive as new POSTs. A POST whose handler sends nothing else is answered with plain
//! JSON. SSE events carry ids, and a client that reconnects with `Last-Event-ID` receives what
//! it missed (kept by an [`EventStore`], in memory and bounded by default); when some of it is
//! no longer kept, the reconnection is refused with 404 rather than served with a gap. A
//! request the client cancels (`notifications/cancelled`) gets no response: its stream ends.
//! So does a request whose stream lost its reader when nobody resumes it within
//! [`HttpConfig::resume_window`].
//!
//! [`Server::serve_http`](crate::Server::serve_http) and [`StreamableHttp::serve`] speak
//! `https://` when the configuration has a certificate (`HttpConfig::tls` with a
//! `typed_mcp::tls::ServerCertificate`, feature `http-tls`); otherwise plain HTTP, with no TLS
//! code on the way.
//!
//! In stateless mode ([`HttpConfig::stateless`]) there are no session ids: every POST is served
//! by a fresh session, so server-to-client requests (elicitation, sampling, roots) cannot be
//! made — the client declared no capabilities to that session — and `GET`/`DELETE` answer 405.

mod auth;
mod backplane;
mod events;
mod security;
mod session;

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio_util::sync::CancellationToken;

pub use backplane::{
    Backplane, BackplaneError, DEFAULT_HEARTBEAT, FORWARDED_HEADER, MessageBus, Owner, SessionRegistry,
};
pub use events::{EventId, EventStore, MemoryEventStore};
use session::{Delivery, HttpSession, OpenError};

use crate::engine::{Service, SessionConfig};
use crate::protocol::codes::{HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION};
use crate::protocol::jsonrpc::{DecodeError, encode_error};
use crate::protocol::stateless::is_2026_request;
use crate::protocol::{
    ErrorObject, META_PROTOCOL_VERSION, Message, PROTOCOL_VERSION_2026_07_28, RequestId, SUPPORTED_PROTOCOL_VERSIONS,
    codes, supported_versions,
};
use crate::tool::ToolDef;

/// The header carrying the session id.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The header carrying the negotiated protocol revision.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// The authenticated user of an HTTP request. An authentication layer in front of the MCP
/// endpoint inserts it into the request's extensions; the session remembers it, later requests
/// of the session must carry the same one, and URL-mode elicitations are bound to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal(pub String);

/// The default of [`HttpConfig::max_sessions`].
pub const DEFAULT_MAX_SESSIONS: usize = 1000;
/// The default of [`HttpConfig::max_sessions_per_subject`].
pub const DEFAULT_MAX_SESSIONS_PER_SUBJECT: usize = 32;

/// Settings of the Streamable HTTP transport.
#[derive(Clone)]
pub struct HttpConfig {
    pub(crate) stateless: bool,
    pub(crate) idle_timeout: Duration,
    pub(crate) allowed_hosts: Option<Vec<String>>,
    pub(crate) allowed_origins: Option<Vec<String>>,
    pub(crate) max_body: usize,
    pub(crate) keep_alive: Duration,
    pub(crate) resume_window: Duration,
    pub(crate) event_store: Arc<dyn EventStore>,
    pub(crate) authorization: Option<crate::auth::Authorization>,
    pub(crate) max_sessions: usize,
    pub(crate) max_sessions_per_subject: usize,
    pub(crate) request_read_timeout: Duration,
    pub(crate) backplane: Option<Backplane>,
    #[cfg(feature = "http-tls")]
    pub(crate) tls: Option<crate::tls::ServerCertificate>,
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig")
            .field("stateless", &self.stateless)
            .field("idle_timeout", &self.idle_timeout)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("max_body", &self.max_body)
            .field("keep_alive", &self.keep_alive)
            .field("resume_window", &self.resume_window)
            .field("authorization", &self.authorization)
            .field("max_sessions", &self.max_sessions)
            .field("max_sessions_per_subject", &self.max_sessions_per_subject)
            .field("request_read_timeout", &self.request_read_timeout)
            .field("backplane", &self.backplane)
            .field("tls", &self.is_tls())
            .finish_non_exhaustive()
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            stateless: false,
            idle_timeout: Duration::from_secs(30 * 60),
            allowed_hosts: Some(security::LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect()),
            allowed_origins: None,
            max_body: crate::transport::DEFAULT_MAX_LINE,
            keep_alive: Duration::from_secs(15),
            resume_window: Duration::from_secs(60),
            event_store: Arc::new(MemoryEventStore::default()),
            authorization: None,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_sessions_per_subject: DEFAULT_MAX_SESSIONS_PER_SUBJECT,
            request_read_timeout: Duration::from_secs(10),
            backplane: None,
            #[cfg(feature = "http-tls")]
            tls: None,
        }
    }
}

impl HttpConfig {
    /// Serves without sessions (see the module documentation for what that rules out).
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// Ends sessions that have had no request and nothing in flight for this long (default 30 minutes).
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The host names (without port) the `Host` header may carry; `Origin`, when present, must
    /// name one of them too unless [`allowed_origins`](Self::allowed_origins) is set. By default
    /// only loopback names are allowed, which protects a local server from DNS rebinding.
    pub fn allowed_hosts<I: IntoIterator<Item = S>, S: Into<String>>(mut self, hosts: I) -> Self {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// The origins (`scheme://host[:port]`) browsers may call from.
    pub fn allowed_origins<I: IntoIterator<Item = S>, S: Into<String>>(mut self, origins: I) -> Self {
        self.allowed_origins = Some(origins.into_iter().map(Into::into).collect());
        self
    }

    /// Turns off `Host`/`Origin` checks (for a server behind a proxy that does them).
    pub fn disable_host_checks(mut self) -> Self {
        self.allowed_hosts = None;
        self.allowed_origins = None;
        self
    }

    /// The largest accepted request body (default 4 MiB).
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// How often an idle SSE stream gets a comment line to keep proxies from closing it.
    pub fn keep_alive(mut self, every: Duration) -> Self {
        self.keep_alive = every;
        self
    }

    /// How long a request whose SSE stream lost its reader (the client's connection dropped,
    /// or it read too slowly and was cut off) waits for the client to come back with
    /// `Last-Event-ID` before it is cancelled (default one minute). A disconnection is not a
    /// cancellation, but a request nobody resumes must not keep its handler, and the questions
    /// it waits on, until they time out.
    pub fn resume_window(mut self, window: Duration) -> Self {
        self.resume_window = window;
        self
    }

    /// Makes the endpoint an OAuth 2.1 protected resource (see [`crate::auth`]): every request
    /// needs a bearer token the setting's verifier accepts, the protected resource metadata is
    /// served at `/.well-known/oauth-protected-resource` (and that path followed by the
    /// endpoint's path), and calls of tools, prompts and resources that require scopes are
    /// checked against the token's.
    pub fn authorization(mut self, authorization: crate::auth::Authorization) -> Self {
        self.authorization = Some(authorization);
        self
    }

    /// The most 2025-era sessions open at once (default 1,000: a few MiB). When an
    /// `initialize` would open one more, the sessions idle the longest (with nothing in flight;
    /// a sixteenth of the cap at once, so that a burst does not scan them all for each call) are
    /// closed to make room; when every session is busy, the `initialize` is answered `503` with
    /// `Retry-After`.
    ///
    /// Why evict rather than refuse: most clients never end their sessions, so a server that
    /// refused new ones when full would turn clients away for the whole
    /// [`idle_timeout`](Self::idle_timeout) after a burst of abandoned sessions (or a flood of
    /// `initialize`), while an evicted client only has to initialize again (its next request
    /// gets `404`, which tells it so). A session in use is refreshed by every request, so it
    /// outlives any number of abandoned ones.
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max.max(1);
        self
    }

    /// The most sessions one authenticated user ([`Principal`], or the subject of an OAuth
    /// token) may have open at once (default 32); beyond it, that user's session idle the
    /// longest is closed, or the `initialize` is answered `503` when all of them are busy.
    pub fn max_sessions_per_subject(mut self, max: usize) -> Self {
        self.max_sessions_per_subject = max.max(1);
        self
    }

    /// How long a client may take to send a request's headers, and then its body (default
    /// 10 s); a connection that has not sent its headers in time is closed, and a request
    /// whose body has not arrived in time is answered `408`. So a client that sends half a
    /// request cannot hold a connection forever. The header limit applies where
    /// [`StreamableHttp::serve`] (or [`Server::serve_http`](crate::Server::serve_http)) runs
    /// the listener; an application that serves the router itself sets its own.
    pub fn request_read_timeout(mut self, timeout: Duration) -> Self {
        self.request_read_timeout = timeout;
        self
    }

    /// Where SSE events are kept for resumption.
    pub fn event_store(mut self, store: Arc<dyn EventStore>) -> Self {
        self.event_store = store;
        self
    }

    /// Serves `https://` with `certificate` (feature `http-tls`): [`StreamableHttp::serve`] and
    /// [`Server::serve_http`](crate::Server::serve_http) then accept TLS connections only, and
    /// the default resource identifier of a protected endpoint is its `https://` URL. The TLS
    /// handshake must complete within [`request_read_timeout`](Self::request_read_timeout).
    /// A router mounted in an application ([`StreamableHttp::router`]) is served by the
    /// application's own server, which does its own TLS.
    ///
    /// ```no_run
    /// # async fn run(server: typed_mcp::Server) -> Result<(), Box<dyn std::error::Error>> {
    /// use typed_mcp::tls::ServerCertificate;
    /// use typed_mcp::transport::http::HttpConfig;
    ///
    /// let certificate = ServerCertificate::from_pem_files("fullchain.pem", "key.pem")?;
    /// server.serve_http("0.0.0.0:8443".parse()?, Some(HttpConfig::default().tls(certificate))).await?;
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "http-tls")]
    pub fn tls(mut self, certificate: crate::tls::ServerCertificate) -> Self {
        self.tls = Some(certificate);
        self
    }

    /// Whether the endpoint is served over TLS (`HttpConfig::tls`, feature `http-tls`).
    pub fn is_tls(&self) -> bool {
        #[cfg(feature = "http-tls")]
        return self.tls.is_some();
        #[cfg(not(feature = "http-tls"))]
        false
    }

    /// Makes this endpoint one instance of a shared deployment: sessions are recorded in the
    /// backplane's registry, and a request for a session another instance owns is forwarded to
    /// it (see [`Backplane`]). Ignored in [`stateless`](Self::stateless) mode, which has no
    /// sessions to share.
    pub fn backplane(mut self, backplane: Backplane) -> Self {
        if let Some(events) = &backplane.events {
            self.event_store = events.clone();
        }
        self.backplane = Some(backplane);
        self
    }
}

/// What the Streamable HTTP transport serves: sessions it opens on demand, and the tools whose
/// arguments 2026-era requests mirror into headers. The server implements it.
pub(crate) trait HttpService: Send + Sync + 'static {
    /// The engine settings of every session.
    fn session_config(&self) -> &SessionConfig;

    /// A new session of `principal`, opened as `opening` says.
    fn open(
        &self,
        opening: Opening<'_>,
        principal: Option<String>,
        auth: Arc<crate::auth::AuthSlot>,
    ) -> Box<dyn Service>;

    /// The OAuth scopes the tool, prompt or resource `request` calls needs.
    fn required_scopes(&self, request: &crate::protocol::Request) -> Arc<[String]>;

    /// The tool named `name`, if there is one.
    fn tool(&self, name: &str) -> Option<ToolDef>;

    /// The endpoint is one instance of a shared deployment, until `closing`.
    fn join(&self, backplane: &Backplane, closing: CancellationToken);
}

/// How a session the transport opens starts.
pub(crate) enum Opening<'a> {
    /// With the client's `initialize`.
    Initialize,
    /// Already initialized at this revision, the client declaring no capabilities (stateless
    /// serving of 2025-era requests).
    Preinitialized(&'a str),
    /// For one 2026-era request, whatever its `_meta` says.
    Request2026,
    /// Taken over from another instance of a shared deployment, in the state its
    /// [`snapshot`](crate::engine::Service::snapshot) describes.
    Restore(&'a str),
}

pub(crate) struct Shared {
    server: Arc<dyn HttpService>,
    config: HttpConfig,
    sessions: RwLock<HashMap<String, Arc<HttpSession>>>,
    closing: CancellationToken,
    guard: Option<auth::Guard>,
    /// Set when the endpoint is one instance of a shared deployment.
    forwarder: Option<backplane::Forwarder>,
    /// The task renewing this instance's presence in the deployment, if it is in one.
    heartbeat: std::sync::Mutex<Option<tokio::task::AbortHandle>>,
}

/// The Streamable HTTP endpoint of a [`Server`](crate::Server). Cheap to clone.
#[derive(Clone)]
pub struct StreamableHttp {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for StreamableHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamableHttp").field("sessions", &self.session_count()).finish()
    }
}

impl StreamableHttp {
    /// The endpoint for `server`. Call from within a tokio runtime (a task expires idle sessions).
    pub(crate) fn for_service(server: Arc<dyn HttpService>, config: HttpConfig) -> Self {
        let guard = config.authorization.clone().map(auth::Guard::new);
        let forwarder = config.backplane.clone().filter(|_| !config.stateless).map(backplane::Forwarder::new);
        let shared = Arc::new(Shared {
            server,
            config,
            guard,
            forwarder,
            sessions: RwLock::default(),
            closing: CancellationToken::new(),
            heartbeat: std::sync::Mutex::default(),
        });
        if !shared.config.stateless {
            tokio::spawn(expire_idle(Arc::downgrade(&shared)));
        }
        if let Some(forwarder) = &shared.forwarder {
            shared.server.join(&forwarder.backplane, shared.closing.clone());
            let beat = tokio::spawn(backplane::heartbeat(Arc::downgrade(&shared)));
            if let Ok(mut slot) = shared.heartbeat.lock() {
                *slot = Some(beat.abort_handle());
            }
        }
        StreamableHttp { shared }
    }

    /// A router serving the endpoint at every path; mount it with `Router::nest_service` or
    /// use [`router_at`](Self::router_at).
    pub fn router(&self) -> axum::Router {
        axum::Router::new().fallback(endpoint).with_state(self.shared.clone())
    }

    /// A router serving the endpoint at `path` (e.g. `/mcp`).
    pub fn router_at(&self, path: &str) -> axum::Router {
        let mut router = axum::Router::new().route(path, axum::routing::any(endpoint));
        if self.shared.guard.is_some() {
            let suffixed = format!("{}{}", auth::METADATA_PATH, path.trim_end_matches('/'));
            router = router.route(auth::METADATA_PATH, axum::routing::any(endpoint));
            if suffixed != auth::METADATA_PATH {
                router = router.route(&suffixed, axum::routing::any(endpoint));
            }
        }
        router.with_state(self.shared.clone())
    }

    /// How many sessions are open.
    pub fn session_count(&self) -> usize {
        self.shared.sessions.read().map(|s| s.len()).unwrap_or(0)
    }

    /// How many requests of the open sessions still have a response stream: requests in
    /// flight, or whose response has not been routed yet. Zero once every request has finished.
    pub fn request_streams(&self) -> usize {
        self.shared.sessions.read().map(|s| s.values().map(|s| s.request_streams()).sum()).unwrap_or(0)
    }

    /// Ends every session here: pending waits fail, handlers are cancelled, streams close.
    ///
    /// An instance of a shared deployment ([`HttpConfig::backplane`]) is leaving it: it stops
    /// its heartbeat and withdraws its announcement, so that the sessions it held live on,
    /// each taken over (with its stored events) by the next instance that receives a request
    /// for it, at once rather than when the lease would have lapsed.
    pub async fn close_all(&self) {
        self.shared.closing.cancel();
        let handing_over = self.shared.forwarder.is_some();
        if let Some(forwarder) = &self.shared.forwarder {
            // Stopped first, so that no beat announces the instance again after it left (the
            // store serves one instance's commands in order).
            if let Some(beat) = self.shared.heartbeat.lock().ok().and_then(|mut b| b.take()) {
                beat.abort();
            }
            let bp = &forwarder.backplane;
            if let Err(e) = bp.registry.leave(&bp.instance).await {
                tracing::warn!(error = %e, "cannot withdraw this instance from the shared session store");
            }
        }
        let sessions: Vec<_> = match self.shared.sessions.write() {
            Ok(mut s) => s.drain().map(|(_, v)| v).collect(),
            Err(_) => Vec::new(),
        };
        for session in sessions {
            session.close_keeping_events(handing_over).await;
        }
    }

    /// Serves the endpoint at `/mcp` on `listener` until `shutdown` completes, then closes
    /// every session. Speaks `https://` when the configuration has a certificate
    /// (`HttpConfig::tls`, feature `http-tls`).
    pub async fn serve(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> io::Result<()> {
        let scheme = if self.shared.config.is_tls() { "https" } else { "http" };
        if let Some(guard) = &self.shared.guard {
            guard.default_resource(scheme, listener.local_addr()?);
        }
        let token = self.shared.closing.clone();
        let this = self.clone();
        tokio::spawn(async move {
            shutdown.await;
            this.close_all().await;
        });
        let accept = Accept {
            #[cfg(feature = "http-tls")]
            tls: self.shared.config.tls.as_ref().map(crate::tls::ServerCertificate::acceptor),
            header_timeout: self.shared.config.request_read_timeout,
        };
        serve_connections(listener, self.router_at("/mcp"), accept, token).await
    }
}

/// How accepted connections are served.
struct Accept {
    /// TLS, when the endpoint serves `https://`.
    #[cfg(feature = "http-tls")]
    tls: Option<tokio_rustls::TlsAcceptor>,
    /// How long a request's headers (and the TLS handshake) may take.
    header_timeout: Duration,
}

/// Accepts connections until `closing`, each served by hyper's HTTP/1 with a limit on the time
/// its request headers may take (over TLS when configured, the handshake taking no longer);
/// then waits a little for the open ones to finish.
async fn serve_connections(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    accept: Accept,
    closing: CancellationToken,
) -> io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let header_timeout = accept.header_timeout;
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = closing.cancelled() => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors and the like: wait rather than spin.
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder.timer(TokioTimer::new()).header_read_timeout(header_timeout);
        #[cfg(feature = "http-tls")]
        if let Some(acceptor) = &accept.tls {
            // The handshake runs in the connection's task, so that a slow client holds up no
            // other; the watcher keeps shutdown waiting for the connection once it is served.
            let (acceptor, watcher, closing) = (acceptor.clone(), graceful.watcher(), closing.clone());
            tokio::spawn(async move {
                let handshake = tokio::time::timeout(header_timeout, acceptor.accept(stream));
                let stream = tokio::select! {
                    done = handshake => match done {
                        Ok(Ok(stream)) => stream,
                        Ok(Err(e)) => return tracing::debug!(error = %e, "a TLS handshake failed"),
                        Err(_) => return tracing::debug!("a TLS handshake took too long"),
                    },
                    () = closing.cancelled() => return,
                };
                let connection = watcher.watch(builder.serve_connection(TokioIo::new(stream), service));
                if let Err(e) = connection.await {
                    tracing::debug!(error = %e, "an HTTPS connection ended with an error");
                }
            });
            continue;
        }
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "an HTTP connection ended with an error");
            }
        });
    }
    drop(listener);
    // Sessions are closed by now, so their streams end; a connection still busy after this
    // is dropped with the runtime.
    let _ = tokio::time::timeout(Duration::from_secs(5), graceful.shutdown()).await;
    Ok(())
}

async fn expire_idle(shared: std::sync::Weak<Shared>) {
    loop {
        let period = match shared.upgrade() {
            Some(s) => (s.config.idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(60)),
            None => return,
        };
        tokio::time::sleep(period).await;
        let Some(shared) = shared.upgrade() else { return };
        let idle: Vec<Arc<HttpSession>> = match shared.sessions.write() {
            Ok(mut sessions) => {
                let expired: Vec<String> = sessions
                    .iter()
                    .filter(|(_, s)| s.idle_for() >= shared.config.idle_timeout && s.in_flight() == 0)
                    .map(|(k, _)| k.clone())
                    .collect();
                expired.iter().filter_map(|k| sessions.remove(k)).collect()
            }
            Err(_) => return,
        };
        for session in idle {
            tracing::debug!(session = session.id(), "idle session expired");
            session.close().await;
            release(&shared, session.id());
        }
    }
}

fn json_rpc_error(status: StatusCode, error: &ErrorObject) -> Response {
    json_rpc_error_for(status, None, error)
}

/// An error response to the request `id` (`None`: a request whose id could not be read).
fn json_rpc_error_for(status: StatusCode, id: Option<&RequestId>, error: &ErrorObject) -> Response {
    let body = encode_error(id, error);
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The id of the request in `body`, if it is one: an error about the request as a whole still
/// names the request it answers.
fn request_id(body: &[u8]) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        id: Option<RequestId>,
        method: Option<serde::de::IgnoredAny>,
    }
    // Only an object is a request: serde would read `IdOnly` from an array too, by position.
    if !body.trim_ascii_start().starts_with(b"{") {
        return None;
    }
    let parsed: IdOnly = serde_json::from_slice(body).ok()?;
    parsed.method.and(parsed.id)
}

/// The HTTP status of a 2026-era error response: 404 for a method the server does not have,
/// 400 for a malformed request (invalid params, a header that disagrees with the body, a
/// capability the client did not declare, a revision the server does not speak), else 200.
fn status_of_2026_error(code: i32) -> StatusCode {
    match code {
        codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        codes::PARSE_ERROR
        | codes::INVALID_REQUEST
        | codes::INVALID_PARAMS
        | HEADER_MISMATCH
        | MISSING_REQUIRED_CLIENT_CAPABILITY
        | UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

fn plain(status: StatusCode, message: &str) -> Response {
    json_rpc_error(status, &ErrorObject::invalid_request(message.to_owned()))
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Whether `Accept` lists `media` (or a wildcard covering it). The list may be split over
/// several header lines.
fn accepts(headers: &HeaderMap, media: &str) -> bool {
    let mut listed = headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(','));
    listed.any(|part| {
        let media_type = part.split(';').next().unwrap_or("").trim();
        media_type == media
            || media_type == "*/*"
            || media_type == format!("{}/*", media.split('/').next().unwrap_or(""))
    })
}

async fn endpoint(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    // The body is read before anything is refused. A response sent while part of the body is
    // still unread makes hyper close the connection after it, without saying so: a client that
    // reuses the connection (as after the 400 for a newer revision's probe) then sees it drop
    // with no response.
    let read =
        tokio::time::timeout(shared.config.request_read_timeout, axum::body::to_bytes(body, shared.config.max_body));
    let bytes = match read.await {
        Ok(Ok(b)) => b,
        Err(_) => {
            let mut r = plain(StatusCode::REQUEST_TIMEOUT, "the request body did not arrive in time");
            r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            return r;
        }
        Ok(Err(_)) => {
            let mut r = plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("the request body exceeds the limit of {} bytes", shared.config.max_body),
            );
            // The rest stays unread, so this connection cannot carry another request.
            r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            return r;
        }
    };
    if let Err(reason) = security::check(&shared.config, &parts.headers) {
        tracing::warn!(%reason, "rejected an HTTP request");
        return plain(StatusCode::FORBIDDEN, &reason);
    }
    if let Some(guard) = &shared.guard
        && auth::Guard::is_metadata_path(parts.uri.path())
    {
        return match parts.method {
            Method::GET | Method::HEAD => guard.metadata(),
            _ => {
                let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "the metadata is read with GET");
                r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET"));
                r
            }
        };
    }
    // Every request after `initialize` carries the negotiated revision; one this server does
    // not speak is refused whatever the method.
    if let Some(v) = header_str(&parts.headers, PROTOCOL_VERSION_HEADER)
        && v != PROTOCOL_VERSION_2026_07_28
        && !SUPPORTED_PROTOCOL_VERSIONS.contains(&v)
    {
        let error = ErrorObject::new(
            UNSUPPORTED_PROTOCOL_VERSION,
            format!("unsupported MCP-Protocol-Version `{v}`; supported: {}", supported_versions().join(", ")),
        )
        .with_data(serde_json::json!({"supported": supported_versions(), "requested": v}));
        return json_rpc_error_for(StatusCode::BAD_REQUEST, request_id(&bytes).as_ref(), &error);
    }
    let mut principal = parts.extensions.get::<Principal>().map(|p| p.0.clone());
    let mut identity = None;
    if let Some(guard) = &shared.guard {
        match guard.authenticate(&parts.headers).await {
            Ok(info) => {
                // The token's subject is the user: sessions, URL flows and `requestState`
                // are bound to it.
                principal = Some(info.subject().to_owned());
                identity = Some(info);
            }
            Err(response) => return response,
        }
    }
    if let Some(forwarder) = &shared.forwarder
        && let Some(response) = forward_if_elsewhere(&shared, forwarder, &parts, bytes.clone()).await
    {
        return response;
    }
    let auth = identity.as_ref();
    match parts.method {
        Method::POST => post(&shared, &parts.headers, principal, auth, &bytes).await,
        Method::GET => get(&shared, &parts.headers, principal).await,
        Method::DELETE => delete(&shared, &parts.headers, principal).await,
        _ => {
            let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "use POST, GET or DELETE");
            r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
            r
        }
    }
}

/// Forwards a request for a session this instance does not hold to the instance that owns it;
/// `None` when it is to be served here (no session named, the session is local or unknown, or
/// the request was forwarded to this instance already).
async fn forward_if_elsewhere(
    shared: &Arc<Shared>,
    forwarder: &backplane::Forwarder,
    parts: &axum::http::request::Parts,
    bytes: axum::body::Bytes,
) -> Option<Response> {
    if !matches!(parts.method, Method::POST | Method::GET | Method::DELETE) {
        return None;
    }
    let id = header_str(&parts.headers, SESSION_HEADER)?;
    if parts.headers.contains_key(FORWARDED_HEADER) || shared.sessions.read().ok()?.contains_key(id) {
        return None;
    }
    if let Some(address) = forwarder.cached(id) {
        match forwarder.forward(&address, parts.method.clone(), &parts.headers, bytes.clone()).await {
            Ok(response) => return Some(response),
            // Gone since: ask the registry.
            Err(backplane::Unreachable) => forwarder.forget(id),
        }
    }
    let mut route = forwarder.route(id).await;
    if let backplane::Route::Gone(gone) = &route {
        match take_over(shared, forwarder, id, gone).await {
            // Taken over: served here, like any local session.
            Ok(true) => return None,
            // Another instance was faster: it owns the session now.
            Ok(false) => route = forwarder.route(id).await,
            Err(None) => route = backplane::Route::Unavailable,
            // Every session here is busy: refused like an `initialize` would be.
            Err(Some(refused)) => return Some(refused),
        }
    }
    match route {
        backplane::Route::Here | backplane::Route::Gone(_) => None,
        backplane::Route::Owner(address) => {
            let forwarded = forwarder.forward(&address, parts.method.clone(), &parts.headers, bytes).await;
            Some(forwarded.unwrap_or_else(|backplane::Unreachable| {
                forwarder.forget(id);
                tracing::warn!(address, "cannot reach the owner of a session");
                backplane::unavailable("the session's owner cannot be reached; retry later")
            }))
        }
        backplane::Route::Unavailable => {
            Some(backplane::unavailable("the shared session store is unavailable; retry later"))
        }
    }
}

/// What the transport records of a session for the instance that may take it over: whose it
/// is, and its server session's own snapshot.
#[derive(serde::Serialize, serde::Deserialize)]
struct Recorded {
    principal: Option<String>,
    session: String,
}

/// Takes over session `id` from the instance `gone`, whose heartbeat lapsed: a session is
/// opened here in the recorded state and recorded as this instance's, within this instance's
/// session caps (an idle session may be closed to make room). `Ok(false)` when another
/// instance took it over first (or nothing is recorded to take over); `Err(None)` when the
/// registry failed, `Err(Some(_))` with the `503` when no session can make room.
async fn take_over(
    shared: &Arc<Shared>,
    forwarder: &backplane::Forwarder,
    id: &str,
    gone: &str,
) -> Result<bool, Option<Response>> {
    let bp = &forwarder.backplane;
    let ttl = shared.config.idle_timeout + bp.lease;
    // A session taken over counts against this instance's caps like one it opened: room is
    // made first (so that, when none can be, the session stays for another instance).
    make_room(shared, None).map_err(Some)?;
    let state = match bp.registry.take_over(id, gone, &bp.instance, ttl).await {
        Ok(Some(state)) => state,
        Ok(None) => return Ok(false),
        Err(e) => {
            tracing::warn!(error = %e, session = id, "cannot take over a session");
            return Err(None);
        }
    };
    let Ok(recorded) = serde_json::from_str::<Recorded>(&state) else {
        tracing::warn!(session = id, "a session to take over has an unreadable record");
        return Ok(false);
    };
    // Its user's cap, known now.
    if let Err(refused) = make_room(shared, recorded.principal.as_deref()) {
        // Recorded as ours, but not served: it ends here, like an evicted one.
        release(shared, id);
        return Err(Some(refused));
    }
    // What the lost instance stored of the session's streams becomes replayable here.
    shared.config.event_store.restore(id).await;
    let slot = Arc::new(crate::auth::AuthSlot::default());
    let service = shared.server.open(Opening::Restore(&recorded.session), recorded.principal.clone(), slot.clone());
    let session = HttpSession::start(id.to_owned(), service, recorded.principal, slot, shared, true);
    // The client may still hold requests of the lost instance (numbered from 0): ours start
    // past any of those, and past those of an earlier takeover (ids stay below 2^53, which
    // JavaScript clients read exactly). So do the ids of our SSE streams and events, which
    // must not repeat those the lost instance stored.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let base = i64::try_from(now.as_millis()).unwrap_or(0).saturating_mul(1000);
    session.engine().peer().number_requests_from(base);
    session.number_events_from(u64::try_from(base).unwrap_or(0));
    // As after `initialize`: the session takes part in announcements.
    let initialized = crate::protocol::Notification { method: "notifications/initialized".into(), params: None };
    session.engine().handle_message(Message::Notification(initialized)).await;
    if let Ok(mut sessions) = shared.sessions.write() {
        sessions.insert(id.to_owned(), session);
    }
    tracing::info!(session = id, from = gone, "took over a session whose instance is gone");
    Ok(true)
}

/// The session's record for the shared registry: its principal and server-session snapshot.
fn record_of(session: &HttpSession) -> Option<String> {
    let snapshot = session.engine().service().snapshot()?;
    serde_json::to_string(&Recorded { principal: session.principal().map(str::to_owned), session: snapshot }).ok()
}

/// Whether a request changes what the shared registry records of its session.
fn changes_record(method: &str) -> bool {
    matches!(method, "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe")
}

/// Finds the session a request names, or says why it cannot be used.
#[allow(clippy::result_large_err)] // an error response is built once per rejected request
fn lookup(shared: &Shared, headers: &HeaderMap, principal: &Option<String>) -> Result<Arc<HttpSession>, Response> {
    let Some(id) = header_str(headers, SESSION_HEADER) else {
        return Err(plain(StatusCode::BAD_REQUEST, "missing Mcp-Session-Id header; send `initialize` first"));
    };
    let session = shared.sessions.read().ok().and_then(|s| s.get(id).cloned());
    match session {
        Some(s) if s.principal() == principal.as_deref() => {
            s.touch();
            Ok(s)
        }
        // Another user's session id is answered exactly like an unknown one.
        _ => Err(session_not_found()),
    }
}

fn session_not_found() -> Response {
    json_rpc_error(StatusCode::NOT_FOUND, &ErrorObject::new(-32001, "session not found"))
}

/// A POST: checks and decodes the message, then serves it by its era (a 2026-era request), in
/// stateless mode, or on its session.
async fn post(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    principal: Option<String>,
    auth: Option<&Arc<crate::auth::AuthInfo>>,
    bytes: &[u8],
) -> Response {
    let message = match read_message(headers, bytes) {
        Ok(m) => m,
        Err(refused) => return *refused,
    };
    // A call of something that needs scopes the token lacks: 403, so the client can step up.
    if let (Some(guard), Some(auth), Message::Request(request)) = (&shared.guard, auth, &message)
        && let Err(response) = guard.check_scopes(auth, &shared.server.required_scopes(request))
    {
        return response;
    }
    let hide = shared.guard.as_ref().is_some_and(|g| g.settings.hide_unauthorized);
    let auth = Identity { info: auth.cloned(), hide };
    // Checked by `endpoint`: absent, or a revision this server speaks.
    let version = header_str(headers, PROTOCOL_VERSION_HEADER);
    if is_2026(&message, headers, version) {
        post_2026(shared, headers, principal, auth, message).await
    } else if shared.config.stateless {
        post_stateless(shared, principal, auth, message, version).await
    } else {
        post_to_session(shared, headers, principal, auth, message).await
    }
}

/// The verified identity of a request, to hand to the session serving it.
struct Identity {
    info: Option<Arc<crate::auth::AuthInfo>>,
    hide: bool,
}

impl Identity {
    /// A slot holding it, for a new session.
    fn slot(self) -> Arc<crate::auth::AuthSlot> {
        let slot = Arc::new(crate::auth::AuthSlot::default());
        slot.set(self.info, self.hide);
        slot
    }
}

/// The message a POST carries, or the response refusing it (wrong media types, not UTF-8, not
/// a JSON-RPC message).
fn read_message(headers: &HeaderMap, bytes: &[u8]) -> Result<Message, Box<Response>> {
    let content_type = header_str(headers, header::CONTENT_TYPE.as_str()).unwrap_or("");
    if !content_type.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/json") {
        return Err(Box::new(plain(StatusCode::UNSUPPORTED_MEDIA_TYPE, "the body must be `application/json`")));
    }
    if !(accepts(headers, "application/json") && accepts(headers, "text/event-stream")) {
        return Err(Box::new(plain(
            StatusCode::NOT_ACCEPTABLE,
            "the Accept header must list application/json and text/event-stream",
        )));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Box::new(json_rpc_error(
            StatusCode::BAD_REQUEST,
            &ErrorObject::parse_error(format!("parse error: invalid UTF-8: {e}")),
        ))
    })?;
    Message::decode(text).map_err(|DecodeError { id, error, respond }| {
        // A malformed response or notification must not be answered: the POST is refused,
        // with an error that names no id (the id of a response is one of ours).
        let id = if respond { id } else { None };
        let body = encode_error(id.as_ref(), &error);
        Box::new((StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], body).into_response())
    })
}

/// Whether a message is of the 2026 era: no sessions; every request stands alone. A request is
/// of that era when its `_meta` or its `MCP-Protocol-Version` header says so (a request whose
/// header says so but whose `_meta` does not is then refused as malformed), or when it probes
/// with `server/discover` outside a session.
fn is_2026(message: &Message, headers: &HeaderMap, version: Option<&str>) -> bool {
    match message {
        Message::Request(r) => {
            is_2026_request(r)
                || version == Some(PROTOCOL_VERSION_2026_07_28)
                || (r.method == "server/discover" && header_str(headers, SESSION_HEADER).is_none())
        }
        _ => version == Some(PROTOCOL_VERSION_2026_07_28),
    }
}

/// A 2026-era message: a request is served by a session of its own, checked against the
/// era's header rules; anything else has nothing to do over HTTP.
async fn post_2026(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    principal: Option<String>,
    auth: Identity,
    message: Message,
) -> Response {
    let Message::Request(request) = &message else {
        // Nothing to do with a 2026-era notification or response over HTTP.
        return StatusCode::ACCEPTED.into_response();
    };
    if let Err(error) = check_2026_headers(headers, request, &*shared.server) {
        return json_rpc_error_for(StatusCode::BAD_REQUEST, Some(&request.id), &error);
    }
    let slot = auth.slot();
    let service = shared.server.open(Opening::Request2026, principal.clone(), slot.clone());
    serve_alone(shared, service, principal, slot, message, Reply::Request2026).await
}

/// A 2025-era message in stateless mode: served by a fresh session, initialized by the
/// message itself or taken to be at the revision its header names.
async fn post_stateless(
    shared: &Arc<Shared>,
    principal: Option<String>,
    auth: Identity,
    message: Message,
    version: Option<&str>,
) -> Response {
    let is_initialize = matches!(&message, Message::Request(r) if r.method == "initialize");
    let slot = auth.slot();
    let service = if is_initialize {
        shared.server.open(Opening::Initialize, principal.clone(), slot.clone())
    } else {
        let v = version.unwrap_or(crate::protocol::LATEST_PROTOCOL_VERSION);
        shared.server.open(Opening::Preinitialized(v), principal.clone(), slot.clone())
    };
    serve_alone(shared, service, principal, slot, message, Reply::Session(None)).await
}

/// Serves `message` on a session of its own, with no id, that closes once it has answered.
async fn serve_alone(
    shared: &Arc<Shared>,
    service: Box<dyn Service>,
    principal: Option<String>,
    slot: Arc<crate::auth::AuthSlot>,
    message: Message,
    reply: Reply,
) -> Response {
    let session = HttpSession::start(String::new(), service, principal, slot, shared, false);
    let response = deliver(&session, message, reply).await;
    session.close_when_idle();
    response
}

/// A 2025-era message on its session: `initialize` without a session id opens one (kept only
/// if initialization succeeds); anything else goes to the session its id names.
async fn post_to_session(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    principal: Option<String>,
    auth: Identity,
    message: Message,
) -> Response {
    let is_initialize = matches!(&message, Message::Request(r) if r.method == "initialize");
    let (session, created) = match header_str(headers, SESSION_HEADER) {
        None if is_initialize => {
            if let Err(response) = make_room(shared, principal.as_deref()) {
                return response;
            }
            let id = crate::elicit::url::new_elicitation_id();
            let slot = auth.slot();
            let service = shared.server.open(Opening::Initialize, principal.clone(), slot.clone());
            let session = HttpSession::start(id.clone(), service, principal, slot, shared, true);
            (session, true)
        }
        _ => match lookup(shared, headers, &principal) {
            Ok(s) => {
                if shared.guard.is_some() {
                    s.auth().set(auth.info, auth.hide);
                }
                (s, false)
            }
            Err(r) => return r,
        },
    };
    if created && let Ok(mut sessions) = shared.sessions.write() {
        sessions.insert(session.id().to_owned(), session.clone());
    }
    let recorded = matches!((&shared.forwarder, &message),
        (Some(_), Message::Request(r)) if created || changes_record(&r.method));
    let mut response = deliver(&session, message, Reply::Session(created.then(|| session.id().to_owned()))).await;
    if let (true, Some(forwarder)) = (recorded && response.status().is_success(), &shared.forwarder) {
        let bp = &forwarder.backplane;
        let ttl = shared.config.idle_timeout + bp.lease;
        let record = record_of(&session).unwrap_or_default();
        if created {
            // Recorded before the client learns the id: its next request may land anywhere.
            if let Err(e) = bp.registry.claim(session.id(), &bp.instance, &record, ttl).await {
                tracing::warn!(error = %e, "cannot record a new session in the shared session store");
                response = backplane::unavailable("the shared session store is unavailable; retry later");
            }
        } else if let Err(e) = bp.registry.save_state(session.id(), &record, ttl).await {
            tracing::warn!(error = %e, session = session.id(), "cannot record a session's new state");
        }
    }
    if created && !response.status().is_success() {
        // `initialize` failed: the session was never usable.
        if let Ok(mut sessions) = shared.sessions.write() {
            sessions.remove(session.id());
        }
        session.close().await;
    }
    response
}

/// Makes room for one more session (of `principal`) within the caps: closes the session idle
/// the longest, of that user when the user is at their cap, else of anyone when the server is
/// at its cap; `503` when every candidate is busy.
#[allow(clippy::result_large_err)] // an error response is built once per refused request
fn make_room(shared: &Arc<Shared>, principal: Option<&str>) -> Result<(), Response> {
    let evicted = {
        let Ok(mut sessions) = shared.sessions.write() else { return Ok(()) };
        let mut evicted = Vec::new();
        // At the global cap, a sixteenth of the sessions go at once (the idle-longest ones), so
        // that a burst of `initialize` does not scan every session for each call.
        let mut pick = |sessions: &mut HashMap<String, Arc<HttpSession>>, mine: bool| -> Result<(), Response> {
            let mut idle: Vec<(std::time::Instant, &str)> = sessions
                .values()
                .filter(|s| !mine || s.principal() == principal)
                .filter(|s| s.in_flight() == 0)
                .map(|s| (s.last_active(), s.id()))
                .collect();
            let batch = if mine { 1 } else { (shared.config.max_sessions / 16).clamp(1, idle.len().max(1)) };
            if batch < idle.len() {
                idle.select_nth_unstable(batch - 1);
                idle.truncate(batch);
            }
            let victims: Vec<String> = idle.into_iter().map(|(_, id)| id.to_owned()).collect();
            let before = evicted.len();
            evicted.extend(victims.iter().filter_map(|id| sessions.remove(id)));
            if evicted.len() > before {
                Ok(())
            } else {
                tracing::warn!(mine, "no session can be closed to open another: refusing `initialize`");
                let mut r = plain(StatusCode::SERVICE_UNAVAILABLE, "too many open sessions; retry later");
                r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                Err(r)
            }
        };
        if principal.is_some() {
            let count = sessions.values().filter(|s| s.principal() == principal).count();
            if count >= shared.config.max_sessions_per_subject {
                pick(&mut sessions, true)?;
            }
        }
        if sessions.len() >= shared.config.max_sessions {
            pick(&mut sessions, false)?;
        }
        evicted
    };
    for session in evicted {
        tracing::debug!(session = session.id(), "closed the session idle the longest to make room");
        release(shared, session.id());
        tokio::spawn(async move { session.close().await });
    }
    Ok(())
}

/// Decodes a header value that may use the `=?base64?…?=` form.
fn header_value(raw: &str) -> Option<String> {
    match raw.strip_prefix("=?base64?").and_then(|r| r.strip_suffix("?=")) {
        Some(encoded) => {
            use base64::Engine as _;
            let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(raw.to_owned()),
    }
}

/// The 2026-era header rules: `Mcp-Method` (and `Mcp-Name` where it applies) must be present
/// and agree with the body, as must `MCP-Protocol-Version` with `_meta`, and the `Mcp-Param-*`
/// headers of a tool call with the arguments they mirror.
fn check_2026_headers(
    headers: &HeaderMap,
    request: &crate::protocol::Request,
    server: &dyn HttpService,
) -> Result<(), ErrorObject> {
    let mismatch = |message: String| ErrorObject::new(HEADER_MISMATCH, format!("Header mismatch: {message}"));
    let params: serde_json::Value =
        request.params.as_deref().and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or(serde_json::Value::Null);
    let body_version = params["_meta"][META_PROTOCOL_VERSION].as_str();
    match (header_str(headers, PROTOCOL_VERSION_HEADER), body_version) {
        (Some(h), Some(b)) if h != b => {
            return Err(mismatch(format!("MCP-Protocol-Version header `{h}` does not match `_meta` version `{b}`")));
        }
        (None, Some(_)) => return Err(mismatch("missing MCP-Protocol-Version header".into())),
        _ => {}
    }
    match header_str(headers, "mcp-method").and_then(header_value) {
        None => return Err(mismatch("missing Mcp-Method header".into())),
        Some(m) if m != request.method.as_str() => {
            return Err(mismatch(format!("Mcp-Method header `{m}` does not match body method `{}`", request.method)));
        }
        Some(_) => {}
    }
    let name = match request.method.as_str() {
        "tools/call" | "prompts/get" => params["name"].as_str(),
        "resources/read" => params["uri"].as_str(),
        "tasks/get" | "tasks/update" | "tasks/cancel" => params["taskId"].as_str(),
        _ => return Ok(()),
    };
    match (header_str(headers, "mcp-name").and_then(header_value), name) {
        (None, _) => return Err(mismatch("missing Mcp-Name header".into())),
        (Some(h), Some(b)) if h != b => {
            return Err(mismatch(format!("Mcp-Name header value '{h}' does not match body value '{b}'")));
        }
        (Some(_), None) => return Err(mismatch("Mcp-Name header given but the body names nothing".into())),
        _ => {}
    }
    match (request.method.as_str(), name.and_then(|n| server.tool(n))) {
        ("tools/call", Some(tool)) => check_param_headers(headers, &tool, &params["arguments"]),
        _ => Ok(()),
    }
}

/// Each argument a tool mirrors into an `Mcp-Param-{name}` header (`x-mcp-header`) must come
/// with that header, holding the same value; an argument that is absent (or null) must not.
fn check_param_headers(headers: &HeaderMap, tool: &ToolDef, arguments: &serde_json::Value) -> Result<(), ErrorObject> {
    let mismatch = |message: String| ErrorObject::new(HEADER_MISMATCH, format!("Header mismatch: {message}"));
    // Checked when the tool was registered.
    let Ok(params) = tool.header_params() else { return Ok(()) };
    let no_arguments = serde_json::Map::new();
    let arguments = arguments.as_object().unwrap_or(&no_arguments);
    for param in params {
        let header = format!("mcp-param-{}", param.header);
        let at = param.path.join(".");
        match (param.value(arguments), headers.get(header.as_str())) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(mismatch(format!(
                    "Mcp-Param-{} header given but the arguments have no `{at}`",
                    param.header
                )));
            }
            (Some(_), None) => {
                return Err(mismatch(format!("missing Mcp-Param-{} header for the argument `{at}`", param.header)));
            }
            (Some(body), Some(raw)) => {
                let decoded = raw.to_str().ok().and_then(header_value).ok_or_else(|| {
                    mismatch(format!("Mcp-Param-{} header holds invalid characters or invalid Base64", param.header))
                })?;
                if !param.matches(&decoded, body) {
                    return Err(mismatch(format!(
                        "Mcp-Param-{} header value '{decoded}' does not match the argument `{at}` ({body})",
                        param.header
                    )));
                }
            }
        }
    }
    Ok(())
}

/// How a POST is answered besides its messages.
enum Reply {
    /// A 2025-era request, of the session whose id is given when `initialize` just created it.
    Session(Option<String>),
    /// A 2026-era request: an error response's HTTP status follows its code.
    Request2026,
}

/// Hands a message to the session and answers the POST: 202 for notifications and responses;
/// for a request, JSON when the response is all there is, else an SSE stream.
async fn deliver(session: &Arc<HttpSession>, message: Message, reply: Reply) -> Response {
    let Message::Request(request) = message else {
        session.engine().handle_message(message).await;
        return StatusCode::ACCEPTED.into_response();
    };
    let id = request.id.clone();
    let mut events = match session.open_request_stream(&id) {
        Ok(events) => events,
        Err(OpenError::DuplicateId) => {
            let error =
                ErrorObject::invalid_request(format!("request id {id} is already in use by a request in flight"));
            let body = encode_error(Some(&id), &error);
            return (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], body).into_response();
        }
        // Closed between the lookup and now: as if it had not been found.
        Err(OpenError::Closed) => return session_not_found(),
    };
    session.engine().handle_message(Message::Request(request)).await;
    let mut response = match events.recv().await {
        // Cancelled before it sent anything: no response will come. The request still gets
        // the SSE stream the spec asks for, ending at once.
        None if !session.closing().is_cancelled() => session::sse_response(Delivery::empty(), session.clone()),
        None => plain(StatusCode::SERVICE_UNAVAILABLE, "the session closed before answering"),
        Some(first) if first.is_response => {
            let status = match &reply {
                Reply::Session(new_id) => {
                    let is_error = first.frame.contains("\"error\":{") && !first.frame.contains("\"result\":");
                    if is_error && new_id.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK }
                }
                Reply::Request2026 => error_code(&first.frame).map_or(StatusCode::OK, status_of_2026_error),
            };
            (status, [(header::CONTENT_TYPE, "application/json")], first.frame).into_response()
        }
        Some(first) => session::sse_response(Delivery::new(first, events), session.clone()),
    };
    if let Reply::Session(Some(id)) = reply
        && let Ok(v) = HeaderValue::from_str(&id)
    {
        response.headers_mut().insert(SESSION_HEADER, v);
    }
    response
}

/// The code of the error a response frame carries, if it is an error response.
fn error_code(frame: &str) -> Option<i32> {
    #[derive(serde::Deserialize)]
    struct Code {
        code: i32,
    }
    #[derive(serde::Deserialize)]
    struct ErrorOnly {
        error: Option<Code>,
    }
    serde_json::from_str::<ErrorOnly>(frame).ok()?.error.map(|e| e.code)
}

async fn get(shared: &Arc<Shared>, headers: &HeaderMap, principal: Option<String>) -> Response {
    if shared.config.stateless {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "this server is stateless: there is no session stream to GET");
    }
    if !accepts(headers, "text/event-stream") {
        return plain(StatusCode::NOT_ACCEPTABLE, "GET needs `Accept: text/event-stream`");
    }
    let session = match lookup(shared, headers, &principal) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let attached = match header_str(headers, "last-event-id") {
        Some(last) => match EventId::decode(last) {
            Some(after) => session.resume(after),
            None => return plain(StatusCode::BAD_REQUEST, "malformed Last-Event-ID"),
        },
        None => session.attach_standalone(),
    };
    match attached {
        Ok(delivery) => session::sse_response(delivery, session),
        Err(status) => plain(
            status,
            if status == StatusCode::CONFLICT {
                "this session already has an open GET stream"
            } else {
                "those events are no longer available"
            },
        ),
    }
}

async fn delete(shared: &Arc<Shared>, headers: &HeaderMap, principal: Option<String>) -> Response {
    if shared.config.stateless {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "this server is stateless: there is no session to end");
    }
    let session = match lookup(shared, headers, &principal) {
        Ok(s) => s,
        Err(r) => return r,
    };
    if let Ok(mut sessions) = shared.sessions.write() {
        sessions.remove(session.id());
    }
    session.close().await;
    release(shared, session.id());
    StatusCode::OK.into_response()
}

/// Forgets a closed session in the shared registry, if there is one (in the background: the
/// record expires anyway).
fn release(shared: &Shared, session: &str) {
    if let Some(forwarder) = &shared.forwarder {
        let bp = forwarder.backplane.clone();
        let session = session.to_owned();
        tokio::spawn(async move {
            if let Err(e) = bp.registry.release(&session, &bp.instance).await {
                tracing::debug!(error = %e, session, "cannot forget a closed session in the shared session store");
            }
        });
    }
}
