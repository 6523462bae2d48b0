//! Trace context in `_meta`: written by a client into the requests it sends, read by a server
//! from the requests it receives, with the application's propagator (or the global one).

use std::collections::HashMap;

use opentelemetry::Context as OtelContext;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;

use super::Telemetry;
use crate::protocol::JsonObject;

impl Telemetry {
    fn with_propagator<T>(&self, f: impl FnOnce(&dyn TextMapPropagator) -> T) -> T {
        match &self.options.propagator {
            Some(p) => f(&**p),
            None => {
                let mut f = Some(f);
                opentelemetry::global::get_text_map_propagator(|p| (f.take().expect("called once"))(p))
            }
        }
    }

    /// The context a request's `_meta` carries, if any.
    pub(super) fn extract_meta(&self, meta: &HashMap<String, String>) -> Option<OtelContext> {
        if meta.is_empty() {
            return None;
        }
        let cx = self.with_propagator(|p| p.extract_with_context(&OtelContext::new(), &Carrier(meta)));
        cx.span().span_context().is_valid().then_some(cx)
    }

    /// Writes the trace context of `cx` into `meta`.
    pub(super) fn inject(&self, cx: &OtelContext, meta: &mut JsonObject) {
        let mut carrier = HashMap::new();
        self.with_propagator(|p| p.inject_context(cx, &mut CarrierMut(&mut carrier)));
        for (k, v) in carrier {
            meta.insert(k, serde_json::Value::String(v));
        }
    }
}

/// Trace context in a `_meta` object (or in HTTP headers), as the propagators read it.
struct Carrier<'a>(&'a HashMap<String, String>);

impl Extractor for Carrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

struct CarrierMut<'a>(&'a mut HashMap<String, String>);

impl Injector for CarrierMut<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), value);
    }
}

/// Whether a `_meta` object's text may hold trace context (a cheap search, before decoding).
pub(super) fn carries_trace_context(meta: &str) -> bool {
    static KEYS: std::sync::LazyLock<[memchr::memmem::Finder<'static>; 2]> = std::sync::LazyLock::new(|| {
        [memchr::memmem::Finder::new("traceparent"), memchr::memmem::Finder::new("baggage")]
    });
    KEYS.iter().any(|k| k.find(meta.as_bytes()).is_some())
}

/// The trace-context members of `_meta` (strings only: anything else is ignored).
pub(super) fn trace_members(meta: Option<&serde_json::Map<String, serde_json::Value>>) -> HashMap<String, String> {
    let mut out = HashMap::new();
    if let Some(meta) = meta {
        for key in ["traceparent", "tracestate", "baggage"] {
            if let Some(serde_json::Value::String(v)) = meta.get(key) {
                out.insert(key.to_owned(), v.clone());
            }
        }
    }
    out
}
