//! The choice of protocol era a client is built with (a leaf: what the rest of the client,
//! its errors included, refers to).

use crate::protocol::era_2026::PROTOCOL_VERSION_2026_07_28;

/// The protocol era a [`Client`](super::Client) speaks, chosen with
/// [`ClientBuilder::protocol_era`](super::ClientBuilder::protocol_era).
///
/// The handlers (elicitation, sampling, roots) and every call are the same in each: in a
/// session the server sends its questions as requests of its own; in the 2026-07-28 era they
/// come back in an `input_required` result, the client answers them with the same handlers
/// and retries the request (see [`ClientBuilder::max_input_rounds`](super::ClientBuilder::max_input_rounds)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProtocolEra {
    /// The 2025-11-25 era: a session, `initialize` first, then requests on it (revisions
    /// 2024-11-05 to 2025-11-25; the newest by default, see
    /// [`ClientBuilder::protocol_version`](super::ClientBuilder::protocol_version)). The default.
    #[default]
    Y2025,
    /// The 2026-07-28 era: no handshake and no session; each request carries the revision and
    /// the client's capabilities in `_meta`. Connecting asks `server/discover` and fails when
    /// the server does not speak the revision.
    Y2026,
    /// The 2026-07-28 era when the server speaks it (its answer to `server/discover` lists the
    /// revision), else the 2025-11-25 era: decided once, when connecting, over any transport.
    Auto,
}

/// The revisions this client speaks in the 2026-07-28 era, newest first.
pub const VERSIONS_2026: &[&str] = &[PROTOCOL_VERSION_2026_07_28];
