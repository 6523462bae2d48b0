//! Why a client operation failed.

use std::time::Duration;

use crate::elicit::UrlElicitationRequired;
use crate::engine::PeerError;
use crate::protocol::ErrorObject;
use crate::protocol::OAuthError;

/// Why a request to the server (or connecting to it) produced no result.
///
/// A tool that fails is not an error here: its result has `isError: true`
/// ([`CallToolResult::is_error`](crate::CallToolResult::is_error)).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    #[error("the server answered with error {}: {}", .0.code, .0.message)]
    Rpc(ErrorObject),
    /// The server answered with error -32042: the user must complete these URL-mode
    /// elicitations before the request can succeed. See
    /// [`Client::complete_url_elicitations`](super::Client::complete_url_elicitations) and
    /// [`Client::wait_for_elicitations`](super::Client::wait_for_elicitations).
    #[error("{} ({} URL-mode elicitation(s) to complete first)", .0.message, .0.elicitations.len())]
    UrlElicitationRequired(UrlElicitationRequired),
    /// No answer arrived in time.
    #[error("no answer to `{method}` within {timeout:?}")]
    Timeout {
        /// What was awaited.
        method: String,
        /// The timeout that expired.
        timeout: Duration,
    },
    /// The request was cancelled (its cancellation token fired); the server was told.
    #[error("the request was cancelled")]
    Cancelled,
    /// The connection is closed (or closed while waiting).
    #[error("the connection is closed")]
    Closed,
    /// Parameters could not be encoded, or a result could not be decoded.
    #[error("{0}")]
    Codec(String),
    /// The transport failed: the server could not be started or reached.
    #[error("transport: {0}")]
    Transport(String),
    /// `initialize` negotiated a protocol revision this client does not speak (or, in the
    /// 2026-07-28 era, the server speaks none of the client's).
    #[error("the server chose protocol revision `{0}`, which this client does not speak")]
    UnsupportedProtocolVersion(String),
    /// A question of an `input_required` result could not be answered (no handler for it, or
    /// the handler failed); the request was abandoned.
    #[error("the server's input request `{key}` (`{method}`) could not be answered: {}", .error.message)]
    InputRequest {
        /// The question's key in `inputRequests`.
        key: String,
        /// What it asked (`elicitation/create`, `sampling/createMessage`, `roots/list`…).
        method: String,
        /// Why it could not be answered.
        error: Box<ErrorObject>,
    },
    /// The server asked for input more times than the client allows for one request.
    #[error("the server asked for input in more than {0} rounds")]
    TooManyRounds(usize),
    /// The operation belongs to the other protocol era than the connection's.
    #[error("`{what}` is not available in the {era:?} era")]
    WrongEra {
        /// What was attempted.
        what: String,
        /// The connection's era.
        era: super::choice::ProtocolEra,
    },
    /// The task running the call was cancelled (by `tasks/cancel`, or by the server when its
    /// time to live ran out) before it completed.
    #[error("task `{0}` was cancelled")]
    TaskCancelled(String),
    /// A result's `resultType` is neither `complete` nor `input_required`.
    #[error("the server answered with result type `{0}`, which this client does not know")]
    UnexpectedResultType(String),
    /// The tool's input schema marks arguments for HTTP headers (`x-mcp-header`) in a way the
    /// specification forbids: it must not be called.
    #[error("tool `{name}` is refused: {reason}")]
    ToolRefused {
        /// The tool.
        name: String,
        /// What is wrong with its declarations.
        reason: String,
    },
    /// The server requires OAuth authorization and the client could not obtain it: the flow
    /// failed, or the server still refuses the token it obtained.
    #[error("authorization: {0}")]
    Authorization(OAuthError),
    /// The server was reached over TLS but its certificate was not trusted: it is not issued
    /// by an authority of the platform's store or of the configured root certificates, is not
    /// valid for the server's host name, or has expired. Add the authority that issued it with
    /// `HttpClientConfig::root_certificates` (feature `rustls`) if it is to be trusted.
    #[error("the TLS certificate of {url} was not trusted: {reason}")]
    UntrustedCertificate {
        /// Where the request went.
        url: String,
        /// What is wrong with the certificate.
        reason: String,
    },
}

impl ClientError {
    /// Why authorizing with the server failed, if that is what this is.
    pub fn authorization(&self) -> Option<&OAuthError> {
        match self {
            ClientError::Authorization(e) => Some(e),
            _ => None,
        }
    }

    /// The JSON-RPC error the server answered with, if that is what this is.
    pub fn rpc(&self) -> Option<&ErrorObject> {
        match self {
            ClientError::Rpc(e) => Some(e),
            _ => None,
        }
    }

    /// The JSON-RPC error code, for errors the server answered with (-32042 included).
    pub fn code(&self) -> Option<i32> {
        match self {
            ClientError::Rpc(e) => Some(e.code),
            ClientError::UrlElicitationRequired(_) => Some(crate::protocol::codes::URL_ELICITATION_REQUIRED),
            _ => None,
        }
    }
}

impl From<PeerError> for ClientError {
    fn from(e: PeerError) -> Self {
        match e {
            PeerError::Rpc(error) => match UrlElicitationRequired::from_error_object(&error) {
                Some(required) => ClientError::UrlElicitationRequired(required),
                None => ClientError::Rpc(error),
            },
            PeerError::Timeout { method, timeout } => ClientError::Timeout { method, timeout },
            PeerError::Cancelled => ClientError::Cancelled,
            PeerError::Closed => ClientError::Closed,
            PeerError::Codec(m) => ClientError::Codec(m),
            PeerError::Transport(m) => ClientError::Transport(m),
            PeerError::Authorization(e) => ClientError::Authorization(*e),
            PeerError::UntrustedCertificate { url, reason } => ClientError::UntrustedCertificate { url, reason },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn url_elicitation_required_is_typed() {
        let wire = UrlElicitationRequired::single("e1", "https://example.test/a", "Authorize").to_error_object();
        match ClientError::from(PeerError::Rpc(wire)) {
            ClientError::UrlElicitationRequired(r) => {
                assert_eq!(r.elicitations[0].elicitation_id, "e1");
            }
            other => panic!("expected UrlElicitationRequired, got {other:?}"),
        }
        // -32042 without the data the spec requires stays a plain error.
        let bare = ErrorObject::new(-32042, "x").with_data(json!({"nope": 1}));
        assert!(matches!(ClientError::from(PeerError::Rpc(bare)), ClientError::Rpc(_)));
    }
}
