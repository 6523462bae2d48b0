//! `Context`: the session and the client; multi-round trips.

use std::sync::Arc;

use super::Context;
use crate::protocol::{ClientCapabilities, Implementation};

/// Identifies one session of a server (for as long as the process runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionKey(pub(crate) u64);

impl Context {
    // The session and the client.

    /// This request's session.
    pub fn session_key(&self) -> SessionKey {
        self.side().session_key()
    }

    /// The authenticated user behind this request, where the transport knows one.
    pub fn principal(&self) -> Option<&str> {
        self.side().principal()
    }

    /// The verified identity behind this request, on a server with OAuth authorization
    /// (`HttpConfig::authorization`, feature `http`): subject, client, scopes, expiry and
    /// claims of its access token (never the token itself).
    pub fn auth(&self) -> Option<Arc<crate::auth::AuthInfo>> {
        self.side().auth(self)
    }

    /// The negotiated protocol revision.
    pub fn protocol_version(&self) -> Option<&str> {
        self.side().client().map(|c| c.protocol_version.as_str())
    }

    /// The client's `clientInfo`.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.side().client().map(|c| &c.info)
    }

    /// The capabilities the client declared.
    pub fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.side().client().map(|c| &c.capabilities)
    }

    /// Shared state of type `T` registered with [`ServerBuilder::state`](crate::server::ServerBuilder::state).
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.side().states().get::<T>()
    }

    // Multi-round trips.

    /// Whether this request is a multi round-trip one (revision 2026-07-28): a request that
    /// stands alone, whose handler runs again on each retry (see [`crate::multi_round`]).
    pub fn is_multi_round_trip(&self) -> bool {
        self.side().is_multi_round_trip()
    }

    /// In the 2026 era, an id of this request that is the same in every round of it (each
    /// retry runs the handler again, see [`crate::multi_round`]) and new for every other request: 128
    /// random bits, hex. Use it as the idempotency key of a side effect that must happen once
    /// per request even if the handler runs again (a client may resend its last retry). `None`
    /// in the 2025 era, where the handler runs once per request.
    pub fn round_trip_id(&self) -> Option<&str> {
        self.side().round_trip_id()
    }
}
