//! Logging to the client: `logging/setLevel` and `notifications/message`.
//!
//! Each session has its own level, set by the client with `logging/setLevel`; a message is
//! sent when it is at least that severe. Before the client sets a level, MCP lets the server
//! decide what to send: this server sends nothing, unless the application chose a starting
//! level with [`ServerBuilder::default_log_level`].

use serde::Serialize;

use super::handling::{params, to_raw};
use super::state::SessionState;
use super::{Server, ServerBuilder, ServerInner};
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

/// The least severe level of the messages that go to `session` now, if any go.
pub(crate) fn threshold(server: &ServerInner, session: &SessionState) -> Option<LoggingLevel> {
    if !server.surface.logging {
        return None;
    }
    let set = session.settings.log_level.lock().ok().and_then(|l| *l);
    // A 2026-era request gets log messages only when its `_meta` asks for a level.
    if session.rounds.is_some() { set } else { set.or(server.surface.default_log_level) }
}

/// Whether a message at `level` goes to `session`.
fn wanted(server: &ServerInner, session: &SessionState, level: LoggingLevel) -> bool {
    threshold(server, session).is_some_and(|threshold| level >= threshold)
}

fn message(
    level: LoggingLevel,
    logger: Option<&str>,
    data: Result<serde_json::Value, serde_json::Error>,
) -> Option<LoggingMessageParams> {
    match data {
        Ok(data) => Some(LoggingMessageParams { level, logger: logger.map(str::to_owned), data }),
        Err(e) => {
            tracing::warn!(error = %e, "a log message could not be serialized; not sent");
            None
        }
    }
}

impl Server {
    /// Sends a log message to every initialized session whose level lets it through, outside
    /// any request; returns how many sessions it reached.
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: impl Serialize) -> usize {
        let Some(params) = message(level, logger, serde_json::to_value(data)) else {
            return 0;
        };
        let server = &self.inner;
        server.surface.sessions.broadcast("notifications/message", &params, |s| wanted(server, s, level)).await
    }
}
