//! A server program listening on 127.0.0.1 for the length of a test.

use std::fs::File;
use std::net::{Ipv4Addr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use typed_mcp_redis::testing::free_port;

/// How long a server may take to start listening.
const STARTUP: Duration = Duration::from_secs(30);

/// A server program serving Streamable HTTP at `url`, killed when dropped. Its stderr goes to a
/// log file, removed afterwards unless the test failed.
pub struct Listening {
    name: String,
    child: Child,
    log: PathBuf,
    /// The endpoint, `http://127.0.0.1:<port>/mcp`.
    pub url: String,
}

impl Listening {
    /// Starts `binary` (called `name` in messages) with `--port <free port>` and `extra`
    /// arguments, and waits until it accepts connections.
    ///
    /// # Panics
    ///
    /// Panics when the program cannot start, exits, or does not listen within 30 seconds.
    pub fn start(binary: &Path, name: &str, extra: &[&str]) -> Listening {
        let port = free_port();
        let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("listening-{name}-{port}.log"));
        let stderr = File::create(&log).unwrap_or_else(|e| panic!("cannot create {}: {e}", log.display()));
        let child = Command::new(binary)
            .arg("--port")
            .arg(port.to_string())
            .args(extra)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let mut running = Listening { name: name.to_owned(), child, log, url: format!("http://127.0.0.1:{port}/mcp") };
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

    /// The server's name in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the server logged so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        // The process may have exited already; either way it is reaped.
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !thread::panicking() {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

/// Starts `command` (a node script given `--http`), which prints `LISTENING <url>` as its first
/// line once it listens; the process is killed when the returned child is dropped.
pub async fn script_listening(mut command: tokio::process::Command) -> (tokio::process::Child, String) {
    use tokio::io::{AsyncBufReadExt, BufReader};
    command.arg("--http").stdout(Stdio::piped()).kill_on_drop(true);
    let mut child = command.spawn().expect("node starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let line = tests::stdio::within("the server to listen", lines.next_line()).await.unwrap().expect("a first line");
    let url = line.strip_prefix("LISTENING ").unwrap_or_else(|| panic!("unexpected first line {line:?}")).to_owned();
    (child, url)
}
