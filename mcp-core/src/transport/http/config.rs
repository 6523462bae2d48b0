//! The settings of the Streamable HTTP transport.

use std::sync::Arc;
use std::time::Duration;

use super::deployment::Backplane;
use super::events::{EventStore, MemoryEventStore};

/// The default of [`HttpConfig::max_sessions`].
pub const DEFAULT_MAX_SESSIONS: usize = 1000;

/// The default of [`HttpConfig::max_sessions_per_subject`].
pub const DEFAULT_MAX_SESSIONS_PER_SUBJECT: usize = 32;

/// Settings of the Streamable HTTP transport.
#[derive(Clone)]
pub struct HttpConfig {
    pub(crate) sessionless: bool,
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
    pub(crate) shutdown_grace: Duration,
    #[cfg(feature = "http-tls")]
    pub(crate) tls: Option<crate::tls::ServerCertificate>,
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig")
            .field("sessionless", &self.sessionless)
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
            .field("shutdown_grace", &self.shutdown_grace)
            .field("tls", &self.is_tls())
            .finish_non_exhaustive()
    }
}

/// The host names a loopback-bound server answers to (the default `allowed_hosts`).
pub(crate) const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "[::1]"];

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            sessionless: false,
            idle_timeout: Duration::from_secs(30 * 60),
            allowed_hosts: Some(LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect()),
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
            shutdown_grace: Duration::ZERO,
            #[cfg(feature = "http-tls")]
            tls: None,
        }
    }
}

impl HttpConfig {
    /// Serves without sessions (see the module documentation for what that rules out).
    pub fn sessionless(mut self, sessionless: bool) -> Self {
        self.sessionless = sessionless;
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

    /// How long [`StreamableHttp::serve`](super::StreamableHttp::serve) lets the work in flight
    /// finish once its shutdown future completes (see
    /// [`StreamableHttp::drain`](super::StreamableHttp::drain)); default none: what runs is
    /// cancelled at once. In a shared deployment, give it what a request or task may take, so
    /// that a rolling restart ends none of them.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
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

    /// The most sessions one authenticated user ([`Principal`](super::Principal), or the subject of an OAuth
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
    /// [`StreamableHttp::serve`](super::StreamableHttp::serve) (or [`Server::serve_http`](crate::Server::serve_http)) runs
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

    /// Serves `https://` with `certificate` (feature `http-tls`): [`StreamableHttp::serve`](super::StreamableHttp::serve) and
    /// [`Server::serve_http`](crate::Server::serve_http) then accept TLS connections only, and
    /// the default resource identifier of a protected endpoint is its `https://` URL. The TLS
    /// handshake must complete within [`request_read_timeout`](Self::request_read_timeout).
    /// A router mounted in an application ([`StreamableHttp::router`](super::StreamableHttp::router)) is served by the
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
    /// it (see [`Backplane`]). Ignored in [`sessionless`](Self::sessionless) mode, which has no
    /// sessions to share.
    pub fn backplane(mut self, backplane: Backplane) -> Self {
        if let Some(events) = &backplane.events {
            self.event_store = events.clone();
        }
        self.backplane = Some(backplane);
        self
    }
}
