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
//! In sessionless mode ([`HttpConfig::sessionless`], for 2025-era clients) there are no session ids: every POST is served
//! by a fresh session, so server-to-client requests (elicitation, sampling, roots) cannot be
//! made — the client declared no capabilities to that session — and `GET`/`DELETE` answer 405.

mod auth;
mod config;
mod connections;
pub(crate) mod deployment;
mod endpoint;
mod era_2026;
mod events;
mod lifecycle;
mod responses;
mod security;
mod session;
mod sse;

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, RwLock};

use tokio_util::sync::CancellationToken;

pub use config::{DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_SUBJECT, HttpConfig};
pub use deployment::{
    Backplane, BackplaneError, DEFAULT_HEARTBEAT, FORWARDED_HEADER, HOP_HEADER, MAX_INSTANCE_ID, MIN_SECRET,
    MessageBus, Owner, RECORDS_RENEWAL, RUNTIME_STALL_LIMIT, SessionRegistry,
};
pub use events::{EventId, EventStore, MemoryEventStore};
use session::HttpSession;

use crate::auth::RequestIdentity;
use crate::engine::{Handling, RequestScope, Service, SessionConfig};
use crate::protocol::methods::MethodInfo;
use crate::protocol::view::ParamsView;
use crate::protocol::{ErrorObject, Request};

/// The header carrying the session id.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The header carrying the negotiated protocol revision.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// The authenticated user of an HTTP request. An authentication layer in front of the MCP
/// endpoint inserts it into the request's extensions; the session remembers it, later requests
/// of the session must carry the same one, and URL-mode elicitations are bound to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal(pub String);

/// What the Streamable HTTP transport serves: 2025-era sessions it opens on demand, and
/// requests it has let in (origin, authentication, size, JSON checked), which the server
/// admits and serves. Of each request the transport asks one of two things: open a session
/// ([`open`](Self::open)), or serve an admitted request ([`serve`](Self::serve)), whose
/// outcome is typed and mapped to HTTP here. The server implements it; the transport knows
/// nothing of tools, scopes or elicitation.
pub(crate) trait HttpService: Send + Sync + 'static {
    /// The engine settings of every session.
    fn session_config(&self) -> &SessionConfig;

    /// A new session of `principal`, opened as `opening` says. Each of its requests comes with
    /// its own verified identity, in its HTTP parts.
    fn open(&self, opening: Opening<'_>, principal: Option<String>) -> Box<dyn Service>;

    /// Admits `incoming`, as `admission` lets it: a 2026-era request is then served, a
    /// 2025-era one handed back to go to its session.
    fn serve(&self, incoming: Incoming, admission: Admission<'_>) -> Served;

    /// The endpoint is one instance of a shared deployment whose instances talk over `bus`:
    /// the server hears its announcements and questions there, and sends its own.
    fn join(&self, bus: &Arc<deployment::bus::DeploymentBus>);

    /// How many tasks' handlers run in this process.
    fn running_tasks(&self) -> usize;

    /// Cancels the tasks running in this process (it is shutting down).
    fn cancel_tasks(&self);

    /// The server's telemetry, if it has one.
    #[cfg(feature = "otel")]
    fn telemetry(&self) -> Option<&crate::telemetry::Telemetry>;
}

/// A request the transport let in, for the server to admit.
#[allow(clippy::large_enum_variant)] // moved once, into the server, never kept
pub(crate) enum Incoming {
    /// A 2025-era request, on its way to its session.
    ToSession(Request),
    /// A 2026-era request, to be served on its own.
    Alone {
        /// The request.
        request: Request,
        /// Its method's row, if the method is known.
        method: Option<&'static MethodInfo>,
        /// Its parameters, read once.
        view: ParamsView,
        /// The authenticated user, where the transport knows one.
        principal: Option<String>,
        /// Its id, cancellation, peer and HTTP parts.
        scope: RequestScope,
    },
}

/// What the transport verified of a request's caller, for its admission.
pub(crate) struct Admission<'a> {
    /// The verified identity (none on an endpoint without authorization).
    pub(crate) identity: &'a RequestIdentity,
    /// The scopes the endpoint asks of every request.
    pub(crate) endpoint_scopes: &'a [String],
}

/// What the server made of a request: the transport maps it to HTTP.
pub(crate) enum Served {
    /// A 2025-era request admitted: it goes to its session.
    ToSession(Request),
    /// A 2026-era request admitted and being served.
    Handling(Handling),
    /// Not admitted.
    Refused(Refusal),
}

/// Why a request was not admitted.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// Its token lacks scopes of what it calls: `403 insufficient_scope`, so that the client
    /// can step up. `needed` is every scope the request needs, `missing` those the token lacks.
    InsufficientScope {
        /// Every scope the request needs.
        needed: Vec<String>,
        /// The ones its token lacks.
        missing: Vec<String>,
    },
    /// It breaks a rule of the request's form (a header that disagrees with the body, a
    /// malformed `_meta`): `400` with this JSON-RPC error.
    Malformed(ErrorObject),
}

impl Shared {
    /// What the server admits a request of `identity` by.
    pub(crate) fn admission<'a>(&'a self, identity: &'a RequestIdentity) -> Admission<'a> {
        let endpoint_scopes = self.guard.as_ref().map_or(&[][..], |g| &g.settings.required_scopes[..]);
        Admission { identity, endpoint_scopes }
    }

    /// The HTTP answer to the request `id` of `identity` the server refused.
    pub(crate) fn refused(
        &self,
        identity: &RequestIdentity,
        id: Option<&crate::protocol::RequestId>,
        refusal: Refusal,
    ) -> axum::response::Response {
        use axum::http::StatusCode;
        match refusal {
            Refusal::InsufficientScope { needed, missing } => match (&self.guard, &identity.identity) {
                (Some(guard), Some(info)) => guard.insufficient_scope(info, &needed, &missing),
                // Only a verified identity is refused for its scopes.
                _ => responses::plain(StatusCode::FORBIDDEN, "insufficient scope"),
            },
            Refusal::Malformed(error) => responses::json_rpc_error_for(StatusCode::BAD_REQUEST, id, &error),
        }
    }
}

/// How a session the transport opens starts.
pub(crate) enum Opening<'a> {
    /// With the client's `initialize`.
    Initialize,
    /// Already initialized at this revision, the client declaring no capabilities (sessionless
    /// serving of 2025-era requests).
    Preinitialized(&'a str),
    /// Taken over from another instance of a shared deployment, in the state its
    /// [`snapshot`](crate::engine::Service::snapshot) describes.
    Restore(&'a str),
}

pub(crate) struct Shared {
    pub(crate) server: Arc<dyn HttpService>,
    pub(crate) config: HttpConfig,
    pub(crate) sessions: RwLock<HashMap<String, Arc<HttpSession>>>,
    pub(crate) closing: CancellationToken,
    pub(crate) guard: Option<auth::Guard>,
    /// Set when the endpoint is one instance of a shared deployment.
    pub(crate) forwarder: Option<deployment::forwarder::Forwarder>,
    /// What renews this instance's presence in the deployment, if it is in one.
    pub(crate) heartbeat: std::sync::Mutex<Option<deployment::heartbeat::Heartbeat>>,
    /// How many 2026-era requests are being answered.
    pub(crate) answering_2026: std::sync::atomic::AtomicUsize,
    /// Set by [`StreamableHttp::drain`]: no new session is opened here.
    pub(crate) draining: std::sync::atomic::AtomicBool,
    /// Set by [`StreamableHttp::drain`] once its grace ran out or nothing ran here: no new work
    /// is taken, only answers to this instance's questions and cancellations.
    pub(crate) shut: std::sync::atomic::AtomicBool,
    /// How many `POST`s and `DELETE`s are being answered here, their response streams included
    /// (requests relayed to another instance too): what a drain waits for.
    pub(crate) entered: std::sync::atomic::AtomicUsize,
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

impl Shared {
    /// Forgets a closed session in the shared registry, if there is one, and tells the other
    /// instances (in the background).
    pub(crate) fn release(&self, session: &str) {
        deployment::release::release(self, session);
    }
}

impl StreamableHttp {
    /// The endpoint for `server`. Call from within a tokio runtime (a task expires idle sessions).
    pub(crate) fn for_service(server: Arc<dyn HttpService>, config: HttpConfig) -> Self {
        let guard = config.authorization.clone().map(auth::Guard::new);
        let closing = CancellationToken::new();
        let forwarder = config
            .backplane
            .clone()
            .filter(|_| !config.sessionless)
            .map(|backplane| deployment::forwarder::Forwarder::new(backplane, &closing));
        let shared = Arc::new(Shared {
            server,
            config,
            guard,
            forwarder,
            sessions: RwLock::default(),
            closing,
            heartbeat: std::sync::Mutex::default(),
            answering_2026: std::sync::atomic::AtomicUsize::new(0),
            draining: std::sync::atomic::AtomicBool::new(false),
            shut: std::sync::atomic::AtomicBool::new(false),
            entered: std::sync::atomic::AtomicUsize::new(0),
        });
        if !shared.config.sessionless {
            tokio::spawn(lifecycle::expire_idle(Arc::downgrade(&shared)));
        }
        if let Some(forwarder) = &shared.forwarder {
            if let Some(bus) = &forwarder.bus {
                bus.hear_sessions(Arc::new(deployment::replicas::SessionsMember(Arc::downgrade(&shared))));
                shared.server.join(bus);
            }
            let beat = deployment::heartbeat::start(&shared);
            if let Ok(mut slot) = shared.heartbeat.lock() {
                *slot = beat;
            }
        }
        StreamableHttp { shared }
    }

    /// A router serving the endpoint at every path; mount it with `Router::nest_service` or
    /// use [`router_at`](Self::router_at).
    pub fn router(&self) -> axum::Router {
        axum::Router::new().fallback(endpoint::endpoint).with_state(self.shared.clone())
    }

    /// A router serving the endpoint at `path` (e.g. `/mcp`).
    pub fn router_at(&self, path: &str) -> axum::Router {
        let mut router = axum::Router::new().route(path, axum::routing::any(endpoint::endpoint));
        if self.shared.guard.is_some() {
            let suffixed = format!("{}{}", auth::METADATA_PATH, path.trim_end_matches('/'));
            router = router.route(auth::METADATA_PATH, axum::routing::any(endpoint::endpoint));
            if suffixed != auth::METADATA_PATH {
                router = router.route(&suffixed, axum::routing::any(endpoint::endpoint));
            }
        }
        router.with_state(self.shared.clone())
    }

    /// How many messages from the deployment's bus this instance dropped unread: unreadable,
    /// of another version of the bus's vocabulary (an instance of another release), or failing
    /// authentication. Zero outside a shared deployment.
    pub fn bus_messages_dropped(&self) -> u64 {
        let bus = self.shared.forwarder.as_ref().and_then(|f| f.bus.as_ref());
        bus.map_or(0, |bus| bus.dropped())
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
        let handing_over = self.shared.forwarder.is_some();
        if handing_over && let Ok(sessions) = self.shared.sessions.read() {
            // Answered before the streams close: the sessions live on elsewhere.
            sessions.values().for_each(|s| s.cut_running());
        }
        self.shared.closing.cancel();
        if let Some(forwarder) = &self.shared.forwarder {
            // Stopped first, so that no beat announces the instance again after it left (the
            // store serves one instance's commands in order).
            let beat = self.shared.heartbeat.lock().ok().and_then(|mut b| b.take());
            if let Some(beat) = beat {
                beat.stop().await;
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
        let replicas: Vec<_> = match self.shared.forwarder.as_ref().map(|f| f.replicas.write()) {
            Some(Ok(mut r)) => r.drain().map(|(_, v)| v.session).collect(),
            _ => Vec::new(),
        };
        for replica in replicas {
            // Their events stay in the deployment's store, for a client resuming elsewhere.
            replica.close_keeping_events(handing_over).await;
        }
    }

    /// Whether this endpoint takes new work: `false` once [`drain`](Self::drain) began (what a
    /// load balancer's readiness check should see).
    pub fn is_ready(&self) -> bool {
        !self.shared.draining.load(std::sync::atomic::Ordering::Relaxed) && !self.shared.closing.is_cancelled()
    }

    /// How much work runs here: requests being answered (those of 2026-era clients and those
    /// relayed to the instance owning their session included), questions to clients awaiting
    /// their answers, and tasks' handlers.
    pub fn busy(&self) -> usize {
        let sessions = self.shared.sessions.read().map(|s| s.values().map(|s| s.in_flight()).sum()).unwrap_or(0);
        let replicas = match self.shared.forwarder.as_ref().map(|f| f.replicas.read()) {
            Some(Ok(r)) => r.values().map(|r| r.session.in_flight()).sum(),
            _ => 0,
        };
        sessions
            + replicas
            + self.shared.entered.load(std::sync::atomic::Ordering::SeqCst)
            + self.shared.answering_2026.load(std::sync::atomic::Ordering::Relaxed)
            + self.shared.server.running_tasks()
    }

    /// Shuts the endpoint down gracefully, for a rolling restart: it stops opening sessions
    /// ([`is_ready`](Self::is_ready) turns `false`, `initialize` is answered `503` with
    /// `Retry-After`), lets what runs here finish ([`busy`](Self::busy)) for up to `grace` while
    /// it goes on serving what comes for it (answers to its questions, cancellations, `GET`
    /// streams), writes out the SSE events its store has not yet written behind
    /// ([`EventStore::flush`]), and then closes like [`close_all`](Self::close_all): in a shared
    /// deployment, it leaves the registry and its sessions are taken over by the next instance
    /// that receives a request for one. What still runs when `grace` ends is cancelled: a task
    /// then ends `cancelled` (its handler cannot move to another instance).
    ///
    /// In a shared deployment a draining instance hands its sessions over as requests for them
    /// come: a request another instance forwards to it, for a session with nothing running
    /// here, is sent back to be served there (that instance takes the session over at once, its
    /// events written out first). Once nothing runs here (or `grace` ran out), every request
    /// that would start work is refused: `503` with `Retry-After` (what a client sees only if
    /// its load balancer still sends it here), or sent back to the instance that forwarded it.
    pub async fn drain(&self, grace: std::time::Duration) {
        use std::sync::atomic::Ordering::SeqCst;
        self.shared.draining.store(true, std::sync::atomic::Ordering::Relaxed);
        let deadline = tokio::time::Instant::now() + grace;
        while self.busy() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        // No new work from now on; what was let in just before is waited for like the rest
        // (`busy` counts a request from the moment it arrives, before it looks at `shut`).
        self.shared.shut.store(true, SeqCst);
        while self.busy() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        if self.shared.server.running_tasks() > 0 {
            // A task's handler cannot move to another instance: it ends `cancelled`, recorded
            // before the instance leaves.
            tracing::warn!(
                tasks = self.shared.server.running_tasks(),
                "shutting down with tasks running: cancelling them"
            );
            self.shared.server.cancel_tasks();
            let recorded = tokio::time::Instant::now() + std::time::Duration::from_secs(2);
            while self.shared.server.running_tasks() > 0 && tokio::time::Instant::now() < recorded {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
        self.shared.config.event_store.flush().await;
        self.close_all().await;
        // What the sessions sent while closing.
        self.shared.config.event_store.flush().await;
    }

    /// `GET /ready` (`200` while [`is_ready`](Self::is_ready), else `503`) and `GET /live` (`200`
    /// while the endpoint serves, `503` once it closed), for a load balancer's checks; added
    /// to what [`serve`](Self::serve) serves.
    pub fn health_router(&self) -> axum::Router {
        let ready = self.clone();
        let live = self.clone();
        axum::Router::new()
            .route(
                "/ready",
                axum::routing::get(move || {
                    let ready = ready.is_ready();
                    async move { health(ready, "ready", "draining") }
                }),
            )
            .route(
                "/live",
                axum::routing::get(move || {
                    let live = !live.shared.closing.is_cancelled();
                    async move { health(live, "live", "closed") }
                }),
            )
    }

    /// Serves the endpoint at `/mcp` (and [`health_router`](Self::health_router)'s `/ready` and
    /// `/live`) on `listener` until `shutdown` completes, then [drains](Self::drain) it for
    /// [`HttpConfig::shutdown_grace`] and closes every session. Speaks `https://` when the configuration has a certificate
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
            this.drain(this.shared.config.shutdown_grace).await;
        });
        let accept = connections::Accept {
            #[cfg(feature = "http-tls")]
            tls: self.shared.config.tls.as_ref().map(crate::tls::ServerCertificate::acceptor),
            header_timeout: self.shared.config.request_read_timeout,
        };
        let router = self.router_at("/mcp").merge(self.health_router());
        connections::serve_connections(listener, router, accept, token).await
    }
}

/// A health check's answer.
fn health(ok: bool, yes: &'static str, no: &'static str) -> (axum::http::StatusCode, &'static str) {
    if ok { (axum::http::StatusCode::OK, yes) } else { (axum::http::StatusCode::SERVICE_UNAVAILABLE, no) }
}
