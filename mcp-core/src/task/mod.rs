//! Tasks (the `io.modelcontextprotocol/tasks` extension of revision 2026-07-28): tool calls
//! that outlive their request.
//!
//! A tool declared with `#[tool(task = "optional")]` (or `"required"`, or
//! [`ToolDef::task_support`](crate::ToolDef::task_support)) and called by a client that
//! negotiated the extension (it lists [`TASKS_EXTENSION`](crate::protocol::TASKS_EXTENSION)
//! under `extensions` in the request's client capabilities) is answered at once with a task:
//!
//! ```json
//! {"resultType": "task", "taskId": "…", "status": "working",
//!  "createdAt": "…", "lastUpdatedAt": "…", "ttlMs": 3600000, "pollIntervalMs": 500}
//! ```
//!
//! while its handler goes on running on the server. The client polls `tasks/get`, which
//! returns the tool's result inline once the task is `completed` (a tool error is a completed
//! task whose result has `isError: true`), its error once it `failed`, and `inputRequests`
//! while it is `input_required`; it answers those with `tasks/update`, and may end the task
//! with `tasks/cancel`.
//!
//! # The handler
//!
//! It is the same `async fn` as for an ordinary call. Running as a task:
//!
//! - `ctx.elicit`, `ctx.confirm`, `ctx.elicit_url`, `ctx.sample` and `ctx.roots` make the task
//!   `input_required`, with the question in `inputRequests` (keyed as in
//!   [`crate::multi_round`]: `input-0`, `input-1`, … or the `.key(…)` given), and the handler
//!   waits, in memory, where it asked; the answer a `tasks/update` brings resumes it. It is
//!   **not** run again from the start, unlike a multi round-trip request. Questions asked
//!   together (`tokio::join!`) wait together, and the client may answer them one at a time.
//! - `tasks/cancel` drops the handler's future at the point where it waits, as a cancelled
//!   request does, and the task ends `cancelled`; [`Context::cancelled`](crate::Context::cancelled)
//!   completes then too.
//! - [`Context::progress`](crate::Context::progress) sets the task's `statusMessage` (its
//!   message, else `progress/total`), written at most once per poll interval.
//! - A handler that finishes in its first poll, before it waited on anything, answers the call
//!   directly, without a task (the extension allows it, and it saves the client a poll).
//! - A question asked with [`ElicitRequest::before_task`](crate::server::ElicitRequest::before_task)
//!   before the handler first waits goes in the call's own `input_required` result instead
//!   (a multi round-trip request): the task is created on the retry that answers it, once the
//!   handler waits on something else. For input a tool needs before it is worth starting.
//! - [`hold_start`] keeps the call from becoming a task while the handler waits, whatever it
//!   waits on, until the hold is dropped; every question asked meanwhile goes in the call's own
//!   round. For a handler that learns late whether it will ask first (a gateway relaying a
//!   call to a server that may answer `input_required` before it answers with a task).
//!
//! A client that did not negotiate the extension gets an ordinary answer from an `optional`
//! tool, and -32021 (`MissingRequiredClientCapability`, with
//! `data.requiredCapabilities.extensions["io.modelcontextprotocol/tasks"]`) from a `required`
//! one; its `tasks/*` requests get -32021 too. Tasks belong to the 2026-07-28 era: in a
//! 2025-era session a `required` tool answers -32021 and an `optional` one runs as usual.
//!
//! # Status notifications
//!
//! A client that lists task ids under `taskIds` in the filter of a `subscriptions/listen`
//! request (declaring the extension) gets `notifications/tasks` on that stream at each change
//! of those tasks: the task as `tasks/get` shows it, its result or error included once it is
//! over. Only its own tasks: another user's ids are left out of the acknowledged filter.
//! Polling stays the rule; the notifications only spare some polls.
//!
//! # Where tasks live
//!
//! A [`TaskStore`] keeps each task's [`TaskRecord`]: it is written before the task's id is
//! returned, at each status change and when the task ends, and `tasks/get` reads it. The
//! default, [`MemoryTaskStore`], keeps them in the process; a store shared by a deployment's
//! instances lets any of them answer `tasks/get`
//! ([`ServerBuilder::task_store`](crate::ServerBuilder::task_store); `typed_mcp_redis::RedisTaskStore`
//! keeps them in Redis). The handler itself runs on the instance that created the task. On a
//! server that is one instance of a deployment (a Streamable HTTP backplane with a message
//! bus), the record names that instance ([`TaskRecord::runner`]): a `tasks/update` or
//! `tasks/cancel` landing on another instance is handed to it over the bus, and once that
//! instance is gone ([`TaskStore::runner_alive`]) the next `tasks/get` ends the task `failed`.
//! A task is bound to the authenticated principal of the call that made it: anyone
//! else asking for it is told it does not exist (-32602).
//!
//! [`ServerBuilder::task_ttl`](crate::ServerBuilder::task_ttl) (default one hour) and
//! [`ServerBuilder::task_poll_interval`](crate::ServerBuilder::task_poll_interval) (default
//! 500 ms) set `ttlMs` and `pollIntervalMs`.

pub(crate) mod run;
mod store;

pub use store::{MemoryTaskStore, TaskRecord, TaskStore, TaskStoreError, iso8601, now_ms};

/// A hold on making a call a task, from [`hold_start`]; the call may become one once it is
/// dropped.
#[must_use = "the call may become a task as soon as the hold is dropped"]
pub struct TaskStartHold {
    _hold: crate::multi_round::Hold,
}

impl std::fmt::Debug for TaskStartHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TaskStartHold")
    }
}

/// Keeps the call `ctx` serves from becoming a task until the returned hold is dropped: for a
/// handler that cannot tell at its first wait whether it will ask for input first, such as one
/// relaying a call to another server, which may answer with questions (`input_required`)
/// before it answers with a task.
///
/// While the hold is kept, the handler is waited for in the call's own round, and what it
/// asks goes in that round's `input_required` result (as a question asked with
/// [`ElicitRequest::before_task`](crate::server::ElicitRequest::before_task) does). Once it
/// is dropped, a handler that waits makes the call a task, as usual. `None` when the call
/// cannot become a task (the tool does not allow it, the client did not negotiate the
/// extension, the 2025 era) or already is one.
///
/// ```no_run
/// # async fn f(ctx: typed_mcp::Context, relayed: impl std::future::Future<Output = ()>) {
/// let hold = typed_mcp::task::hold_start(&ctx);
/// relayed.await; // questions asked here go in the call's own round
/// drop(hold); // from here on, waiting makes the call a task
/// # }
/// ```
pub fn hold_start(ctx: &crate::Context) -> Option<TaskStartHold> {
    ctx.side().hold_task_start().map(|hold| TaskStartHold { _hold: hold })
}

/// What an instance of a shared deployment asks of the instance running a task.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum RelayOp {
    /// Hand these answers to the task's questions (`tasks/update`).
    Update {
        /// The answers, by question.
        responses: crate::protocol::JsonObject,
    },
    /// End the task (`tasks/cancel`).
    Cancel,
}
