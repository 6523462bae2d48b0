//! The state of a session (2025 era) or of one request (2026 era): what the client declared,
//! what it set since, and, for a 2026-era request, its rounds. Every handler reads it.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::url::SessionKey;
use crate::protocol::{ClientCapabilities, Implementation, LoggingLevel};

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
    /// The session's key; for a 2026-era request, derived from its rounds when first asked for
    /// (see [`key`](Self::key)).
    key: Option<SessionKey>,
    /// The authenticated user, where the transport knows one.
    pub(crate) principal: Option<String>,
    pub(crate) client: OnceLock<ClientState>,
    pub(crate) initialized: AtomicBool,
    /// Logging level and resource subscriptions.
    pub(crate) settings: SessionSettings,
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
    pub(crate) auth: Arc<crate::auth::AuthSlot>,
}

impl SessionState {
    pub(crate) fn new(principal: Option<String>) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self::with_key(Some(SessionKey(NEXT.fetch_add(1, Ordering::Relaxed))), principal)
    }

    /// A state keyed `key` (`None` for a 2026-era request, whose key comes from its rounds,
    /// not from the counter every core would contend for).
    fn with_key(key: Option<SessionKey>, principal: Option<String>) -> Self {
        SessionState {
            key,
            principal,
            client: OnceLock::new(),
            initialized: AtomicBool::new(false),
            settings: Default::default(),
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
        log_level: Option<LoggingLevel>,
        rounds: Arc<crate::multi_round::Rounds>,
    ) -> Self {
        let mut state = SessionState::with_key(None, principal);
        let _ = state.client.set(client);
        state.initialized.store(true, Ordering::Relaxed);
        if let Ok(mut level) = state.settings.log_level.lock() {
            *level = log_level;
        }
        state.rounds = Some(rounds);
        state
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
        self.client.get()
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
