//! The official TypeScript and Python MCP clients, at the versions pinned in `tests/interop/`,
//! answer the form requests of the `elicitation` example (the seed's form and confirmation)
//! over stdio and over Streamable HTTP (`--port`), and the URL-mode requests of the
//! `url_elicitation` example over stdio.
//!
//! Each test runs one client script from `tests/interop/` against each example (its `forms` part
//! against `elicitation`, its `url` part against `url_elicitation`); the script declares the
//! elicitation capability, answers each `elicitation/create` from a script of accepts, declines
//! and cancels, checks the tools' results and the requested schemas, and visits the URL-mode
//! pages (served by the example itself) to complete the flows. It exits non-zero on the first
//! failed check. The pinned clients are installed on first use (`tests::provision`).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use tests::interop::{
    RunOutput, example_binary, interop_dir, require_node_package, require_python_package, run_with_deadline,
};

use crate::support::listening::Listening;

/// Generous: a script starts the server a few times and makes a few dozen calls.
const SCRIPT_DEADLINE: Duration = Duration::from_secs(180);

/// Runs `client` (the interpreter and script arguments) against `server`. The
/// `url_elicitation` example's page takes any free port (`--url-port 0`), so tests running in
/// parallel never collide; the client reads the port from the URLs it is sent.
fn run_client(client: &mut Command, server: &Path) -> RunOutput {
    client.arg(server);
    if server.file_stem().is_some_and(|stem| stem == "url_elicitation") {
        client.args(["--url-port", "0"]);
    }
    client
        .current_dir(interop_dir())
        // `PORT` would switch the examples to Streamable HTTP; the client SDKs pass the server
        // only a minimal environment, but leave no doubt.
        .env_remove("PORT")
        .env_remove("ELICITATION_URL_PORT");
    run_with_deadline(client, SCRIPT_DEADLINE)
}

#[test]
fn typescript_client_answers_form_and_url_elicitations_over_stdio() {
    let node = require_node_package("@modelcontextprotocol/sdk");
    println!("node {node}");
    for (part, example) in [("forms", "elicitation"), ("url", "url_elicitation")] {
        let server = example_binary(example);
        let output = run_client(tests::interop::node().args(["elicitation_client.mjs", part]), &server);
        print!("{}", output.stdout);
        assert!(output.success(), "the TypeScript client failed against {}: {}", server.display(), output.describe());
        assert!(
            output.stdout.contains(&format!("typescript elicitation client: all {part} checks passed")),
            "the TypeScript client did not finish: {}",
            output.describe()
        );
    }
}

#[test]
fn python_client_answers_form_and_url_elicitations_over_stdio() {
    let (python, version) = require_python_package("mcp");
    println!("{version}");
    for (part, example) in [("forms", "elicitation"), ("url", "url_elicitation")] {
        let server = example_binary(example);
        // Every connection mode: `legacy` (initialize handshake), the client's default `auto` (a
        // `server/discover` probe, then the 2026-07-28 era) and `2026-07-28` from the start.
        let script = ["elicitation_client.py", "--mode", "both", "--part", part];
        let output = run_client(Command::new(&python).args(script), &server);
        print!("{}", output.stdout);
        assert!(output.success(), "the Python client failed against {}: {}", server.display(), output.describe());
        assert!(
            output
                .stdout
                .contains(&format!("python elicitation client: all {part} checks passed (legacy, auto, 2026-07-28)")),
            "the Python client did not finish: {}",
            output.describe()
        );
    }
}

/// The `elicitation` example started with `--port`: the same scripts drive it over Streamable
/// HTTP, so a host connecting by URL sees the seed's form and confirmation too.
fn elicitation_over_http() -> Listening {
    Listening::start(&example_binary("elicitation"), "elicitation", &[])
}

#[test]
fn typescript_client_answers_the_seed_forms_over_streamable_http() {
    println!("node {}", require_node_package("@modelcontextprotocol/sdk"));
    let server = elicitation_over_http();
    let output = run_with_deadline(
        tests::interop::node().args(["elicitation_client.mjs", "forms"]).arg(&server.url).current_dir(interop_dir()),
        SCRIPT_DEADLINE,
    );
    print!("{}", output.stdout);
    assert!(
        output.success() && output.stdout.contains("typescript elicitation client: all forms checks passed"),
        "the TypeScript client failed against {}: {}\n{}",
        server.url,
        output.describe(),
        server.log_text()
    );
}

#[test]
fn python_client_answers_the_seed_forms_over_streamable_http() {
    let (python, version) = require_python_package("mcp");
    println!("{version}");
    let server = elicitation_over_http();
    let output = run_with_deadline(
        Command::new(&python)
            .args(["elicitation_client.py", "--mode", "both", "--part", "forms"])
            .arg(&server.url)
            .current_dir(interop_dir()),
        SCRIPT_DEADLINE,
    );
    print!("{}", output.stdout);
    assert!(
        output.success()
            && output.stdout.contains("python elicitation client: all forms checks passed (legacy, auto, 2026-07-28)"),
        "the Python client failed against {}: {}\n{}",
        server.url,
        output.describe(),
        server.log_text()
    );
}
