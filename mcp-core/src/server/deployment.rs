//! A server as one instance of a shared deployment, on the deployment's bus: what it announces
//! (a resource updated, a list changed, a task changed) reaches the sessions and
//! `subscriptions/listen` streams the other instances hold; a URL-mode flow can be completed on
//! any instance (asked of every instance, the one that owns the flow answers); and a task's
//! `tasks/update` or `tasks/cancel` reaches the instance running it (`task_relay`).

use std::sync::{Arc, Weak};

use super::url::{FlowsElsewhere, UrlFlowState};
use super::{Server, ServerInner};
use crate::engine::BoxFuture;
use crate::handler::context::{CompleteError, Completed, SessionKey};
use crate::transport::http::deployment::bus::{DeploymentBus, Member};
use crate::transport::http::deployment::messages::{Message, Question, Reply};

/// This server's part in a deployment.
#[derive(Debug)]
pub(crate) struct Deployment {
    bus: Arc<DeploymentBus>,
}

impl Deployment {
    /// Tells the other instances that `uri` was updated.
    pub(crate) fn resource_updated(&self, uri: &str) {
        self.bus.tell_everyone(Message::ResourceUpdated { uri: uri.into() });
    }

    /// Tells the other instances that a list changed (`method` is the notification).
    pub(crate) fn list_changed(&self, method: &str) {
        self.bus.tell_everyone(Message::ListChanged { method: method.into() });
    }
}

impl FlowsElsewhere for Deployment {
    fn complete<'a>(
        &'a self,
        id: &'a str,
        principal: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Completed, CompleteError>> {
        Box::pin(async move {
            let question = Question::CompleteFlow { id: id.into(), principal: principal.map(str::to_owned) };
            match self.bus.ask(None, question).await {
                Some(Reply::FlowCompleted { session, principal }) => {
                    Ok(Completed { elicitation_id: id.into(), session: SessionKey(session), principal })
                }
                Some(Reply::FlowAlreadyCompleted) => Err(CompleteError::AlreadyCompleted(id.into())),
                Some(Reply::FlowForeign) => Err(CompleteError::Foreign(id.into())),
                Some(Reply::FlowNotSent { reason }) => Err(CompleteError::Remote(reason)),
                _ => Err(CompleteError::Unknown(id.into())),
            }
        })
    }

    fn state<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Option<UrlFlowState>> {
        Box::pin(async move {
            match self.bus.ask(None, Question::FlowState { id: id.into() }).await? {
                Reply::FlowPending => Some(UrlFlowState::Pending),
                Reply::FlowDone => Some(UrlFlowState::Completed),
                _ => None,
            }
        })
    }
}

/// The server as it hears the bus.
struct ServerMember(Weak<ServerInner>);

impl Member for ServerMember {
    fn hear(&self, _from: &str, message: Message) {
        let Some(inner) = self.0.upgrade() else { return };
        let server = Server { inner };
        match message {
            Message::ResourceUpdated { uri } => {
                tokio::spawn(async move {
                    server.notify_resource_updated_here(&uri).await;
                });
            }
            Message::ListChanged { method } => {
                tokio::spawn(async move { server.list_changed_here(&method).await });
            }
            Message::TaskChanged { record } => {
                tokio::spawn(async move { super::tasks::notify(&server.inner, &record).await });
            }
            _ => {}
        }
    }

    fn answer(&self, question: Question) -> BoxFuture<'static, Option<Reply>> {
        let server = self.0.clone();
        Box::pin(async move {
            let server = server.upgrade()?;
            match question {
                // Another instance may know it: only the one that does answers.
                Question::FlowState { id } => match server.url_elicitations.state_here(&id)? {
                    UrlFlowState::Pending => Some(Reply::FlowPending),
                    UrlFlowState::Completed => Some(Reply::FlowDone),
                },
                Question::CompleteFlow { id, principal } => {
                    Some(match server.url_elicitations.complete_here(&id, principal.as_deref()).await {
                        Ok(done) => Reply::FlowCompleted { session: done.session.0, principal: done.principal },
                        Err(CompleteError::Unknown(_)) => return None,
                        Err(CompleteError::AlreadyCompleted(_)) => Reply::FlowAlreadyCompleted,
                        Err(CompleteError::Foreign(_)) => Reply::FlowForeign,
                        Err(e) => Reply::FlowNotSent { reason: e.to_string() },
                    })
                }
                Question::Task { task_id, principal, op } => {
                    let outcome = super::tasks::serve_relayed(&server, &task_id, principal.as_deref(), op).await;
                    Some(Reply::Task { outcome })
                }
                // The transport's to answer (the bus gives it to the transport).
                Question::SessionEnded { .. } => None,
            }
        })
    }
}

impl Server {
    /// Makes this server one instance of the deployment whose instances talk over `bus`.
    pub(crate) fn join_deployment(&self, bus: &Arc<DeploymentBus>) {
        let deployment = Arc::new(Deployment { bus: bus.clone() });
        if self.inner.deployment.set(deployment.clone()).is_err()
            || !self.inner.url_elicitations.join(deployment)
            || !bus.hear_server(Arc::new(ServerMember(Arc::downgrade(&self.inner))))
        {
            tracing::warn!("this server already belongs to a deployment; a second backplane is ignored");
            return;
        }
        super::task_relay::join(&self.inner, bus);
    }
}
