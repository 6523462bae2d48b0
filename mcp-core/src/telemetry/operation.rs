//! One operation being observed, from its start to its end: its span, and its duration recorded
//! in its attribute set.

use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::trace::TraceContextExt;
use opentelemetry::{Context as OtelContext, KeyValue};

use super::Instruments;
use super::attributes::{DurationSet, Failure, FailureKey, SetKey, is_tool_error};

/// One operation being observed: its span's context and what its duration is recorded with.
pub(crate) struct Operation {
    pub(super) instruments: Arc<Instruments>,
    pub(super) record_results: bool,
    pub(super) cx: OtelContext,
    /// The span's start time. The duration recorded is measured with the same clock as the
    /// span's (two clock reads per operation, not four).
    pub(super) started: SystemTime,
    pub(super) duration: DurationSet,
    pub(super) tool_call: bool,
    pub(super) server: bool,
}

impl Operation {
    /// The context of the operation's span, for what runs on its behalf.
    pub(crate) fn context(&self) -> &OtelContext {
        &self.cx
    }

    /// Ends the operation: `Ok` with the result's JSON text (read for `isError` in a tool
    /// call, and recorded when asked), or how it failed.
    pub(crate) fn end(self, outcome: Result<Option<&str>, Failure>) {
        let Operation { instruments, record_results, cx, started, duration, tool_call, server } = self;
        let failure = match outcome {
            Ok(Some(result)) if tool_call && is_tool_error(result) => Some(Failure::Tool),
            Ok(result) => {
                if let (true, true, Some(result)) = (tool_call, record_results, result) {
                    cx.span().set_attribute(KeyValue::new("gen_ai.tool.call.result", result.to_owned()));
                }
                None
            }
            Err(failure) => Some(failure),
        };
        let failure_key = failure.as_ref().map_or(FailureKey::None, Failure::key);
        if let Some(failure) = &failure {
            let span = cx.span();
            let mut error_attributes = Vec::new();
            failure_key.apply(&mut error_attributes);
            span.set_attributes(error_attributes);
            span.set_status(failure.status());
        }
        let ended = SystemTime::now();
        cx.span().end_with_timestamp(ended);
        let seconds = ended.duration_since(started).unwrap_or_default().as_secs_f64();
        match duration {
            DurationSet::Keyed(key) => instruments.record_keyed(SetKey { failure: failure_key, ..key }, seconds),
            DurationSet::Attributes(mut attributes) => {
                failure_key.apply(&mut attributes);
                instruments.operation(server).record(seconds, &attributes);
            }
        }
    }
}
