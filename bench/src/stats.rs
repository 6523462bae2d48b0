//! Figures from samples: percentiles, medians, rates.

use std::time::Duration;

/// What one load run measured.
#[derive(Debug, Clone, Default)]
pub struct Load {
    /// Calls answered in the measured phase.
    pub completed: usize,
    /// From the first measured call sent to the last one answered.
    pub elapsed: Duration,
    /// Each measured call's latency, in nanoseconds.
    pub latencies_ns: Vec<u64>,
    /// Measured calls answered with an SSE stream rather than a plain JSON body (counted by the
    /// stateless scenario only).
    pub streamed: usize,
    /// The CPU time the server's threads spent over the measured calls (stdio runs on Linux).
    pub server_cpu: Option<std::time::Duration>,
}

impl Load {
    /// Calls per second.
    pub fn rate(&self) -> f64 {
        self.completed as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The `q` quantile of the latencies (0.5 for the median), in microseconds.
    pub fn latency_us(&mut self, q: f64) -> f64 {
        percentile(&mut self.latencies_ns, q) / 1_000.0
    }
}

/// The `q` quantile of `samples` (nearest rank); sorts them.
pub fn percentile(samples: &mut [u64], q: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_unstable();
    let rank = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
    samples[rank - 1] as f64
}

/// The median of `values`, ignoring NaN; NaN when there is none.
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_and_medians() {
        let mut s = vec![5, 1, 4, 2, 3];
        assert_eq!(percentile(&mut s, 0.5), 3.0);
        assert_eq!(percentile(&mut s, 0.99), 5.0);
        assert_eq!(percentile(&mut s, 0.0), 1.0);
        assert_eq!(median(&[3.0, 1.0, f64::NAN, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0]), 2.5);
        assert!(median(&[]).is_nan());
    }
}
