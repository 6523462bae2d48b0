//! The state of a session (2025 era) or of one request (2026 era): what the client declared,
//! what it set since, and, for a 2026-era request, its rounds. Every handler reads it.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::handler::context::SessionKey;
use crate::protocol::LoggingLevel;
pub(crate) use crate::protocol::view::ClientState;

/// What a request's [`Context`](crate::Context) reaches of the server (its side, see
/// `context_side.rs`): the server that made the context, and the session its request came on
/// (for a 2026-era request, the request's own state, with its rounds; for a call that became
/// a task, with the task's run).
pub(crate) struct RequestSide {
    pub(crate) server: Arc<super::ServerInner>,
    pub(crate) session: Arc<SessionState>,
}

impl RequestSide {
    /// The rounds of a 2026-era request (`None` in the 2025 era).
    pub(crate) fn rounds(&self) -> Option<&crate::multi_round::Rounds> {
        self.session.rounds.as_deref()
    }
}

/// Per-session state shared by every request of the session.
#[derive(Debug)]
pub(crate) struct SessionState {
    /// The session's key; for a 2026-era request, derived from its rounds when first asked for
    /// (see [`key`](Self::key)).
    key: Option<SessionKey>,
    /// The authenticated user, where the transport knows one.
    pub(crate) principal: Option<String>,
    /// What `initialize` said of the client (2025 era), or the request's `_meta` (2026 era).
    pub(crate) client: OnceLock<Arc<ClientState>>,
    pub(crate) initialized: AtomicBool,
    /// Logging level and resource subscriptions.
    pub(crate) settings: SessionSettings,
    /// For a 2026-era request: the answers the client has given so far, and where the
    /// handler's questions go (see [`crate::multi_round`]).
    pub(crate) rounds: Option<Arc<crate::multi_round::Rounds>>,
    /// For a `tools/call` that may become a task (see [`crate::task`]): its run, where the
    /// handler's questions go.
    pub(crate) task: OnceLock<Arc<crate::task::run::TaskRun>>,
    /// The verified identity of the request being served, and whether lists leave out what it
    /// may not use.
    pub(crate) auth: AuthOf,
}

/// A request's HTTP parts (nothing without the HTTP transport).
#[cfg(feature = "http")]
pub(crate) type HttpParts = crate::engine::HttpRequestParts;
/// A request's HTTP parts (nothing without the HTTP transport).
#[cfg(not(feature = "http"))]
pub(crate) type HttpParts = std::convert::Infallible;

/// Where a request's verified identity is read from.
#[derive(Debug)]
pub(crate) enum AuthOf {
    /// Each request's own, as the transport verified it and handed it on with the request
    /// (a 2025-era session: two of its requests in flight at once may carry different tokens).
    Transport,
    /// A 2026-era request's own.
    Request(Option<Arc<crate::auth::AuthInfo>>, bool),
}

impl SessionState {
    pub(crate) fn new(principal: Option<String>) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let key = Some(SessionKey(NEXT.fetch_add(1, Ordering::Relaxed)));
        Self::with_key(key, principal, AuthOf::Transport)
    }

    /// A state keyed `key` (`None` for a 2026-era request, whose key comes from its rounds,
    /// not from the counter every core would contend for).
    fn with_key(key: Option<SessionKey>, principal: Option<String>, auth: AuthOf) -> Self {
        SessionState {
            key,
            principal,
            client: OnceLock::new(),
            initialized: AtomicBool::new(false),
            settings: Default::default(),
            rounds: None,
            task: OnceLock::new(),
            auth,
        }
    }

    /// The verified identity of the request `scope`, if the transport checked one, and whether
    /// lists leave out what its token may not use.
    pub(crate) fn auth(&self, scope: &crate::engine::RequestScope) -> (Option<Arc<crate::auth::AuthInfo>>, bool) {
        #[cfg(feature = "http")]
        return self.auth_over(scope.http.as_deref());
        #[cfg(not(feature = "http"))]
        {
            let _ = scope;
            self.auth_over(None)
        }
    }

    /// [`auth`](Self::auth), for a request whose HTTP parts are `http`.
    pub(crate) fn auth_over(&self, http: Option<&HttpParts>) -> (Option<Arc<crate::auth::AuthInfo>>, bool) {
        match &self.auth {
            AuthOf::Request(auth, hide) => (auth.clone(), *hide),
            #[cfg(feature = "http")]
            AuthOf::Transport => http
                .and_then(|h| h.extensions.get::<crate::auth::RequestIdentity>())
                .map_or((None, false), |v| (v.identity.clone(), v.hide_unauthorized)),
            #[cfg(not(feature = "http"))]
            AuthOf::Transport => {
                let _ = http;
                (None, false)
            }
        }
    }

    /// The state of one 2026-era request, built from its `_meta`.
    pub(crate) fn for_2026_request(
        principal: Option<String>,
        client: Arc<ClientState>,
        log_level: Option<LoggingLevel>,
        rounds: Arc<crate::multi_round::Rounds>,
        auth: (Option<Arc<crate::auth::AuthInfo>>, bool),
    ) -> Self {
        SessionState {
            client: OnceLock::from(client),
            initialized: AtomicBool::new(true),
            settings: SessionSettings { log_level: Mutex::new(log_level), subscriptions: Mutex::default() },
            rounds: Some(rounds),
            ..SessionState::with_key(None, principal, AuthOf::Request(auth.0, auth.1))
        }
    }

    /// The session's key: counted out to a 2025-era session; for a 2026-era request, the same
    /// in every round of it, so that what a handler keys by session (a completed URL flow, say)
    /// is still there when the client retries.
    pub(crate) fn key(&self) -> SessionKey {
        match (self.key, &self.rounds) {
            (Some(key), _) => key,
            (None, Some(rounds)) => SessionKey(rounds.session_bits()),
            (None, None) => SessionKey(0),
        }
    }

    pub(crate) fn client(&self) -> Option<&ClientState> {
        self.client.get().map(|c| &**c)
    }
}

/// What a client set for its session: a 2025-era session keeps it between requests (and
/// carries it to another instance of a shared deployment).
#[derive(Debug, Default)]
pub(crate) struct SessionSettings {
    /// The level set by `logging/setLevel`.
    pub(crate) log_level: Mutex<Option<LoggingLevel>>,
    /// The URIs the client subscribed to.
    pub(crate) subscriptions: Mutex<HashSet<String>>,
}
