//! The official TypeScript and Python MCP clients, at the versions pinned in `tests/interop/`,
//! drive the quickstart server over stdio.
//!
//! Each test runs one client script from `tests/interop/` against the quickstart binary. The
//! script lists the tools, calls each one, checks an unknown tool's error and exits non-zero on
//! the first failed check. The clients must be installed first with `tests/interop/setup.sh`;
//! without them these tests fail and say so.

use std::process::Command;
use std::time::Duration;

use tests::interop::{
    SETUP_COMMAND, example_binary, installed_npm_version, interop_dir, pinned_npm_version, pinned_python_version,
    require_program, run_with_deadline, venv_python,
};

/// Generous: a script spawns the server once per connection mode and makes a handful of calls.
const SCRIPT_DEADLINE: Duration = Duration::from_secs(180);

#[test]
fn typescript_client_drives_quickstart_over_stdio() {
    let node = require_program("node", &format!("Install Node.js 20 or newer, then run `{SETUP_COMMAND}`."));
    println!("node {node}");
    let package = "@modelcontextprotocol/sdk";
    let pinned = pinned_npm_version(package);
    match installed_npm_version(package) {
        Some(installed) if installed == pinned => {}
        Some(installed) => panic!(
            "tests/interop/node_modules has {package} {installed}, but package.json pins {pinned}: run `{SETUP_COMMAND}` \
             (or `npm ci` in tests/interop)"
        ),
        None => panic!(
            "{package} {pinned} is not installed in tests/interop/node_modules: run `{SETUP_COMMAND}` (or `npm ci` in \
             tests/interop)"
        ),
    }

    let server = example_binary("quickstart");
    let output = run_with_deadline(
        Command::new("node").arg("quickstart_client.mjs").arg(&server).current_dir(interop_dir()),
        SCRIPT_DEADLINE,
    );
    print!("{}", output.stdout);
    assert!(output.success(), "the TypeScript client failed against {}: {}", server.display(), output.describe());
    assert!(output.stdout.contains("all checks passed"), "the TypeScript client did not finish: {}", output.describe());
}

#[test]
fn python_client_drives_quickstart_over_stdio() {
    let python = venv_python();
    let hint = format!(
        "The Python client lives in the virtualenv tests/interop/.venv: with Python 3.10 or newer (and its venv \
         module) installed, run `{SETUP_COMMAND}`."
    );
    assert!(python.exists(), "{} does not exist. {hint}", python.display());
    let version = require_program(python.to_str().expect("the workspace path is UTF-8"), &hint);
    println!("{version}");

    let pinned = pinned_python_version("mcp");
    let probe = run_with_deadline(
        Command::new(&python).args(["-c", "import importlib.metadata as m; print(m.version('mcp'))"]),
        Duration::from_secs(60),
    );
    assert!(
        probe.success(),
        "the Python package `mcp` is not installed in tests/interop/.venv. {hint}\n{}",
        probe.describe()
    );
    let installed = probe.stdout.trim();
    assert_eq!(
        installed, pinned,
        "tests/interop/.venv has mcp {installed}, but requirements.txt pins {pinned}. {hint}"
    );

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
