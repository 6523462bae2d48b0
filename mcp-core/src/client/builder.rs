//! How a [`Client`] is configured and connected: the builder, its transports, and the opening
//! of the connection in either era (`initialize`, or `server/discover`).

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::connected::{Client, ClientInner};
use super::connection::{Connection, LineConnection};
use super::era::{self, Era2026, ProtocolEra};
#[cfg(feature = "http-client")]
use super::http;
#[cfg(feature = "http-client")]
use super::oauth;
#[cfg(feature = "otel")]
use super::requests::params_object;
use super::round_trip::{DEFAULT_MAX_INPUT_ROUNDS, RoundTrip};
use super::service::{ClientService, ClientShared, NotificationCallback};
#[cfg(feature = "otel")]
use super::traced::Traced;
use super::{
    ClientError, ElicitationHandler, RootsHandler, SamplingHandler, ServerNotification, elicitation, handlers,
};
use crate::engine::{Peer, RequestOptions, Session, SessionConfig};
use crate::protocol::{
    ClientCapabilities, Implementation, InitializeParams, InitializeResult, JsonObject, LATEST_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS, era_2026::DiscoverResult,
};
use crate::transport::LineOptions;

/// How long a request waits for its answer unless configured otherwise: 5 minutes (a tool may
/// ask the user something while it runs).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// How long [`Client::complete_url_elicitations`] waits for the user to finish the flows.
pub const DEFAULT_URL_ELICITATION_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// How many notifications a slow subscriber may fall behind before it misses some.
pub const DEFAULT_NOTIFICATION_CAPACITY: usize = 256;

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
    pub(super) apps: bool,
    #[cfg(feature = "http-client")]
    oauth: Option<oauth::OAuth>,
    /// Spans and metrics of the requests sent, and how the server is reached.
    #[cfg(feature = "otel")]
    traced: Option<Traced>,
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

    /// Which protocol era to speak (default [`ProtocolEra::Y2025`]): a session opened with
    /// `initialize`, 2026-07-28 requests, or whichever the server speaks
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

    /// In the 2026-07-28 era, how many rounds of questions (`input_required` results) one
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
            ProtocolEra::Y2025 => self.initialize(&shared, &peer, &*connection).await.map(|i| (i, None)),
            ProtocolEra::Y2026 => {
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
                    Ok((init, era_2026)) => Ok((init, Some(era_2026))),
                    Err(e @ (ClientError::Closed | ClientError::Cancelled)) => Err(e),
                    Err(e) => {
                        tracing::debug!(error = %e, "the server does not speak the era_2026 revision; opening a session");
                        connection.era_2026(None);
                        self.initialize(&shared, &peer, &*connection).await.map(|i| (i, None))
                    }
                }
            }
        };
        match opened {
            Ok((init, era_2026)) => {
                if let Some(era_2026) = &era_2026 {
                    era_2026.cache.watch(shared.events.subscribe());
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
                        era_2026,
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

    /// `server/discover`: the server must list a 2026-07-28 revision this client speaks.
    async fn discover(
        &self,
        shared: &Arc<ClientShared>,
        peer: &Peer,
        connection: &dyn Connection,
        timeout: Option<Duration>,
    ) -> Result<(InitializeResult, Era2026), ClientError> {
        let era_2026 = Era2026::new(&shared.capabilities(), &self.info);
        connection.era_2026(Some(era_2026.headers.clone()));
        let round_trip = RoundTrip {
            peer,
            shared,
            era_2026: &era_2026,
            max_rounds: self.max_input_rounds,
            url_wait: self.url_elicitation_timeout,
            #[cfg(feature = "otel")]
            traced: self.traced.as_ref(),
        };
        let options = RequestOptions { timeout, cancel: None };
        let result = round_trip.request("server/discover", JsonObject::new(), options).await?;
        let discovered: DiscoverResult = result.decode("server/discover")?;
        if !era_2026.switch_to_supported(&discovered.supported_versions, false)
            && !discovered.supported_versions.contains(&era_2026.version())
        {
            return Err(ClientError::UnsupportedProtocolVersion(discovered.supported_versions.join(", ")));
        }
        let init = InitializeResult {
            protocol_version: era_2026.version(),
            server_info: discovered.server_info().unwrap_or_else(|| Implementation::new("unknown", "unknown")),
            capabilities: discovered.capabilities,
            instructions: discovered.instructions,
        };
        Ok((init, era_2026))
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
}
