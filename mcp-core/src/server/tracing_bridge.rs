//! Forwarding the application's `tracing` events to clients as `notifications/message`.

use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context as LayerContext, Layer};

use super::Server;
use crate::protocol::{LoggingLevel, LoggingMessageParams};

/// How many events may wait to be forwarded; past that, new events are dropped.
const QUEUE: usize = 1024;

/// A `tracing-subscriber` layer sending every `tracing` event of the application to the
/// server's sessions as a log message, each session receiving those at or above its level (see
/// [`Context::log`](super::Context::log)). The event's target is the logger name; its message
/// is the data, or an object of its fields when it has fields besides the message. Events of
/// this crate itself are not forwarded. Made by [`Server::client_log_layer`].
#[derive(Debug, Clone)]
pub struct ClientLogLayer {
    tx: Option<mpsc::Sender<LoggingMessageParams>>,
}

fn level(level: &Level) -> LoggingLevel {
    match *level {
        Level::ERROR => LoggingLevel::Error,
        Level::WARN => LoggingLevel::Warning,
        Level::INFO => LoggingLevel::Info,
        Level::DEBUG | Level::TRACE => LoggingLevel::Debug,
    }
}

#[derive(Default)]
struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), Value::String(format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), Value::String(value.to_owned()));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().to_owned(), value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), value.into());
    }
}

impl<S: Subscriber> Layer<S> for ClientLogLayer {
    fn on_event(&self, event: &Event<'_>, _: LayerContext<'_, S>) {
        let Some(tx) = &self.tx else { return };
        let meta = event.metadata();
        if meta.target().starts_with("typed_mcp") {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        let data = match (fields.0.len(), fields.0.get("message")) {
            (1, Some(message)) => message.clone(),
            _ => Value::Object(fields.0),
        };
        let params = LoggingMessageParams { level: level(meta.level()), logger: Some(meta.target().to_owned()), data };
        // Never block the thread that logs: a full queue drops the event.
        let _ = tx.try_send(params);
    }
}

impl Server {
    /// A layer forwarding the application's `tracing` events to this server's clients:
    ///
    /// ```ignore
    /// use tracing_subscriber::prelude::*;
    /// tracing_subscriber::registry().with(tracing_subscriber::fmt::layer()).with(server.client_log_layer()).init();
    /// ```
    ///
    /// Call it inside a Tokio runtime, which runs the task that forwards the events; outside
    /// one, the layer forwards nothing.
    pub fn client_log_layer(&self) -> ClientLogLayer {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return ClientLogLayer { tx: None };
        };
        let (tx, mut rx) = mpsc::channel::<LoggingMessageParams>(QUEUE);
        let server = self.clone();
        runtime.spawn(async move {
            while let Some(m) = rx.recv().await {
                server.log(m.level, m.logger.as_deref(), m.data).await;
            }
        });
        ClientLogLayer { tx: Some(tx) }
    }
}
