//! Why an elicitation produced no answer.

use std::time::Duration;

use crate::engine::PeerError;
use crate::protocol::ErrorObject;

/// Why an elicitation produced no answer. A user who declines or cancels is *not* an error:
/// that is [`Elicitation::Decline`](super::Elicitation::Decline) or
/// [`Elicitation::Cancel`](super::Elicitation::Cancel).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ElicitError {
    /// There is no client session to ask (for example, a context made outside a session).
    #[error("no active session to elicit through")]
    NoSession,
    /// The client did not declare the capability for this mode; nothing was sent.
    #[error("the client does not support {mode}-mode elicitation")]
    NotSupported {
        /// `"form"` or `"url"`.
        mode: &'static str,
    },
    /// The request is malformed (for example, a schema outside MCP's subset); nothing was sent.
    #[error("invalid elicitation request: {0}")]
    InvalidRequest(String),
    /// No answer within the timeout.
    #[error("the user did not answer within {0:?}")]
    Timeout(Duration),
    /// The request that asked was cancelled; the elicitation was abandoned.
    #[error("the request was cancelled while waiting for the user")]
    Cancelled,
    /// The connection closed before an answer arrived.
    #[error("the connection closed while waiting for the user")]
    ConnectionClosed,
    /// The client answered with a JSON-RPC error.
    #[error("the client refused the elicitation with error {}: {}", .0.code, .0.message)]
    Client(ErrorObject),
    /// The client's answer does not match the schema that was sent (or cannot be decoded).
    #[error("invalid elicitation response{}: {reason}", .field.as_ref().map(|f| format!(" for field `{f}`")).unwrap_or_default())]
    InvalidResponse {
        /// The field at fault, if one is.
        field: Option<String>,
        /// What is wrong.
        reason: String,
    },
}

impl ElicitError {
    pub(crate) fn from_peer(e: PeerError) -> Self {
        match e {
            PeerError::Timeout { timeout, .. } => ElicitError::Timeout(timeout),
            PeerError::Cancelled => ElicitError::Cancelled,
            PeerError::Closed => ElicitError::ConnectionClosed,
            PeerError::Rpc(e) => ElicitError::Client(e),
            PeerError::Codec(reason) => ElicitError::InvalidResponse { field: None, reason },
            PeerError::Transport(reason) => ElicitError::Client(ErrorObject::internal(reason)),
            PeerError::Authorization(e) => ElicitError::Client(ErrorObject::internal(e.to_string())),
            e @ PeerError::UntrustedCertificate { .. } => ElicitError::Client(ErrorObject::internal(e.to_string())),
        }
    }
}
