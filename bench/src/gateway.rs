//! `bench gateway`: the echo of our benchmark server called through `mcp-gateway` against the
//! same server called directly, with a stdio upstream (the driver speaks stdio to the gateway,
//! which starts the server over stdio) and with a Streamable HTTP upstream (the driver speaks
//! HTTP to the gateway, which calls the server listening on HTTP). The upstream is mounted
//! without a prefix, so the same `echo` call goes to both. Each round runs direct and through
//! the gateway back to back, alternating which goes first.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::process::{HttpServer, reap};
use crate::stats::{Load, median};
use crate::stdio::StdioRun;
use crate::wire::Tool;

/// What to run.
pub struct GatewayBench {
    /// The gateway's executable.
    pub gateway: PathBuf,
    /// The benchmark server's executable.
    pub server: String,
    /// Rounds of each pair of runs.
    pub rounds: usize,
    /// Calls per stdio run.
    pub stdio_calls: usize,
    /// Calls in flight at once over stdio.
    pub window: usize,
    /// Sessions of an HTTP run.
    pub sessions: usize,
    /// Calls per HTTP run.
    pub http_calls: usize,
    /// No new call is sent after this long.
    pub limit: Duration,
    /// Where the configuration files go.
    pub scratch: PathBuf,
}

/// A TOML basic string.
fn quoted(text: &str) -> String {
    format!("{text:?}")
}

/// The configuration mounting one upstream without a prefix: the server started over stdio
/// (`command`), or listening at `url`.
pub fn config(command: Option<&str>, url: Option<&str>) -> String {
    let mut text = String::from("[[upstream]]\nname = \"bench\"\nprefix = \"\"\n");
    if let Some(program) = command {
        text.push_str(&format!("command = [{}]\n", quoted(program)));
    }
    if let Some(url) = url {
        text.push_str(&format!("url = {}\n", quoted(url)));
    }
    text
}

/// The gateway serving Streamable HTTP (`--port 0`), killed when dropped.
struct HttpGateway {
    child: Child,
    addr: SocketAddr,
}

impl HttpGateway {
    fn start(gateway: &Path, config: &Path) -> Result<HttpGateway, String> {
        let mut child = Command::new(gateway)
            .arg("--config")
            .arg(config)
            .args(["--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", gateway.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        reader.read_line(&mut line).map_err(|e| format!("{}: {e}", gateway.display()))?;
        // Whatever the gateway writes later is read and dropped, so it never blocks on stdout.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        let addr = line
            .trim()
            .strip_prefix("LISTENING http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .and_then(|authority| authority.parse().ok());
        match addr {
            Some(addr) => Ok(HttpGateway { child, addr }),
            None => {
                reap(&mut child, Duration::ZERO);
                Err(format!("the gateway printed `{}`, not `LISTENING http://IP:PORT/mcp`", line.trim()))
            }
        }
    }
}

impl Drop for HttpGateway {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        reap(&mut self.child, Duration::from_secs(10));
    }
}

/// The figures of one upstream kind: per round, direct and through the gateway.
#[derive(Default)]
struct Pairs {
    direct: Vec<f64>,
    gateway: Vec<f64>,
    direct_p50: Vec<f64>,
    gateway_p50: Vec<f64>,
    ratios: Vec<f64>,
}

impl Pairs {
    fn record(&mut self, mut direct: Load, mut gateway: Load) {
        self.ratios.push(gateway.rate() / direct.rate());
        self.direct.push(direct.rate());
        self.gateway.push(gateway.rate());
        self.direct_p50.push(direct.latency_us(0.5));
        self.gateway_p50.push(gateway.latency_us(0.5));
    }

    fn report(&self, what: &str, rounds: usize) -> String {
        format!(
            "{what}, median of {rounds}: direct {:.0} calls/s (p50 {:.1} µs), through the gateway {:.0} calls/s \
             (p50 {:.1} µs)\ngateway/direct calls/s: {:.2}x ({what}; target >= 0.50x)\n",
            median(&self.direct),
            median(&self.direct_p50),
            median(&self.gateway),
            median(&self.gateway_p50),
            median(&self.ratios),
        )
    }
}

impl GatewayBench {
    fn stdio_run(&self, command: Vec<String>) -> Result<Load, String> {
        StdioRun {
            command,
            tool: Tool::Echo,
            calls: self.stdio_calls,
            warmup: 500,
            window: self.window,
            limit: self.limit,
        }
        .run()
    }

    fn http_run(&self, rt: &tokio::runtime::Runtime, addr: SocketAddr) -> Result<Load, String> {
        rt.block_on(crate::scenario::http_echo(addr, self.sessions, self.http_calls, 10, self.limit))
    }

    /// Runs every round and returns the report.
    pub fn run(&self, rt: &tokio::runtime::Runtime) -> Result<String, String> {
        std::fs::create_dir_all(&self.scratch).map_err(|e| format!("{}: {e}", self.scratch.display()))?;
        let stdio_config = self.scratch.join("gateway-stdio.toml");
        std::fs::write(&stdio_config, config(Some(&self.server), None)).map_err(|e| e.to_string())?;
        let gateway_command =
            vec![self.gateway.display().to_string(), "--config".to_owned(), stdio_config.display().to_string()];
        let (mut stdio, mut http) = (Pairs::default(), Pairs::default());
        for round in 0..self.rounds {
            let gateway_first = round % 2 == 1;

            let (direct, through) = if gateway_first {
                let through = self.stdio_run(gateway_command.clone())?;
                (self.stdio_run(vec![self.server.clone()])?, through)
            } else {
                let direct = self.stdio_run(vec![self.server.clone()])?;
                (direct, self.stdio_run(gateway_command.clone())?)
            };
            eprintln!(
                "round {}: stdio upstream: direct {:.0} calls/s, gateway {:.0} calls/s",
                round + 1,
                direct.rate(),
                through.rate()
            );
            stdio.record(direct, through);

            // One server for the pair: direct calls, and the gateway's calls to it.
            let server = HttpServer::start(&self.server)?;
            let url = format!("http://{}/mcp", server.addr);
            let http_config = self.scratch.join("gateway-http.toml");
            std::fs::write(&http_config, config(None, Some(&url))).map_err(|e| e.to_string())?;
            let gateway = HttpGateway::start(&self.gateway, &http_config)?;
            let (direct, through) = if gateway_first {
                let through = self.http_run(rt, gateway.addr)?;
                (self.http_run(rt, server.addr)?, through)
            } else {
                let direct = self.http_run(rt, server.addr)?;
                (direct, self.http_run(rt, gateway.addr)?)
            };
            eprintln!(
                "round {}: HTTP upstream: direct {:.0} calls/s, gateway {:.0} calls/s",
                round + 1,
                direct.rate(),
                through.rate()
            );
            http.record(direct, through);
        }
        Ok(format!(
            "{}{}",
            stdio.report(&format!("stdio echo (window {}), stdio upstream", self.window), self.rounds),
            http.report(&format!("HTTP echo ({} sessions), HTTP upstream", self.sessions), self.rounds)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_mounts_one_upstream_without_a_prefix() {
        assert_eq!(
            config(Some("/bench/ours-server"), None),
            "[[upstream]]\nname = \"bench\"\nprefix = \"\"\ncommand = [\"/bench/ours-server\"]\n"
        );
        assert_eq!(
            config(None, Some("http://127.0.0.1:9/mcp")),
            "[[upstream]]\nname = \"bench\"\nprefix = \"\"\nurl = \"http://127.0.0.1:9/mcp\"\n"
        );
    }

    #[test]
    fn the_report_names_the_ratio() {
        let mut pairs = Pairs::default();
        let load = |calls: usize, micros: u64| Load {
            completed: calls,
            elapsed: Duration::from_secs(1),
            latencies_ns: vec![micros * 1_000; 3],
            ..Load::default()
        };
        pairs.record(load(1000, 10), load(600, 25));
        let report = pairs.report("stdio", 1);
        assert!(report.contains("gateway/direct calls/s: 0.60x"), "{report}");
        assert!(report.contains("direct 1000 calls/s (p50 10.0 µs)"), "{report}");
        assert!(report.contains("through the gateway 600 calls/s (p50 25.0 µs)"), "{report}");
    }
}
