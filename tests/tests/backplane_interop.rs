//! The pinned TypeScript and Python SDK clients run their Streamable HTTP checks across a
//! shared deployment: through round-robin proxies in front of three `combined` and three
//! quickstart instances (test servers of `tests/src/bin/`) on one Redis (helpers in
//! `support/backplane.rs`); and the TypeScript client's checks on a six-node Redis Cluster, before
//! and after the master serving the deployment's broadcast channel is killed.

use crate::support::backplane::Instance;

use std::process::Command;
use std::time::Duration;

use tests::interop::{interop_dir, require_node_package, require_python_package, run_with_deadline};
use typed_mcp_redis::testing::{RedisCluster, RedisServer, RoundRobinProxy};

/// Three instances each of `combined` and `backplane-quickstart` on one Redis deployment, each
/// trio behind a round-robin proxy.
struct Deployment {
    _instances: Vec<Instance>,
    front: RoundRobinProxy,
    back: RoundRobinProxy,
}

impl Deployment {
    /// The six instances on the Redis at `redis_url` (one node, or a Cluster's nodes).
    async fn start(redis_url: &str) -> Deployment {
        let elicitation: Vec<Instance> = (0..3).map(|_| Instance::start("combined", Some(redis_url))).collect();
        let quickstart: Vec<Instance> =
            (0..3).map(|_| Instance::start("backplane-quickstart", Some(redis_url))).collect();
        let front = RoundRobinProxy::start(elicitation.iter().map(|i| i.base.clone()).collect()).await;
        let back = RoundRobinProxy::start(quickstart.iter().map(|i| i.base.clone()).collect()).await;
        Deployment { _instances: elicitation.into_iter().chain(quickstart).collect(), front, back }
    }

    /// Runs `script` (one of the interop clients) against the two proxies; it must print
    /// `passed`, and the requests must have reached all three `combined` instances.
    async fn run(&self, program: std::path::PathBuf, script: &'static [&'static str], passed: &str) {
        let urls = [format!("{}/mcp", self.front.url()), format!("{}/mcp", self.back.url())];
        let before = self.front.served().len();
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
        let served = &self.front.served()[before..];
        assert!((0..3).all(|i| served.contains(&i)), "the requests were not spread: {served:?}");
    }
}

/// Three instances each of `combined` and `backplane-quickstart` on one Redis, each trio behind a
/// round-robin proxy, and runs `script` (one of the interop clients) against the two proxies.
async fn interop_through_proxies(program: std::path::PathBuf, script: &'static [&'static str], passed: &str) {
    let redis = RedisServer::start();
    Deployment::start(&redis.url()).await.run(program, script, passed).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_redis_cluster_the_typescript_checks_pass_before_and_after_a_master_failover() {
    println!("node {}", require_node_package("@modelcontextprotocol/sdk"));
    // A six-node Cluster of its own: the master serving the channel every instance reads is
    // killed between the two runs, and its replica takes its slots over.
    let mut cluster = RedisCluster::start();
    let deployment = Deployment::start(&cluster.url()).await;
    deployment.run(tests::interop::node_program(), &["http_client.mjs"], "all checks passed").await;
    let victim = cluster.master_of("mcp:bus:deployment");
    let started = std::time::Instant::now();
    cluster.kill(victim);
    tokio::task::block_in_place(|| cluster.wait_healthy());
    println!("a master killed; the Cluster healthy again after {:?}", started.elapsed());
    deployment.run(tests::interop::node_program(), &["http_client.mjs"], "all checks passed").await;
}
