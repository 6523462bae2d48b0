//! `bench gateway`: the echo of our benchmark server called through `mcp-gateway` against the
//! same server called directly, with a stdio upstream (the driver speaks stdio to the gateway,
//! which starts the server over stdio) and with a Streamable HTTP upstream (the driver speaks
//! HTTP to the gateway, which calls the server listening on HTTP). The upstream is mounted
//! without a prefix, so the same `echo` call goes to both. Each round runs direct and through
//! the gateway back to back, alternating which goes first.
//!
//! Over HTTP it also reads the CPU time of each process (the server, the gateway, this program
//! as the client; Linux `/proc`) around each run, and prints what each spent per call and the
//! gateway's against the server's: when the direct run already keeps every core busy, the
//! calls per second through the gateway are bounded by what the three spend together.

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

/// CPU time per call of each process of one HTTP run, in microseconds (Linux), over the
/// whole run (its few warm-up calls and session openings included).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct CpuPerCall {
    /// The benchmark server: called directly, or the gateway's upstream.
    server: f64,
    /// This program, the client.
    client: f64,
    /// The gateway (zero in the direct run, where it does nothing).
    gateway: f64,
}

/// The CPU time so far of the server, this program and the gateway.
struct CpuMark {
    server: Option<Duration>,
    client: Option<Duration>,
    gateway: Option<Duration>,
}

impl CpuMark {
    fn now(server: u32, gateway: u32) -> CpuMark {
        CpuMark {
            server: crate::process::cpu_time(server),
            client: crate::process::cpu_time(std::process::id()),
            gateway: crate::process::cpu_time(gateway),
        }
    }

    /// What each spent since `self`, per call of `load`; `None` where `/proc` has no figures.
    fn per_call(&self, later: &CpuMark, load: &Load) -> Option<CpuPerCall> {
        let calls = load.completed.max(1) as f64;
        let per_call =
            |from: Option<Duration>, to: Option<Duration>| Some(to?.saturating_sub(from?).as_secs_f64() * 1e6 / calls);
        Some(CpuPerCall {
            server: per_call(self.server, later.server)?,
            client: per_call(self.client, later.client)?,
            gateway: per_call(self.gateway, later.gateway)?,
        })
    }
}

/// The CPU figures of the HTTP runs: per round, direct and through the gateway.
#[derive(Default)]
struct CpuPairs {
    direct: Vec<CpuPerCall>,
    gateway: Vec<CpuPerCall>,
}

impl CpuPairs {
    fn report(&self) -> String {
        if self.direct.is_empty() || self.gateway.is_empty() {
            return String::new();
        }
        let of = |runs: &[CpuPerCall], part: fn(&CpuPerCall) -> f64| median(&runs.iter().map(part).collect::<Vec<_>>());
        let (server, client) = (of(&self.direct, |c| c.server), of(&self.direct, |c| c.client));
        let (gateway, upstream, gateway_client) =
            (of(&self.gateway, |c| c.gateway), of(&self.gateway, |c| c.server), of(&self.gateway, |c| c.client));
        format!(
            "HTTP, CPU per call, median of {}: direct: server {server:.1} µs + client {client:.1} µs = {:.1} µs; \
             through the gateway: gateway {gateway:.1} µs + server {upstream:.1} µs + client {gateway_client:.1} µs \
             = {:.1} µs\ngateway/server CPU per call: {:.2}x (HTTP; what the gateway spends relaying a call against \
             what the server spends serving it)\n",
            self.direct.len(),
            server + client,
            gateway + upstream + gateway_client,
            gateway / upstream,
        )
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

    /// One HTTP run against `addr`, and the CPU per call of the server (`server`), this program
    /// and the gateway (`gateway`) over it.
    fn http_run(
        &self,
        rt: &tokio::runtime::Runtime,
        addr: SocketAddr,
        server: u32,
        gateway: u32,
    ) -> Result<(Load, Option<CpuPerCall>), String> {
        let before = CpuMark::now(server, gateway);
        let load = rt.block_on(crate::scenario::http_echo(addr, self.sessions, self.http_calls, 10, self.limit))?;
        let cpu = before.per_call(&CpuMark::now(server, gateway), &load);
        Ok((load, cpu))
    }

    /// Runs every round and returns the report.
    pub fn run(&self, rt: &tokio::runtime::Runtime) -> Result<String, String> {
        std::fs::create_dir_all(&self.scratch).map_err(|e| format!("{}: {e}", self.scratch.display()))?;
        let stdio_config = self.scratch.join("gateway-stdio.toml");
        std::fs::write(&stdio_config, config(Some(&self.server), None)).map_err(|e| e.to_string())?;
        let gateway_command =
            vec![self.gateway.display().to_string(), "--config".to_owned(), stdio_config.display().to_string()];
        let (mut stdio, mut http, mut cpu) = (Pairs::default(), Pairs::default(), CpuPairs::default());
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
            let (server_pid, gateway_pid) = (server.pid(), gateway.child.id());
            let ((direct, direct_cpu), (through, through_cpu)) = if gateway_first {
                let through = self.http_run(rt, gateway.addr, server_pid, gateway_pid)?;
                (self.http_run(rt, server.addr, server_pid, gateway_pid)?, through)
            } else {
                let direct = self.http_run(rt, server.addr, server_pid, gateway_pid)?;
                (direct, self.http_run(rt, gateway.addr, server_pid, gateway_pid)?)
            };
            if let (Some(direct), Some(through)) = (direct_cpu, through_cpu) {
                cpu.direct.push(direct);
                cpu.gateway.push(through);
            }
            eprintln!(
                "round {}: HTTP upstream: direct {:.0} calls/s, gateway {:.0} calls/s",
                round + 1,
                direct.rate(),
                through.rate()
            );
            http.record(direct, through);
        }
        Ok(format!(
            "{}{}{}",
            stdio.report(&format!("stdio echo (window {}), stdio upstream", self.window), self.rounds),
            http.report(&format!("HTTP echo ({} sessions), HTTP upstream", self.sessions), self.rounds),
            cpu.report()
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
    fn the_cpu_report_adds_up_each_run_and_compares_the_gateway_with_the_server() {
        let cpu = CpuPairs {
            direct: vec![CpuPerCall { server: 14.0, client: 6.0, gateway: 0.1 }],
            gateway: vec![CpuPerCall { server: 17.0, client: 7.0, gateway: 51.0 }],
        };
        let report = cpu.report();
        assert!(report.contains("direct: server 14.0 µs + client 6.0 µs = 20.0 µs"), "{report}");
        assert!(report.contains("gateway 51.0 µs + server 17.0 µs + client 7.0 µs = 75.0 µs"), "{report}");
        assert!(report.contains("gateway/server CPU per call: 3.00x"), "{report}");
        assert_eq!(CpuPairs::default().report(), "", "no figures, no line");
    }

    #[test]
    fn a_cpu_mark_divides_what_each_process_spent_by_the_calls() {
        let ms = |n: u64| Some(Duration::from_millis(n));
        let before = CpuMark { server: ms(100), client: ms(50), gateway: ms(0) };
        let after = CpuMark { server: ms(1100), client: ms(550), gateway: ms(2000) };
        let load = Load { completed: 100_000, ..Load::default() };
        assert_eq!(before.per_call(&after, &load), Some(CpuPerCall { server: 10.0, client: 5.0, gateway: 20.0 }));
        let unknown = CpuMark { server: None, client: ms(50), gateway: ms(0) };
        assert_eq!(unknown.per_call(&after, &load), None);
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
