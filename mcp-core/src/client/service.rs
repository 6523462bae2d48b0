//! The client's half of a session: answering the server's requests and delivering its
//! notifications.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::elicitation::{self, DynElicitationHandler};
use super::handlers::{DynRootsHandler, DynSamplingHandler};
use super::notifications::{Completions, ServerNotification};
use crate::engine::{BoxFuture, HandlerResult, Handling, Peer, RequestScope, ResultText, Service};
use crate::protocol::{
    ClientCapabilities, CreateMessageParams, EmptyResult, ErrorObject, IncludeContext, ListRootsResult, Notification,
    ProgressParams, ProgressToken, Request, RequestId, RootsCapability,
};

/// A callback for every notification, run on the connection's reader.
pub(crate) type NotificationCallback = Arc<dyn Fn(&ServerNotification) + Send + Sync>;

/// A callback for the progress of one request.
pub(crate) type ProgressCallback = Arc<dyn Fn(ProgressParams) + Send + Sync>;

/// What the client's handlers are, and what the application listens to.
pub(crate) struct ClientShared {
    pub(crate) elicitation: Option<Arc<dyn DynElicitationHandler>>,
    pub(crate) sampling: Option<Arc<dyn DynSamplingHandler>>,
    pub(crate) roots: Option<Arc<dyn DynRootsHandler>>,
    pub(crate) events: broadcast::Sender<ServerNotification>,
    pub(crate) callbacks: Vec<NotificationCallback>,
    pub(crate) completions: Completions,
    pub(crate) progress: Mutex<HashMap<ProgressToken, ProgressCallback>>,
    /// Cancelled when the session closes.
    pub(crate) closed: CancellationToken,
    /// The extensions declared besides those of the handlers (the OAuth grant's).
    pub(crate) extensions: Vec<&'static str>,
    /// Whether the client declares the MCP Apps extension.
    pub(crate) apps: bool,
}

impl ClientShared {
    /// The capabilities the handlers call for.
    pub(crate) fn capabilities(&self) -> ClientCapabilities {
        let mut capabilities = self.handler_capabilities();
        if self.apps {
            let extensions = capabilities.extensions.get_or_insert_with(Default::default);
            extensions.insert(crate::apps::EXTENSION.into(), crate::apps::capability());
        }
        capabilities
    }

    fn handler_capabilities(&self) -> ClientCapabilities {
        ClientCapabilities {
            elicitation: self.elicitation.as_ref().and_then(|h| h.modes().capability()),
            sampling: self.sampling.as_ref().map(|h| h.support().capability()),
            roots: self.roots.as_ref().map(|h| RootsCapability { list_changed: h.list_changed().then_some(true) }),
            extensions: (!self.extensions.is_empty()).then(|| {
                self.extensions
                    .iter()
                    .map(|id| ((*id).to_owned(), serde_json::Value::Object(Default::default())))
                    .collect()
            }),
            ..ClientCapabilities::default()
        }
    }
}

pub(crate) struct ClientService {
    pub(crate) shared: Arc<ClientShared>,
}

fn to_raw<T: Serialize>(value: &T) -> HandlerResult {
    ResultText::serialize(value).map_err(|e| ErrorObject::internal(format!("result could not be encoded: {e}")))
}

fn params_value(request: &Request) -> Result<Value, ErrorObject> {
    let text = request.params.as_deref().map_or("{}", |p| p.get());
    serde_json::from_str(text)
        .map_err(|e| ErrorObject::invalid_params(format!("invalid `{}` parameters: {e}", request.method)))
}

impl ClientService {
    fn elicit(&self, request: Request) -> BoxFuture<'static, HandlerResult> {
        let handler = self.shared.elicitation.clone();
        Box::pin(async move {
            let params = params_value(&request)?;
            let Some(handler) = handler else {
                return Err(ErrorObject::invalid_params(
                    "this client does not support elicitation (it declared no mode)",
                ));
            };
            let request = elicitation::read_request(params, handler.modes())?;
            let result = handler.elicit(request.clone()).await;
            to_raw(&elicitation::finish(&request, result)?)
        })
    }

    fn sample(&self, request: Request) -> BoxFuture<'static, HandlerResult> {
        let handler = self.shared.sampling.clone();
        Box::pin(async move {
            let Some(handler) = handler else {
                return Err(ErrorObject::method_not_found(&request.method));
            };
            let params: CreateMessageParams = serde_json::from_value(params_value(&request)?).map_err(|e| {
                ErrorObject::invalid_params(format!("invalid `sampling/createMessage` parameters: {e}"))
            })?;
            let support = handler.support();
            if params.uses_tools() && !support.tools {
                return Err(ErrorObject::invalid_params(
                    "this client does not support tool use in sampling (it did not declare `sampling.tools`)",
                ));
            }
            if matches!(params.include_context, Some(IncludeContext::ThisServer | IncludeContext::AllServers))
                && !support.context
            {
                return Err(ErrorObject::invalid_params(
                    "this client does not support `includeContext` (it did not declare `sampling.context`)",
                ));
            }
            to_raw(&handler.create_message(params).await?)
        })
    }

    fn list_roots(&self, request: Request) -> BoxFuture<'static, HandlerResult> {
        let handler = self.shared.roots.clone();
        Box::pin(async move {
            let Some(handler) = handler else {
                return Err(ErrorObject::method_not_found(&request.method));
            };
            let roots = handler.list_roots().await?;
            to_raw(&ListRootsResult { roots, meta: None })
        })
    }
}

impl Service for ClientService {
    fn handle_request(&self, request: Request, _scope: RequestScope) -> Handling {
        match request.method.as_str() {
            "ping" => Handling::Ready(to_raw(&EmptyResult {})),
            "elicitation/create" => Handling::Future(self.elicit(request)),
            "sampling/createMessage" => Handling::Future(self.sample(request)),
            "roots/list" => Handling::Future(self.list_roots(request)),
            other => Handling::Ready(Err(ErrorObject::method_not_found(other))),
        }
    }

    fn handle_notification(&self, notification: Notification, _peer: &Peer) {
        let Some(event) = ServerNotification::read(&notification) else { return };
        match &event {
            ServerNotification::Progress(p) => {
                let callback = self.shared.progress.lock().ok().and_then(|m| m.get(&p.progress_token).cloned());
                if let Some(callback) = callback {
                    callback(p.clone());
                }
            }
            ServerNotification::ElicitationComplete { elicitation_id }
                if !self.shared.completions.complete(elicitation_id) =>
            {
                tracing::debug!(%elicitation_id, "ignored a repeated elicitation completion");
                return;
            }
            _ => {}
        }
        for callback in &self.shared.callbacks {
            callback(&event);
        }
        // No receiver is not an error: nobody subscribed.
        let _ = self.shared.events.send(event);
    }

    fn closed(&self) {
        self.shared.closed.cancel();
    }
}

/// Answers one question of a 2026-07-28 `input_required` result (`elicitation/create`,
/// `sampling/createMessage` or `roots/list`) with the handlers that answer the same request in
/// a session, checks included.
pub(crate) async fn answer_input(
    shared: &Arc<ClientShared>,
    method: &str,
    params: Value,
) -> Result<Value, ErrorObject> {
    let params = serde_json::value::to_raw_value(&params)
        .map_err(|e| ErrorObject::internal(format!("parameters could not be encoded: {e}")))?;
    let request = Request { id: RequestId::Number(0), method: method.to_owned().into(), params: Some(params) };
    let service = ClientService { shared: shared.clone() };
    let result = match method {
        "elicitation/create" => service.elicit(request).await,
        "sampling/createMessage" => service.sample(request).await,
        "roots/list" => service.list_roots(request).await,
        other => Err(ErrorObject::method_not_found(other)),
    }?;
    serde_json::from_str(result.get()).map_err(|e| ErrorObject::internal(format!("an answer could not be read: {e}")))
}
