//! `subscriptions/listen` (2026-07-28 era): one long-lived request whose stream carries the
//! change notifications the client opted in to.

use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{Client, ClientError, ProtocolEra, ServerNotification};
use crate::engine::RequestOptions;
use crate::protocol::{JsonObject, SubscriptionFilter, SubscriptionsAcknowledgedParams};

/// The notification that opens every subscription.
const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// An open `subscriptions/listen` stream. Its notifications reach the application like any
/// other ([`Client::notifications`], [`ClientBuilder::on_notification`](super::ClientBuilder::on_notification)),
/// and a list's change drops what the client kept of that list under the server's caching
/// hints. Ends when [`end`](Self::end)ed or dropped (the request is withdrawn; over HTTP its
/// stream is closed), when the server ends it, or with the connection.
#[derive(Debug)]
pub struct Subscription {
    acknowledged: SubscriptionFilter,
    stop: CancellationToken,
    task: Option<JoinHandle<Result<(), ClientError>>>,
}

impl Subscription {
    /// What the server agreed to send (a subset of what was asked).
    pub fn acknowledged(&self) -> &SubscriptionFilter {
        &self.acknowledged
    }

    /// Whether the subscription has ended (withdrawn, or ended by the server).
    pub fn is_ended(&self) -> bool {
        self.stop.is_cancelled() || self.task.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Withdraws the subscription and waits until it is over.
    pub async fn end(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// Waits until the server ends the subscription (or the connection closes): `Ok` when the
    /// server answered the listen request, the error otherwise.
    pub async fn closed(mut self) -> Result<(), ClientError> {
        match self.task.take() {
            Some(task) => task.await.unwrap_or(Err(ClientError::Closed)),
            None => Ok(()),
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Client {
    /// Opens a `subscriptions/listen` stream for the notifications `filter` opts in to and
    /// waits for the server's acknowledgement (at most the request timeout). Stateless era
    /// only: in a session, notifications come without asking (and resources through
    /// [`subscribe_resource`](Self::subscribe_resource)).
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, ClientError> {
        let Some(era_2026) = &self.inner.era_2026 else {
            return Err(ClientError::WrongEra { what: "subscriptions/listen".into(), era: ProtocolEra::Y2025 });
        };
        // One acknowledgement at a time: it is matched to the listen request by order.
        let _gate = self.inner.listen_gate.lock().await;
        let mut events = self.inner.shared.events.subscribe();
        let mut params = JsonObject::new();
        params.insert("notifications".into(), serde_json::to_value(&filter).unwrap_or(Value::Null));
        // Following tasks (`notifications/tasks`) is part of the tasks extension.
        if filter.task_ids.is_some() {
            params = super::tasks::with_tasks_extension(params);
        }
        let params = era_2026.with_meta(params);
        let stop = CancellationToken::new();
        let peer = self.inner.peer.clone();
        let options = RequestOptions { timeout: None, cancel: Some(stop.clone()) };
        let mut task = tokio::spawn(async move {
            match peer.request::<_, JsonObject>("subscriptions/listen", &params, options).await {
                Ok(_) => Ok(()),
                Err(crate::engine::PeerError::Cancelled) => Ok(()),
                Err(e) => Err(ClientError::from(e)),
            }
        });
        let wait = self.inner.request_timeout.unwrap_or(Duration::MAX);
        let acknowledged = tokio::time::timeout(wait, async {
            loop {
                tokio::select! {
                    event = events.recv() => match event {
                        Ok(ServerNotification::Other { method, params }) if method == ACKNOWLEDGED => {
                            let params = params.unwrap_or(Value::Null);
                            return serde_json::from_value::<SubscriptionsAcknowledgedParams>(params)
                                .map(|a| a.notifications)
                                .map_err(|e| ClientError::Codec(format!("invalid acknowledgement: {e}")));
                        }
                        Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                        Err(broadcast::error::RecvError::Closed) => return Err(ClientError::Closed),
                    },
                    ended = &mut task => {
                        return Err(match ended {
                            Ok(Err(e)) => e,
                            _ => ClientError::Codec("the server ended the subscription before acknowledging it".into()),
                        });
                    }
                }
            }
        })
        .await;
        match acknowledged {
            Ok(Ok(acknowledged)) => Ok(Subscription { acknowledged, stop, task: Some(task) }),
            Ok(Err(e)) => {
                stop.cancel();
                Err(e)
            }
            Err(_) => {
                stop.cancel();
                Err(ClientError::Timeout { method: "subscriptions/listen".into(), timeout: wait })
            }
        }
    }
}
