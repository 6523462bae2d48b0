//! # Long-running tools: tasks
//!
//! A build, a migration or a deployment that asks for a confirmation half-way can outlive any
//! request. Revision 2026-07-28 has the tasks extension (`io.modelcontextprotocol/tasks`) for
//! them: the server answers the `tools/call` at once with a task, and the client polls it. A tool
//! opts in with `task = "optional"` (a task for clients that negotiated the extension, an ordinary
//! call for others) or `task = "required"` (only as a task); its handler is written as always:
//!
//! ```rust
//! use std::time::Duration;
//! use typed_mcp::prelude::*;
//!
//! /// Builds a service, then deploys it once the user confirms.
//! ///
//! /// # Arguments
//! /// * `service` - What to deploy.
//! #[tool(destructive, task = "optional")]
//! async fn deploy(ctx: Context, service: String) -> Result<String, ElicitError> {
//!     tokio::time::sleep(Duration::from_millis(10)).await; // the build
//!     if !ctx.confirm(format!("{service} is built. Deploy it?")).await? {
//!         return Ok(format!("{service} was built but not deployed"));
//!     }
//!     Ok(format!("{service} deployed"))
//! }
//!
//! # fn main() -> Result<(), typed_mcp::BuildError> {
//! let server = Server::builder("ops", "1.0.0")
//!     
//!     .task_ttl(Some(Duration::from_secs(24 * 60 * 60))) // `ttlMs`: kept a day (default an hour)
//!     .task_poll_interval(Duration::from_secs(1)) // `pollIntervalMs` (default 500 ms)
//!     .tools(tools![deploy])
//!     .build()?;
//! assert_eq!(server.tools().tools[0].execution.as_ref().unwrap().task_support, Some(typed_mcp::protocol::TaskSupport::Optional));
//! # Ok(())
//! # }
//! ```
//!
//! - The server advertises the extension in `capabilities.extensions` when a tool can run as a
//!   task (or `ServerBuilder::task_store` is set). A call whose `_meta` client capabilities list
//!   the extension gets `{"resultType": "task", "taskId", "status": "working", "createdAt",
//!   "lastUpdatedAt", "ttlMs", "pollIntervalMs"}`; the task is stored before its id is returned.
//!   A handler that finishes before it first waits answers directly instead.
//! - `tasks/get` returns the task's status, with the tool's result inline once it is `completed`
//!   (a tool error is a completed task with `isError: true`), the error once it `failed`, and
//!   `inputRequests` while it is `input_required`. `tasks/update` answers them (some or all; an
//!   answer to a key nothing waits for is ignored) and `tasks/cancel` ends it; both answer an empty
//!   `{"resultType": "complete"}`.
//! - Running as a task, `ctx.confirm`/`ctx.elicit`/`ctx.elicit_url`/`ctx.sample`/`ctx.roots` make
//!   the task `input_required` and the handler **waits where it asked**: the answer resumes it,
//!   nothing runs twice (unlike a multi round-trip request, which replays the handler). Questions
//!   asked together wait together. `tasks/cancel` drops the handler where it waits.
//!   `ctx.elicit(…).before_task()` asks in the call's own `input_required` round instead, for input
//!   a tool needs before starting; the task starts on the retry that answers it.
//! - Running as a task, `ctx.progress(done, total, message)` becomes the task's `statusMessage`
//!   (in `tasks/get` and `notifications/tasks`): the message, else `"done/total"`, written to the
//!   store at most once per poll interval (the latest report wins).
//! - Without the extension, a `required` tool and the `tasks/*` methods answer -32021
//!   (`data.requiredCapabilities.extensions["io.modelcontextprotocol/tasks"]`), in either era.
//! - A task belongs to the user (`Principal`) whose call made it: to anyone else its id is
//!   unknown (-32602, like an id that never existed or expired).
//! - Status notifications: a `subscriptions/listen` filter naming `taskIds` (with the extension
//!   declared) gets `notifications/tasks` (the task as `tasks/get` shows it) at each change of
//!   those of the client's own tasks; `client.listen(SubscriptionFilter { task_ids: … })`.
//! - `TaskStore` keeps the tasks' records (plain serializable data, async methods): the default
//!   `MemoryTaskStore` keeps them in the process. `typed_mcp_redis::RedisTaskStore`
//!   (`redis.task_store()`) keeps each in Redis as one key expiring with the task (`ttlMs` after
//!   its creation), so every instance of a deployment answers `tasks/get` and a finished task's
//!   result survives restarts. The handler runs on the instance that created the task; on a
//!   server with a backplane (see "Running on more than one machine"), `tasks/update` and
//!   `tasks/cancel` landing on another instance are handed to it, and a task whose instance died
//!   is reported `failed` (`"the server instance running this task stopped before the task
//!   finished"`) instead of `working` until it expires. `testing::assert_task_store_contract`
//!   checks a store of your own. See the `typed_mcp::task` docs.
//!
//! From the client (2026-07-28 era), `call_tool_as_task` (or `client.tool(name).as_task()`)
//! declares the extension for that call only, polls at the server's interval, answers the task's
//! `inputRequests` with the client's elicitation, sampling and roots handlers through
//! `tasks/update`, and returns the tool's result; a timeout or cancellation of the call cancels
//! the task. `start_tool_task`, `get_task`, `update_task` and `cancel_task` are the raw requests:
//!
//! ```rust,no_run
//! # async fn run(client: typed_mcp::client::Client) -> Result<(), typed_mcp::client::ClientError> {
//! use typed_mcp::client::TaskStart;
//! use serde_json::json;
//!
//! let deployed = client.call_tool_as_task("deploy", json!({"service": "api"})).await?;
//! if let TaskStart::Task(task) = client.start_tool_task("deploy", json!({"service": "web"})).await? {
//!     let now = client.get_task(&task.task_id).await?;
//!     println!("{:?}", now.status);
//!     client.cancel_task(&task.task_id).await?;
//! }
//! # Ok(())
//! # }
//! ```
//!
//! The `tasks` example's `deploy` tool runs as a task and asks for a confirmation
//! half-way; `tests/tests/tasks.rs` drives it through `input_required` → `tasks/update` →
//! `completed` with this client, `tests/tests/tasks_redis.rs` does the same over three instances
//! sharing a real Redis behind a round-robin proxy (and kills the instance running a task, and
//! restarts one), and the `conformance` test server passes the suite's ten `tasks-*`
//! scenarios.
