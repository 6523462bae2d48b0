//! The TypeScript SDK v2 client (`@modelcontextprotocol/client`, pinned in `tests/interop/`)
//! drives our examples in both eras it speaks: 2025-11-25 (its default, the `initialize`
//! handshake) and 2026-07-28 (pinned with `versionNegotiation`), over stdio and over Streamable
//! HTTP.
//!
//! Each test runs `tests/interop/v2_client.mjs ERA PART` against one server: `quickstart` (its
//! tools), the `elicitation` example (forms: accept, decline, cancel; stdio only, as the example
//! serves) or the `combined` test server (the same kind of forms over HTTP), and
//! `url_elicitation` (URL flows accepted, declined and cancelled). The script answers every
//! question from a script of its own, checks the results exactly, and in the 2026-07-28 era
//! fails when the server sends error -32042, which that revision removed. The pinned client is
//! installed on first use (`tests::provision`).

use std::path::Path;
use std::time::Duration;

use tests::interop::{example_binary, interop_dir, require_node_package, run_with_deadline};

use crate::support::listening::Listening;

/// Generous: a script starts the server a few times and makes a few dozen calls.
const SCRIPT_DEADLINE: Duration = Duration::from_secs(180);

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

/// The example a part of the script drives, and the arguments it needs.
fn server_of(part: &str) -> (&'static str, &'static [&'static str]) {
    match part {
        "quickstart" => ("quickstart", &[]),
        "forms" => ("elicitation", &[]),
        "combined" => ("combined", &["--url-port", "0"]),
        "url" => ("url_elicitation", &["--url-port", "0"]),
        other => panic!("no server for part {other}"),
    }
}

fn binary(name: &str) -> std::path::PathBuf {
    match name {
        "combined" => Path::new(crate::support::servers::COMBINED).to_path_buf(),
        example => example_binary(example),
    }
}

/// Runs the script's `part` in `era`, the client starting the server over stdio.
fn over_stdio(era: &str, part: &str) {
    println!("node {}", require_node_package("@modelcontextprotocol/client"));
    let (name, extra) = server_of(part);
    let server = binary(name);
    let output = run_with_deadline(
        tests::interop::node()
            .args(["v2_client.mjs", era, part, "--stdio"])
            .arg(&server)
            .args(extra)
            .current_dir(interop_dir())
            // `PORT` would switch the examples to Streamable HTTP.
            .env_remove("PORT")
            .env_remove("ELICITATION_URL_PORT"),
        SCRIPT_DEADLINE,
    );
    print!("{}", output.stdout);
    assert!(
        output.success() && output.stdout.contains(&format!("all {part} checks passed ({era})")),
        "the v2 client failed ({part}, {era}, stdio) against {}: {}",
        server.display(),
        output.describe()
    );
}

/// Runs the script's `part` in `era` against the server listening on Streamable HTTP.
fn over_http(era: &str, part: &str) {
    println!("node {}", require_node_package("@modelcontextprotocol/client"));
    let (name, extra) = server_of(part);
    let server = Listening::start(&binary(name), name, extra);
    let output = run_with_deadline(
        tests::interop::node().args(["v2_client.mjs", era, part, "--http", &server.url]).current_dir(interop_dir()),
        SCRIPT_DEADLINE,
    );
    print!("{}", output.stdout);
    assert!(
        output.success() && output.stdout.contains(&format!("all {part} checks passed ({era})")),
        "the v2 client failed ({part}, {era}, Streamable HTTP): {}\n--- {name} server log ---\n{}",
        output.describe(),
        server.log_text()
    );
}

#[test]
fn quickstart_over_stdio_in_2025_11_25() {
    over_stdio(LEGACY, "quickstart");
}

#[test]
fn quickstart_over_stdio_in_2026_07_28() {
    over_stdio(MODERN, "quickstart");
}

#[test]
fn quickstart_over_http_in_2025_11_25() {
    over_http(LEGACY, "quickstart");
}

#[test]
fn quickstart_over_http_in_2026_07_28() {
    over_http(MODERN, "quickstart");
}

#[test]
fn forms_over_stdio_in_2025_11_25() {
    over_stdio(LEGACY, "forms");
}

#[test]
fn forms_over_stdio_in_2026_07_28() {
    over_stdio(MODERN, "forms");
}

#[test]
fn forms_over_http_in_2025_11_25() {
    over_http(LEGACY, "combined");
}

#[test]
fn forms_over_http_in_2026_07_28() {
    over_http(MODERN, "combined");
}

#[test]
fn url_flows_over_stdio_in_2025_11_25() {
    over_stdio(LEGACY, "url");
}

/// A declined or cancelled `protected_action` flow must end as a tool result with `isError`:
/// the 2026-07-28 revision has no error -32042.
#[test]
fn url_flows_over_stdio_in_2026_07_28() {
    over_stdio(MODERN, "url");
}

#[test]
fn url_flows_over_http_in_2025_11_25() {
    over_http(LEGACY, "url");
}

/// As over stdio: no error -32042 on the 2026-07-28 wire.
#[test]
fn url_flows_over_http_in_2026_07_28() {
    over_http(MODERN, "url");
}
