//! The official TypeScript and Python MCP clients, at the versions pinned in `tests/interop/`,
//! drive our servers over Streamable HTTP.
//!
//! Each test starts the `combined` test server (forms, URL mode and a task in one server, named
//! `elicitation`; `--port P --url-port 0`) and the `quickstart` example (`--port Q`) on 127.0.0.1, then runs `tests/interop/http_client.mjs` or
//! `tests/interop/http_client.py` against `http://127.0.0.1:P/mcp` and `http://127.0.0.1:Q/mcp`.
//! The scripts exit non-zero on the first failed check. The pinned clients are installed
//! on first use (`tests::provision`).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use tests::interop::{example_binary, interop_dir, require_node_package, require_python_package, run_with_deadline};

use crate::support::listening::Listening;

/// Generous: a script makes a few dozen requests over two sessions per server.
const SCRIPT_DEADLINE: Duration = Duration::from_secs(180);

fn servers() -> (Listening, Listening) {
    (
        Listening::start(Path::new(crate::support::servers::COMBINED), "combined", &["--url-port", "0"]),
        Listening::start(&example_binary("quickstart"), "quickstart", &[]),
    )
}

fn logs(servers: &[&Listening]) -> String {
    servers.iter().map(|s| format!("--- {} server log ---\n{}", s.name(), s.log_text())).collect::<Vec<_>>().join("\n")
}

#[test]
fn typescript_client_drives_the_examples_over_streamable_http() {
    println!("node {}", require_node_package("@modelcontextprotocol/sdk"));

    let (elicitation, quickstart) = servers();
    let output = run_with_deadline(
        tests::interop::node()
            .arg("http_client.mjs")
            .arg(&elicitation.url)
            .arg(&quickstart.url)
            .current_dir(interop_dir()),
        SCRIPT_DEADLINE,
    );
    print!("{}", output.stdout);
    assert!(
        output.success() && output.stdout.contains("all checks passed"),
        "the TypeScript client failed over Streamable HTTP: {}\n{}",
        output.describe(),
        logs(&[&elicitation, &quickstart])
    );
}

#[test]
fn python_client_drives_the_examples_over_streamable_http() {
    let (python, version) = require_python_package("mcp");
    println!("{version}");

    let (elicitation, quickstart) = servers();
    // Every connection mode: `legacy` (initialize handshake and a session), the client's default
    // `auto` (a `server/discover` probe, then 2026-07-28 requests) and `2026-07-28`.
    let output = run_with_deadline(
        Command::new(&python)
            .args(["http_client.py", "--mode", "both"])
            .arg(&elicitation.url)
            .arg(&quickstart.url)
            .current_dir(interop_dir()),
        SCRIPT_DEADLINE,
    );
    print!("{}", output.stdout);
    assert!(
        output.success() && output.stdout.contains("all checks passed (legacy, auto, 2026-07-28)"),
        "the Python client failed over Streamable HTTP: {}\n{}",
        output.describe(),
        logs(&[&elicitation, &quickstart])
    );
}
