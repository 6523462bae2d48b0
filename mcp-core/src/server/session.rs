//! A 2025-era session's life: `initialize`, the state it establishes, its snapshot for
//! another instance of a shared deployment and its restoration there. Its requests go to the
//! router ([`super::router`]); a 2026-era request that arrives on it goes to
//! [`super::era_2026`], which never calls back here.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::ServerInner;
use super::handling::{params, ready, to_raw};
use super::state::{ClientState, SessionState};
use crate::engine::{HandlerResult, Handling, Peer, RequestScope, Service};
use crate::protocol::methods::{Direction, Era, Kind};
use crate::protocol::view::ParamsView;
#[cfg(feature = "http")]
use crate::protocol::{ClientCapabilities, Implementation};
use crate::protocol::{
    ErrorObject, InitializeParams, InitializeResult, LATEST_PROTOCOL_VERSION, Notification, Request,
    SUPPORTED_PROTOCOL_VERSIONS,
};

pub(crate) struct ServerSession {
    server: Arc<ServerInner>,
    state: Arc<SessionState>,
    /// When the session opened, for `mcp.server.session.duration`.
    #[cfg(feature = "otel")]
    opened: std::time::Instant,
    /// Whether it is served over Streamable HTTP (else over a pipe: stdio and the like).
    #[cfg(feature = "otel")]
    over_http: bool,
}

impl ServerSession {
    pub(crate) fn new(server: Arc<ServerInner>) -> Self {
        Self::for_principal(server, None)
    }

    /// A session whose requests come from an authenticated user (known to the transport).
    pub(crate) fn for_principal(server: Arc<ServerInner>, principal: Option<String>) -> Self {
        ServerSession {
            server,
            state: Arc::new(SessionState::new(principal)),
            #[cfg(feature = "otel")]
            opened: std::time::Instant::now(),
            #[cfg(feature = "otel")]
            over_http: false,
        }
    }

    /// The session marked as served over HTTP (only the HTTP transport makes sessions this
    /// way); its requests' verified identities come with each request.
    #[cfg(feature = "http")]
    #[cfg_attr(not(feature = "otel"), allow(unused_mut))]
    pub(crate) fn over_http(mut self) -> Self {
        #[cfg(feature = "otel")]
        {
            self.over_http = true;
        }
        self
    }

    /// A session that serves requests without an `initialize` handshake (sessionless HTTP):
    /// the client is taken to speak `protocol_version` and to declare no capabilities.
    #[cfg(feature = "http")]
    pub(crate) fn preinitialized(server: Arc<ServerInner>, principal: Option<String>, protocol_version: &str) -> Self {
        let session = Self::for_principal(server, principal);
        let _ = session.state.client.set(Arc::new(ClientState {
            protocol_version: protocol_version.to_owned(),
            capabilities: ClientCapabilities::default(),
            info: Implementation::new("unknown", "unknown"),
        }));
        session.state.initialized.store(true, Ordering::Relaxed);
        session
    }
}

/// What a 2025-era session carries to the instance that takes it over in a shared deployment:
/// what `initialize` established, and what the client set since.
#[cfg(feature = "http")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Snapshot {
    protocol_version: String,
    capabilities: ClientCapabilities,
    client_info: Implementation,
    log_level: Option<crate::protocol::LoggingLevel>,
    subscriptions: Vec<String>,
}

impl ServerSession {
    /// A session taken over from another instance of a shared deployment, in the state
    /// `snapshot` (from [`Service::snapshot`]) describes; uninitialized when it is unreadable.
    #[cfg(feature = "http")]
    pub(crate) fn restore(server: Arc<ServerInner>, principal: Option<String>, snapshot: &str) -> Self {
        let session = Self::for_principal(server, principal);
        match serde_json::from_str::<Snapshot>(snapshot) {
            Ok(s) => {
                let _ = session.state.client.set(Arc::new(ClientState {
                    protocol_version: s.protocol_version,
                    capabilities: s.capabilities,
                    info: s.client_info,
                }));
                if let Ok(mut level) = session.state.settings.log_level.lock() {
                    *level = s.log_level;
                }
                if let Ok(mut subscriptions) = session.state.settings.subscriptions.lock() {
                    subscriptions.extend(s.subscriptions.into_iter().take(super::resources::MAX_SUBSCRIPTIONS));
                }
            }
            Err(e) => tracing::warn!(error = %e, "a session to take over has an unreadable state"),
        }
        session
    }
}

impl ServerSession {
    fn initialize(&self, request: &Request) -> HandlerResult {
        let p: InitializeParams = params(request)?;
        let protocol_version = if SUPPORTED_PROTOCOL_VERSIONS.contains(&p.protocol_version.as_str()) {
            p.protocol_version
        } else {
            LATEST_PROTOCOL_VERSION.to_owned()
        };
        let client = ClientState {
            protocol_version: protocol_version.clone(),
            capabilities: p.capabilities,
            info: p.client_info,
        };
        if self.state.client.set(Arc::new(client)).is_err() {
            return Err(ErrorObject::invalid_request("the session is already initialized"));
        }
        tracing::debug!(%protocol_version, "session initialized");
        to_raw(&InitializeResult {
            protocol_version,
            capabilities: self.server.capabilities.clone(),
            server_info: self.server.info.clone(),
            instructions: self.server.instructions.clone(),
        })
    }
}

impl ServerSession {
    /// Serves a request of this session, or a 2026-era request that came on its transport.
    fn handle(&self, request: Request, scope: RequestScope, view: Option<ParamsView>) -> Handling {
        // A request naming its protocol version in `_meta` is a 2026-era request, served on its
        // own whatever this session is; so is `server/discover`, which 2026-era clients use to
        // probe before anything else.
        let auth = self.state.auth(&scope);
        let (request, scope) =
            match super::era_2026::handle_if_2026(&self.server, self.state.principal.clone(), auth, request, scope) {
                Ok(handling) => return handling,
                Err(unserved) => unserved,
            };
        let Some(method) = request
            .method
            .info()
            .filter(|m| m.valid_in(Era::Y2025) && m.kind == Kind::Request && m.direction != Direction::ToClient)
            .filter(|m| super::router::offers(&self.server, m))
        else {
            return ready(Err(ErrorObject::method_not_found(&request.method)));
        };
        match method.name {
            "ping" => return super::router::serve(&self.server, &self.state, method, request, None, scope),
            "initialize" => return ready(self.initialize(&request)),
            _ => {}
        }
        if self.state.client().is_none() {
            return ready(Err(ErrorObject::invalid_request(format!(
                "`{}` before `initialize`: the session must be initialized first",
                method.name
            ))));
        }
        super::router::serve(&self.server, &self.state, method, request, view, scope)
    }
}

impl Service for ServerSession {
    fn handle_request(&self, request: Request, scope: RequestScope) -> Handling {
        let version = self.state.client().map(|c| c.protocol_version.as_str());
        super::observe::observe(&self.server, request, scope, version, None, |request, scope, view| {
            self.handle(request, scope, view)
        })
    }
    #[cfg(feature = "http")]
    fn snapshot(&self) -> Option<String> {
        let client = self.state.client()?;
        let snapshot = Snapshot {
            protocol_version: client.protocol_version.clone(),
            capabilities: client.capabilities.clone(),
            client_info: client.info.clone(),
            log_level: self.state.settings.log_level.lock().ok().and_then(|l| *l),
            subscriptions: self
                .state
                .settings
                .subscriptions
                .lock()
                .map(|s| s.iter().cloned().collect())
                .unwrap_or_default(),
        };
        serde_json::to_string(&snapshot).ok()
    }

    fn closed(&self) {
        #[cfg(feature = "otel")]
        if let (Some(telemetry), Some(client)) = (&self.server.telemetry, self.state.client()) {
            let transport =
                if self.over_http { crate::telemetry::Transport::Tcp } else { crate::telemetry::Transport::Pipe };
            telemetry.session_ended(true, self.opened.elapsed(), Some(&client.protocol_version), transport);
        }
        self.server.url_elicitations.remove_session(self.state.key());
        self.server.surface.sessions.remove(self.state.key());
    }

    fn handle_notification(&self, notification: Notification, peer: &Peer) {
        if notification.method == "notifications/initialized" {
            self.state.initialized.store(true, Ordering::Relaxed);
        }
        super::router::on_notification(&self.server, &self.state, &notification.method, peer);
    }
}
