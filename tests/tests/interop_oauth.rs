//! OAuth against a real authorization server: `oidc-provider` (pinned in `tests/interop/`)
//! issues JWT access tokens for the `protected` example, which verifies them with the keys the
//! provider publishes; the official TypeScript SDK client, with its OAuth provider, registers,
//! authorizes (PKCE, resource indicator), calls `whoami`, and steps up to `notes:write` for
//! `write_note`. The person's part (log in, consent) goes through the provider's own
//! interaction pages, driven by the client script. The pinned packages are installed on first
//! use (`tests::provision`).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use tests::interop::{example_binary, interop_dir, require_node_package, run_with_deadline};

const SCRIPT_DEADLINE: Duration = Duration::from_secs(120);
const STARTUP: Duration = Duration::from_secs(30);

/// A child process killed when dropped, with its log.
struct Running {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

impl Running {
    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until something accepts connections on `port`.
    fn wait_for(&mut self, port: u16) {
        let started = Instant::now();
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("{} exited ({status}) before listening:\n{}", self.name, self.log_text());
            }
            assert!(
                started.elapsed() < STARTUP,
                "{} did not listen within {STARTUP:?}:\n{}",
                self.name,
                self.log_text()
            );
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !thread::panicking() {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind 127.0.0.1:0");
    listener.local_addr().expect("a local address").port()
}

fn log_file(name: &str, port: u16) -> (PathBuf, File) {
    let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("interop-oauth-{name}-{port}.log"));
    let file = File::create(&log).unwrap_or_else(|e| panic!("cannot create {}: {e}", log.display()));
    (log, file)
}

/// The Node.js 22 the interop folder pins (oidc-provider does not support older ones).
fn node22() -> PathBuf {
    let node = interop_dir().join("node_modules").join(".bin").join("node");
    assert!(node.is_file(), "{} is missing: run tests/interop/setup.sh", node.display());
    node
}

/// oidc-provider on a free port, issuing tokens for `resource`; returns it and its issuer.
fn start_provider(resource: &str) -> (Running, String) {
    let port = free_port();
    let (log, file) = log_file("oidc-provider", port);
    let child = Command::new(node22())
        .arg("oidc_provider.mjs")
        .arg(port.to_string())
        .arg(resource)
        .current_dir(interop_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(file)
        .spawn()
        .expect("start oidc_provider.mjs");
    let mut running = Running { name: "oidc-provider", child, log };
    let stdout = running.child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("read oidc_provider.mjs output");
    let issuer = line.trim().strip_prefix("listening ").unwrap_or_else(|| {
        panic!("oidc_provider.mjs did not start: {line:?}\n{}", running.log_text());
    });
    let issuer = issuer.to_owned();
    running.wait_for(port);
    (running, issuer)
}

/// The `protected` example on `port`, trusting `issuer`.
fn start_protected(port: u16, issuer: &str) -> Running {
    let binary = example_binary("protected");
    let (log, file) = log_file("protected", port);
    let child = Command::new(&binary)
        .args(["--port", &port.to_string(), "--issuer", issuer])
        .env("RUST_LOG", "info,mcp_core=debug")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(file)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let mut running = Running { name: "protected", child, log };
    running.wait_for(port);
    running
}

#[test]
fn typescript_client_authorizes_with_oidc_provider_and_calls_the_protected_example() {
    println!("node {}", require_node_package("oidc-provider"));
    require_node_package("@modelcontextprotocol/sdk");

    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let (provider, issuer) = start_provider(&resource);
    let protected = start_protected(port, &issuer);
    let output = run_with_deadline(
        Command::new(node22()).arg("protected_client.mjs").arg(&resource).arg(&issuer).current_dir(interop_dir()),
        SCRIPT_DEADLINE,
    );
    print!("{}", output.stdout);
    assert!(
        output.success() && output.stdout.contains("all checks passed"),
        "the TypeScript client failed against protected + oidc-provider: {}\n--- protected ---\n{}\n--- oidc-provider ---\n{}",
        output.describe(),
        protected.log_text(),
        provider.log_text()
    );
    // The server verified the provider's tokens with the keys from its metadata.
    assert!(protected.log_text().contains("fetched the issuer's keys"), "{}", protected.log_text());
}
