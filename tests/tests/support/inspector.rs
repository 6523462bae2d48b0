//! The MCP Inspector (`@modelcontextprotocol/inspector`, pinned in `tests/interop/`) as the docs'
//! commands run it, and the example servers those commands talk to.
//!
//! A documented command is run as written, but for where things are: `npx <inspector>` becomes
//! the pinned Inspector on its pinned Node.js, `target/debug/NAME` the example binary wherever
//! cargo put it. The Inspector keeps its catalog and its connection daemon under `$HOME`; each
//! [`Inspector`] gets a home of its own under the target directory and stops its daemon when
//! dropped.

use std::collections::HashMap;
use std::net::{Ipv4Addr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tests::interop::{
    RunOutput, example_binary, pinned_npm_version, require_node_package, run_with_deadline, workspace_root,
};
use typed_mcp_redis::testing::free_port;

/// The Inspector's npm package.
pub const PACKAGE: &str = "@modelcontextprotocol/inspector";
/// One Inspector command: it starts a server, connects and makes a call or two.
const COMMAND_DEADLINE: Duration = Duration::from_secs(90);

/// The pinned Inspector, run on the pinned Node.js 22 with a home directory of its own.
pub struct Inspector {
    node: PathBuf,
    launcher: PathBuf,
    mcpdo: PathBuf,
    env: HashMap<String, String>,
}

impl Inspector {
    pub fn new() -> Inspector {
        let interop = tests::provision::interop_clients();
        require_node_package(PACKAGE);
        let bin = interop.join("node_modules").join(".bin");
        static HOMES: AtomicUsize = AtomicUsize::new(0);
        let home = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "inspector-home-{}-{}",
            std::process::id(),
            HOMES.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("cannot create {}: {e}", home.display()));
        let mut env = HashMap::new();
        env.insert("HOME".to_owned(), home.display().to_string());
        env.insert("MCP_CATALOG_PATH".to_owned(), home.join("mcp.json").display().to_string());
        env.insert("NO_COLOR".to_owned(), "1".to_owned());
        Inspector { node: bin.join("node"), launcher: bin.join("inspector"), mcpdo: bin.join("mcpdo"), env }
    }

    /// Runs the launcher (`inspector …`) or `mcpdo …` with `args`.
    pub fn run(&self, mcpdo: bool, args: &[String]) -> RunOutput {
        let script = if mcpdo { &self.mcpdo } else { &self.launcher };
        let mut command = Command::new(&self.node);
        command.arg(script).args(args).envs(&self.env).current_dir(workspace_root());
        run_with_deadline(&mut command, COMMAND_DEADLINE)
    }

    /// Gives `mcpdo` a private daemon of its own (what `eval "$(mcpdo private)"` does in a shell).
    pub fn private_daemon(&mut self) {
        let output = self.run(true, &["private".to_owned()]);
        assert!(output.success(), "`mcpdo private` failed: {}", output.describe());
        for line in output.stdout.lines() {
            let Some((name, value)) = line.trim().strip_prefix("export ").and_then(|kv| kv.split_once('=')) else {
                continue;
            };
            self.env.insert(name.to_owned(), value.trim_matches(|c| c == '\'' || c == '"').to_owned());
        }
        assert!(
            self.env.contains_key("MCP_INSPECTOR_DAEMON_DIR"),
            "`mcpdo private` printed no daemon directory: {}",
            output.describe()
        );
    }
}

impl Drop for Inspector {
    fn drop(&mut self) {
        if self.env.contains_key("MCP_INSPECTOR_DAEMON_DIR") {
            let _ = self.run(true, &["daemon".to_owned(), "stop".to_owned()]);
        }
    }
}

/// One documented Inspector command as it is run here: whether it is `mcpdo`, and its arguments.
/// `<elicitation-id>` becomes `elicitation_id`, the id a previous command printed.
///
/// # Panics
///
/// Panics when the command runs something other than the pinned Inspector.
pub fn translate(command: &str, elicitation_id: Option<&str>) -> (bool, Vec<String>) {
    let pinned = format!("{PACKAGE}@{}", pinned_npm_version(PACKAGE));
    let words: Vec<&str> = command.split_whitespace().collect();
    let (mcpdo, rest) = match words.as_slice() {
        ["npx", "-p", package, "mcpdo", rest @ ..] if *package == pinned => (true, rest),
        ["npx", package, rest @ ..] if *package == pinned => (false, rest),
        _ => panic!("`{command}` runs something other than the pinned Inspector ({pinned})"),
    };
    let args = rest
        .iter()
        .map(|word| {
            if *word == "<elicitation-id>" {
                elicitation_id
                    .unwrap_or_else(|| panic!("`{command}` needs an elicitation id no command printed"))
                    .to_owned()
            } else {
                local(word)
            }
        })
        .collect();
    (mcpdo, args)
}

/// A word of a documented command as it is run here: `target/debug/NAME` is the example binary.
pub fn local(word: &str) -> String {
    match word.strip_prefix("target/debug/") {
        Some(name) => example_binary(name).display().to_string(),
        None => word.to_owned(),
    }
}

/// A server listening on a loopback port, killed when dropped.
pub struct HttpExample(Child, String);

impl HttpExample {
    /// `binary --port <free port>`; it serves `url()`.
    pub fn start(name: &str, binary: &Path) -> HttpExample {
        let port = free_port();
        HttpExample::start_with(name, binary, &["--port".to_owned(), port.to_string()], port)
    }

    /// `binary args…`, which must make it listen on `port`; it serves `url()`.
    ///
    /// # Panics
    ///
    /// Panics when it cannot be started, exits, or does not listen on `port` within 30 s.
    pub fn start_with(name: &str, binary: &Path, args: &[String], port: u16) -> HttpExample {
        let mut child = Command::new(binary)
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the {name} example: {e}"));
        let started = Instant::now();
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("the {name} example, started with {args:?}, exited ({status}) instead of listening on {port}");
            }
            if started.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the {name} example, started with {args:?}, did not listen on {port}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpExample(child, format!("http://127.0.0.1:{port}/mcp"))
    }

    /// Its Streamable HTTP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> &str {
        &self.1
    }
}

impl Drop for HttpExample {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
