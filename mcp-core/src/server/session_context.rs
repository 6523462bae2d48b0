//! What a request's [`Context`] reaches of the server and the session it came on.

use std::any::{Any, TypeId};
use std::sync::Arc;

use super::ServerInner;
use super::state::SessionState;
use crate::engine::{PeerError, RequestScope};
use crate::handler::{Context, Meta};
use crate::protocol::{ClientCapabilities, Implementation, ProgressToken};

impl Context {
    /// A context for a request of `session` on `server`.
    pub(crate) fn for_request(
        scope: RequestScope,
        progress_token: Option<ProgressToken>,
        meta: Meta,
        session: Arc<SessionState>,
        server: Arc<ServerInner>,
    ) -> Self {
        Context::new(scope, progress_token, meta, session, server)
    }

    pub(crate) fn server(&self) -> &ServerInner {
        // Only the server makes contexts (`for_request`), always with its own state.
        self.server_state().downcast_ref().expect("a context holds the state of the server that made it")
    }

    pub(crate) fn server_arc(&self) -> Arc<ServerInner> {
        self.server_state().clone().downcast().expect("a context holds the state of the server that made it")
    }

    pub(crate) fn session_state(&self) -> &SessionState {
        self.session_opaque().downcast_ref().expect("a context holds the state of the session that made it")
    }

    /// Whether progress reported with [`progress`](Self::progress) reaches the client: the
    /// request carries a `progressToken`, or the handler runs as a task (progress becomes its
    /// `statusMessage`).
    pub fn wants_progress(&self) -> bool {
        self.has_progress_token() || self.session_state().task.get().is_some()
    }

    /// Reports the handler's progress: `progress` so far, of `total` when known, with an
    /// optional human-readable `message`.
    ///
    /// In an ordinary request it is sent as `notifications/progress` for the request's
    /// `progressToken`, and does nothing when the client sent none; a value not above the
    /// previous one is not sent (MCP requires every notification to increase the progress).
    ///
    /// Running as a task (see [`crate::task`]), whose request was answered already, it becomes
    /// the task's `statusMessage`, as `tasks/get` and `notifications/tasks` show it: `message`
    /// when given, else `"progress/total"` (`"progress"` without a total). It is written to the
    /// task store, where every instance reads it, at most once per poll interval
    /// (`pollIntervalMs`): a report within the interval of the last write is written when the
    /// interval ends (the latest one), and a report that does not change the message writes
    /// nothing. It fails only when the store does.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> Result<(), PeerError> {
        let Some(run) = self.session_state().task.get() else {
            return self.notify_progress(progress, total, message).await;
        };
        if !progress.is_finite() {
            tracing::warn!(progress, "progress must be a finite number; not reported");
            return Ok(());
        }
        let message = match (message, total) {
            (Some(message), _) => message.to_owned(),
            (None, Some(total)) => format!("{progress}/{total}"),
            (None, None) => progress.to_string(),
        };
        run.progress(message).await.map_err(|e| PeerError::Transport(format!("the task could not be saved: {e}")))
    }

    /// The authenticated user behind this request, where the transport knows one.
    pub fn principal(&self) -> Option<&str> {
        self.session_state().principal.as_deref()
    }

    /// The verified identity behind this request, on a server with OAuth authorization
    /// (`HttpConfig::authorization`, feature `http`): subject, client, scopes, expiry and
    /// claims of its access token (never the token itself).
    pub fn auth(&self) -> Option<Arc<crate::auth::AuthInfo>> {
        self.session_state().auth()
    }

    /// The negotiated protocol revision.
    pub fn protocol_version(&self) -> Option<&str> {
        self.session_state().client().map(|c| c.protocol_version.as_str())
    }

    /// The client's `clientInfo`.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.session_state().client().map(|c| &c.info)
    }

    /// The capabilities the client declared.
    pub fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.session_state().client().map(|c| &c.capabilities)
    }

    /// Shared state of type `T` registered with [`ServerBuilder::state`](super::ServerBuilder::state).
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let any: Arc<dyn Any + Send + Sync> = self.server().state.get(&TypeId::of::<T>())?.clone();
        any.downcast::<T>().ok()
    }
}
