//! Operation histograms bound to their attribute sets (feature `otel-sdk`).

use std::sync::RwLock;

use opentelemetry::metrics::{BoundHistogram, Histogram};

use super::attributes::SetKey;

/// How many attribute sets are bound, at most (the SDK keeps 2,000 per instrument by default);
/// past it, durations are recorded with their attributes.
pub(super) const BOUND_MAX: usize = 1024;

/// The bound instruments, by the key of their attribute set.
#[derive(Default)]
pub(super) struct Bound(RwLock<foldhash::HashMap<SetKey, BoundHistogram<f64>>>);

impl Bound {
    /// Records `seconds` in `histogram` for the set `key` names, binding the set on its first
    /// record.
    pub(super) fn record(&self, histogram: &Histogram<f64>, key: SetKey, seconds: f64) {
        if let Ok(bound) = self.0.read()
            && let Some(h) = bound.get(&key)
        {
            return h.record(seconds);
        }
        if let Ok(mut bound) = self.0.write() {
            if let Some(h) = bound.get(&key) {
                return h.record(seconds);
            }
            if bound.len() < BOUND_MAX {
                let h = histogram.bind(&key.attributes());
                h.record(seconds);
                bound.insert(key, h);
                return;
            }
        }
        histogram.record(seconds, &key.attributes());
    }

    /// How many sets are bound.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.0.read().map_or(0, |b| b.len())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use opentelemetry::metrics::MeterProvider;
    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
    use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
    use opentelemetry_sdk::metrics::{SdkMeterProvider, Temporality};

    use super::{BOUND_MAX, Bound};
    use crate::telemetry::Transport;
    use crate::telemetry::attributes::{FailureKey, SetKey, Static};

    /// Keeps the count of each data point of the last export, by its `gen_ai.tool.name`.
    #[derive(Debug, Clone)]
    struct Counts(Arc<Mutex<Vec<(String, u64)>>>, Temporality);

    impl Default for Counts {
        fn default() -> Self {
            Counts(Arc::default(), Temporality::Cumulative)
        }
    }

    impl Counts {
        fn taken(&self) -> Vec<(String, u64)> {
            let mut got = self.0.lock().unwrap().clone();
            got.sort();
            got
        }
    }

    impl PushMetricExporter for Counts {
        async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
            let mut counts = Vec::new();
            for scope in metrics.scope_metrics() {
                for metric in scope.metrics() {
                    if let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() {
                        for point in h.data_points() {
                            let tool = point.attributes().find(|kv| kv.key.as_str() == "gen_ai.tool.name");
                            counts.push((tool.map(|kv| kv.value.to_string()).unwrap_or_default(), point.count()));
                        }
                    }
                }
            }
            *self.0.lock().unwrap() = counts;
            Ok(())
        }
        fn force_flush(&self) -> OTelSdkResult {
            Ok(())
        }
        fn shutdown_with_timeout(&self, _: std::time::Duration) -> OTelSdkResult {
            Ok(())
        }
        fn temporality(&self) -> Temporality {
            self.1
        }
    }

    fn key(tool: &'static str) -> SetKey {
        SetKey {
            server: true,
            method: crate::protocol::methods::Method::ToolsCall,
            target: Some(Static(tool)),
            version: None,
            transport: Transport::Pipe,
            failure: FailureKey::None,
        }
    }

    #[test]
    fn sets_past_the_bound_are_recorded_with_their_attributes() {
        let counts = Counts::default();
        let provider = SdkMeterProvider::builder().with_periodic_exporter(counts.clone()).build();
        let histogram = provider.meter("test").f64_histogram("d").build();
        let bound = Bound::default();
        let tools: Vec<&'static str> =
            (0..BOUND_MAX + 10).map(|i| &*Box::leak(format!("t{i}").into_boxed_str())).collect();
        for _ in 0..2 {
            for tool in &tools {
                bound.record(&histogram, key(tool), 0.001);
            }
        }
        assert_eq!(bound.len(), BOUND_MAX);
        provider.force_flush().unwrap();
        let got = counts.taken();
        let mut want: Vec<(String, u64)> = tools.iter().map(|t| ((*t).to_owned(), 2)).collect();
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn with_delta_temporality_each_export_counts_what_came_since_the_last() {
        let counts = Counts(Arc::default(), Temporality::Delta);
        let provider = SdkMeterProvider::builder().with_periodic_exporter(counts.clone()).build();
        let histogram = provider.meter("test").f64_histogram("d").build();
        let bound = Bound::default();
        for _ in 0..3 {
            bound.record(&histogram, key("a"), 0.001);
        }
        bound.record(&histogram, key("b"), 0.001);
        provider.force_flush().unwrap();
        assert_eq!(counts.taken(), [("a".to_owned(), 3), ("b".to_owned(), 1)]);
        bound.record(&histogram, key("a"), 0.001);
        provider.force_flush().unwrap();
        // `b`, bound but not recorded since, has nothing to report.
        assert_eq!(counts.taken(), [("a".to_owned(), 1)]);
    }
}
