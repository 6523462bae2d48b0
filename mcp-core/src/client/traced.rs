//! A client's telemetry (feature `otel`): where its spans and metrics go, and what they say of
//! the connection.

/// A client's telemetry, and what its spans say of the connection.
#[derive(Clone)]
pub(crate) struct Traced {
    pub(crate) telemetry: crate::telemetry::Telemetry,
    pub(crate) transport: crate::telemetry::Transport,
    /// The server's host and port, over HTTP.
    pub(crate) server: Option<(String, u16)>,
    pub(crate) opened: std::time::Instant,
}

impl Traced {
    pub(crate) fn server(&self) -> Option<(&str, u16)> {
        self.server.as_ref().map(|(h, p)| (h.as_str(), *p))
    }
}
