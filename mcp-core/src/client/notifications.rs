//! Notifications from the server, as the application receives them, and the record of
//! completed URL-mode elicitations.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::ClientError;
use crate::protocol::{ElicitationCompleteParams, LoggingMessageParams, Notification, ProgressParams};

/// A notification from the server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/progress`: progress of one of this client's requests.
    Progress(ProgressParams),
    /// `notifications/message`: a log message.
    Log(LoggingMessageParams),
    /// `notifications/tools/list_changed`.
    ToolListChanged,
    /// `notifications/prompts/list_changed`.
    PromptListChanged,
    /// `notifications/resources/list_changed`.
    ResourceListChanged,
    /// `notifications/resources/updated`: a subscribed resource changed.
    ResourceUpdated {
        /// The resource.
        uri: String,
    },
    /// `notifications/elicitation/complete`: a URL-mode elicitation finished (sent once per id).
    ElicitationComplete {
        /// The elicitation.
        elicitation_id: String,
    },
    /// Any other notification.
    Other {
        /// Its method.
        method: String,
        /// Its parameters, if any.
        params: Option<Value>,
    },
}

#[derive(serde::Deserialize)]
struct UriParams {
    uri: String,
}

fn params<T: DeserializeOwned>(n: &Notification) -> Option<T> {
    let text = n.params.as_deref().map_or("{}", |p| p.get());
    match serde_json::from_str(text) {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::debug!(method = %n.method, error = %e, "ignored a notification with malformed parameters");
            None
        }
    }
}

impl ServerNotification {
    /// Reads a notification; `None` when a known one has malformed parameters.
    pub(crate) fn read(n: &Notification) -> Option<Self> {
        Some(match n.method.as_str() {
            "notifications/progress" => ServerNotification::Progress(params(n)?),
            "notifications/message" => ServerNotification::Log(params(n)?),
            "notifications/tools/list_changed" => ServerNotification::ToolListChanged,
            "notifications/prompts/list_changed" => ServerNotification::PromptListChanged,
            "notifications/resources/list_changed" => ServerNotification::ResourceListChanged,
            "notifications/resources/updated" => {
                ServerNotification::ResourceUpdated { uri: params::<UriParams>(n)?.uri }
            }
            "notifications/elicitation/complete" => ServerNotification::ElicitationComplete {
                elicitation_id: params::<ElicitationCompleteParams>(n)?.elicitation_id,
            },
            method => ServerNotification::Other {
                method: method.to_owned(),
                params: n.params.as_deref().and_then(|p| serde_json::from_str(p.get()).ok()),
            },
        })
    }
}

/// How many completed elicitation ids are remembered (the oldest are forgotten first).
const REMEMBERED_COMPLETIONS: usize = 4096;

/// The URL-mode elicitations the server said are complete, for waits that start before or
/// after the notification arrives.
#[derive(Debug, Default)]
pub(crate) struct Completions {
    done: Mutex<(HashSet<String>, VecDeque<String>)>,
    changed: Notify,
}

impl Completions {
    /// Records a completion; false when the id was already complete (a repeat to ignore).
    pub(crate) fn complete(&self, id: &str) -> bool {
        let fresh = match self.done.lock() {
            Ok(mut done) => {
                let (set, order) = &mut *done;
                if set.insert(id.to_owned()) {
                    order.push_back(id.to_owned());
                    if order.len() > REMEMBERED_COMPLETIONS
                        && let Some(oldest) = order.pop_front()
                    {
                        set.remove(&oldest);
                    }
                    true
                } else {
                    false
                }
            }
            Err(_) => false,
        };
        if fresh {
            self.changed.notify_waiters();
        }
        fresh
    }

    /// Whether every one of `ids` is complete.
    pub(crate) fn all_done(&self, ids: &[String]) -> bool {
        self.done.lock().map(|d| ids.iter().all(|id| d.0.contains(id))).unwrap_or(false)
    }

    /// Waits until every one of `ids` is complete, the connection closes, or `timeout` passes.
    pub(crate) async fn wait(
        &self,
        ids: &[String],
        closed: &CancellationToken,
        timeout: Duration,
    ) -> Result<(), ClientError> {
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            // Registered before checking, so a completion between the check and the wait wakes it.
            notified.as_mut().enable();
            if self.all_done(ids) {
                return Ok(());
            }
            tokio::select! {
                () = &mut notified => {}
                () = closed.cancelled() => return Err(ClientError::Closed),
                () = &mut deadline => {
                    return Err(ClientError::Timeout {
                        method: "notifications/elicitation/complete".to_owned(),
                        timeout,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn notification(method: &str, params: &str) -> Notification {
        Notification {
            method: method.into(),
            params: Some(serde_json::value::RawValue::from_string(params.into()).unwrap()),
        }
    }

    #[test]
    fn reads_known_notifications() {
        assert_eq!(
            ServerNotification::read(&notification("notifications/elicitation/complete", r#"{"elicitationId":"a"}"#)),
            Some(ServerNotification::ElicitationComplete { elicitation_id: "a".into() })
        );
        assert_eq!(ServerNotification::read(&notification("notifications/elicitation/complete", r#"{"x":1}"#)), None);
        assert_eq!(
            ServerNotification::read(&notification("notifications/tools/list_changed", "{}")),
            Some(ServerNotification::ToolListChanged)
        );
        assert!(matches!(
            ServerNotification::read(&notification("x/y", "[1]")),
            Some(ServerNotification::Other { params: Some(Value::Array(_)), .. })
        ));
    }

    #[tokio::test]
    async fn waits_see_completions_from_before_and_after() {
        let c = Arc::new(Completions::default());
        let closed = CancellationToken::new();
        assert!(c.complete("a"));
        assert!(!c.complete("a"));
        let waiter = {
            let c = c.clone();
            let closed = closed.clone();
            tokio::spawn(async move { c.wait(&["a".into(), "b".into()], &closed, Duration::from_secs(10)).await })
        };
        tokio::task::yield_now().await;
        c.complete("b");
        waiter.await.unwrap().unwrap();
        let timed_out = c.wait(&["c".into()], &closed, Duration::from_millis(10)).await;
        assert!(matches!(timed_out, Err(ClientError::Timeout { .. })));
        closed.cancel();
        assert_eq!(c.wait(&["c".into()], &closed, Duration::from_secs(10)).await, Err(ClientError::Closed));
    }
}
