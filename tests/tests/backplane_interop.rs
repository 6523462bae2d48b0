//! The pinned TypeScript and Python SDK clients run their Streamable HTTP checks across a
//! shared deployment: through round-robin proxies in front of three `combined` and three
//! quickstart instances (test servers of `tests/src/bin/`) on one Redis (helpers in
//! `support/backplane.rs`).

use crate::support::backplane::Instance;

use std::process::Command;
use std::time::Duration;

use tests::interop::{interop_dir, require_node_package, require_python_package, run_with_deadline};
use typed_mcp_redis::testing::{RedisServer, RoundRobinProxy};

/// Three instances each of `combined` and `backplane-quickstart` on one Redis, each trio behind a
/// round-robin proxy, and runs `script` (one of the interop clients) against the two proxies.
async fn interop_through_proxies(program: std::path::PathBuf, script: &'static [&'static str], passed: &str) {
    let redis = RedisServer::start();
    let elicitation: Vec<Instance> = (0..3).map(|_| Instance::start("combined", Some(&redis.url()))).collect();
    let quickstart: Vec<Instance> =
        (0..3).map(|_| Instance::start("backplane-quickstart", Some(&redis.url()))).collect();
    let front = RoundRobinProxy::start(elicitation.iter().map(|i| i.base.clone()).collect()).await;
    let back = RoundRobinProxy::start(quickstart.iter().map(|i| i.base.clone()).collect()).await;
    let urls = [format!("{}/mcp", front.url()), format!("{}/mcp", back.url())];
    let output = tokio::task::spawn_blocking(move || {
        run_with_deadline(
            Command::new(program).args(script).args(urls).current_dir(interop_dir()),
            Duration::from_secs(180),
        )
    })
    .await
    .unwrap();
    print!("{}", output.stdout);
    assert!(output.success() && output.stdout.contains(passed), "{}", output.describe());
    let served = front.served();
    assert!((0..3).all(|i| served.contains(&i)), "the requests were not spread: {served:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_client_runs_its_http_checks_across_three_instances() {
    println!("node {}", require_node_package("@modelcontextprotocol/sdk"));
    interop_through_proxies(tests::interop::node_program(), &["http_client.mjs"], "all checks passed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_runs_its_http_checks_across_three_instances() {
    let (python, version) = require_python_package("mcp");
    println!("{version}");
    let script: &[&str] = &["http_client.py", "--mode", "both"];
    interop_through_proxies(python, script, "all checks passed (legacy, auto, 2026-07-28)").await;
}
