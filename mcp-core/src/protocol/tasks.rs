//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) of revision 2026-07-28: a
//! `tools/call` answered with a task the client polls (`tasks/get`), answers (`tasks/update`) and
//! may cancel (`tasks/cancel`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ErrorObject, JsonObject};

/// The extension's identifier, under `capabilities.extensions` of either side.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Whether a tool may, or must, run as a task (`execution.taskSupport` in `tools/list`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Never a task: the call is answered when the tool is done (the default).
    #[default]
    Forbidden,
    /// A task when the client negotiated the extension; an ordinary call otherwise.
    Optional,
    /// Only as a task: a client that did not negotiate the extension gets -32021.
    Required,
}

impl TaskSupport {
    /// Whether the tool may run as a task.
    pub fn allows_task(self) -> bool {
        self != TaskSupport::Forbidden
    }
}

/// How a tool runs (`Tool.execution`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Whether the tool runs as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for the client's answers to its `inputRequests`.
    InputRequired,
    /// Done: the tool's result (which may report a tool error with `isError`) is in `result`.
    Completed,
    /// Ended by a protocol-level error, in `error`.
    Failed,
    /// Cancelled by the client.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task is over (completed, failed or cancelled).
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

/// A task as `tools/call` (`resultType: "task"`) and `tasks/get` show it. `tasks/get` adds
/// `inputRequests` while the task waits for input, `result` once it completed and `error` once
/// it failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The task's id.
    pub task_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// A human-readable note on the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601).
    pub created_at: String,
    /// When its status last changed (ISO 8601).
    pub last_updated_at: String,
    /// How long after its creation the server keeps it, in milliseconds (`null`: unlimited).
    pub ttl_ms: Option<u64>,
    /// How often the client should poll, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// What the task asks of the client, by key (status `input_required`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<JsonObject>,
    /// The tool's result (status `completed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// What went wrong (status `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

/// `tasks/get` and `tasks/cancel` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
}

/// `tasks/update` parameters: answers to some or all of a task's `inputRequests`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskParams {
    /// The task.
    pub task_id: String,
    /// Answers, by the key of the input request they answer.
    pub input_responses: JsonObject,
}
