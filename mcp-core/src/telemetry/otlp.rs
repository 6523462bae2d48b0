//! Exporting over OTLP (HTTP) as the standard `OTEL_*` environment variables say.

use opentelemetry::propagation::TextMapCompositePropagator;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::SdkTracerProvider;

use super::Telemetry;

/// Why OTLP export could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("OpenTelemetry export: {0}")]
pub struct OtlpError(String);

/// Sets up OpenTelemetry from the standard environment variables, when
/// `OTEL_EXPORTER_OTLP_ENDPOINT` (or its `_TRACES_`/`_METRICS_` forms) is set; `Ok(None)`
/// when none is.
///
/// Traces (batched: `OTEL_BSP_SCHEDULE_DELAY` and the other `OTEL_BSP_*`) and metrics
/// (`OTEL_METRIC_EXPORT_INTERVAL`) go over OTLP/HTTP, protobuf unless
/// `OTEL_EXPORTER_OTLP_PROTOCOL=http/json` (gRPC is not built in); the service is named by
/// `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`; `OTEL_EXPORTER_OTLP_HEADERS` and
/// `OTEL_EXPORTER_OTLP_TIMEOUT` are honoured, and so are `OTEL_TRACES_SAMPLER` and
/// `OTEL_TRACES_SAMPLER_ARG` (`parentbased_traceidratio` with `0.1` keeps one trace in ten;
/// the histograms still count every request). The providers become the global ones, with the
/// W3C trace-context and baggage propagators, so that [`Telemetry::global`](super::Telemetry::global)
/// uses them; [`OtlpGuard::telemetry`] gives the same, with durations through bound
/// instruments. Keep the guard: [`OtlpGuard::shutdown`] (or dropping it) flushes what is
/// still buffered.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use typed_mcp::prelude::*;
/// use typed_mcp::telemetry::{otlp_from_env, shutdown_signal};
///
/// let otlp = otlp_from_env()?;
/// let mut builder = Server::builder("weather", "1.0.0");
/// if let Some(otlp) = &otlp {
///     builder = builder.telemetry(otlp.telemetry());
/// }
/// let server = builder.build()?;
/// tokio::select! {
///     served = server.serve_stdio() => served?,
///     () = shutdown_signal() => {}
/// }
/// if let Some(otlp) = otlp {
///     otlp.shutdown();
/// }
/// # Ok(()) }
/// ```
pub fn otlp_from_env() -> Result<Option<OtlpGuard>, OtlpError> {
    let set = |key: &str| std::env::var(key).is_ok_and(|v| !v.trim().is_empty());
    let endpoints =
        ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"];
    if !endpoints.iter().any(|k| set(k)) {
        return Ok(None);
    }
    if let Ok(protocol) = std::env::var("OTEL_EXPORTER_OTLP_PROTOCOL")
        && protocol.trim() == "grpc"
    {
        return Err(OtlpError(
            "OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not built in; use http/protobuf (the default) or http/json".into(),
        ));
    }
    let resource = opentelemetry_sdk::Resource::builder().build();
    let spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()
        .map_err(|e| OtlpError(format!("the span exporter: {e}")))?;
    let traces = SdkTracerProvider::builder().with_batch_exporter(spans).with_resource(resource.clone()).build();
    let metrics = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .build()
        .map_err(|e| OtlpError(format!("the metric exporter: {e}")))?;
    let meters = SdkMeterProvider::builder().with_periodic_exporter(metrics).with_resource(resource).build();
    opentelemetry::global::set_tracer_provider(traces.clone());
    opentelemetry::global::set_meter_provider(meters.clone());
    opentelemetry::global::set_text_map_propagator(TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ]));
    Ok(Some(OtlpGuard { traces: Some(traces), meters: Some(meters) }))
}

/// Keeps OTLP export running; [`shutdown`](Self::shutdown), or dropping it, flushes what is
/// buffered and stops the exporters.
#[must_use = "dropping the guard stops the export"]
#[derive(Debug)]
pub struct OtlpGuard {
    traces: Option<SdkTracerProvider>,
    meters: Option<SdkMeterProvider>,
}

impl OtlpGuard {
    /// Telemetry through the providers this guard keeps ([`Telemetry::from_sdk`]: durations
    /// through bound instruments), with the global propagators set up beside them. The same
    /// spans and metrics as [`Telemetry::global`], for less per request.
    pub fn telemetry(&self) -> Telemetry {
        match (&self.traces, &self.meters) {
            (Some(traces), Some(meters)) => Telemetry::from_sdk(traces, meters),
            _ => Telemetry::global(),
        }
    }

    /// Flushes the spans and metrics still buffered, then stops the exporters. Blocks until
    /// they are sent (or their timeout passes).
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(traces) = self.traces.take() {
            let _ = traces.force_flush();
            if let Err(e) = traces.shutdown() {
                tracing::warn!(error = %e, "the span exporter did not shut down cleanly");
            }
        }
        if let Some(meters) = self.meters.take() {
            let _ = meters.force_flush();
            if let Err(e) = meters.shutdown() {
                tracing::warn!(error = %e, "the metric exporter did not shut down cleanly");
            }
        }
    }
}

impl Drop for OtlpGuard {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Resolves when the process is asked to stop: Ctrl-C (SIGINT), or SIGTERM on Unix (what
/// container runtimes and service managers send). Await it beside serving, then shut the
/// exporters down, so that nothing buffered is lost.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
