//! The official conformance suite's server scenarios through the gateway: `mcp-gateway` serving
//! Streamable HTTP, with our `conformance` test server as its one upstream (a `url` upstream)
//! mounted without a prefix (`prefix = ""`), so that every tool, prompt and resource keeps the
//! name the scenarios ask for. Each revision's run is judged as the direct runs of
//! `conformance.rs` are, against the gateway's baselines (`tests/conformance/gateway-baseline-*.yml`):
//! the direct baselines are empty, and the gateway's name each scenario that still differs
//! through it, with the reason (two revisions have none).

use crate::conformance::{ExampleServer, run_suite_judged_by, scratch};
use crate::support::gateway::{BlockingGateway, Upstream, write_config};

/// Runs `suite` against the gateway in front of a fresh conformance server.
fn through_the_gateway(suite: &str) {
    let dir = scratch(&format!("gateway-conformance-{suite}"));
    let server = ExampleServer::start(dir.join("server.log"));
    let config = write_config(&[Upstream::url("conformance", &server.url).prefixed("")]);
    let gateway = BlockingGateway::start(&config, dir.join("gateway.log"));
    run_suite_judged_by("gateway-baseline", suite, &dir, &gateway.url, || {
        format!("--- the gateway ---\n{}\n--- the conformance server behind it ---\n{}", gateway.log(), server.log())
    });
}

#[test]
fn conformance_0_1_16_through_the_gateway() {
    through_the_gateway("0.1.16");
}

#[test]
fn conformance_requirements_2025_11_25_through_the_gateway() {
    through_the_gateway("2025-11-25");
}

#[test]
fn conformance_requirements_2026_07_28_through_the_gateway() {
    through_the_gateway("2026-07-28");
}
