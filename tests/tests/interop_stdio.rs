//! The official TypeScript and Python MCP clients, at the versions pinned in `tests/interop/`,
//! drive the quickstart server over stdio.
//!
//! Each test runs one client script from `tests/interop/` against the quickstart binary. The
//! script lists the tools, calls each one, checks an unknown tool's error and exits non-zero on
//! the first failed check. The pinned clients are installed on
//! first use (`tests::provision`).

use std::process::Command;
use std::time::Duration;

use tests::interop::{example_binary, interop_dir, require_node_package, require_python_package, run_with_deadline};

/// Generous: a script spawns the server once per connection mode and makes a handful of calls.
const SCRIPT_DEADLINE: Duration = Duration::from_secs(180);

#[test]
fn typescript_client_drives_quickstart_over_stdio() {
    println!("node {}", require_node_package("@modelcontextprotocol/sdk"));

    let server = example_binary("quickstart");
    let output = run_with_deadline(
        tests::interop::node().arg("quickstart_client.mjs").arg(&server).current_dir(interop_dir()),
        SCRIPT_DEADLINE,
    );
    print!("{}", output.stdout);
    assert!(output.success(), "the TypeScript client failed against {}: {}", server.display(), output.describe());
    assert!(output.stdout.contains("all checks passed"), "the TypeScript client did not finish: {}", output.describe());
}

#[test]
fn python_client_drives_quickstart_over_stdio() {
    let (python, version) = require_python_package("mcp");
    println!("{version}");

    let server = example_binary("quickstart");
    // Every connection mode: `legacy` (initialize handshake), the client's default `auto` (a
    // `server/discover` probe, then the 2026-07-28 era) and `2026-07-28` from the start.
    let output = run_with_deadline(
        Command::new(&python).args(["quickstart_client.py", "--mode", "both"]).arg(&server).current_dir(interop_dir()),
        SCRIPT_DEADLINE,
    );
    print!("{}", output.stdout);
    assert!(output.success(), "the Python client failed against {}: {}", server.display(), output.describe());
    assert!(output.stdout.contains("all checks passed"), "the Python client did not finish: {}", output.describe());
}
