//! Requests to the client: `sampling/createMessage` (`ctx.sample`) and `roots/list`
//! (`ctx.roots`), and the application's callback for `notifications/roots/list_changed`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::client_requests;
use super::state::RequestSide;
use super::state::SessionState;
use super::{Context, ServerBuilder, ServerInner};
use crate::engine::{BoxFuture, Peer, PeerError, RequestOptions};
use crate::handler::context::{ClientRequestError, SessionKey};
use crate::protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, Implementation, IncludeContext, ListRootsResult, Root,
};

/// The default time a client (and its user) has to answer a sampling request.
pub const DEFAULT_SAMPLING_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// How long a client has to answer `roots/list`.
pub const ROOTS_TIMEOUT: Duration = Duration::from_secs(60);

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

/// Asks the client of `ctx` to sample its model, once its capabilities allow the request (see
/// [`Context::sample`]).
pub(crate) async fn sample(
    side: &RequestSide,
    ctx: &Context,
    params: CreateMessageParams,
) -> Result<CreateMessageResult, ClientRequestError> {
    let capabilities = ctx.client_capabilities().ok_or(ClientRequestError::NoSession)?;
    let with_context = matches!(params.include_context, Some(IncludeContext::ThisServer | IncludeContext::AllServers));
    let missing = match &capabilities.sampling {
        None => Some("sampling"),
        Some(s) if params.uses_tools() && s.tools.is_none() => Some("sampling.tools"),
        Some(s) if with_context && s.context.is_none() => Some("sampling.context"),
        Some(_) => None,
    };
    if let Some(capability) = missing {
        client_requests::missing_capability(side, capability);
        return Err(ClientRequestError::NotSupported { capability });
    }
    let options = RequestOptions {
        timeout: Some(side.server.surface.sampling_timeout),
        cancel: Some(ctx.cancellation().clone()),
    };
    let params = serde_json::to_value(&params).map_err(|e| PeerError::Codec(e.to_string()))?;
    Ok(client_requests::request(side, ctx, "sampling/createMessage", params, options).await?)
}

/// Asks the client of `ctx` for its roots, once it declared the capability (see [`Context::roots`]).
pub(crate) async fn roots(side: &RequestSide, ctx: &Context) -> Result<Vec<Root>, ClientRequestError> {
    let capabilities = ctx.client_capabilities().ok_or(ClientRequestError::NoSession)?;
    if capabilities.roots.is_none() {
        client_requests::missing_capability(side, "roots");
        return Err(ClientRequestError::NotSupported { capability: "roots" });
    }
    let options = RequestOptions { timeout: Some(ROOTS_TIMEOUT), cancel: Some(ctx.cancellation().clone()) };
    let result: ListRootsResult =
        client_requests::request(side, ctx, "roots/list", serde_json::Value::Object(serde_json::Map::new()), options)
            .await?;
    Ok(result.roots)
}
