//! Clients nobody here wrote, through the gateway (`mcp-gateway`) to servers nobody here wrote:
//! the TypeScript SDK v2 client (`tests/interop/gateway_client.mjs`), the Python SDK client
//! (`tests/interop/gateway_client.py`) and the MCP Inspector, in both eras, with the gateway
//! serving Streamable HTTP and stdio. Behind it, each started by the gateway over stdio: the
//! TypeScript SDK v1 server (2025-11-25 only), the Python SDK server and the TypeScript SDK v2
//! server (see `support::gateway`).
//!
//! The scripts check the listing under prefixes, a form of each server answered, structured
//! content, and the v1 server's -32042 flow (a URL input request in 2026-07-28, whose wire must
//! carry no -32042 error and no completion notification).

use std::time::Duration;

use tests::interop::{interop_dir, require_node_package, require_python_package, run_with_deadline};

use crate::support::gateway::{Gateway, Peer, Upstream, stdio_words, write_config};
use crate::support::inspector::Inspector;

/// A script starts the three servers behind the gateway (over stdio, once per run) and makes a
/// score of calls.
const SCRIPT_DEADLINE: Duration = Duration::from_secs(240);

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

fn upstreams() -> Vec<Upstream> {
    [Peer::TsV1, Peer::Python, Peer::TsV2].map(Upstream::stdio).to_vec()
}

/// Where a script finds the gateway: its URL, or the command that starts it over stdio.
enum Target {
    Http(String),
    Stdio(Vec<String>),
}

impl Target {
    fn args(&self) -> Vec<String> {
        match self {
            Target::Http(url) => vec!["--http".to_owned(), url.clone()],
            Target::Stdio(command) => std::iter::once("--stdio".to_owned()).chain(command.iter().cloned()).collect(),
        }
    }
}

fn typescript(era: &str, target: &Target) {
    println!("node {}", require_node_package("@modelcontextprotocol/client"));
    let output = run_with_deadline(
        tests::interop::node().arg("gateway_client.mjs").arg(era).args(target.args()).current_dir(interop_dir()),
        SCRIPT_DEADLINE,
    );
    print!("{}", output.stdout);
    assert!(
        output.success() && output.stdout.contains(&format!("all gateway checks passed ({era})")),
        "the TypeScript v2 client failed through the gateway ({era}): {}",
        output.describe()
    );
}

fn python(mode: &str, target: &Target) {
    let (python, version) = require_python_package("mcp");
    println!("{version}");
    let mut command = std::process::Command::new(python);
    command.arg("gateway_client.py").args(["--mode", mode]).current_dir(interop_dir());
    match target {
        Target::Http(url) => command.arg(url),
        Target::Stdio(words) => command.args(words),
    };
    let output = run_with_deadline(&mut command, SCRIPT_DEADLINE);
    print!("{}", output.stdout);
    assert!(
        output.success() && output.stdout.contains("all gateway checks passed"),
        "the Python client failed through the gateway ({mode}): {}",
        output.describe()
    );
}

#[tokio::test]
async fn typescript_v2_client_over_http_in_2025_11_25() {
    let gateway = Gateway::start(&upstreams()).await;
    let target = Target::Http(gateway.url.clone());
    tokio::task::spawn_blocking(move || typescript(LEGACY, &target)).await.unwrap();
}

#[tokio::test]
async fn typescript_v2_client_over_http_in_2026_07_28() {
    let gateway = Gateway::start(&upstreams()).await;
    let target = Target::Http(gateway.url.clone());
    tokio::task::spawn_blocking(move || typescript(MODERN, &target)).await.unwrap();
}

#[test]
fn typescript_v2_client_over_stdio_in_both_eras() {
    let target = Target::Stdio(stdio_words(&write_config(&upstreams())));
    typescript(LEGACY, &target);
    typescript(MODERN, &target);
}

#[tokio::test]
async fn python_client_over_http_in_2025_11_25() {
    let gateway = Gateway::start(&upstreams()).await;
    let target = Target::Http(gateway.url.clone());
    tokio::task::spawn_blocking(move || python("legacy", &target)).await.unwrap();
}

#[tokio::test]
async fn python_client_over_http_in_2026_07_28() {
    let gateway = Gateway::start(&upstreams()).await;
    let target = Target::Http(gateway.url.clone());
    tokio::task::spawn_blocking(move || python(MODERN, &target)).await.unwrap();
}

#[test]
fn python_client_over_stdio_in_both_eras() {
    python("both", &Target::Stdio(stdio_words(&write_config(&upstreams()))));
}

/// Done-when: the Inspector's `--strict` check passes through the gateway, over stdio (the
/// Inspector starting it) and Streamable HTTP, in both eras; and what it lists is every server's
/// tools under its prefix.
#[tokio::test]
async fn the_inspector_strict_tools_list_passes_through_the_gateway() {
    let gateway = Gateway::start(&upstreams()).await;
    let stdio = stdio_words(&write_config(&upstreams()));
    let url = gateway.url.clone();
    tokio::task::spawn_blocking(move || {
        let inspector = Inspector::new();
        let expected = crate::support::gateway::prefixed_tools(&[Peer::TsV1, Peer::Python, Peer::TsV2]);
        for (what, target) in [("stdio", stdio), ("Streamable HTTP", vec![url])] {
            for era in ["legacy", "modern"] {
                let mut args = vec!["--cli".to_owned()];
                args.extend(
                    ["--protocol-era", era, "--method", "tools/list", "--strict", "--format", "json"]
                        .map(str::to_owned),
                );
                // After `--`, so that the gateway's own `--config` is not taken for the Inspector's.
                args.push("--".to_owned());
                args.extend(target.iter().cloned());
                let output = inspector.run(false, &args);
                assert!(
                    output.success(),
                    "the Inspector's strict tools/list failed ({what}, {era}): {}",
                    output.describe()
                );
                let line = output.stdout.lines().rev().find(|l| l.trim_start().starts_with('{')).unwrap_or_default();
                let envelope: serde_json::Value = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("not a JSON envelope ({what}, {era}; {e}): {}", output.describe()));
                assert!(
                    envelope.get("schemaFindings").is_none(),
                    "the Inspector finds schema portability problems through the gateway ({what}, {era}): {:#}",
                    envelope["schemaFindings"]
                );
                let mut names: Vec<String> = envelope["result"]["tools"]
                    .as_array()
                    .unwrap_or_else(|| panic!("no tools ({what}, {era}): {envelope}"))
                    .iter()
                    .filter_map(|t| t["name"].as_str().map(str::to_owned))
                    .collect();
                names.sort();
                assert_eq!(names, expected, "{what}, {era}");
            }
        }
    })
    .await
    .unwrap();
}
