//! One server session: the MCP methods a client may call, on top of the engine.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::registry::{params, ready, to_raw};
use super::url::SessionKey;
use super::{Context, ServerInner};
use crate::engine::{HandlerResult, Handling, Peer, RequestScope, Service};
use crate::protocol::{
    ClientCapabilities, EmptyResult, ErrorObject, Implementation, InitializeParams, InitializeResult,
    LATEST_PROTOCOL_VERSION, Notification, PaginatedParams, Request, RequestMeta, SUPPORTED_PROTOCOL_VERSIONS,
};
use crate::tool::{Arguments, Key, Members, ToolCall, unescaped_str, without_position};

/// What `initialize` established.
#[derive(Debug)]
pub(crate) struct ClientState {
    pub(crate) protocol_version: String,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) info: Implementation,
}

/// Per-session state shared by every request of the session.
#[derive(Debug)]
pub(crate) struct SessionState {
    pub(crate) key: SessionKey,
    /// The authenticated user, where the transport knows one.
    pub(crate) principal: Option<String>,
    client: OnceLock<ClientState>,
    initialized: AtomicBool,
    /// Logging level and resource subscriptions.
    pub(crate) surface: super::registry::SessionRegistry,
    /// For a 2026-era request: the answers the client has given so far, and where the
    /// handler's questions go (see [`crate::multi_round`]).
    pub(crate) rounds: Option<Arc<crate::multi_round::Rounds>>,
    /// For a `tools/call` that may become a task (see [`crate::task`]): its run, where the
    /// handler's questions go.
    pub(crate) task: OnceLock<Arc<crate::task::run::TaskRun>>,
    /// The verified identity of the latest request (an OAuth-protected HTTP server sets it
    /// before handing each request on), and whether lists leave out what it may not use. A
    /// 2025-era session belongs to one subject, so only the scopes can differ between two of
    /// its requests in flight at once, and scopes are checked by the transport per request.
    auth: Arc<crate::auth::AuthSlot>,
}

impl SessionState {
    fn new(principal: Option<String>) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        SessionState {
            key: SessionKey(NEXT.fetch_add(1, Ordering::Relaxed)),
            principal,
            client: OnceLock::new(),
            initialized: AtomicBool::new(false),
            surface: Default::default(),
            rounds: None,
            task: OnceLock::new(),
            auth: Arc::default(),
        }
    }

    /// The verified identity of the request being served, if the transport checked one.
    pub(crate) fn auth(&self) -> Option<Arc<crate::auth::AuthInfo>> {
        self.auth.get()
    }

    /// Sets the verified identity of the request about to be served.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn set_auth(&self, auth: Option<Arc<crate::auth::AuthInfo>>, hide_unauthorized: bool) {
        self.auth.set(auth, hide_unauthorized);
    }

    /// Whether lists leave out what the request's token may not use.
    pub(crate) fn hides_unauthorized(&self) -> bool {
        self.auth.hides()
    }

    /// The state of one 2026-era request, built from its `_meta`.
    pub(crate) fn for_2026_request(
        principal: Option<String>,
        client: ClientState,
        log_level: Option<crate::protocol::LoggingLevel>,
        rounds: Arc<crate::multi_round::Rounds>,
    ) -> Self {
        let mut state = SessionState::new(principal);
        // The same in every round of the request, so that what a handler keys by session (a
        // completed URL flow, say) is still there when the client retries.
        state.key = SessionKey(rounds.session_bits());
        let _ = state.client.set(client);
        state.initialized.store(true, Ordering::Relaxed);
        if let Ok(mut level) = state.surface.log_level.lock() {
            *level = log_level;
        }
        state.rounds = Some(rounds);
        state
    }

    pub(crate) fn client(&self) -> Option<&ClientState> {
        self.client.get()
    }
}

pub(crate) struct ServerSession {
    server: Arc<ServerInner>,
    state: Arc<SessionState>,
    /// Serves every request in the 2026 era (an HTTP request that says it is of that era),
    /// whatever its `_meta` says: one without the era's `_meta` is then malformed.
    only_2026: bool,
}

impl ServerSession {
    pub(crate) fn new(server: Arc<ServerInner>) -> Self {
        Self::for_principal(server, None)
    }

    /// A session whose requests come from an authenticated user (known to the transport).
    pub(crate) fn for_principal(server: Arc<ServerInner>, principal: Option<String>) -> Self {
        ServerSession { server, state: Arc::new(SessionState::new(principal)), only_2026: false }
    }

    /// A session for one 2026-era request (Streamable HTTP has no sessions in that era).
    #[cfg(feature = "http")]
    pub(crate) fn only_2026(server: Arc<ServerInner>, principal: Option<String>) -> Self {
        ServerSession { only_2026: true, ..Self::for_principal(server, principal) }
    }

    /// The session with its requests' verified identities read from `auth` (which the
    /// transport sets before handing on each request).
    #[cfg(feature = "http")]
    pub(crate) fn with_auth(mut self, auth: Arc<crate::auth::AuthSlot>) -> Self {
        // Just made: nothing else holds the state yet.
        if let Some(state) = Arc::get_mut(&mut self.state) {
            state.auth = auth;
        }
        self
    }

    /// A session that serves requests without an `initialize` handshake (stateless HTTP):
    /// the client is taken to speak `protocol_version` and to declare no capabilities.
    #[cfg(feature = "http")]
    pub(crate) fn preinitialized(server: Arc<ServerInner>, principal: Option<String>, protocol_version: &str) -> Self {
        let session = Self::for_principal(server, principal);
        let _ = session.state.client.set(ClientState {
            protocol_version: protocol_version.to_owned(),
            capabilities: ClientCapabilities::default(),
            info: Implementation::new("unknown", "unknown"),
        });
        session.state.initialized.store(true, Ordering::Relaxed);
        session
    }
}

/// What a 2025-era session carries to the instance that takes it over in a shared deployment:
/// what `initialize` established, and what the client set since.
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
                let _ = session.state.client.set(ClientState {
                    protocol_version: s.protocol_version,
                    capabilities: s.capabilities,
                    info: s.client_info,
                });
                if let Ok(mut level) = session.state.surface.log_level.lock() {
                    *level = s.log_level;
                }
                if let Ok(mut subscriptions) = session.state.surface.subscriptions.lock() {
                    subscriptions.extend(s.subscriptions.into_iter().take(super::resources::MAX_SUBSCRIPTIONS));
                }
            }
            Err(e) => tracing::warn!(error = %e, "a session to take over has an unreadable state"),
        }
        session
    }
}

impl ServerSession {
    /// Serves an initialized session's request (either era).
    pub(crate) fn dispatch(
        server: &Arc<ServerInner>,
        state: &Arc<SessionState>,
        request: Request,
        scope: RequestScope,
    ) -> Handling {
        if !server.offers(&request.method) {
            return ready(Err(ErrorObject::method_not_found(&request.method)));
        }
        match request.method.as_str() {
            "tools/list" => {
                if let Some(filtered) = super::scopes::filtered_list(server, state, "tools/list") {
                    return ready(filtered);
                }
                ready(params(&request).and_then(|p: PaginatedParams| server.tools.page(p.cursor.as_deref())))
            }
            "tools/call" => match Self::start_tool(server, state, request, scope) {
                Ok(call) => call,
                Err(error) => ready(Err(error)),
            },
            _ => super::registry::handle(server.clone(), state.clone(), request, scope),
        }
    }

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
        if self.state.client.set(client).is_err() {
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

    /// Starts a `tools/call`: the tool's own future, if it has one, is the request's handler
    /// (no second box around it); the call's parameters are read and its context made here.
    fn start_tool(
        server: &Arc<ServerInner>,
        state: &Arc<SessionState>,
        request: Request,
        scope: RequestScope,
    ) -> Result<Handling, ErrorObject> {
        let invalid =
            |e: &dyn std::fmt::Display| ErrorObject::invalid_params(format!("invalid `tools/call` parameters: {e}"));
        // The parameters are read in place: the name is looked up where it is, and the
        // arguments stay in the request's text, which the call keeps (see `Arguments`).
        let text: Box<str> = request.params.map_or_else(|| "{}".into(), Into::into);
        let p = CallIn::read(&text).map_err(|e| invalid(&e))?;
        // The arguments keep the whole text, where the name is found again.
        let (name, arguments) = match p.arguments {
            Some(object) => (p.name, Arguments::within(text, object).map_err(|e| invalid(&e))?),
            None => (Key::Decoded(p.name.in_text(&text).into()), Arguments::default()),
        };
        // A task outlives the request that carried the token: its progress would go nowhere
        // once the task is returned. It becomes the task's `statusMessage` instead (the client
        // follows the task with `tasks/get`; see `Context::progress`).
        let progress_token = p.meta.and_then(|m| m.progress_token).filter(|_| state.task.get().is_none());
        // The tool is used in place: cloning its definition (schemas included) for every
        // call would cost more than most tools do.
        server.tools.read(|tools| {
            let name = name.in_text(arguments.source());
            let tool = tools.get(name).ok_or_else(|| ErrorObject::invalid_params(format!("unknown tool: `{name}`")))?;
            if tool.task_mode() == crate::protocol::TaskSupport::Required && state.task.get().is_none() {
                return Err(super::tasks::extension_required(&format!(
                    "the tool `{name}` runs only as a task, and the client did not negotiate the tasks extension"
                )));
            }
            let ctx =
                Context::for_request(scope.id, scope.peer, scope.cancel, progress_token, state.clone(), server.clone());
            // A handler written by hand may panic before it returns its future, too.
            Ok(match std::panic::catch_unwind(AssertUnwindSafe(|| tool.call_raw(ToolCall { ctx, arguments }))) {
                Ok(call) => call,
                Err(panic) => ready(crate::tool::panicked(tool.name(), &*panic)),
            })
        })
    }
}

/// `tools/call` parameters, read where they are in the request's text: the name and the
/// arguments left in place. The text was read by serde_json already (as the request's
/// `params`), so a scan for where its members are is enough (see `tool::Members`).
struct CallIn {
    name: Key,
    arguments: Option<std::ops::Range<usize>>,
    meta: Option<RequestMeta>,
}

impl CallIn {
    fn read(text: &str) -> Result<Self, String> {
        let (mut name, mut arguments, mut meta) = (None, None, None);
        for member in Members::of(text, 0..text.len()).map_err(|e| e.to_string())? {
            let (key, value) = member.map_err(|e| e.to_string())?;
            let value_text = text.get(value.clone()).unwrap_or_default();
            let field = key.in_text(text);
            let duplicate = match field {
                "name" => name.replace(string_value(value_text, value.start)?).is_some(),
                "arguments" => arguments.replace(value).is_some(),
                "_meta" => meta
                    .replace(
                        serde_json::from_str::<Option<RequestMeta>>(value_text)
                            .map_err(|e| format!("invalid `_meta`: {}", without_position(&e)))?,
                    )
                    .is_some(),
                _ => false,
            };
            if duplicate {
                return Err(format!("duplicate field `{field}`"));
            }
        }
        let name = name.ok_or("missing field `name`")?;
        Ok(CallIn { name, arguments, meta: meta.flatten() })
    }
}

/// The value of the JSON string `text`, found at `at` in the text it was read from: where it
/// is in that text, unless it holds escapes.
fn string_value(text: &str, at: usize) -> Result<Key, String> {
    match unescaped_str(text) {
        Some(inner) => Ok(Key::Span(at + 1..at + 1 + inner.len())),
        None => serde_json::from_str::<String>(text)
            .map(|s| Key::Decoded(s.into()))
            .map_err(|e| format!("invalid `name`: {}", without_position(&e))),
    }
}

impl Service for ServerSession {
    fn handle_request(&self, request: Request, scope: RequestScope) -> Handling {
        // A request naming its protocol version in `_meta` is a 2026-era request, served on its
        // own whatever this session is; so is `server/discover`, which 2026-era clients use to
        // probe before anything else.
        if self.only_2026
            || request.method == "server/discover"
            || crate::protocol::stateless::is_2026_request(&request)
        {
            return super::rev_2026_07_28::handle(
                self.server.clone(),
                self.state.principal.clone(),
                (self.state.auth(), self.state.hides_unauthorized()),
                request,
                scope,
            );
        }
        let method = request.method.as_str();
        if !self.server.offers(method) {
            return ready(Err(ErrorObject::method_not_found(method)));
        }
        if method == "ping" {
            return ready(to_raw(&EmptyResult {}));
        }
        if method == "initialize" {
            return ready(self.initialize(&request));
        }
        if self.state.client().is_none() {
            return ready(Err(ErrorObject::invalid_request(format!(
                "`{method}` before `initialize`: the session must be initialized first"
            ))));
        }
        Self::dispatch(&self.server, &self.state, request, scope)
    }

    fn snapshot(&self) -> Option<String> {
        if self.only_2026 {
            return None;
        }
        let client = self.state.client()?;
        let snapshot = Snapshot {
            protocol_version: client.protocol_version.clone(),
            capabilities: client.capabilities.clone(),
            client_info: client.info.clone(),
            log_level: self.state.surface.log_level.lock().ok().and_then(|l| *l),
            subscriptions: self
                .state
                .surface
                .subscriptions
                .lock()
                .map(|s| s.iter().cloned().collect())
                .unwrap_or_default(),
        };
        serde_json::to_string(&snapshot).ok()
    }

    fn closed(&self) {
        self.server.url_elicitations.remove_session(self.state.key);
        self.server.surface.sessions.remove(self.state.key);
    }

    fn handle_notification(&self, notification: Notification, peer: &Peer) {
        if notification.method == "notifications/initialized" {
            self.state.initialized.store(true, Ordering::Relaxed);
        }
        super::registry::on_notification(&self.server, &self.state, &notification.method, peer);
    }
}
