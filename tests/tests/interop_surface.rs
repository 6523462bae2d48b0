//! The official TypeScript and Python MCP clients, at the versions pinned in `tests/interop/`,
//! drive the notes example over stdio: resources and templates, subscriptions with updates,
//! prompts, completion, logging, sampling and roots.
//!
//! Each test runs one client script from `tests/interop/` against the notes binary; the script
//! exits non-zero on the first failed check. The pinned clients are installed on first use (`tests::provision`).

use std::process::Command;
use std::time::Duration;

use tests::interop::{example_binary, interop_dir, require_node_package, require_python_package, run_with_deadline};

/// Generous: a script spawns the server once and makes a few dozen calls.
const SCRIPT_DEADLINE: Duration = Duration::from_secs(180);

#[test]
fn typescript_client_uses_resources_prompts_logging_sampling_and_roots() {
    println!("node {}", require_node_package("@modelcontextprotocol/sdk"));
    let server = example_binary("notes");
    let output = run_with_deadline(
        tests::interop::node().arg("notes_client.mjs").arg(&server).current_dir(interop_dir()),
        SCRIPT_DEADLINE,
    );
    print!("{}", output.stdout);
    assert!(output.success(), "the TypeScript client failed against {}: {}", server.display(), output.describe());
    assert!(output.stdout.contains("all checks passed"), "the TypeScript client did not finish: {}", output.describe());
}

#[test]
fn python_client_uses_resources_prompts_logging_sampling_and_roots() {
    let (python, version) = require_python_package("mcp");
    println!("{version}");
    let server = example_binary("notes");
    let output = run_with_deadline(
        Command::new(&python).arg("notes_client.py").arg(&server).current_dir(interop_dir()),
        SCRIPT_DEADLINE,
    );
    print!("{}", output.stdout);
    assert!(output.success(), "the Python client failed against {}: {}", server.display(), output.describe());
    assert!(output.stdout.contains("all checks passed"), "the Python client did not finish: {}", output.describe());
}
