//! `Context`: sampling and roots; logging and progress.

use serde::Serialize;

use super::Context;
use crate::engine::PeerError;
use crate::protocol::LoggingLevel;

impl Context {
    // Logging and progress.

    /// Whether a message at `level` would be sent to the client now.
    pub fn logs(&self, level: LoggingLevel) -> bool {
        self.side().logs(self, level)
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
        if self.logs(level) {
            self.side().log(self, level, logger, serde_json::to_value(data)).await;
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
        self.side().wants_progress(self)
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
        self.side().progress(self, progress, total, message).await
    }
}
