//! What the connection's tasks share: the HTTP client and URL, the session id and revision
//! every request carries, the 2026-07-28 era's headers, the OAuth flow; and how what the server
//! sends reaches the session.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};

use reqwest::header::CONTENT_TYPE;
use reqwest::{RequestBuilder, Response};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::config::HttpClientConfig;
use crate::client::http_headers::ToolHeaders;
use crate::client::oauth::{OAuthError, OAuthLogin};
use crate::client::service::ClientService;
use crate::engine::{PeerError, Session};
use crate::protocol::jsonrpc::DecodeError;
use crate::protocol::{Message, RequestId};

/// The header carrying the session id.
const SESSION_HEADER: &str = "mcp-session-id";
/// The header carrying the negotiated protocol revision.
const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

pub(super) struct Shared {
    pub(super) http: reqwest::Client,
    pub(super) url: reqwest::Url,
    pub(super) config: HttpClientConfig,
    pub(super) session: Arc<Session<ClientService>>,
    pub(super) session_id: RwLock<Option<String>>,
    pub(super) protocol_version: RwLock<Option<String>>,
    /// Set in the 2026-07-28 era: each POST's headers mirror its body.
    pub(super) era_2026: RwLock<Option<Arc<ToolHeaders>>>,
    /// Stateless era: closes the stream of a request in flight when it is cancelled.
    pub(super) open_requests: Mutex<HashMap<RequestId, CancellationToken>>,
    pub(super) stop: CancellationToken,
    pub(super) ended: CancellationToken,
    pub(super) tasks: TaskTracker,
    pub(super) standalone_opened: AtomicBool,
    /// The OAuth flow, when the client authorizes with protected servers.
    pub(super) oauth: Option<OAuthLogin>,
    /// How many step-up authorizations one request may cause.
    pub(super) max_step_ups: u32,
}

pub(super) fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/event-stream"))
}

/// A failure of the transport (the server was not reached, or broke the protocol), reported
/// as [`ClientError::Transport`].
pub(super) fn transport_error(message: impl Into<String>) -> PeerError {
    PeerError::Transport(message.into())
}

/// A failure to authorize, reported as [`ClientError::Authorization`].
pub(super) fn authorization_error(error: OAuthError) -> PeerError {
    PeerError::Authorization(Box::new(error))
}

impl Shared {
    pub(super) fn with_session(&self, mut request: RequestBuilder) -> RequestBuilder {
        request = request.headers(self.config.headers.clone());
        if let Some(id) = self.session_id.read().ok().and_then(|s| s.clone()) {
            request = request.header(SESSION_HEADER, id);
        }
        if let Some(v) = self.protocol_version.read().ok().and_then(|v| v.clone())
            && self.era_2026.read().map(|s| s.is_none()).unwrap_or(true)
        {
            request = request.header(PROTOCOL_VERSION_HEADER, v);
        }
        request
    }

    pub(super) fn has_session_id(&self) -> bool {
        self.session_id.read().map(|s| s.is_some()).unwrap_or(false)
    }

    /// Remembers the session id the server assigned (on the `initialize` response).
    pub(super) fn capture_session_id(&self, response: &Response) {
        let Some(id) = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else { return };
        if self.era_2026.read().is_ok_and(|s| s.is_some()) {
            // The 2026-07-28 era has no sessions: an id a server sends anyway is not one.
            return;
        }
        if let Ok(mut current) = self.session_id.write()
            && current.is_none()
        {
            tracing::debug!(session = id, "the server assigned a session");
            *current = Some(id.to_owned());
        }
    }

    /// Fails the pending request `id` with `error`.
    pub(super) async fn fail(&self, id: &RequestId, error: PeerError) {
        tracing::debug!(%id, %error, "request failed in the transport");
        self.session.peer().fail(id, error);
    }

    /// Hands one message from the server to the session; true when it is the response to `awaited`.
    pub(super) async fn handle_incoming(&self, text: &str, awaited: Option<&RequestId>) -> bool {
        match Message::decode(text) {
            Ok(message) => {
                let answered = matches!((&message, awaited), (Message::Response(r), Some(id)) if &r.id == id);
                self.session.handle_message(message).await;
                answered
            }
            Err(DecodeError { id, error, respond }) => {
                tracing::debug!(code = error.code, message = %error.message, "rejected a message from the server");
                if respond {
                    self.session.send_error(id.as_ref(), &error).await;
                }
                false
            }
        }
    }
}
