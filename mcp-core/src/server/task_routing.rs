//! Tasks across the instances of a deployment: a `tasks/update` or `tasks/cancel` that lands on
//! an instance that is not running the task's handler is handed, over the backplane's
//! [`MessageBus`], to the instance that is (the record's `runner`), which answers the waiting
//! handler or drops it, and replies with the outcome.
//!
//! Each instance reads its own channel, `tasks:{instance}`: requests for the tasks it runs, and
//! the replies to its own requests. No reply within [`ASK_PATIENCE`] means the runner is gone or
//! unreachable. Every instance also reads `tasks:changes`, where runners announce each change of
//! their tasks, so that a `subscriptions/listen` stream naming a task hears of it on whichever
//! instance holds the stream.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::ServerInner;
use super::deployment::ASK_PATIENCE;
use super::tasks::{Relay, RelayOp};
use crate::engine::BoxFuture;
use crate::protocol::ErrorObject;
use crate::task::TaskRecord;
use crate::transport::http::{Backplane, MessageBus};

fn channel(instance: &str) -> String {
    format!("tasks:{instance}")
}

const CHANGES: &str = "tasks:changes";

/// What travels between instances about tasks.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Envelope {
    Ask { origin: String, token: u64, task_id: String, principal: Option<String>, op: RelayOp },
    Answer { token: u64, outcome: Result<(), ErrorObject> },
    Changed { origin: String, record: Box<TaskRecord> },
}

/// This server's end of the task channel.
pub(crate) struct TaskRouting {
    bus: Arc<dyn MessageBus>,
    instance: String,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Result<(), ErrorObject>>>>,
    next: AtomicU64,
    /// Announcements of changes, published one after the other (in order) by one task.
    changes: tokio::sync::mpsc::Sender<String>,
}

/// How many announcements may wait to be published; more are dropped (polling stays the rule).
const CHANGES_QUEUE: usize = 1024;

impl TaskRouting {
    fn publish(&self, channel: String, envelope: &Envelope) {
        let Ok(payload) = serde_json::to_string(envelope) else { return };
        let bus = self.bus.clone();
        tokio::spawn(async move {
            if let Err(e) = bus.publish(&channel, payload).await {
                tracing::warn!(error = %e, channel, "cannot reach another instance about a task");
            }
        });
    }
}

impl Relay for TaskRouting {
    fn instance(&self) -> &str {
        &self.instance
    }

    fn ask<'a>(
        &'a self,
        runner: &'a str,
        task_id: &'a str,
        principal: Option<&'a str>,
        op: RelayOp,
    ) -> BoxFuture<'a, Option<Result<(), ErrorObject>>> {
        Box::pin(async move {
            let token = self.next.fetch_add(1, Ordering::Relaxed);
            let (tx, rx) = oneshot::channel();
            self.waiting.lock().ok()?.insert(token, tx);
            let envelope = Envelope::Ask {
                origin: self.instance.clone(),
                token,
                task_id: task_id.to_owned(),
                principal: principal.map(str::to_owned),
                op,
            };
            let answer = match serde_json::to_string(&envelope) {
                Ok(payload) => match self.bus.publish(&channel(runner), payload).await {
                    Ok(()) => tokio::time::timeout(ASK_PATIENCE, rx).await.ok().and_then(Result::ok),
                    Err(e) => {
                        tracing::warn!(error = %e, task = task_id, "cannot reach the instance running a task");
                        None
                    }
                },
                Err(_) => None,
            };
            if let Ok(mut waiting) = self.waiting.lock() {
                waiting.remove(&token);
            }
            answer
        })
    }

    fn changed(&self, record: &TaskRecord) {
        let envelope = Envelope::Changed { origin: self.instance.clone(), record: Box::new(record.clone()) };
        let Ok(payload) = serde_json::to_string(&envelope) else { return };
        if self.changes.try_send(payload).is_err() {
            tracing::warn!(task = %record.task_id, "too many task changes waiting to be announced: one is dropped");
        }
    }
}

/// Makes this server's tasks reachable from the other instances of `backplane`'s deployment,
/// until `closing`. Without a bus, nothing changes: each instance reaches only its own tasks.
pub(crate) fn join(server: &Arc<ServerInner>, backplane: &Backplane, closing: CancellationToken) {
    let Some(bus) = backplane.message_bus() else { return };
    let (changes, mut queued) = tokio::sync::mpsc::channel::<String>(CHANGES_QUEUE);
    let routing = Arc::new(TaskRouting {
        bus: bus.clone(),
        instance: backplane.instance().to_owned(),
        waiting: Mutex::default(),
        next: AtomicU64::new(1),
        changes,
    });
    if !server.tasks.join(routing.clone()) {
        return;
    }
    let announcing = bus.clone();
    let stop = closing.clone();
    tokio::spawn(async move {
        loop {
            let payload = tokio::select! {
                p = queued.recv() => p,
                () = stop.cancelled() => None,
            };
            let Some(payload) = payload else { return };
            if let Err(e) = announcing.publish(CHANGES, payload).await {
                tracing::warn!(error = %e, "cannot announce a task's change to the other instances");
            }
        }
    });
    for name in [channel(&routing.instance), CHANGES.to_owned()] {
        let weak_server = Arc::downgrade(server);
        let weak_routing = Arc::downgrade(&routing);
        bus.subscribe(
            name,
            Box::new(move |payload| on_bus_message(&weak_server, &weak_routing, &payload)),
            closing.clone(),
        );
    }
}

/// Acts on one message about a task.
fn on_bus_message(server: &Weak<ServerInner>, routing: &Weak<TaskRouting>, payload: &str) {
    let (Some(server), Some(routing)) = (server.upgrade(), routing.upgrade()) else { return };
    let envelope: Envelope = match serde_json::from_str(payload) {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!(error = %e, "an unreadable message about a task from another instance");
            return;
        }
    };
    match envelope {
        Envelope::Ask { origin, token, task_id, principal, op } => {
            tokio::spawn(async move {
                let outcome = super::tasks::serve_relayed(&server, &task_id, principal.as_deref(), op).await;
                routing.publish(channel(&origin), &Envelope::Answer { token, outcome });
            });
        }
        Envelope::Changed { origin, record } if origin != routing.instance => {
            tokio::spawn(async move { super::tasks::notify(&server, &record).await });
        }
        // Our own announcement, back from the bus: our streams were told already.
        Envelope::Changed { .. } => {}
        Envelope::Answer { token, outcome } => {
            let waiter = routing.waiting.lock().ok().and_then(|mut w| w.remove(&token));
            if let Some(waiter) = waiter {
                let _ = waiter.send(outcome);
            }
        }
    }
}
