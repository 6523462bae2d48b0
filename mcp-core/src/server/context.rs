//! The request context handed to tool handlers.

use std::any::{Any, TypeId};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::ServerInner;
use super::session::SessionState;
use crate::engine::{Cancellation, Peer, PeerError};
use crate::protocol::{ClientCapabilities, Implementation, ProgressParams, ProgressToken, RequestId};

/// Everything a handler may use about the request it serves and the session it came on:
/// cancellation, progress, the client's identity and capabilities, shared state, and the peer
/// for server-to-client requests. Cheap to clone.
#[derive(Clone)]
pub struct Context {
    inner: Arc<ContextInner>,
}

struct ContextInner {
    request_id: RequestId,
    peer: Peer,
    cancel: Cancellation,
    progress_token: Option<ProgressToken>,
    last_progress: Mutex<Option<f64>>,
    session: Arc<SessionState>,
    server: Arc<ServerInner>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("request_id", &self.inner.request_id)
            .field("progress_token", &self.inner.progress_token)
            .finish_non_exhaustive()
    }
}

impl Context {
    pub(crate) fn new(
        request_id: RequestId,
        peer: Peer,
        cancel: Cancellation,
        progress_token: Option<ProgressToken>,
        session: Arc<SessionState>,
        server: Arc<ServerInner>,
    ) -> Self {
        Context {
            inner: Arc::new(ContextInner {
                request_id,
                peer,
                cancel,
                progress_token,
                last_progress: Mutex::new(None),
                session,
                server,
            }),
        }
    }

    pub(crate) fn server(&self) -> &ServerInner {
        &self.inner.server
    }

    pub(crate) fn server_arc(&self) -> Arc<ServerInner> {
        self.inner.server.clone()
    }

    pub(crate) fn session_state(&self) -> &SessionState {
        &self.inner.session
    }

    /// The authenticated user behind this request, where the transport knows one.
    pub fn principal(&self) -> Option<&str> {
        self.inner.session.principal.as_deref()
    }

    /// The id of the request being handled.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.request_id
    }

    /// The peer (the client), for requests and notifications tied to this request.
    pub fn peer(&self) -> &Peer {
        &self.inner.peer
    }

    /// A token cancelled when the client cancels this request or the session closes.
    pub fn cancellation(&self) -> &CancellationToken {
        self.inner.cancel.token()
    }

    /// Whether the request has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Completes when the request is cancelled.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }

    /// The negotiated protocol revision.
    pub fn protocol_version(&self) -> Option<&str> {
        self.inner.session.client().map(|c| c.protocol_version.as_str())
    }

    /// The client's `clientInfo`.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.session.client().map(|c| &c.info)
    }

    /// The capabilities the client declared.
    pub fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.inner.session.client().map(|c| &c.capabilities)
    }

    /// Shared state of type `T` registered with [`ServerBuilder::state`](super::ServerBuilder::state).
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let any: Arc<dyn Any + Send + Sync> = self.inner.server.state.get(&TypeId::of::<T>())?.clone();
        any.downcast::<T>().ok()
    }

    /// Whether the client asked for progress on this request (sent a `progressToken`).
    pub fn wants_progress(&self) -> bool {
        self.inner.progress_token.is_some()
    }

    /// Reports progress with `notifications/progress`. Does nothing when the client sent no
    /// `progressToken`; a value not above the previous one is not sent (MCP requires every
    /// notification to increase the progress).
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> Result<(), PeerError> {
        let Some(token) = self.inner.progress_token.clone() else {
            return Ok(());
        };
        {
            let mut last = self.inner.last_progress.lock().map_err(|_| PeerError::Closed)?;
            if last.is_some_and(|l| progress <= l) || !progress.is_finite() {
                tracing::warn!(progress, previous = ?*last, "progress must increase; notification not sent");
                return Ok(());
            }
            *last = Some(progress);
        }
        let params = ProgressParams { progress_token: token, progress, total, message: message.map(str::to_owned) };
        self.inner.peer.notify("notifications/progress", &params).await
    }
}
