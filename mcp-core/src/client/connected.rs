//! The connected client: what it holds, what the server said when it connected, and how the
//! connection ends.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use tokio::sync::broadcast;

use super::ServerNotification;
use super::connection::Connection;
use super::era::{Era2026, ProtocolEra};
use super::service::ClientShared;
#[cfg(feature = "otel")]
use super::traced::Traced;
use crate::engine::Peer;
use crate::protocol::{ClientCapabilities, Implementation, InitializeResult, ServerCapabilities};

pub(super) struct ClientInner {
    pub(super) peer: Peer,
    pub(super) shared: Arc<ClientShared>,
    pub(super) init: InitializeResult,
    pub(super) request_timeout: Option<Duration>,
    pub(super) url_elicitation_timeout: Duration,
    pub(super) connection: Box<dyn Connection>,
    pub(super) next_progress: AtomicU64,
    /// Set when the connection speaks the 2026-07-28 era.
    pub(super) era_2026: Option<Era2026>,
    pub(super) max_input_rounds: usize,
    /// Held while a `subscriptions/listen` waits for its acknowledgement.
    pub(super) listen_gate: tokio::sync::Mutex<()>,
    #[cfg(feature = "otel")]
    pub(super) traced: Option<Traced>,
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
    pub(super) inner: Arc<ClientInner>,
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
    /// The era this connection speaks: [`ProtocolEra::Y2025`] or [`ProtocolEra::Y2026`]
    /// (what [`ProtocolEra::Auto`] chose).
    pub fn era(&self) -> ProtocolEra {
        if self.inner.era_2026.is_some() { ProtocolEra::Y2026 } else { ProtocolEra::Y2025 }
    }

    /// Forgets the list results kept under the server's caching hints (2026-07-28 era), so the
    /// next `list_*` call asks the server.
    pub fn clear_cache(&self) {
        if let Some(s) = &self.inner.era_2026 {
            s.cache.clear();
        }
    }

    /// What the server answered to `initialize` (in the 2026-07-28 era: what `server/discover`
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

    /// Ends the connection: requests still waiting fail with
    /// [`ClientError::Closed`](super::ClientError::Closed), the server is told (its input closes;
    /// over HTTP the session is deleted), and a server process this client started is stopped.
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
}
