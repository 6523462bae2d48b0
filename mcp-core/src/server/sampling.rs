//! Requests to the client: `sampling/createMessage` (`ctx.sample`) and `roots/list`
//! (`ctx.roots`), and the application's callback for `notifications/roots/list_changed`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::client_requests;
use super::session_context::server_of;
use super::state::SessionState;
use super::{Context, ServerBuilder, ServerInner};
use crate::engine::{BoxFuture, Peer, PeerError, RequestOptions};
use crate::handler::context::SessionKey;
use crate::protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, Implementation, IncludeContext, ListRootsResult, Root,
};

/// The default time a client (and its user) has to answer a sampling request.
pub const DEFAULT_SAMPLING_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// How long a client has to answer `roots/list`.
pub const ROOTS_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a request to the client produced no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientRequestError {
    /// The client did not declare what the request needs; nothing was sent.
    #[error("the client does not support `{capability}`; nothing was sent")]
    NotSupported {
        /// The missing capability: `sampling`, `sampling.tools`, `sampling.context` or `roots`.
        capability: &'static str,
    },
    /// The session is not initialized, so the client's capabilities are unknown.
    #[error("the session is not initialized")]
    NoSession,
    /// The request went out but produced no result: timeout, cancellation, closed session,
    /// an error from the client, or a malformed answer.
    #[error(transparent)]
    Peer(#[from] PeerError),
}

pub(crate) type RootsCallback = Arc<dyn Fn(SessionHandle) -> BoxFuture<'static, ()> + Send + Sync>;

impl ServerBuilder {
    /// How long a client has to answer `ctx.sample(…)` (default [`DEFAULT_SAMPLING_TIMEOUT`]).
    pub fn sampling_timeout(mut self, timeout: Duration) -> Self {
        self.surface.sampling_timeout = timeout;
        self
    }

    /// Runs `callback` whenever a client says its roots changed
    /// (`notifications/roots/list_changed`), with a handle to that session, typically to
    /// fetch the new roots with [`SessionHandle::roots`]. Each call runs in its own task.
    pub fn on_roots_list_changed<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(SessionHandle) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.surface.roots_changed = Some(Arc::new(move |session| Box::pin(callback(session))));
        self
    }
}

/// A session of the server, outside any request: who the client is, and requests to it.
#[derive(Clone)]
pub struct SessionHandle {
    peer: Peer,
    state: Arc<SessionState>,
}

impl std::fmt::Debug for SessionHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionHandle").field("key", &self.state.key()).finish_non_exhaustive()
    }
}

impl SessionHandle {
    /// Identifies the session.
    pub fn key(&self) -> SessionKey {
        self.state.key()
    }

    /// The client's `clientInfo`.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.state.client().map(|c| &c.info)
    }

    /// The capabilities the client declared.
    pub fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.state.client().map(|c| &c.capabilities)
    }

    /// Asks the client for its roots (`roots/list`).
    pub async fn roots(&self) -> Result<Vec<Root>, ClientRequestError> {
        list_roots(&self.peer, &self.state, None).await
    }
}

async fn list_roots(
    peer: &Peer,
    state: &SessionState,
    cancel: Option<CancellationToken>,
) -> Result<Vec<Root>, ClientRequestError> {
    let capabilities = &state.client().ok_or(ClientRequestError::NoSession)?.capabilities;
    if capabilities.roots.is_none() {
        return Err(ClientRequestError::NotSupported { capability: "roots" });
    }
    let options = RequestOptions { timeout: Some(ROOTS_TIMEOUT), cancel };
    let result: ListRootsResult = peer.request("roots/list", &serde_json::Map::new(), options).await?;
    Ok(result.roots)
}

/// Runs the application's callback for `notifications/roots/list_changed`.
pub(crate) fn roots_changed(server: &ServerInner, session: &Arc<SessionState>, peer: &Peer) {
    let Some(callback) = server.surface.roots_changed.clone() else {
        tracing::debug!("roots changed; no callback registered");
        return;
    };
    let handle = SessionHandle { peer: peer.unrelated(), state: session.clone() };
    tokio::spawn(callback(handle));
}

impl Context {
    /// Whether the client declared the `sampling` capability.
    pub fn can_sample(&self) -> bool {
        self.client_capabilities().is_some_and(|c| c.sampling.is_some())
    }

    /// Asks the client to sample its model (`sampling/createMessage`) and returns the model's
    /// answer. The client's capabilities are checked first, and nothing is sent when they fall
    /// short: `sampling`, plus `sampling.tools` for a request with tools or a tool choice, and
    /// `sampling.context` for a request including context. The wait ends with the request's
    /// cancellation or after the server's sampling timeout.
    ///
    /// ```no_run
    /// # use typed_mcp::prelude::*;
    /// use typed_mcp::protocol::{CreateMessageParams, SamplingMessage};
    /// #[tool]
    /// async fn haiku(ctx: Context, topic: String) -> Result<String, typed_mcp::server::ClientRequestError> {
    ///     let params = CreateMessageParams::new(vec![SamplingMessage::user(format!("A haiku about {topic}"))], 100);
    ///     Ok(ctx.sample(params).await?.text().unwrap_or_default())
    /// }
    /// ```
    pub async fn sample(&self, params: CreateMessageParams) -> Result<CreateMessageResult, ClientRequestError> {
        let capabilities = self.client_capabilities().ok_or(ClientRequestError::NoSession)?;
        let with_context =
            matches!(params.include_context, Some(IncludeContext::ThisServer | IncludeContext::AllServers));
        let missing = match &capabilities.sampling {
            None => Some("sampling"),
            Some(s) if params.uses_tools() && s.tools.is_none() => Some("sampling.tools"),
            Some(s) if with_context && s.context.is_none() => Some("sampling.context"),
            Some(_) => None,
        };
        if let Some(capability) = missing {
            client_requests::missing_capability(self, capability);
            return Err(ClientRequestError::NotSupported { capability });
        }
        let options = RequestOptions {
            timeout: Some(server_of(self).surface.sampling_timeout),
            cancel: Some(self.cancellation().clone()),
        };
        let params = serde_json::to_value(&params).map_err(|e| PeerError::Codec(e.to_string()))?;
        Ok(client_requests::request(self, "sampling/createMessage", params, options).await?)
    }

    /// Whether the client declared the `roots` capability.
    pub fn can_list_roots(&self) -> bool {
        self.client_capabilities().is_some_and(|c| c.roots.is_some())
    }

    /// Asks the client for its roots (`roots/list`). Nothing is sent unless the client declared
    /// the `roots` capability.
    pub async fn roots(&self) -> Result<Vec<Root>, ClientRequestError> {
        let capabilities = self.client_capabilities().ok_or(ClientRequestError::NoSession)?;
        if capabilities.roots.is_none() {
            client_requests::missing_capability(self, "roots");
            return Err(ClientRequestError::NotSupported { capability: "roots" });
        }
        let options = RequestOptions { timeout: Some(ROOTS_TIMEOUT), cancel: Some(self.cancellation().clone()) };
        let result: ListRootsResult =
            client_requests::request(self, "roots/list", serde_json::Value::Object(serde_json::Map::new()), options)
                .await?;
        Ok(result.roots)
    }
}
