//! MCP clients: connect to a server, use what it offers, and answer what it asks.
//!
//! A [`Client`] is built by a [`ClientBuilder`] with the handlers for the server's requests
//! ([`ElicitationHandler`], [`SamplingHandler`], [`RootsHandler`]) — the capabilities declared
//! in `initialize` follow from them — and connected over a child process's stdio
//! ([`connect_stdio`](ClientBuilder::connect_stdio)), Streamable HTTP
//! (`ClientBuilder::connect_http`, with the feature `http-client`; `https://` works out of
//! the box with the default feature `rustls`, see `client::http`), any reader/writer
//! pair ([`connect_io`](ClientBuilder::connect_io)), or to a [`Server`](crate::Server) in this process
//! ([`connect_in_process`](ClientBuilder::connect_in_process)).
//!
//! ```no_run
//! use typed_mcp::client::{Client, ElicitationModes, elicitation_fn};
//! use typed_mcp::protocol::ElicitResult;
//!
//! # async fn run() -> Result<(), typed_mcp::client::ClientError> {
//! let client = Client::builder("my-app", "1.0.0")
//!     .elicitation(elicitation_fn(ElicitationModes::FORM, |request| async move {
//!         // Show `request.message()` and the form to the user…
//!         request.as_form().and_then(|f| f.accept_defaults().ok()).unwrap_or_else(ElicitResult::decline)
//!     }))
//!     .connect_stdio(tokio::process::Command::new("my-mcp-server"))
//!     .await?;
//! let result = client.call_tool("add", serde_json::json!({"a": 2, "b": 40})).await?;
//! println!("{:?}", result.content);
//! client.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Protocol eras
//!
//! By default the client opens a session with `initialize` (revisions up to 2025-11-25).
//! [`ClientBuilder::protocol_era`] chooses the stateless era (2026-07-28) instead, or
//! [`ProtocolEra::Auto`]: `server/discover` first, `initialize` if the server does not speak
//! it. The API is the same in both: in the stateless era each request carries the revision and
//! the client's capabilities in `_meta`, a result that asks for input (`input_required`) is
//! answered by the same handlers and the request retried until it completes, list results are
//! kept as long as the server's caching hints allow, and [`Client::listen`] opens the stream of
//! change notifications. Over HTTP, each stateless request also carries `Mcp-Method`,
//! `Mcp-Name` and the `Mcp-Param-*` headers of the tool arguments the tool's schema marks with
//! `x-mcp-header` (a tool whose marks break the rules is refused).
//!
//! Every request waits at most [`DEFAULT_REQUEST_TIMEOUT`] unless configured otherwise;
//! dropping its future, or cancelling the token given to [`ToolCallBuilder::cancel_on`], withdraws it
//! with `notifications/cancelled`. Notifications reach the application through
//! [`Client::notifications`] (a broadcast receiver) or [`ClientBuilder::on_notification`].

mod apps;
mod cache;
mod choice;
pub(crate) mod connection;
mod elicitation;
mod era;
mod error;
mod handlers;
#[cfg(feature = "http-client")]
pub mod http;
pub(crate) mod http_headers;
mod listen;
mod notifications;
#[cfg(feature = "http-client")]
pub mod oauth;
mod round_trip;
pub(crate) mod service;
#[cfg(any(feature = "http-client", fuzzing))]
pub(crate) mod sse;
mod tasks;

use std::future::{Future, IntoFuture};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::broadcast;

pub use apps::AppView;
pub use elicitation::{
    ElicitationFn, ElicitationHandler, ElicitationModes, ElicitationRequest, FormRequest, TypedAnswerError,
    TypedElicitation, TypedForm, UrlRequest, elicitation_fn, fill_defaults, typed_elicitation,
};
pub use era::{ProtocolEra, STATELESS_VERSIONS};
pub use error::ClientError;
pub use handlers::{RootsHandler, SamplingFn, SamplingHandler, SamplingSupport, sampling_fn};
pub use listen::Subscription;
pub use notifications::ServerNotification;
pub use round_trip::DEFAULT_MAX_INPUT_ROUNDS;
pub use tasks::TaskStart;
/// Cancels a request given to [`ToolCallBuilder::cancel_on`].
pub use tokio_util::sync::CancellationToken;

use connection::{Connection, LineConnection};
use era::Stateless;
use round_trip::RoundTrip;
use service::{ClientService, ClientShared, NotificationCallback, ProgressCallback};

use crate::elicit::UrlElicitationRequired;
use crate::engine::{BoxFuture, Peer, RequestOptions, Session, SessionConfig};
use crate::protocol::{
    CallToolParams, CallToolResult, ClientCapabilities, CompleteArgument, CompleteContext, CompleteParams,
    CompleteResult, Completion, CompletionReference, ElicitAction, EmptyResult, GetPromptParams, GetPromptResult,
    Implementation, InitializeParams, InitializeResult, JsonObject, LATEST_PROTOCOL_VERSION, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, LoggingLevel, PaginatedParams, ProgressParams,
    ProgressToken, Prompt, ReadResourceResult, RequestMeta, Resource, ResourceTemplate, ResourceUriParams,
    SUPPORTED_PROTOCOL_VERSIONS, ServerCapabilities, SetLevelParams, Tool, stateless::DiscoverResult,
};
use crate::transport::LineOptions;

/// How long a request waits for its answer unless configured otherwise: 5 minutes (a tool may
/// ask the user something while it runs).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// How long [`Client::complete_url_elicitations`] waits for the user to finish the flows.
pub const DEFAULT_URL_ELICITATION_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// How many notifications a slow subscriber may fall behind before it misses some.
pub const DEFAULT_NOTIFICATION_CAPACITY: usize = 256;

/// The most pages a `list_all_*` call follows (a server repeating cursors must not loop it).
const MAX_PAGES: usize = 10_000;

/// How many times [`Client::call_tool_with_url_elicitation`] completes flows and retries.
const URL_ELICITATION_ROUNDS: usize = 3;

/// Configures a [`Client`]: who it is, its handlers, its limits, then how it connects.
#[must_use = "a builder does nothing until one of its `connect_*` methods is awaited"]
pub struct ClientBuilder {
    info: Implementation,
    protocol_version: String,
    elicitation: Option<Arc<dyn elicitation::DynElicitationHandler>>,
    sampling: Option<Arc<dyn handlers::DynSamplingHandler>>,
    roots: Option<Arc<dyn handlers::DynRootsHandler>>,
    callbacks: Vec<NotificationCallback>,
    notification_capacity: usize,
    request_timeout: Option<Duration>,
    url_elicitation_timeout: Duration,
    session: SessionConfig,
    line: LineOptions,
    era: ProtocolEra,
    max_input_rounds: usize,
    /// Whether the client renders MCP Apps (see [`ClientBuilder::apps`]).
    apps: bool,
    #[cfg(feature = "http-client")]
    oauth: Option<oauth::OAuth>,
    /// Spans and metrics of the requests sent, and how the server is reached.
    #[cfg(feature = "otel")]
    traced: Option<Traced>,
}

/// A client's telemetry, and what its spans say of the connection.
#[cfg(feature = "otel")]
#[derive(Clone)]
pub(crate) struct Traced {
    pub(crate) telemetry: crate::telemetry::Telemetry,
    pub(crate) transport: crate::telemetry::Transport,
    /// The server's host and port, over HTTP.
    pub(crate) server: Option<(String, u16)>,
    pub(crate) opened: std::time::Instant,
}

#[cfg(feature = "otel")]
impl Traced {
    pub(crate) fn server(&self) -> Option<(&str, u16)> {
        self.server.as_ref().map(|(h, p)| (h.as_str(), *p))
    }
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("info", &self.info)
            .field("capabilities", &self.shared_parts().capabilities())
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// Sets the human-readable title in `clientInfo`.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Answers `elicitation/create` with `handler`, declaring the modes it supports.
    pub fn elicitation(mut self, handler: impl ElicitationHandler) -> Self {
        self.elicitation = Some(Arc::new(handler));
        self
    }

    /// Answers `sampling/createMessage` with `handler`, declaring `sampling`.
    pub fn sampling(mut self, handler: impl SamplingHandler) -> Self {
        self.sampling = Some(Arc::new(handler));
        self
    }

    /// Answers `roots/list` with `handler` (a `Vec<Root>` will do), declaring `roots`.
    pub fn roots(mut self, handler: impl RootsHandler) -> Self {
        self.roots = Some(Arc::new(handler));
        self
    }

    /// Calls `callback` with every notification from the server, on the connection's reader,
    /// in order: keep it quick (send to a channel if there is work to do).
    pub fn on_notification(mut self, callback: impl Fn(&ServerNotification) + Send + Sync + 'static) -> Self {
        self.callbacks.push(Arc::new(callback));
        self
    }

    /// How many notifications a [`Client::notifications`] receiver may fall behind before it
    /// misses some (default [`DEFAULT_NOTIFICATION_CAPACITY`]).
    pub fn notification_capacity(mut self, capacity: usize) -> Self {
        self.notification_capacity = capacity.max(1);
        self
    }

    /// How long each request waits for its answer (default [`DEFAULT_REQUEST_TIMEOUT`]);
    /// `None` waits until the answer comes, the request is cancelled, or the connection closes.
    pub fn request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long [`Client::complete_url_elicitations`] waits for the flows to complete (default
    /// [`DEFAULT_URL_ELICITATION_TIMEOUT`]).
    pub fn url_elicitation_timeout(mut self, timeout: Duration) -> Self {
        self.url_elicitation_timeout = timeout;
        self
    }

    /// The protocol revision to ask for in `initialize` (default the newest,
    /// [`LATEST_PROTOCOL_VERSION`]). The server may answer with an older one it speaks.
    pub fn protocol_version(mut self, version: impl Into<String>) -> Self {
        self.protocol_version = version.into();
        self
    }

    /// Which protocol era to speak (default [`ProtocolEra::Session`]): a session opened with
    /// `initialize`, stateless requests (2026-07-28), or whichever the server speaks
    /// ([`ProtocolEra::Auto`]). See [`Client::era`] for what was chosen.
    pub fn protocol_era(mut self, era: ProtocolEra) -> Self {
        self.era = era;
        self
    }

    /// Authorizes with OAuth 2.1 when an HTTP server asks for it (401), in either era: see
    /// [`mod@oauth`] for the flow and [`oauth::LoopbackAuthorizer`] for command-line programs.
    #[cfg(feature = "http-client")]
    pub fn oauth(mut self, oauth: oauth::OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// In the stateless era, how many rounds of questions (`input_required` results) one
    /// request may take before it fails with [`ClientError::TooManyRounds`] (default
    /// [`DEFAULT_MAX_INPUT_ROUNDS`]).
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds.max(1);
        self
    }

    /// The longest accepted incoming line on line transports (default 4 MiB).
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.line.max_line = bytes;
        self
    }

    /// What the client will declare in `initialize`, given the handlers registered so far.
    pub fn capabilities(&self) -> ClientCapabilities {
        self.shared_parts().capabilities()
    }

    fn shared_parts(&self) -> ClientShared {
        let (events, _) = broadcast::channel(self.notification_capacity);
        ClientShared {
            elicitation: self.elicitation.clone(),
            sampling: self.sampling.clone(),
            roots: self.roots.clone(),
            events,
            callbacks: self.callbacks.clone(),
            completions: Default::default(),
            progress: Mutex::default(),
            closed: CancellationToken::new(),
            apps: self.apps,
            #[cfg(feature = "http-client")]
            extensions: self.oauth.as_ref().map(oauth::OAuth::extensions).unwrap_or_default(),
            #[cfg(not(feature = "http-client"))]
            extensions: Vec::new(),
        }
    }

    /// Starts the server `command` (its stdin and stdout are taken for the protocol; its
    /// stderr is left as configured) and connects to it. On [`Client::close`] its input is
    /// closed and it gets a few seconds to exit before it is killed.
    pub async fn connect_stdio(self, command: tokio::process::Command) -> Result<Client, ClientError> {
        let mut command = command;
        command.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| ClientError::Transport(format!("cannot start the server: {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ClientError::Transport("the server's stdin or stdout is not a pipe".into()));
        };
        self.connect_lines(stdout, stdin, |c| c.with_child(child)).await
    }

    /// Connects over a reader (the server's output) and a writer (its input), one JSON
    /// message per line. Closing the client closes the writer.
    pub async fn connect_io<R, W>(self, reader: R, writer: W) -> Result<Client, ClientError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        self.connect_lines(reader, writer, |c| c).await
    }

    /// Connects to a Streamable HTTP endpoint (`http://host:port/mcp`).
    #[cfg(feature = "http-client")]
    pub async fn connect_http(self, url: &str) -> Result<Client, ClientError> {
        self.connect_http_with(url, http::HttpClientConfig::default()).await
    }

    /// Traces and measures every request this client sends, by the OpenTelemetry MCP
    /// conventions, and propagates the trace context in each request's `_meta` (see
    /// [`crate::telemetry`]).
    #[cfg(feature = "otel")]
    pub fn telemetry(mut self, telemetry: crate::telemetry::Telemetry) -> Self {
        self.traced = Some(Traced {
            telemetry,
            transport: crate::telemetry::Transport::Pipe,
            server: None,
            opened: std::time::Instant::now(),
        });
        self
    }

    /// Connects to a Streamable HTTP endpoint with transport settings (extra headers, an
    /// HTTP client of the application's, reconnection).
    #[cfg(feature = "http-client")]
    pub async fn connect_http_with(
        #[cfg_attr(not(feature = "otel"), allow(unused_mut))] mut self,
        url: &str,
        config: http::HttpClientConfig,
    ) -> Result<Client, ClientError> {
        #[cfg(feature = "otel")]
        if let Some(traced) = &mut self.traced {
            traced.transport = crate::telemetry::Transport::Tcp;
            traced.server = reqwest::Url::parse(url)
                .ok()
                .and_then(|u| Some((u.host_str()?.to_owned(), u.port_or_known_default()?)));
        }
        let shared = Arc::new(self.shared_parts());
        let (session, outbound) = Session::new(ClientService { shared: shared.clone() }, self.session.clone());
        let peer = session.peer().clone();
        let connection = http::HttpConnection::start(session, outbound, url, config, self.oauth.clone())?;
        self.finish(shared, peer, Box::new(connection)).await
    }

    pub(crate) async fn connect_lines<R, W>(
        self,
        reader: R,
        writer: W,
        attach: impl FnOnce(LineConnection) -> LineConnection,
    ) -> Result<Client, ClientError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let shared = Arc::new(self.shared_parts());
        let (session, outbound) = Session::new(ClientService { shared: shared.clone() }, self.session.clone());
        let peer = session.peer().clone();
        let connection = attach(LineConnection::start(session, outbound, reader, writer, self.line.clone()));
        self.finish(shared, peer, Box::new(connection)).await
    }

    /// Opens the connection in the chosen era: the `initialize` handshake, or `server/discover`
    /// (falling back to `initialize` in [`ProtocolEra::Auto`]). On failure the connection is
    /// closed.
    async fn finish(
        self,
        shared: Arc<ClientShared>,
        peer: Peer,
        connection: Box<dyn Connection>,
    ) -> Result<Client, ClientError> {
        let opened = match self.era {
            ProtocolEra::Session => self.initialize(&shared, &peer, &*connection).await.map(|i| (i, None)),
            ProtocolEra::Stateless => {
                self.discover(&shared, &peer, &*connection, self.request_timeout).await.map(|(i, s)| (i, Some(s)))
            }
            ProtocolEra::Auto => {
                let probe =
                    self.request_timeout.map_or(era::DISCOVER_PROBE_TIMEOUT, |t| t.min(era::DISCOVER_PROBE_TIMEOUT));
                // The probe's timeout does not run while the transport waits for the person to
                // authorize (a protected server answers 401 to the probe first).
                let discover = self.discover(&shared, &peer, &*connection, None);
                tokio::pin!(discover);
                let probed = loop {
                    match tokio::time::timeout(probe, &mut discover).await {
                        Ok(result) => break result,
                        Err(_) if connection.authorizing() => continue,
                        Err(_) => {
                            break Err(ClientError::Timeout { method: "server/discover".into(), timeout: probe });
                        }
                    }
                };
                match probed {
                    Ok((init, stateless)) => Ok((init, Some(stateless))),
                    Err(e @ (ClientError::Closed | ClientError::Cancelled)) => Err(e),
                    Err(e) => {
                        tracing::debug!(error = %e, "the server does not speak the stateless revision; opening a session");
                        connection.stateless(None);
                        self.initialize(&shared, &peer, &*connection).await.map(|i| (i, None))
                    }
                }
            }
        };
        match opened {
            Ok((init, stateless)) => {
                if let Some(stateless) = &stateless {
                    stateless.cache.watch(shared.events.subscribe());
                }
                tracing::debug!(protocol_version = %init.protocol_version, server = %init.server_info.name, "connected");
                Ok(Client {
                    inner: Arc::new(ClientInner {
                        peer,
                        shared,
                        init,
                        request_timeout: self.request_timeout,
                        url_elicitation_timeout: self.url_elicitation_timeout,
                        connection,
                        next_progress: AtomicU64::new(1),
                        stateless,
                        max_input_rounds: self.max_input_rounds,
                        listen_gate: tokio::sync::Mutex::new(()),
                        #[cfg(feature = "otel")]
                        traced: self.traced.map(|t| Traced { opened: std::time::Instant::now(), ..t }),
                    }),
                })
            }
            Err(e) => {
                connection.close().await;
                Err(e)
            }
        }
    }

    /// The `initialize` handshake.
    async fn initialize(
        &self,
        shared: &ClientShared,
        peer: &Peer,
        connection: &dyn Connection,
    ) -> Result<InitializeResult, ClientError> {
        let params = InitializeParams {
            protocol_version: self.protocol_version.clone(),
            capabilities: shared.capabilities(),
            client_info: self.info.clone(),
        };
        let options = RequestOptions { timeout: self.request_timeout, cancel: None };
        #[cfg(feature = "otel")]
        let result: InitializeResult = match &self.traced {
            Some(traced) => {
                let mut params = params_object(&params)?;
                let version = Some(self.protocol_version.as_str());
                let operation =
                    traced.telemetry.sending("initialize", &mut params, version, traced.transport, traced.server());
                let outcome = peer.request_raw("initialize", &params, options).await;
                operation.end(match &outcome {
                    Ok(raw) => Ok(Some(raw.get())),
                    Err(e) => Err(crate::telemetry::Failure::of_peer(e)),
                });
                serde_json::from_str(outcome?.get())
                    .map_err(|e| ClientError::Codec(format!("invalid `initialize` result: {e}")))?
            }
            None => peer.request("initialize", &params, options).await?,
        };
        #[cfg(not(feature = "otel"))]
        let result: InitializeResult = peer.request("initialize", &params, options).await?;
        if !SUPPORTED_PROTOCOL_VERSIONS.contains(&result.protocol_version.as_str()) {
            return Err(ClientError::UnsupportedProtocolVersion(result.protocol_version));
        }
        connection.negotiated(&result.protocol_version);
        peer.notify("notifications/initialized", &serde_json::json!({})).await?;
        Ok(result)
    }

    /// `server/discover`: the server must list a stateless revision this client speaks.
    async fn discover(
        &self,
        shared: &Arc<ClientShared>,
        peer: &Peer,
        connection: &dyn Connection,
        timeout: Option<Duration>,
    ) -> Result<(InitializeResult, Stateless), ClientError> {
        let stateless = Stateless::new(&shared.capabilities(), &self.info);
        connection.stateless(Some(stateless.headers.clone()));
        let round_trip = RoundTrip {
            peer,
            shared,
            stateless: &stateless,
            max_rounds: self.max_input_rounds,
            url_wait: self.url_elicitation_timeout,
            #[cfg(feature = "otel")]
            traced: self.traced.as_ref(),
        };
        let options = RequestOptions { timeout, cancel: None };
        let result = round_trip.request("server/discover", JsonObject::new(), options).await?;
        let discovered: DiscoverResult = serde_json::from_value(serde_json::Value::Object(result))
            .map_err(|e| ClientError::Codec(format!("invalid `server/discover` result: {e}")))?;
        if !stateless.switch_to_supported(&discovered.supported_versions, false)
            && !discovered.supported_versions.contains(&stateless.version())
        {
            return Err(ClientError::UnsupportedProtocolVersion(discovered.supported_versions.join(", ")));
        }
        let init = InitializeResult {
            protocol_version: stateless.version(),
            server_info: discovered.server_info().unwrap_or_else(|| Implementation::new("unknown", "unknown")),
            capabilities: discovered.capabilities,
            instructions: discovered.instructions,
        };
        Ok((init, stateless))
    }
}

struct ClientInner {
    peer: Peer,
    shared: Arc<ClientShared>,
    init: InitializeResult,
    request_timeout: Option<Duration>,
    url_elicitation_timeout: Duration,
    connection: Box<dyn Connection>,
    next_progress: AtomicU64,
    /// Set when the connection speaks the stateless era.
    stateless: Option<Stateless>,
    max_input_rounds: usize,
    /// Held while a `subscriptions/listen` waits for its acknowledgement.
    listen_gate: tokio::sync::Mutex<()>,
    #[cfg(feature = "otel")]
    traced: Option<Traced>,
}

impl Drop for ClientInner {
    fn drop(&mut self) {
        self.connection.abort();
    }
}

/// A connected, initialized MCP client. Cheap to clone; every clone uses the same connection.
///
/// Dropping the last clone stops the connection at once; [`close`](Self::close) ends it
/// gracefully.
#[derive(Clone)]
pub struct Client {
    inner: Arc<ClientInner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.inner.init.server_info)
            .field("protocol_version", &self.inner.init.protocol_version)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Starts a builder; `name` and `version` become the `clientInfo` servers see.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            info: Implementation::new(name, version),
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            elicitation: None,
            sampling: None,
            roots: None,
            callbacks: Vec::new(),
            notification_capacity: DEFAULT_NOTIFICATION_CAPACITY,
            request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
            url_elicitation_timeout: DEFAULT_URL_ELICITATION_TIMEOUT,
            session: SessionConfig::default(),
            line: LineOptions::default(),
            era: ProtocolEra::default(),
            max_input_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            apps: false,
            #[cfg(feature = "http-client")]
            oauth: None,
            #[cfg(feature = "otel")]
            traced: None,
        }
    }

    /// The era this connection speaks: [`ProtocolEra::Session`] or [`ProtocolEra::Stateless`]
    /// (what [`ProtocolEra::Auto`] chose).
    pub fn era(&self) -> ProtocolEra {
        if self.inner.stateless.is_some() { ProtocolEra::Stateless } else { ProtocolEra::Session }
    }

    /// Forgets the list results kept under the server's caching hints (stateless era), so the
    /// next `list_*` call asks the server.
    pub fn clear_cache(&self) {
        if let Some(s) = &self.inner.stateless {
            s.cache.clear();
        }
    }

    /// What the server answered to `initialize` (in the stateless era: what `server/discover`
    /// said, with the revision in use).
    pub fn initialize_result(&self) -> &InitializeResult {
        &self.inner.init
    }

    /// The server's identity.
    pub fn server_info(&self) -> &Implementation {
        &self.inner.init.server_info
    }

    /// What the server declared it can do.
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        &self.inner.init.capabilities
    }

    /// The negotiated protocol revision.
    pub fn protocol_version(&self) -> &str {
        &self.inner.init.protocol_version
    }

    /// The server's instructions, if it gave any.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.init.instructions.as_deref()
    }

    /// What this client declared.
    pub fn capabilities(&self) -> ClientCapabilities {
        self.inner.shared.capabilities()
    }

    /// The session's peer, for requests and notifications this API does not cover.
    pub fn peer(&self) -> &Peer {
        &self.inner.peer
    }

    /// A receiver of every notification the server sends from now on. A receiver that falls
    /// more than the configured capacity behind misses the oldest (it reads `Lagged`).
    pub fn notifications(&self) -> broadcast::Receiver<ServerNotification> {
        self.inner.shared.events.subscribe()
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.inner.peer.is_closed() || self.inner.connection.ended().is_cancelled()
    }

    /// Resolves once the connection has ended (closed by either side).
    pub async fn closed(&self) {
        self.inner.connection.ended().cancelled().await;
    }

    /// Ends the connection: requests still waiting fail with [`ClientError::Closed`], the
    /// server is told (its input closes; over HTTP the session is deleted), and a server
    /// process this client started is stopped.
    pub async fn close(&self) {
        #[cfg(feature = "otel")]
        if let Some(traced) = &self.inner.traced
            && !self.is_closed()
        {
            let version = Some(self.inner.init.protocol_version.as_str());
            traced.telemetry.session_ended(false, traced.opened.elapsed(), version, traced.transport);
        }
        self.inner.connection.close().await;
    }

    fn options(&self, timeout: Option<Option<Duration>>, cancel: Option<CancellationToken>) -> RequestOptions {
        RequestOptions { timeout: timeout.unwrap_or(self.inner.request_timeout), cancel }
    }

    /// Sends any request and decodes its result as `R`, with the default timeout. In the
    /// stateless era the request carries the client's `_meta`, and the server's questions
    /// (`input_required`) are answered by the handlers until the result is complete.
    pub async fn request<P: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<R, ClientError> {
        self.request_with(method, params, self.options(None, None)).await
    }

    async fn request_with<P: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
        options: RequestOptions,
    ) -> Result<R, ClientError> {
        match &self.inner.stateless {
            #[cfg(feature = "otel")]
            None if self.inner.traced.is_some() => self.traced_request(method, params, options).await,
            None => Ok(self.inner.peer.request(method, params, options).await?),
            Some(stateless) => {
                let params = params_object(params)?;
                let result = self.round_trip(stateless).request(method, params, options).await?;
                if result.get("resultType").and_then(serde_json::Value::as_str) == Some(round_trip::RESULT_TASK) {
                    // Only a request that declared the tasks extension is answered with a task.
                    return Err(ClientError::UnexpectedResultType(round_trip::RESULT_TASK.to_owned()));
                }
                decode_result(method, result)
            }
        }
    }

    /// A 2025-era request in its `CLIENT` span, with the span's context in its `_meta`.
    #[cfg(feature = "otel")]
    async fn traced_request<P: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
        options: RequestOptions,
    ) -> Result<R, ClientError> {
        let Some(traced) = &self.inner.traced else { unreachable!("checked by the caller") };
        let mut params = params_object(params)?;
        let version = Some(self.inner.init.protocol_version.as_str());
        let operation = traced.telemetry.sending(method, &mut params, version, traced.transport, traced.server());
        let outcome = self.inner.peer.request_raw(method, &params, options).await;
        operation.end(match &outcome {
            Ok(raw) => Ok(Some(raw.get())),
            Err(e) => Err(crate::telemetry::Failure::of_peer(e)),
        });
        let raw = outcome?;
        serde_json::from_str(raw.get()).map_err(|e| ClientError::Codec(format!("invalid `{method}` result: {e}")))
    }

    fn round_trip<'a>(&'a self, stateless: &'a Stateless) -> RoundTrip<'a> {
        RoundTrip {
            peer: &self.inner.peer,
            shared: &self.inner.shared,
            stateless,
            max_rounds: self.inner.max_input_rounds,
            url_wait: self.inner.url_elicitation_timeout,
            #[cfg(feature = "otel")]
            traced: self.inner.traced.as_ref(),
        }
    }

    /// One page of a list, from the cache when the server's hints allow (stateless era).
    async fn list_page<R: DeserializeOwned>(&self, method: &str, cursor: Option<&str>) -> Result<R, ClientError> {
        let Some(stateless) = &self.inner.stateless else { return self.request(method, &page(cursor)).await };
        if let Some(kept) = stateless.cache.get(method, cursor) {
            return decode_result(method, kept);
        }
        let params = params_object(&page(cursor))?;
        let result = self.round_trip(stateless).request(method, params, self.options(None, None)).await?;
        stateless.cache.put(method, cursor, &result);
        decode_result(method, result)
    }

    /// Sends any notification.
    pub async fn notify<P: Serialize + ?Sized>(&self, method: &str, params: &P) -> Result<(), ClientError> {
        Ok(self.inner.peer.notify(method, params).await?)
    }

    /// `ping`: checks that the server answers. (The stateless era has no `ping`: the client
    /// asks `server/discover` instead.)
    pub async fn ping(&self) -> Result<(), ClientError> {
        if self.inner.stateless.is_some() {
            return self.request::<_, JsonObject>("server/discover", &serde_json::json!({})).await.map(drop);
        }
        self.request::<_, EmptyResult>("ping", &serde_json::json!({})).await.map(drop)
    }

    /// One page of `tools/list` (`cursor`: where the previous page said the next starts).
    ///
    /// In the stateless era, a tool whose input schema marks arguments for HTTP headers
    /// (`x-mcp-header`) against the specification's rules is left out (and refused if called
    /// by name): the page may then hold fewer tools than the server sent.
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult, ClientError> {
        let mut result: ListToolsResult = self.list_page("tools/list", cursor).await?;
        if let Some(stateless) = &self.inner.stateless {
            result.tools.retain(|tool| match stateless.headers.learn(tool) {
                Ok(()) => true,
                Err(reason) => {
                    tracing::warn!(tool = %tool.name, %reason, "left out a tool with invalid `x-mcp-header` declarations");
                    false
                }
            });
        }
        Ok(result)
    }

    /// Every tool, following the pages.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.all_pages(|c| async move { self.list_tools(c.as_deref()).await.map(|r| (r.tools, r.next_cursor)) }).await
    }

    /// Calls a tool. `arguments` must serialize to a JSON object (or `()` for none).
    pub async fn call_tool(&self, name: &str, arguments: impl Serialize) -> Result<CallToolResult, ClientError> {
        self.tool(name).arguments(arguments).send().await
    }

    /// A tool call to configure (progress, timeout, cancellation) before awaiting it.
    pub fn tool(&self, name: impl Into<String>) -> ToolCallBuilder<'_> {
        ToolCallBuilder {
            client: self,
            name: name.into(),
            arguments: Ok(None),
            timeout: None,
            cancel: None,
            progress: None,
            as_task: false,
        }
    }

    /// Calls a tool; when the server answers that URL-mode elicitations must be completed
    /// first (-32042), offers each to the elicitation handler, waits for the server to report
    /// them complete, and calls again (a few times at most). When the handler does not accept
    /// them all, the -32042 error is returned.
    pub async fn call_tool_with_url_elicitation(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, ClientError> {
        let arguments = tool_arguments(arguments).map_err(ClientError::Codec)?;
        let mut rounds = 0;
        loop {
            let call = ToolCallBuilder { arguments: Ok(arguments.clone()), ..self.tool(name) };
            match call.send().await {
                Err(ClientError::UrlElicitationRequired(required)) if rounds < URL_ELICITATION_ROUNDS => {
                    rounds += 1;
                    if !self.complete_url_elicitations(&required).await? {
                        return Err(ClientError::UrlElicitationRequired(required));
                    }
                }
                other => return other,
            }
        }
    }

    /// Offers each elicitation of a -32042 error to the elicitation handler (as a URL-mode
    /// request: the user's consent to open it) and, if every one is accepted, waits until the
    /// server reports them all complete. `Ok(false)` when one was not accepted (or no handler
    /// supports URL mode); then nothing is awaited.
    pub async fn complete_url_elicitations(&self, required: &UrlElicitationRequired) -> Result<bool, ClientError> {
        let Some(handler) = self.inner.shared.elicitation.as_ref().filter(|h| h.modes().url) else {
            return Ok(false);
        };
        for e in &required.elicitations {
            let request = ElicitationRequest::Url(UrlRequest::new(&e.message, &e.elicitation_id, &e.url));
            if handler.elicit(request).await.action != ElicitAction::Accept {
                return Ok(false);
            }
        }
        let ids = required.elicitations.iter().map(|e| e.elicitation_id.as_str());
        self.wait_for_elicitations(ids, self.inner.url_elicitation_timeout).await?;
        Ok(true)
    }

    /// Waits until the server has sent `notifications/elicitation/complete` for every one of
    /// `ids` (completions that arrived earlier count), at most `timeout`.
    pub async fn wait_for_elicitations<'a>(
        &self,
        ids: impl IntoIterator<Item = &'a str>,
        timeout: Duration,
    ) -> Result<(), ClientError> {
        let ids: Vec<String> = ids.into_iter().map(str::to_owned).collect();
        self.inner.shared.completions.wait(&ids, &self.inner.shared.closed, timeout).await
    }

    /// Whether the server has reported the URL-mode elicitation `id` complete.
    pub fn elicitation_completed(&self, id: &str) -> bool {
        self.inner.shared.completions.all_done(&[id.to_owned()])
    }

    /// One page of `resources/list`.
    pub async fn list_resources(&self, cursor: Option<&str>) -> Result<ListResourcesResult, ClientError> {
        self.list_page("resources/list", cursor).await
    }

    /// Every resource, following the pages.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.all_pages(|c| async move { self.list_resources(c.as_deref()).await.map(|r| (r.resources, r.next_cursor)) })
            .await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.list_page("resources/templates/list", cursor).await
    }

    /// Every resource template, following the pages.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.all_pages(|c| async move {
            self.list_resource_templates(c.as_deref()).await.map(|r| (r.resource_templates, r.next_cursor))
        })
        .await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.request("resources/read", &ResourceUriParams { uri: uri.to_owned() }).await
    }

    /// `resources/subscribe`: the server will send
    /// [`ServerNotification::ResourceUpdated`] when the resource changes.
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.request::<_, EmptyResult>("resources/subscribe", &ResourceUriParams { uri: uri.to_owned() })
            .await
            .map(drop)
    }

    /// `resources/unsubscribe`.
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.request::<_, EmptyResult>("resources/unsubscribe", &ResourceUriParams { uri: uri.to_owned() })
            .await
            .map(drop)
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(&self, cursor: Option<&str>) -> Result<ListPromptsResult, ClientError> {
        self.list_page("prompts/list", cursor).await
    }

    /// Every prompt, following the pages.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.all_pages(|c| async move { self.list_prompts(c.as_deref()).await.map(|r| (r.prompts, r.next_cursor)) })
            .await
    }

    /// `prompts/get` with string arguments (`&[]` for none).
    pub async fn get_prompt(&self, name: &str, arguments: &[(&str, &str)]) -> Result<GetPromptResult, ClientError> {
        let arguments = (!arguments.is_empty())
            .then(|| arguments.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect());
        self.request("prompts/get", &GetPromptParams { name: name.to_owned(), arguments }).await
    }

    /// `completion/complete`.
    pub async fn complete(&self, params: &CompleteParams) -> Result<Completion, ClientError> {
        self.request::<_, CompleteResult>("completion/complete", params).await.map(|r| r.completion)
    }

    /// Completes the value of a prompt's argument.
    pub async fn complete_prompt_argument(
        &self,
        prompt: &str,
        argument: &str,
        value: &str,
    ) -> Result<Completion, ClientError> {
        let reference = CompletionReference::Prompt { name: prompt.to_owned(), title: None };
        self.complete(&completion_params(reference, argument, value)).await
    }

    /// Completes the value of a resource template's variable.
    pub async fn complete_resource_argument(
        &self,
        uri_template: &str,
        argument: &str,
        value: &str,
    ) -> Result<Completion, ClientError> {
        let reference = CompletionReference::Resource { uri: uri_template.to_owned() };
        self.complete(&completion_params(reference, argument, value)).await
    }

    /// `logging/setLevel`: the server sends log messages at `level` and above.
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        self.request::<_, EmptyResult>("logging/setLevel", &SetLevelParams { level }).await.map(drop)
    }

    /// Tells the server the roots changed (`notifications/roots/list_changed`).
    pub async fn notify_roots_list_changed(&self) -> Result<(), ClientError> {
        self.notify("notifications/roots/list_changed", &serde_json::json!({})).await
    }

    async fn all_pages<T, F, Fut>(&self, mut page: F) -> Result<Vec<T>, ClientError>
    where
        F: FnMut(Option<String>) -> Fut,
        Fut: Future<Output = Result<(Vec<T>, Option<String>), ClientError>>,
    {
        let mut all = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let (items, next) = page(cursor.take()).await?;
            all.extend(items);
            match next {
                Some(next) => cursor = Some(next),
                None => return Ok(all),
            }
        }
        Err(ClientError::Codec(format!("the server sent more than {MAX_PAGES} pages")))
    }
}

/// Request parameters as a JSON object (`null` for none).
fn params_object<P: Serialize + ?Sized>(params: &P) -> Result<JsonObject, ClientError> {
    match serde_json::to_value(params) {
        Ok(serde_json::Value::Object(o)) => Ok(o),
        Ok(serde_json::Value::Null) => Ok(JsonObject::new()),
        Ok(other) => Err(ClientError::Codec(format!("request parameters must be a JSON object, not {other}"))),
        Err(e) => Err(ClientError::Codec(format!("request parameters could not be encoded: {e}"))),
    }
}

/// A stateless-era result read as `R`.
fn decode_result<R: DeserializeOwned>(method: &str, result: JsonObject) -> Result<R, ClientError> {
    serde_json::from_value(serde_json::Value::Object(result))
        .map_err(|e| ClientError::Codec(format!("invalid `{method}` result: {e}")))
}

fn page(cursor: Option<&str>) -> PaginatedParams {
    PaginatedParams { cursor: cursor.map(str::to_owned) }
}

fn completion_params(reference: CompletionReference, argument: &str, value: &str) -> CompleteParams {
    CompleteParams {
        reference,
        argument: CompleteArgument { name: argument.to_owned(), value: value.to_owned() },
        context: None::<CompleteContext>,
    }
}

/// Tool arguments as a JSON object: `()` or `null` for none.
fn tool_arguments(arguments: impl Serialize) -> Result<Option<JsonObject>, String> {
    match serde_json::to_value(arguments) {
        Ok(serde_json::Value::Object(o)) => Ok(Some(o)),
        Ok(serde_json::Value::Null) => Ok(None),
        Ok(other) => Err(format!("tool arguments must be a JSON object, not {other}")),
        Err(e) => Err(format!("tool arguments could not be encoded: {e}")),
    }
}

/// A `tools/call` being configured; await it (or call [`send`](Self::send)) to make the call.
#[must_use = "a tool call does nothing until awaited"]
pub struct ToolCallBuilder<'a> {
    client: &'a Client,
    name: String,
    arguments: Result<Option<JsonObject>, String>,
    timeout: Option<Option<Duration>>,
    cancel: Option<CancellationToken>,
    progress: Option<ProgressCallback>,
    /// Whether the server may run the call as a task (see [`as_task`](Self::as_task)).
    as_task: bool,
}

impl std::fmt::Debug for ToolCallBuilder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCallBuilder")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

/// Removes a request's progress callback when the request ends, however it ends.
struct ProgressGuard<'a> {
    shared: &'a ClientShared,
    token: ProgressToken,
}

impl Drop for ProgressGuard<'_> {
    fn drop(&mut self) {
        if let Ok(mut m) = self.shared.progress.lock() {
            m.remove(&self.token);
        }
    }
}

impl ToolCallBuilder<'_> {
    /// The arguments: anything that serializes to a JSON object.
    pub fn arguments(mut self, arguments: impl Serialize) -> Self {
        self.arguments = tool_arguments(arguments);
        self
    }

    /// Waits at most `timeout` for the result (instead of the client's default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(Some(timeout));
        self
    }

    /// Waits for the result however long it takes (until cancelled or the connection closes).
    pub fn without_timeout(mut self) -> Self {
        self.timeout = Some(None);
        self
    }

    /// Withdraws the call (with `notifications/cancelled`) when `token` is cancelled; the call
    /// then fails with [`ClientError::Cancelled`].
    pub fn cancel_on(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Asks the server for progress notifications and hands each to `callback`, on the
    /// connection's reader: keep it quick.
    pub fn on_progress(mut self, callback: impl Fn(ProgressParams) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(callback));
        self
    }

    /// Lets the server run the call as a task (the 2026-07-28 tasks extension): the call
    /// declares the extension, and when the server answers with a task, the client polls it
    /// (`tasks/get`, at the interval the server asks for), answers its `inputRequests` with the
    /// client's handlers (`tasks/update`), and returns the tool's result once it completed.
    ///
    /// The call's timeout, when one is set with [`timeout`](Self::timeout), bounds the whole
    /// task; otherwise it bounds each request to the server, and the task may run as long as it
    /// takes. When the call's cancellation token fires, the task is cancelled (`tasks/cancel`).
    /// A task that failed is [`ClientError::Rpc`] with its error; one cancelled otherwise is
    /// [`ClientError::TaskCancelled`]. The server may also answer at once, without a task. In a
    /// session (2025 era), which has no tasks, this is an ordinary call.
    pub fn as_task(mut self) -> Self {
        self.as_task = true;
        self
    }

    /// Makes the call.
    pub async fn send(self) -> Result<CallToolResult, ClientError> {
        let client = self.client;
        let arguments = self.arguments.map_err(ClientError::Codec)?;
        let shared = &*client.inner.shared;
        let mut meta = None;
        let _guard = match self.progress {
            Some(callback) => {
                let n = client.inner.next_progress.fetch_add(1, Ordering::Relaxed);
                let token = ProgressToken::String(format!("progress-{n}"));
                if let Ok(mut m) = shared.progress.lock() {
                    m.insert(token.clone(), callback);
                }
                meta = Some(RequestMeta { progress_token: Some(token.clone()), other: JsonObject::new() });
                Some(ProgressGuard { shared, token })
            }
            None => None,
        };
        let options = client.options(self.timeout, self.cancel);
        if let Some(stateless) = &client.inner.stateless {
            // The tool's `x-mcp-header` marks decide its HTTP headers: learn them first.
            if stateless.headers.known(&self.name).is_none()
                && let Err(e) = client.list_all_tools().await
            {
                tracing::debug!(error = %e, "could not list the tools before calling one");
            }
            if let Some(Err(reason)) = stateless.headers.known(&self.name) {
                return Err(ClientError::ToolRefused { name: self.name, reason });
            }
        }
        let params = CallToolParams { name: self.name, arguments, meta };
        if self.as_task
            && let Some(stateless) = &client.inner.stateless
        {
            return client.call_as_task(stateless, &params, self.timeout.flatten(), options.cancel).await;
        }
        client.request_with("tools/call", &params, options).await
    }
}

impl<'a> IntoFuture for ToolCallBuilder<'a> {
    type Output = Result<CallToolResult, ClientError>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}
