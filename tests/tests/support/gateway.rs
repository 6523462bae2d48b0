//! The `mcp-gateway` program (package `typed-mcp-gateway`) in front of servers written with other
//! SDKs: its configuration written for a test, the gateway started over stdio or Streamable HTTP,
//! and the upstream servers it is given.
//!
//! The upstreams are scripts of `tests/interop/`, run on the pinned Node.js and the interop
//! virtualenv's Python: the TypeScript SDK v1 server `elicitation_server.mjs` (2025-11-25 only),
//! the TypeScript SDK v2 server `v2_server.mjs` and the Python SDK server
//! `gateway_python_server.py` (both eras). Each is started by the gateway (a `command`
//! upstream) or, for an HTTP upstream, by the test, which gives the gateway its `url`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};

use tests::interop::{interop_dir, node_program, package_binary, require_node_package, require_python_package};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The gateway's executable, built on first use.
pub fn binary() -> PathBuf {
    package_binary("typed-mcp-gateway", "mcp-gateway")
}

/// One of the servers written with another SDK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// `elicitation_server.mjs`, the TypeScript SDK v1: 2025-11-25 only. Tools `ask_form`,
    /// `ask_url`, `needs_url`, `bad_schema`, `ask_model`, `ask_roots`.
    TsV1,
    /// `v2_server.mjs`, the TypeScript SDK v2: both eras. Tools `greet`, `ask_color`.
    TsV2,
    /// `gateway_python_server.py`, the Python SDK: both eras. Tools `echo`, `ask_city`, `era`.
    Python,
    /// The same Python server refusing the 2026-07-28 era (`--legacy-only`, stdio only).
    PythonLegacy,
}

impl Peer {
    /// The upstream's name in the configuration, hence its prefix (`<name>_`).
    pub fn name(self) -> &'static str {
        match self {
            Peer::TsV1 => "tsv1",
            Peer::TsV2 => "tsv2",
            Peer::Python => "py",
            Peer::PythonLegacy => "pyold",
        }
    }

    /// The tools the server itself lists, unprefixed.
    pub fn tools(self) -> &'static [&'static str] {
        match self {
            Peer::TsV1 => &["ask_form", "ask_url", "needs_url", "bad_schema", "ask_model", "ask_roots"],
            Peer::TsV2 => &["greet", "ask_color"],
            Peer::Python | Peer::PythonLegacy => &["echo", "ask_city", "era"],
        }
    }

    /// The program and arguments that start the server over stdio, after checking that its SDK
    /// is installed (installing the pinned clients first if needed).
    pub fn command(self) -> Vec<String> {
        let script = |name: &str| interop_dir().join(name).display().to_string();
        match self {
            Peer::TsV1 => {
                require_node_package("@modelcontextprotocol/sdk");
                vec![node_program().display().to_string(), script("elicitation_server.mjs")]
            }
            Peer::TsV2 => {
                require_node_package("@modelcontextprotocol/server");
                vec![node_program().display().to_string(), script("v2_server.mjs")]
            }
            Peer::Python | Peer::PythonLegacy => {
                let (python, _) = require_python_package("mcp");
                let mut command = vec![python.display().to_string(), script("gateway_python_server.py")];
                if self == Peer::PythonLegacy {
                    command.push("--legacy-only".to_owned());
                }
                command
            }
        }
    }

    /// Starts the server on Streamable HTTP (`--http`); returns it (killed when dropped) and its
    /// URL.
    pub async fn listen(self) -> (Child, String) {
        assert_ne!(self, Peer::PythonLegacy, "the legacy-only Python server serves stdio only");
        let command = self.command();
        let mut script = Command::new(&command[0]);
        script.args(&command[1..]).current_dir(interop_dir()).stderr(Stdio::inherit()).kill_on_drop(true);
        crate::support::listening::script_listening(script).await
    }
}

/// How the gateway reaches one upstream.
#[derive(Clone, Debug)]
pub enum Reach {
    /// The gateway starts the server itself, over stdio.
    Command(Vec<String>),
    /// The server already listens there (Streamable HTTP).
    Url(String),
}

/// One `[[upstream]]` table.
#[derive(Clone, Debug)]
pub struct Upstream {
    /// `name`.
    pub name: String,
    /// `command` or `url`.
    pub reach: Reach,
    /// `prefix`, when not the default `<name>_`.
    pub prefix: Option<String>,
    /// `era`, when not detected (`auto`).
    pub era: Option<&'static str>,
}

impl Upstream {
    /// `peer`, started by the gateway over stdio, under its default prefix.
    ///
    /// The Python server of both eras is spoken to in 2026-07-28, said in the configuration
    /// rather than detected: over stdio the SDK takes the era of the first request it reads for
    /// good, so a `server/discover` probe that times out (a Python start on a loaded machine
    /// can outlast it) leaves a connection that refuses the `initialize` of the fallback.
    pub fn stdio(peer: Peer) -> Upstream {
        let era = (peer == Peer::Python).then_some("2026-07-28");
        Upstream { name: peer.name().to_owned(), reach: Reach::Command(peer.command()), prefix: None, era }
    }

    /// A server listening at `url`, called `name`, under its default prefix; its era detected.
    pub fn url(name: &str, url: &str) -> Upstream {
        Upstream { name: name.to_owned(), reach: Reach::Url(url.to_owned()), prefix: None, era: None }
    }

    /// The same upstream under another name (hence prefix).
    pub fn named(mut self, name: &str) -> Upstream {
        name.clone_into(&mut self.name);
        self
    }

    /// The same upstream spoken to in `era` (`2025-11-25` or `2026-07-28`).
    pub fn in_era(mut self, era: &'static str) -> Upstream {
        self.era = Some(era);
        self
    }

    /// The same upstream mounted under `prefix` (`""` for none).
    pub fn prefixed(mut self, prefix: &str) -> Upstream {
        self.prefix = Some(prefix.to_owned());
        self
    }
}

/// A TOML basic string holding `text`.
fn toml_string(text: &str) -> String {
    let mut quoted = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(quoted, "\\u{:04X}", c as u32);
            }
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// The configuration file's text for `upstreams`.
pub fn config_text(upstreams: &[Upstream]) -> String {
    let mut text = String::new();
    for upstream in upstreams {
        let _ = writeln!(text, "[[upstream]]\nname = {}", toml_string(&upstream.name));
        match &upstream.reach {
            Reach::Command(command) => {
                let words: Vec<String> = command.iter().map(|w| toml_string(w)).collect();
                let _ = writeln!(text, "command = [{}]", words.join(", "));
                let _ = writeln!(text, "cwd = {}", toml_string(&interop_dir().display().to_string()));
            }
            Reach::Url(url) => {
                let _ = writeln!(text, "url = {}", toml_string(url));
            }
        }
        if let Some(prefix) = &upstream.prefix {
            let _ = writeln!(text, "prefix = {}", toml_string(prefix));
        }
        if let Some(era) = upstream.era {
            let _ = writeln!(text, "era = {}", toml_string(era));
        }
        text.push('\n');
    }
    text
}

/// Writes the configuration for `upstreams` to a file of its own under the test's scratch
/// folder; returns its path.
pub fn write_config(upstreams: &[Upstream]) -> PathBuf {
    static FILES: AtomicUsize = AtomicUsize::new(0);
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "gateway-{}-{}.toml",
        std::process::id(),
        FILES.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, config_text(upstreams)).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

/// The gateway serving stdio with the configuration at `config`: a command for a client to
/// start.
pub fn stdio_command(config: &Path) -> Command {
    let mut command = Command::new(binary());
    command.arg("--config").arg(config).env("RUST_LOG", "warn").kill_on_drop(true);
    command
}

/// The same command as words, for a client script's `--stdio` argument.
pub fn stdio_words(config: &Path) -> Vec<String> {
    vec![binary().display().to_string(), "--config".to_owned(), config.display().to_string()]
}

/// The gateway serving Streamable HTTP on a free loopback port, killed when dropped.
pub struct Gateway {
    /// The process, killed when dropped.
    _process: Child,
    /// Its endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl Gateway {
    /// Starts the gateway with the configuration for `upstreams` (`--port 0`) and waits for the
    /// `LISTENING <url>` line.
    pub async fn start(upstreams: &[Upstream]) -> Gateway {
        Gateway::start_with(&write_config(upstreams)).await
    }

    /// Starts the gateway with the configuration at `config`.
    pub async fn start_with(config: &Path) -> Gateway {
        let mut child = Command::new(binary())
            .arg("--config")
            .arg(config)
            .args(["--port", "0"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary().display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        // Generous: the gateway may start its stdio upstreams (node, Python) before it listens.
        let line = tokio::time::timeout(std::time::Duration::from_secs(60), lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("the gateway did not print `LISTENING <url>` within 60 s"))
            .expect("the gateway's stdout reads")
            .unwrap_or_else(|| panic!("the gateway exited before listening (config {})", config.display()));
        let url = line
            .strip_prefix("LISTENING ")
            .unwrap_or_else(|| panic!("the gateway's first line is {line:?}, not `LISTENING <url>`"))
            .trim()
            .to_owned();
        // The rest of stdout is drained, so that a gateway that writes more never blocks on it.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Gateway { _process: child, url }
    }
}

/// The names `tools/list` should show for `peers` mounted under their default prefixes, sorted.
pub fn prefixed_tools(peers: &[Peer]) -> Vec<String> {
    let mut names: Vec<String> =
        peers.iter().flat_map(|p| p.tools().iter().map(move |t| format!("{}_{t}", p.name()))).collect();
    names.sort();
    names
}

/// The gateway serving Streamable HTTP, for a test without a runtime: started and read with
/// blocking calls; killed when dropped.
pub struct BlockingGateway {
    child: std::process::Child,
    /// Its endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    log: PathBuf,
}

impl BlockingGateway {
    /// Starts the gateway with the configuration at `config` (`--port 0`), its stderr in `log`,
    /// and waits (60 s at most) for the `LISTENING <url>` line.
    pub fn start(config: &Path, log: PathBuf) -> BlockingGateway {
        use std::io::BufRead;
        let stderr = std::fs::File::create(&log).unwrap_or_else(|e| panic!("cannot create {}: {e}", log.display()));
        let mut child = std::process::Command::new(binary())
            .arg("--config")
            .arg(config)
            .args(["--port", "0"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary().display()));
        let stdout = child.stdout.take().expect("piped stdout");
        let (first, line) = std::sync::mpsc::channel();
        // Reads the first line, then drains the rest so that the gateway never blocks on stdout.
        std::thread::spawn(move || {
            let mut lines = std::io::BufReader::new(stdout).lines();
            let _ = first.send(lines.next());
            for _ in lines {}
        });
        let line = match line.recv_timeout(std::time::Duration::from_secs(60)) {
            Ok(Some(Ok(line))) => line,
            outcome => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the gateway printed no `LISTENING <url>` line ({outcome:?}); its log:\n{}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
        };
        let url = line
            .strip_prefix("LISTENING ")
            .unwrap_or_else(|| panic!("the gateway's first line is {line:?}, not `LISTENING <url>`"))
            .trim()
            .to_owned();
        BlockingGateway { child, url, log }
    }

    /// What the gateway logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for BlockingGateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
