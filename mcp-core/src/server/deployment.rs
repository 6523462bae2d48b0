//! A server as one instance of a shared deployment: what it announces (a resource updated, a
//! list changed) reaches the sessions and `subscriptions/listen` streams the other instances
//! hold, and a URL-mode flow can be completed on any instance, over the backplane's
//! [`MessageBus`].
//!
//! Two channels: `broadcast`, which every instance reads, and `instance:{id}`, which only the
//! instance `id` reads (answers to its questions). Announcements go out on `broadcast` tagged
//! with the instance that made them, which has told its own sessions already and skips its own
//! message. A URL-mode completion for an id this instance does not know is asked on
//! `broadcast`; the instance that owns the id completes it (its session gets the notification)
//! and answers on the asker's channel. No answer within [`ASK_PATIENCE`] means no instance
//! knows the id.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::url::{FlowsElsewhere, UrlFlowState};
use super::{Server, ServerInner};
use crate::handler::context::{CompleteError, Completed, SessionKey};
use crate::transport::http::{Backplane, MessageBus};

/// How long a question about a URL-mode flow waits for the instance that owns it.
pub(crate) const ASK_PATIENCE: Duration = Duration::from_secs(2);

const BROADCAST: &str = "broadcast";

fn direct(instance: &str) -> String {
    format!("instance:{instance}")
}

/// What travels between instances.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Envelope {
    ResourceUpdated { origin: String, uri: String },
    ListChanged { origin: String, method: String },
    Ask { origin: String, token: u64, question: Question },
    Answer { token: u64, answer: Answer },
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Question {
    Complete { id: String, principal: Option<String> },
    State { id: String },
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Answer {
    Completed { session: u64, principal: Option<String> },
    AlreadyCompleted,
    Foreign,
    NotSent { reason: String },
    Pending,
    Done,
}

/// This server's part in a deployment.
pub(crate) struct Deployment {
    bus: Arc<dyn MessageBus>,
    instance: String,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Answer>>>,
    next: AtomicU64,
}

impl std::fmt::Debug for Deployment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deployment").field("instance", &self.instance).finish_non_exhaustive()
    }
}

impl Deployment {
    fn publish(&self, channel: String, envelope: &Envelope) {
        let Ok(payload) = serde_json::to_string(envelope) else { return };
        let bus = self.bus.clone();
        tokio::spawn(async move {
            if let Err(e) = bus.publish(&channel, payload).await {
                tracing::warn!(error = %e, channel, "cannot tell the other instances");
            }
        });
    }

    /// Tells the other instances that `uri` was updated.
    pub(crate) fn resource_updated(&self, uri: &str) {
        self.publish(BROADCAST.into(), &Envelope::ResourceUpdated { origin: self.instance.clone(), uri: uri.into() });
    }

    /// Tells the other instances that a list changed (`method` is the notification).
    pub(crate) fn list_changed(&self, method: &str) {
        self.publish(BROADCAST.into(), &Envelope::ListChanged { origin: self.instance.clone(), method: method.into() });
    }

    async fn ask(&self, question: Question) -> Option<Answer> {
        let token = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.waiting.lock().ok()?.insert(token, tx);
        let envelope = Envelope::Ask { origin: self.instance.clone(), token, question };
        let answer = match serde_json::to_string(&envelope) {
            Ok(payload) => match self.bus.publish(BROADCAST, payload).await {
                Ok(()) => tokio::time::timeout(ASK_PATIENCE, rx).await.ok().and_then(Result::ok),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot ask the other instances about a URL-mode flow");
                    None
                }
            },
            Err(_) => None,
        };
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.remove(&token);
        }
        answer
    }

    /// Completes, on the instance that owns it, a flow this instance does not know.
    pub(crate) async fn complete(&self, id: &str, principal: Option<&str>) -> Result<Completed, CompleteError> {
        let question = Question::Complete { id: id.into(), principal: principal.map(str::to_owned) };
        match self.ask(question).await {
            Some(Answer::Completed { session, principal }) => {
                Ok(Completed { elicitation_id: id.into(), session: SessionKey(session), principal })
            }
            Some(Answer::AlreadyCompleted) => Err(CompleteError::AlreadyCompleted(id.into())),
            Some(Answer::Foreign) => Err(CompleteError::Foreign(id.into())),
            Some(Answer::NotSent { reason }) => Err(CompleteError::Remote(reason)),
            _ => Err(CompleteError::Unknown(id.into())),
        }
    }

    /// The state of a flow this instance does not know, on the instance that owns it.
    pub(crate) async fn state(&self, id: &str) -> Option<UrlFlowState> {
        match self.ask(Question::State { id: id.into() }).await? {
            Answer::Pending => Some(UrlFlowState::Pending),
            Answer::Done => Some(UrlFlowState::Completed),
            _ => None,
        }
    }
}

impl FlowsElsewhere for Deployment {
    fn complete<'a>(
        &'a self,
        id: &'a str,
        principal: Option<&'a str>,
    ) -> crate::engine::BoxFuture<'a, Result<Completed, CompleteError>> {
        Box::pin(Deployment::complete(self, id, principal))
    }

    fn state<'a>(&'a self, id: &'a str) -> crate::engine::BoxFuture<'a, Option<UrlFlowState>> {
        Box::pin(Deployment::state(self, id))
    }
}

impl Server {
    /// Makes this server one instance of the deployment `backplane` belongs to, until `closing`.
    pub(crate) fn join_deployment(&self, backplane: &Backplane, closing: CancellationToken) {
        let Some(bus) = backplane.message_bus() else { return };
        let deployment = Arc::new(Deployment {
            bus: bus.clone(),
            instance: backplane.instance().to_owned(),
            waiting: Mutex::default(),
            next: AtomicU64::new(1),
        });
        if self.inner.deployment.set(deployment.clone()).is_err()
            || !self.inner.url_elicitations.join(deployment.clone())
        {
            tracing::warn!("this server already belongs to a deployment; a second backplane is ignored");
            return;
        }
        for channel in [BROADCAST.to_owned(), direct(&deployment.instance)] {
            let server = Arc::downgrade(&self.inner);
            let deployment = Arc::downgrade(&deployment);
            bus.subscribe(
                channel,
                Box::new(move |payload| on_bus_message(&server, &deployment, &payload)),
                closing.clone(),
            );
        }
    }
}

/// Acts on one message from another instance.
fn on_bus_message(server: &Weak<ServerInner>, deployment: &Weak<Deployment>, payload: &str) {
    let (Some(server), Some(deployment)) = (server.upgrade(), deployment.upgrade()) else { return };
    let envelope: Envelope = match serde_json::from_str(payload) {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!(error = %e, "an unreadable message from another instance");
            return;
        }
    };
    let server = Server { inner: server };
    match envelope {
        Envelope::ResourceUpdated { origin, uri } if origin != deployment.instance => {
            tokio::spawn(async move {
                server.notify_resource_updated_here(&uri).await;
            });
        }
        Envelope::ListChanged { origin, method } if origin != deployment.instance => {
            tokio::spawn(async move { server.list_changed_here(&method).await });
        }
        Envelope::Ask { origin, token, question } => {
            let flows = server.inner.url_elicitations.clone();
            let reply = move |answer: Answer| {
                deployment.publish(direct(&origin), &Envelope::Answer { token, answer });
            };
            match question {
                Question::State { id } => match flows.state_here(&id) {
                    Some(UrlFlowState::Pending) => reply(Answer::Pending),
                    Some(UrlFlowState::Completed) => reply(Answer::Done),
                    // Another instance may know it: only the one that does answers.
                    None => {}
                },
                Question::Complete { id, principal } => {
                    tokio::spawn(async move {
                        let answer = match flows.complete_here(&id, principal.as_deref()).await {
                            Ok(done) => Answer::Completed { session: done.session.0, principal: done.principal },
                            Err(CompleteError::Unknown(_)) => return,
                            Err(CompleteError::AlreadyCompleted(_)) => Answer::AlreadyCompleted,
                            Err(CompleteError::Foreign(_)) => Answer::Foreign,
                            Err(e) => Answer::NotSent { reason: e.to_string() },
                        };
                        reply(answer);
                    });
                }
            }
        }
        Envelope::Answer { token, answer } => {
            let waiter = deployment.waiting.lock().ok().and_then(|mut w| w.remove(&token));
            if let Some(waiter) = waiter {
                let _ = waiter.send(answer);
            }
        }
        // Our own announcement, back from the bus: our sessions were told already.
        Envelope::ResourceUpdated { .. } | Envelope::ListChanged { .. } => {}
    }
}
