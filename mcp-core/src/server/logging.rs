//! Logging to the client: `logging/setLevel` and `notifications/message`.
//!
//! Each session has its own level, set by the client with `logging/setLevel`; a message is
//! sent when it is at least that severe. Before the client sets a level, MCP lets the server
//! decide what to send: this server sends nothing, unless the application chose a starting
//! level with [`ServerBuilder::default_log_level`].

use serde::Serialize;

use super::handling::{params, to_raw};
use super::state::SessionState;
use super::{Context, Server, ServerBuilder, ServerInner};
use crate::engine::HandlerResult;
use crate::protocol::{EmptyResult, ErrorObject, LoggingLevel, LoggingMessageParams, Request, SetLevelParams};

impl ServerBuilder {
    /// The level messages must reach to be sent to a session whose client has not sent
    /// `logging/setLevel`. Without it, nothing is sent until the client sets a level.
    pub fn default_log_level(mut self, level: LoggingLevel) -> Self {
        self.surface.default_log_level = Some(level);
        self
    }

    /// Does not declare the `logging` capability: `logging/setLevel` is then an unknown method
    /// and log calls send nothing.
    pub fn disable_logging(mut self) -> Self {
        self.surface.logging = false;
        self
    }
}

/// Answers `logging/setLevel`; an unknown level is -32602.
pub(crate) fn set_level(session: &SessionState, request: &Request) -> HandlerResult {
    let p: SetLevelParams = params(request)?;
    *session.settings.log_level.lock().map_err(|_| ErrorObject::internal("poisoned"))? = Some(p.level);
    tracing::debug!(level = %p.level, "client set the logging level");
    to_raw(&EmptyResult {})
}

/// Whether a message at `level` goes to `session`.
fn wanted(server: &ServerInner, session: &SessionState, level: LoggingLevel) -> bool {
    let set = session.settings.log_level.lock().ok().and_then(|l| *l);
    // A 2026-era request gets log messages only when its `_meta` asks for a level.
    let threshold = if session.rounds.is_some() { set } else { set.or(server.surface.default_log_level) };
    server.surface.logging && threshold.is_some_and(|threshold| level >= threshold)
}

fn message(level: LoggingLevel, logger: Option<&str>, data: impl Serialize) -> Option<LoggingMessageParams> {
    match serde_json::to_value(data) {
        Ok(data) => Some(LoggingMessageParams { level, logger: logger.map(str::to_owned), data }),
        Err(e) => {
            tracing::warn!(error = %e, "a log message could not be serialized; not sent");
            None
        }
    }
}

impl Context {
    /// Whether a message at `level` would be sent to the client now.
    pub fn logs(&self, level: LoggingLevel) -> bool {
        wanted(self.server(), self.session_state(), level)
    }

    /// Sends `data` (a string or any serializable value) to the client as a
    /// `notifications/message` at `level`, if the session's level lets it through: the level
    /// the client set with `logging/setLevel`, or before it sets one, the server's
    /// [`default_log_level`](super::ServerBuilder::default_log_level) — without which nothing
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
        if let Some(params) = message(level, logger, data) {
            let _ = self.peer().notify("notifications/message", &params).await;
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
}

impl Server {
    /// Sends a log message to every initialized session whose level lets it through, outside
    /// any request; returns how many sessions it reached.
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: impl Serialize) -> usize {
        let Some(params) = message(level, logger, data) else {
            return 0;
        };
        let server = &self.inner;
        server.surface.sessions.broadcast("notifications/message", &params, |s| wanted(server, s, level)).await
    }
}
