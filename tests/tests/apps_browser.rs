//! The `apps` example in a real browser host: headless Chromium (Debian's `chromium`) loads a
//! host page that uses the official host-side bridge of `@modelcontextprotocol/ext-apps` and the
//! TypeScript SDK client (`tests/interop/apps_host.mjs`), which renders the example's view in a
//! sandboxed iframe under the content security policy its `_meta.ui` asks for. A script drives
//! the page over the DevTools protocol (`tests/interop/apps_browser.mjs`): it adds a task with
//! the view's button and moves it with another, which call the server's tools through the host;
//! then a fetch from the view to an origin it did not declare must be blocked, while the same
//! fetch from the host page goes through.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use tests::interop::{example_binary, interop_dir, require_node_package, require_program, run_with_deadline};

/// The browser: `CHROMIUM`, else `chromium` on the PATH.
fn chromium() -> String {
    let program = std::env::var("CHROMIUM").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "chromium".into());
    require_program(
        &program,
        "The MCP Apps browser test needs Chromium: install Debian's package (`apt-get install chromium`, as \
         `.ci/run` does), or set CHROMIUM to a Chromium or Chrome binary.",
    );
    program
}

/// The example, serving Streamable HTTP on a free port; killed when dropped.
struct Example(Child);

impl Drop for Example {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the `apps` example on a free port and returns it with its `/mcp` URL, read from the
/// address it logs once it listens.
fn start_example() -> (Example, String) {
    let binary = example_binary("apps");
    let mut child = Command::new(&binary)
        .args(["--port", "0"])
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let stderr = child.stderr.take().expect("stderr is piped");
    let (found, address) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("address=").nth(1) {
                let _ = found.send(rest.split_whitespace().next().unwrap_or_default().to_owned());
            }
        }
    });
    let example = Example(child);
    let address = address.recv_timeout(Duration::from_secs(30)).expect("the example logs the address it serves at");
    (example, format!("http://{address}/mcp"))
}

#[test]
fn the_task_board_works_in_a_browser_host_under_its_policy() {
    let chromium = chromium();
    require_node_package("@modelcontextprotocol/ext-apps");
    require_node_package("rolldown");
    require_node_package("ws");
    let (_example, url) = start_example();
    let run = run_with_deadline(
        tests::interop::node().arg("apps_browser.mjs").arg(&url).arg(&chromium).current_dir(interop_dir()),
        Duration::from_secs(90),
    );
    assert!(run.success(), "the browser host failed: {}", run.describe());
    let seen: Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("the browser host printed no JSON ({e}): {}", run.describe()));
    let report = &seen["report"];
    assert_eq!(report["errors"], json!([]), "{seen:#}");

    // What the host learned from the server, through the TypeScript client.
    assert_eq!(report["serverExtension"], json!({"mimeTypes": ["text/html;profile=mcp-app"]}));
    assert_eq!(report["opener"], json!({"name": "show_board", "uri": "ui://task-board/board.html"}));
    assert_eq!(
        report["modelTools"],
        json!(["show_board", "add_task", "plan_task"]),
        "the app-only `move_task` is left out of the model's tools"
    );
    assert!(report["openerText"].as_str().unwrap_or_default().contains("1. Write the release notes"), "{seen:#}");
    assert_eq!(report["view"], json!({"mimeType": "text/html;profile=mcp-app", "meta": {"prefersBorder": true}}));

    // The view showed the board, and its buttons called the server's tools through the host.
    assert_eq!(seen["shown"], json!(["Write the release notes", "Answer the issue about proxies"]));
    assert_eq!(
        seen["afterAdd"],
        json!(["Write the release notes", "Answer the issue about proxies", "Try the view in Chromium"])
    );
    assert_eq!(
        seen["afterMove"],
        json!(["Write the release notes", "Try the view in Chromium", "Answer the issue about proxies"])
    );
    assert_eq!(
        seen["calls"],
        json!([
            "add_task: Added “Try the view in Chromium” (#3).",
            "move_task: Moved “Try the view in Chromium” to place 2."
        ]),
        "the host page shows what the view's calls answered"
    );
    assert_eq!(seen["status"], "Moved “Try the view in Chromium” to place 2.");

    // The policy built from `_meta.ui.csp` (nothing declared): the view reaches no other origin.
    assert_eq!(seen["viewFetch"], "blocked: Failed to fetch", "{seen:#}");
    assert_eq!(seen["probeHitsFromView"], 0, "a request from the view reached an undeclared origin");
    assert_eq!(seen["hostFetch"], "reached", "the same fetch from the host page goes through");
    assert_eq!(seen["probeHitsFromHost"], 1);
}
