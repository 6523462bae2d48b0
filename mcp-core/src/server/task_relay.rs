//! Tasks across the instances of a deployment: a `tasks/update` or `tasks/cancel` that lands on
//! an instance that is not running the task's handler is asked, over the deployment's bus, of
//! the instance that is (the record's `runner`), which answers the waiting handler or drops it,
//! and replies with the outcome (no reply in time: the runner is gone or unreachable). Runners
//! announce each change of their tasks to every instance, so that a `subscriptions/listen`
//! stream naming a task hears of it on whichever instance holds the stream.

use std::sync::Arc;

use super::ServerInner;
use super::tasks::Relay;
use crate::engine::BoxFuture;
use crate::protocol::ErrorObject;
use crate::task::{RelayOp, TaskRecord};
use crate::transport::http::deployment::bus::DeploymentBus;
use crate::transport::http::deployment::messages::{Message, Question, Reply};

/// This server's end of the tasks of a deployment.
struct TaskRelay {
    bus: Arc<DeploymentBus>,
}

impl Relay for TaskRelay {
    fn instance(&self) -> &str {
        self.bus.instance()
    }

    fn ask<'a>(
        &'a self,
        runner: &'a str,
        task_id: &'a str,
        principal: Option<&'a str>,
        op: RelayOp,
    ) -> BoxFuture<'a, Option<Result<(), ErrorObject>>> {
        Box::pin(async move {
            let question = Question::Task { task_id: task_id.to_owned(), principal: principal.map(str::to_owned), op };
            match self.bus.ask(Some(runner), question).await {
                Some(Reply::Task { outcome }) => Some(outcome),
                Some(_) => None,
                None => {
                    tracing::debug!(task = task_id, runner, "the instance running a task did not answer");
                    None
                }
            }
        })
    }

    fn changed(&self, record: &TaskRecord) {
        self.bus.tell_everyone(Message::TaskChanged { record: Box::new(record.clone()) });
    }
}

/// Makes this server's tasks reachable from the other instances that talk over `bus`.
pub(crate) fn join(server: &Arc<ServerInner>, bus: &Arc<DeploymentBus>) {
    server.tasks.join(Arc::new(TaskRelay { bus: bus.clone() }));
}
