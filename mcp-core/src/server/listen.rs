//! `subscriptions/listen` (MCP 2026-07-28): a long-lived stream of the change notifications a
//! client opted in to, replacing the 2025-era GET stream and `resources/subscribe`.
//!
//! The request's handler acknowledges the subscription (`notifications/subscriptions/acknowledged`,
//! naming the subset of the filter the server honours), registers it with the server, and waits
//! until the client ends it (closes the HTTP response stream, or sends `notifications/cancelled`
//! on stdio) or the application ends every subscription ([`Server::end_subscriptions`]). The
//! list-changed and resource-updated announcements of [`Server`] reach every subscription that
//! asked for them, on the listen request's own stream, each tagged with the subscription id
//! (the listen request's JSON-RPC id) in `_meta`, and so do the status changes of the tasks a
//! subscription names (`taskIds`, the tasks extension). Nothing else travels on it: progress and
//! log messages belong to the request they are about.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::handling::{BROADCAST_PATIENCE, params};
use super::resources::MAX_SUBSCRIPTIONS;
use super::state::SessionState;
use super::{Server, ServerInner};
use crate::engine::{HandlerResult, Outbound, OutboundKind, Peer, RequestScope, ResultText};
use crate::protocol::jsonrpc::encode_notification;
use crate::protocol::{
    ErrorObject, JsonObject, META_SUBSCRIPTION_ID, Request, RequestId, SubscriptionFilter,
    SubscriptionsAcknowledgedParams, SubscriptionsListenParams, codes,
};

/// The acknowledgement, the first message of every subscription.
const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// One open subscription.
struct Listener {
    /// Tied to the listen request, so that over HTTP what it sends goes to that request's stream.
    peer: Peer,
    id: RequestId,
    filter: SubscriptionFilter,
    /// Ends the subscription gracefully (with a response to the listen request).
    end: CancellationToken,
}

/// The open subscriptions of a server.
#[derive(Default)]
pub(crate) struct Listeners {
    next: AtomicU64,
    open: Mutex<HashMap<u64, Listener>>,
}

/// Unregisters a subscription when its handler ends (or is dropped: the client went away).
struct Registration {
    server: Arc<ServerInner>,
    key: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Ok(mut open) = self.server.surface.listeners.open.lock() {
            open.remove(&self.key);
        }
    }
}

impl Listeners {
    /// How many subscriptions are open.
    pub(crate) fn len(&self) -> usize {
        self.open.lock().map(|o| o.len()).unwrap_or(0)
    }

    /// Sends `method` with `params`, tagged with each subscription's id, to every open
    /// subscription whose filter `wants` it; returns how many it reached. A subscription whose
    /// stream stays full for [`BROADCAST_PATIENCE`] misses it rather than holding up the caller.
    pub(crate) async fn broadcast<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
        wants: impl Fn(&SubscriptionFilter) -> bool,
    ) -> usize {
        let targets: Vec<(Peer, RequestId)> = match self.open.lock() {
            Ok(open) => open.values().filter(|l| wants(&l.filter)).map(|l| (l.peer.clone(), l.id.clone())).collect(),
            Err(_) => return 0,
        };
        if targets.is_empty() {
            return 0;
        }
        let Ok(params) = serde_json::to_value(params) else { return 0 };
        let sends = targets.iter().map(|(peer, id)| {
            let tagged = tagged(&params, id);
            async move { tokio::time::timeout(BROADCAST_PATIENCE, peer.notify(method, &tagged)).await }
        });
        let sent = futures_util::future::join_all(sends).await.into_iter().filter(|r| matches!(r, Ok(Ok(())))).count();
        if sent < targets.len() {
            tracing::debug!(method, missed = targets.len() - sent, "some subscriptions could not take a notification");
        }
        sent
    }

    /// Ends every open subscription gracefully; returns how many.
    fn end_all(&self) -> usize {
        let Ok(open) = self.open.lock() else { return 0 };
        open.values().for_each(|l| l.end.cancel());
        open.len()
    }
}

/// `params` (an object) with the subscription id added to its `_meta`.
fn tagged(params: &Value, id: &RequestId) -> Value {
    let mut object = params.as_object().cloned().unwrap_or_default();
    let meta = object.entry("_meta").or_insert_with(|| Value::Object(JsonObject::new()));
    if !meta.is_object() {
        *meta = Value::Object(JsonObject::new());
    }
    if let Value::Object(meta) = meta {
        meta.insert(META_SUBSCRIPTION_ID.into(), json!(id));
    }
    Value::Object(object)
}

/// What of `asked` this server sends: the list-changed notifications of the lists that may
/// change, and resource updates when the builder enabled resource subscriptions.
fn honoured(server: &ServerInner, asked: &SubscriptionFilter) -> SubscriptionFilter {
    let s = &server.surface;
    let flag = |asked: Option<bool>, offered: bool| (asked == Some(true) && offered).then_some(true);
    SubscriptionFilter {
        tools_list_changed: flag(asked.tools_list_changed, s.dynamic_tools),
        prompts_list_changed: flag(asked.prompts_list_changed, s.dynamic_prompts),
        resources_list_changed: flag(asked.resources_list_changed, s.dynamic_resources),
        resource_subscriptions: asked.resource_subscriptions.clone().filter(|_| s.subscriptions),
        // Checked against the tasks' owners by the caller.
        task_ids: asked.task_ids.clone().filter(|_| server.tasks.enabled),
    }
}

/// Whether the server has any change notification to offer a subscription.
fn offers_any(server: &ServerInner) -> bool {
    let s = &server.surface;
    s.dynamic_tools || s.dynamic_prompts || s.dynamic_resources || s.subscriptions || server.tasks.enabled
}

/// Serves one `subscriptions/listen` request: acknowledges, then carries the notifications
/// until the subscription ends. Ends with the graceful-closure result only when the
/// application ends it ([`Server::end_subscriptions`]); a client that goes away gets nothing.
pub(crate) async fn listen(
    server: &Arc<ServerInner>,
    state: &SessionState,
    request: &Request,
    scope: RequestScope,
) -> HandlerResult {
    let capabilities = &state.client().map(|c| c.capabilities.clone()).unwrap_or_default();
    let principal = state.principal.as_deref();
    if !offers_any(server) {
        return Err(ErrorObject::new(
            codes::METHOD_NOT_FOUND,
            "method not found: subscriptions/listen (this server sends no change notifications)",
        ));
    }
    let asked: SubscriptionsListenParams = params(request)?;
    if asked.notifications.resource_subscriptions.as_ref().is_some_and(|uris| uris.len() > MAX_SUBSCRIPTIONS) {
        return Err(ErrorObject::invalid_params(format!(
            "a subscription may name at most {MAX_SUBSCRIPTIONS} resources"
        )));
    }
    let mut filter = honoured(server, &asked.notifications);
    if let Some(ids) = &filter.task_ids {
        // Only the client's own tasks: another user's are unknown to it.
        filter.task_ids = Some(super::tasks::followable(server, ids, capabilities, principal).await?);
    }
    let id = scope.id.clone();
    let ack = SubscriptionsAcknowledgedParams {
        notifications: filter.clone(),
        meta: Some(JsonObject::from_iter([(META_SUBSCRIPTION_ID.to_owned(), json!(id))])),
    };
    let frame = encode_notification(ACKNOWLEDGED, &ack)
        .map_err(|e| ErrorObject::internal(format!("acknowledgement could not be encoded: {e}")))?;
    let end = CancellationToken::new();
    let listener = Listener { peer: scope.peer.clone(), id: id.clone(), filter, end: end.clone() };
    let _registration = register(server, listener, frame).await;
    tokio::select! {
        () = scope.cancel.cancelled() => {}
        () = end.cancelled() => {}
    }
    let closing = json!({"_meta": {META_SUBSCRIPTION_ID: id}});
    ResultText::serialize(&closing).map_err(|e| ErrorObject::internal(format!("result: {e}")))
}

/// Queues the acknowledgement and registers the subscription as one step when the queue has
/// room, so that no announcement can come between them: one that is made first is not sent,
/// one made after is queued behind the acknowledgement.
async fn register(server: &Arc<ServerInner>, listener: Listener, ack: String) -> Registration {
    let listeners = &server.surface.listeners;
    let key = listeners.next.fetch_add(1, Ordering::Relaxed);
    let out = Outbound { frame: ack, related: Some(listener.id.clone()), kind: OutboundKind::Notification };
    let peer = listener.peer.clone();
    let mut listener = Some(listener);
    let queued = match listeners.open.lock() {
        Ok(mut open) => match peer.try_send_outbound(out) {
            Ok(()) => {
                if let Some(l) = listener.take() {
                    open.insert(key, l);
                }
                None
            }
            Err(out) => Some(out),
        },
        Err(_) => None,
    };
    if let Some(out) = queued {
        // The queue is full: wait for room, then register (an announcement made meanwhile is
        // missed, as one made before the request would be).
        let _ = peer.send_outbound(out).await;
        if let (Ok(mut open), Some(l)) = (listeners.open.lock(), listener.take()) {
            open.insert(key, l);
        }
    }
    Registration { server: server.clone(), key }
}

impl Server {
    /// How many `subscriptions/listen` streams (2026 era) are open.
    pub fn subscription_count(&self) -> usize {
        self.inner.surface.listeners.len()
    }

    /// Ends every open `subscriptions/listen` stream gracefully (before shutting down, say):
    /// each listen request gets its closing response, which tells the client the end was
    /// intended. Returns how many were ended.
    pub fn end_subscriptions(&self) -> usize {
        self.inner.surface.listeners.end_all()
    }
}
