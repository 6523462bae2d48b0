//! `Context`: sampling and roots; logging and progress.

use serde::Serialize;

use super::Context;
use crate::engine::PeerError;
use crate::protocol::{CreateMessageParams, CreateMessageResult, LoggingLevel, LoggingMessageParams, Root};

/// Why a request to the client produced no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientRequestError {
    /// The client did not declare what the request needs; nothing was sent.
    #[error("the client does not support `{capability}`; nothing was sent")]
    NotSupported {
        /// The missing capability: `sampling`, `sampling.tools`, `sampling.context` or `roots`.
        capability: &'static str,
    },
    /// The session is not initialized, so the client's capabilities are unknown.
    #[error("the session is not initialized")]
    NoSession,
    /// The request went out but produced no result: timeout, cancellation, closed session,
    /// an error from the client, or a malformed answer.
    #[error(transparent)]
    Peer(#[from] PeerError),
}

impl Context {
    // Sampling and roots.

    /// Whether the client declared the `sampling` capability.
    pub fn can_sample(&self) -> bool {
        self.client_capabilities().is_some_and(|c| c.sampling.is_some())
    }

    /// Asks the client to sample its model (`sampling/createMessage`) and returns the model's
    /// answer. The client's capabilities are checked first, and nothing is sent when they fall
    /// short: `sampling`, plus `sampling.tools` for a request with tools or a tool choice, and
    /// `sampling.context` for a request including context. The wait ends with the request's
    /// cancellation or after the server's sampling timeout.
    ///
    /// ```no_run
    /// # use typed_mcp::prelude::*;
    /// use typed_mcp::protocol::{CreateMessageParams, SamplingMessage};
    /// #[tool]
    /// async fn haiku(ctx: Context, topic: String) -> Result<String, typed_mcp::server::ClientRequestError> {
    ///     let params = CreateMessageParams::new(vec![SamplingMessage::user(format!("A haiku about {topic}"))], 100);
    ///     Ok(ctx.sample(params).await?.text().unwrap_or_default())
    /// }
    /// ```
    pub async fn sample(&self, params: CreateMessageParams) -> Result<CreateMessageResult, ClientRequestError> {
        self.side().sample(self, params).await
    }

    /// Whether the client declared the `roots` capability.
    pub fn can_list_roots(&self) -> bool {
        self.client_capabilities().is_some_and(|c| c.roots.is_some())
    }

    /// Asks the client for its roots (`roots/list`). Nothing is sent unless the client declared
    /// the `roots` capability.
    pub async fn roots(&self) -> Result<Vec<Root>, ClientRequestError> {
        self.side().roots(self).await
    }

    // Logging and progress.

    /// Whether a message at `level` would be sent to the client now.
    pub fn logs(&self, level: LoggingLevel) -> bool {
        self.side().log_threshold().is_some_and(|threshold| level >= threshold)
    }

    /// Sends `data` (a string or any serializable value) to the client as a
    /// `notifications/message` at `level`, if the session's level lets it through: the level
    /// the client set with `logging/setLevel`, or before it sets one, the server's
    /// [`default_log_level`](crate::server::ServerBuilder::default_log_level) — without which nothing
    /// is sent (MCP leaves that choice to the server). Delivery failures (the session closed)
    /// are ignored.
    pub async fn log(&self, level: LoggingLevel, data: impl Serialize) {
        self.log_to(level, None, data).await;
    }

    /// Like [`log`](Self::log), naming the logger.
    pub async fn log_to(&self, level: LoggingLevel, logger: Option<&str>, data: impl Serialize) {
        if !self.logs(level) {
            return;
        }
        match serde_json::to_value(data) {
            Ok(data) => {
                let params = LoggingMessageParams { level, logger: logger.map(str::to_owned), data };
                let _ = self.peer().notify("notifications/message", &params).await;
            }
            Err(e) => tracing::warn!(error = %e, "a log message could not be serialized; not sent"),
        }
    }

    /// Logs at `debug`.
    pub async fn debug(&self, data: impl Serialize) {
        self.log(LoggingLevel::Debug, data).await;
    }

    /// Logs at `info`.
    pub async fn info(&self, data: impl Serialize) {
        self.log(LoggingLevel::Info, data).await;
    }

    /// Logs at `notice`.
    pub async fn notice(&self, data: impl Serialize) {
        self.log(LoggingLevel::Notice, data).await;
    }

    /// Logs at `warning`.
    pub async fn warning(&self, data: impl Serialize) {
        self.log(LoggingLevel::Warning, data).await;
    }

    /// Logs at `error`.
    pub async fn error(&self, data: impl Serialize) {
        self.log(LoggingLevel::Error, data).await;
    }

    /// Logs at `critical`.
    pub async fn critical(&self, data: impl Serialize) {
        self.log(LoggingLevel::Critical, data).await;
    }

    /// Logs at `alert`.
    pub async fn alert(&self, data: impl Serialize) {
        self.log(LoggingLevel::Alert, data).await;
    }

    /// Logs at `emergency`.
    pub async fn emergency(&self, data: impl Serialize) {
        self.log(LoggingLevel::Emergency, data).await;
    }

    /// Whether progress reported with [`progress`](Self::progress) reaches the client: the
    /// request carries a `progressToken`, or the handler runs as a task (progress becomes its
    /// `statusMessage`).
    pub fn wants_progress(&self) -> bool {
        self.has_progress_token() || self.side().runs_as_task()
    }

    /// Reports the handler's progress: `progress` so far, of `total` when known, with an
    /// optional human-readable `message`.
    ///
    /// In an ordinary request it is sent as `notifications/progress` for the request's
    /// `progressToken`, and does nothing when the client sent none; a value not above the
    /// previous one is not sent (MCP requires every notification to increase the progress).
    ///
    /// Running as a task (see [`crate::task`]), whose request was answered already, it becomes
    /// the task's `statusMessage`, as `tasks/get` and `notifications/tasks` show it: `message`
    /// when given, else `"progress/total"` (`"progress"` without a total). It is written to the
    /// task store, where every instance reads it, at most once per poll interval
    /// (`pollIntervalMs`): a report within the interval of the last write is written when the
    /// interval ends (the latest one), and a report that does not change the message writes
    /// nothing. It fails only when the store does.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> Result<(), PeerError> {
        if !self.side().runs_as_task() {
            return self.notify_progress(progress, total, message).await;
        }
        if !progress.is_finite() {
            tracing::warn!(progress, "progress must be a finite number; not reported");
            return Ok(());
        }
        let message = match (message, total) {
            (Some(message), _) => message.to_owned(),
            (None, Some(total)) => format!("{progress}/{total}"),
            (None, None) => progress.to_string(),
        };
        self.side().task_progress(message).await
    }

    /// Whether [`progress`](Self::progress) reaches anyone: the client gave the request a
    /// `progressToken`, or the request runs as a task (or may become one), whose status it
    /// sets. A handler whose progress is costly to work out, or that relays another server's
    /// (asking that server for it), can skip it otherwise.
    pub fn reports_progress(&self) -> bool {
        self.side().runs_as_task() || self.meta().get_raw("progressToken").is_some()
    }
}
