//! The official TypeScript and Python MCP clients, at the versions pinned in `tests/interop/`,
//! drive our servers over Streamable HTTP.
//!
//! Each test starts the `combined` test server (forms, URL mode and a task in one server, named
//! `elicitation`; `--port P --url-port 0`) and the `quickstart` example (`--port Q`) on 127.0.0.1, then runs `tests/interop/http_client.mjs` or
//! `tests/interop/http_client.py` against `http://127.0.0.1:P/mcp` and `http://127.0.0.1:Q/mcp`.
//! The scripts exit non-zero on the first failed check. The pinned clients are installed
//! on first use (`tests::provision`).

use std::fs::File;
use std::net::{Ipv4Addr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};
use typed_mcp_redis::testing::free_port;

use tests::interop::{example_binary, interop_dir, require_node_package, require_python_package, run_with_deadline};

/// Generous: a script makes a few dozen requests over two sessions per server.
const SCRIPT_DEADLINE: Duration = Duration::from_secs(180);
/// How long a server may take to start listening.
const STARTUP: Duration = Duration::from_secs(30);

/// An example server listening on 127.0.0.1, killed when dropped.
struct Running {
    name: String,
    child: Child,
    log: PathBuf,
    url: String,
}

impl Running {
    /// Starts example `name` with `--port <free port>` and `extra` arguments, and waits until
    /// it accepts connections.
    fn start(name: &str, extra: &[&str]) -> Running {
        let binary = match name {
            "combined" => PathBuf::from(crate::support::servers::COMBINED),
            example => example_binary(example),
        };
        let port = free_port();
        let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("interop-http-{name}-{port}.log"));
        let stderr = File::create(&log).unwrap_or_else(|e| panic!("cannot create {}: {e}", log.display()));
        let child = Command::new(&binary)
            .arg("--port")
            .arg(port.to_string())
            .args(extra)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let mut running = Running { name: name.to_owned(), child, log, url: format!("http://127.0.0.1:{port}/mcp") };
        let started = Instant::now();
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            if let Ok(Some(status)) = running.child.try_wait() {
                panic!("the {name} server exited ({status}) before listening:\n{}", running.log_text());
            }
            assert!(started.elapsed() < STARTUP, "the {name} server did not listen within {STARTUP:?}");
            thread::sleep(Duration::from_millis(50));
        }
        running
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // The process may have exited already; either way it is reaped.
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !thread::panicking() {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

fn servers() -> (Running, Running) {
    (Running::start("combined", &["--url-port", "0"]), Running::start("quickstart", &[]))
}

fn logs(servers: &[&Running]) -> String {
    servers.iter().map(|s| format!("--- {} server log ---\n{}", s.name, s.log_text())).collect::<Vec<_>>().join("\n")
}

#[test]
fn typescript_client_drives_the_examples_over_streamable_http() {
    println!("node {}", require_node_package("@modelcontextprotocol/sdk"));

    let (elicitation, quickstart) = servers();
    let output = run_with_deadline(
        Command::new("node")
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
    // `auto` (a `server/discover` probe, then stateless 2026-07-28 requests) and `2026-07-28`.
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
