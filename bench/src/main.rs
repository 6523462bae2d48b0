//! Benchmarks of MCP servers: our SDK, the official `rmcp` crate, and a bare loop with no SDK.
//!
//! ```text
//! cargo run --release --manifest-path bench/Cargo.toml -- all
//! ```
//!
//! builds the three servers in `bench/servers/`, runs every scenario several times with the
//! servers in alternating order, measures the build cost of the two SDK servers, and prints a
//! table of medians. The driver speaks raw JSON-RPC (no MCP SDK): see `wire.rs` and `http.rs`.
//! Single scenarios run with the other subcommands (`help` lists them).

mod buildcost;
mod gateway;
mod http;
mod process;
mod scenario;
mod stats;
mod stdio;
mod wire;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use process::HttpServer;
use stats::{Load, median};
use stdio::StdioRun;
use wire::Tool;

const USAGE: &str = "\
usage: bench <command> [options]

commands:
  all                       every scenario for ours, rmcp and bare, then the table
      --rounds N            runs of each load and memory scenario (default 5)
      --build-rounds N      clean builds and rebuilds of each SDK server (default 3; 0 skips them)
  stdio-echo [--calls N] [--window W] -- <server command…>
  stdio-elicit [--calls N] -- <server command…>
  http-echo [--sessions N] [--calls N] <http://127.0.0.1:PORT/mcp>
  http-stateless [--rounds N] [--connections N] [--calls N] [--seconds S] [--rmcp-revision R]
                            stateless calls of `echo` (2026-07-28: no `initialize`, no
                            session), each connection kept alive, one call after another:
                            ours, rmcp (`--stateless`) and bare in alternating order, and
                            ours over sessions with as many connections, for the ratio
                            (default 32 connections, 30,000 calls, at most 30 s per run;
                            --seconds alone runs for that time whatever the count;
                            --rmcp-revision 2025-11-25 sends rmcp sessionless 2025 calls)
  http-stateless [--connections N] [--calls N] [--seconds S] [--revision R] <http://127.0.0.1:PORT/mcp>
                            one run against a server already listening
  http-auth [--rounds N] [--sessions N] [--calls N]   (ours, JWT-protected against unprotected)
  http-dpop [--rounds N] [--sessions N] [--calls N]   (ours, DPoP-bound JWT against bearer JWT)
  http-backplane [--rounds N] [--sessions N] [--calls N]
                            (ours: one instance alone, the same on a Redis backplane with the
                            calls landing on the session's owner, landing on another instance
                            that serves them, and forwarded from another instance to the
                            owner; needs redis-server)
  http-idle [--sessions N] <server program>          (started with `--http 0`)
  http-pending [--sessions N] [--per-session K] [--hold yes] <server program>
  build-cost [--server ours|rmcp]
  gateway [--rounds N] [--stdio-calls N] [--window W] [--sessions N] [--calls N] [--gateway PROGRAM]
                            ours' echo through mcp-gateway against direct, with a stdio upstream
                            (driven over stdio) and an HTTP upstream (driven over HTTP):
                            calls/s, p50s and `gateway/direct calls/s`, and over HTTP the CPU
                            each process spends per call (default 5 rounds; the
                            gateway built from bench/servers/gateway unless --gateway names one)

A <server command> or <server program> may be `ours`, `rmcp` or `bare`: the benchmark servers.
";

/// The benchmark servers, in table order.
const SERVERS: [&str; 3] = ["ours", "rmcp", "bare"];

/// Load sizes; every run is also bounded in time.
const STDIO_ECHO_CALLS: usize = 40_000;
const STDIO_ECHO_WINDOW: usize = 16;
const STDIO_ELICIT_CALLS: usize = 3_000;
const HTTP_SESSIONS: usize = 64;
const HTTP_ECHO_CALLS: usize = 30_000;
const STATELESS_CONNECTIONS: usize = 32;
const STATELESS_CALLS: usize = 30_000;
const IDLE_SESSIONS: usize = 1_000;
const PENDING_SESSIONS: usize = 1_000;
const PENDING_PER_SESSION: usize = 10;
const RUN_LIMIT: Duration = Duration::from_secs(30);

fn bench_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where the release binaries of the servers are.
fn release_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let profile_dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    profile_dir.parent().map(|t| t.join("release")).unwrap_or(profile_dir)
}

fn server_program(name: &str) -> String {
    if SERVERS.contains(&name) {
        release_dir().join(format!("{name}-server")).display().to_string()
    } else {
        name.to_owned()
    }
}

/// Builds each server with its own cargo invocation, so no server's dependency features leak
/// into another's.
fn build_servers() -> Result<(), String> {
    build_these(&SERVERS)
}

/// Builds the benchmark servers named.
fn build_these(servers: &[&str]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    for &server in servers {
        eprintln!("building the {server} server…");
        let status = Command::new(&cargo)
            .args(["build", "--release", "--quiet", "-p", &format!("bench-server-{server}")])
            .arg("--manifest-path")
            .arg(bench_dir().join("Cargo.toml"))
            .env("CARGO_BUILD_JOBS", std::env::var("CARGO_BUILD_JOBS").unwrap_or_else(|_| "2".into()))
            .status()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if !status.success() {
            return Err(format!("building the {server} server failed"));
        }
    }
    Ok(())
}

/// Command-line options after the subcommand.
struct Args {
    options: BTreeMap<String, String>,
    rest: Vec<String>,
}

impl Args {
    fn parse(args: impl Iterator<Item = String>) -> Result<Args, String> {
        let mut options = BTreeMap::new();
        let mut rest = Vec::new();
        let mut args = args.peekable();
        while let Some(a) = args.next() {
            if a == "--" {
                rest.extend(args.by_ref());
            } else if let Some(name) = a.strip_prefix("--") {
                let value = args.next().ok_or_else(|| format!("--{name} needs a value"))?;
                options.insert(name.to_owned(), value);
            } else {
                rest.push(a);
            }
        }
        Ok(Args { options, rest })
    }

    fn number(&self, name: &str, default: usize) -> Result<usize, String> {
        match self.options.get(name) {
            Some(v) => v.parse().map_err(|_| format!("--{name}: `{v}` is not a number")),
            None => Ok(default),
        }
    }

    fn command(&self) -> Result<Vec<String>, String> {
        let mut command = self.rest.clone();
        let first = command.first_mut().ok_or("missing the server command")?;
        *first = server_program(first);
        Ok(command)
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a tokio runtime")
}

fn loopback(url: &str) -> Result<SocketAddr, String> {
    let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    if path != "mcp" {
        return Err("the driver posts to /mcp: give http://127.0.0.1:PORT/mcp".into());
    }
    let addr: SocketAddr = authority.parse().map_err(|_| format!("`{authority}` is not IP:PORT"))?;
    if !addr.ip().is_loopback() {
        return Err("the driver only talks to loopback addresses".into());
    }
    Ok(addr)
}

fn print_load(mut load: Load) {
    let (p50, p99) = (load.latency_us(0.5), load.latency_us(0.99));
    println!(
        "{} calls in {:.2?}: {:.0} calls/s, p50 {p50:.1} µs, p99 {p99:.1} µs",
        load.completed,
        load.elapsed,
        load.rate(),
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let command = args.next().unwrap_or_default();
    let result = Args::parse(args).and_then(|args| run(&command, &args));
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(command: &str, args: &Args) -> Result<(), String> {
    match command {
        "all" => all(args.number("rounds", 5)?, args.number("build-rounds", 3)?),
        "stdio-echo" | "stdio-elicit" => {
            let elicit = command == "stdio-elicit";
            let run = StdioRun {
                command: args.command()?,
                tool: if elicit { Tool::Form } else { Tool::Echo },
                calls: args.number("calls", if elicit { STDIO_ELICIT_CALLS } else { STDIO_ECHO_CALLS })?,
                warmup: args.number("warmup", 500)?,
                window: args.number("window", if elicit { 1 } else { STDIO_ECHO_WINDOW })?,
                limit: RUN_LIMIT,
            };
            print_load(run.run()?);
            Ok(())
        }
        "http-auth" => {
            // The HTTP echo with a JWT-protected server against the same server unprotected,
            // alternating, in one run.
            let rounds = args.number("rounds", 3)?;
            let sessions = args.number("sessions", HTTP_SESSIONS)?;
            let calls = args.number("calls", HTTP_ECHO_CALLS)?;
            let program = server_program("ours");
            let rt = runtime();
            let (mut open, mut protected) = (Vec::new(), Vec::new());
            for round in 0..rounds {
                for jwt in [false, true] {
                    let command = if jwt { vec![program.clone(), "--jwt".into()] } else { vec![program.clone()] };
                    let server = HttpServer::start_command(&command)?;
                    if jwt && server.token.is_none() {
                        return Err("the server printed no token".into());
                    }
                    let load = rt.block_on(scenario::http_echo_as(
                        server.addr,
                        server.token.clone(),
                        sessions,
                        calls,
                        10,
                        RUN_LIMIT,
                    ))?;
                    eprintln!("round {}: {}: {:.0} calls/s", round + 1, if jwt { "JWT" } else { "open" }, load.rate());
                    if jwt { protected.push(load.rate()) } else { open.push(load.rate()) }
                }
            }
            let median = |v: &mut Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let (o, p) = (median(&mut open), median(&mut protected));
            println!(
                "HTTP echo, median of {rounds}: unprotected {o:.0} calls/s, JWT-protected {p:.0} calls/s: {:.2}x",
                p / o
            );
            Ok(())
        }
        "http-dpop" => {
            // The HTTP echo with DPoP-bound tokens (a fresh proof per request, checked and
            // remembered by the server) against the same server with bearer tokens, alternating.
            let rounds = args.number("rounds", 3)?;
            let sessions = args.number("sessions", HTTP_SESSIONS)?;
            let calls = args.number("calls", HTTP_ECHO_CALLS)?;
            let program = server_program("ours");
            let rt = runtime();
            let proofs_file = std::env::temp_dir().join(format!("bench-dpop-proofs-{}", std::process::id()));
            let needed = calls + sessions * 20 + 100;
            let (mut bearer, mut dpop) = (Vec::new(), Vec::new());
            for round in 0..rounds {
                for bound in [false, true] {
                    let mut command = vec![program.clone(), "--jwt".into()];
                    if bound {
                        command.extend(["--dpop".into(), proofs_file.display().to_string(), needed.to_string()]);
                    }
                    let server = HttpServer::start_command(&command)?;
                    let token = server.token.clone().ok_or("the server printed no token")?;
                    let load = if bound {
                        let proofs = std::sync::Arc::new(http::Proofs::read(&proofs_file)?);
                        rt.block_on(scenario::http_echo_dpop(
                            server.addr,
                            token,
                            proofs,
                            sessions,
                            calls,
                            10,
                            RUN_LIMIT,
                        ))?
                    } else {
                        rt.block_on(scenario::http_echo_as(server.addr, Some(token), sessions, calls, 10, RUN_LIMIT))?
                    };
                    eprintln!(
                        "round {}: {}: {:.0} calls/s",
                        round + 1,
                        if bound { "DPoP" } else { "bearer" },
                        load.rate()
                    );
                    if bound { dpop.push(load.rate()) } else { bearer.push(load.rate()) }
                }
            }
            let _ = std::fs::remove_file(&proofs_file);
            let median = |v: &mut Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let (b, d) = (median(&mut bearer), median(&mut dpop));
            println!(
                "HTTP echo, median of {rounds}: bearer JWT {b:.0} calls/s, DPoP-bound JWT {d:.0} calls/s: {:.2}x",
                d / b
            );
            Ok(())
        }
        "operations" => operations(
            args.number("rounds", 3)?,
            args.number("sessions", HTTP_SESSIONS)?,
            args.number("calls", HTTP_ECHO_CALLS)?,
            args.number("stdio-calls", STDIO_ECHO_CALLS)?,
        ),
        "http-backplane" => backplane(
            args.number("rounds", 3)?,
            args.number("sessions", HTTP_SESSIONS)?,
            args.number("calls", HTTP_ECHO_CALLS)?,
        ),
        "http-echo" => {
            let addr = loopback(args.rest.first().ok_or("missing the URL")?)?;
            let sessions = args.number("sessions", HTTP_SESSIONS)?;
            let calls = args.number("calls", HTTP_ECHO_CALLS)?;
            print_load(runtime().block_on(scenario::http_echo(addr, sessions, calls, 10, RUN_LIMIT))?);
            Ok(())
        }
        "http-stateless" => {
            let connections = args.number("connections", STATELESS_CONNECTIONS)?;
            if connections == 0 {
                return Err("--connections must be at least 1".into());
            }
            let (calls, limit) = match args.options.get("seconds") {
                Some(s) => {
                    let seconds: f64 = s.parse().map_err(|_| format!("--seconds: `{s}` is not a number"))?;
                    if !(seconds > 0.0 && seconds.is_finite()) {
                        return Err(format!("--seconds: `{s}` is not a positive number"));
                    }
                    (args.number("calls", usize::MAX)?, Duration::from_secs_f64(seconds))
                }
                None => (args.number("calls", STATELESS_CALLS)?, RUN_LIMIT),
            };
            let revision =
                |name: &str| args.options.get(name).map_or(Ok(wire::Revision::Stateless), |r| wire::Revision::parse(r));
            match args.rest.first() {
                Some(url) => {
                    let addr = loopback(url)?;
                    let load = runtime().block_on(scenario::http_stateless(
                        addr,
                        revision("revision")?,
                        connections,
                        calls,
                        10,
                        limit,
                    ))?;
                    let streamed = load.streamed;
                    print_load(load);
                    if streamed > 0 {
                        println!("{streamed} of those calls were answered with an SSE stream, not plain JSON");
                    }
                    Ok(())
                }
                None => stateless(args.number("rounds", 3)?, connections, calls, limit, revision("rmcp-revision")?),
            }
        }
        "http-idle" | "http-pending" => {
            let server = HttpServer::start_command(&args.command()?)?;
            let sessions =
                args.number("sessions", if command == "http-idle" { IDLE_SESSIONS } else { PENDING_SESSIONS })?;
            let memory = if command == "http-idle" {
                runtime().block_on(scenario::idle_sessions(&server, sessions))?
            } else {
                let per_session = args.number("per-session", PENDING_PER_SESSION)?;
                let hold = args.options.get("hold").is_some_and(|v| v == "yes");
                runtime().block_on(scenario::pending_elicitations(&server, sessions, per_session, hold))?
            };
            println!(
                "RSS {:.1} MiB before, {:.1} MiB after: {:.2} KiB per session",
                memory.before as f64 / MIB,
                memory.after as f64 / MIB,
                memory.after.saturating_sub(memory.before) as f64 / 1024.0 / sessions as f64
            );
            if let Some(answered) = memory.answered_in {
                println!("every pending call answered and returned its own result in {answered:.2?}");
            }
            Ok(())
        }
        "gateway" => {
            let program = match args.options.get("gateway") {
                Some(program) => PathBuf::from(program),
                None => {
                    build_these(&["gateway"])?;
                    release_dir().join("gateway-server")
                }
            };
            build_these(&["ours"])?;
            let bench = gateway::GatewayBench {
                gateway: program,
                server: server_program("ours"),
                rounds: args.number("rounds", 5)?,
                stdio_calls: args.number("stdio-calls", STDIO_ECHO_CALLS)?,
                window: args.number("window", STDIO_ECHO_WINDOW)?,
                sessions: args.number("sessions", HTTP_SESSIONS)?,
                http_calls: args.number("calls", HTTP_ECHO_CALLS)?,
                limit: RUN_LIMIT,
                scratch: std::env::temp_dir().join(format!("bench-gateway-{}", std::process::id())),
            };
            print!("{}", bench.run(&runtime())?);
            let _ = std::fs::remove_dir_all(&bench.scratch);
            Ok(())
        }
        "build-cost" => {
            let servers: Vec<&str> = match args.options.get("server") {
                Some(s) => vec![s.as_str()],
                None => vec!["ours", "rmcp"],
            };
            for server in servers {
                let cost = buildcost::measure(&bench_dir(), server, &release_dir().join("build-cost"))?;
                println!("{server}: clean {:.1?}, rebuild after an edit {:.1?}", cost.clean, cost.rebuild);
            }
            Ok(())
        }
        "help" | "--help" | "-h" | "" => {
            print!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// How a figure is printed and judged.
#[derive(Clone, Copy)]
enum Unit {
    Rate,
    Micros,
    KiB,
    MiB,
    Millis,
    Seconds,
    /// A ratio of two figures of the same server.
    Ratio,
}

impl Unit {
    fn format(self, v: f64) -> String {
        if v.is_nan() {
            return "–".into();
        }
        match self {
            Unit::Rate => format!("{} calls/s", thousands(v)),
            Unit::Micros => format!("{v:.0} µs"),
            Unit::KiB => format!("{v:.1} KiB"),
            Unit::MiB => format!("{v:.1} MiB"),
            Unit::Millis => format!("{v:.0} ms"),
            Unit::Seconds => format!("{v:.1} s"),
            Unit::Ratio => format!("{v:.2}×"),
        }
    }
}

fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A goal for one figure.
#[derive(Clone, Copy)]
enum Goal {
    /// ours/rmcp at least this.
    RmcpAtLeast(f64),
    /// ours/rmcp at most this.
    RmcpAtMost(f64),
    /// ours/bare at least this.
    BareAtLeast(f64),
    /// ours at most this, in the figure's unit.
    AtMost(f64),
    /// ours at least this, in the figure's unit.
    AtLeast(f64),
}

struct Figure {
    label: &'static str,
    unit: Unit,
    goals: &'static [Goal],
}

/// The rows of the table: indices into [`FIGURES`].
mod fig {
    pub const STDIO_RATE: usize = 0;
    pub const STDIO_P50: usize = 1;
    pub const STDIO_P99: usize = 2;
    pub const ELICIT_P50: usize = 3;
    pub const ELICIT_P99: usize = 4;
    pub const HTTP_RATE: usize = 5;
    pub const HTTP_P50: usize = 6;
    pub const HTTP_P99: usize = 7;
    pub const STATELESS_RATE: usize = 8;
    pub const STATELESS_P50: usize = 9;
    pub const STATELESS_P99: usize = 10;
    pub const SESSION_RATE: usize = 11;
    pub const STATELESS_PER_SESSION: usize = 12;
    pub const IDLE_KIB: usize = 13;
    pub const PENDING_MIB: usize = 14;
    pub const HELD_MIB: usize = 15;
    pub const ANSWERED_MS: usize = 16;
    pub const RSS_BEFORE_MIB: usize = 17;
    pub const CLEAN_BUILD: usize = 18;
    pub const REBUILD: usize = 19;
    pub const COUNT: usize = 20;
}

/// The figures of the table, in order.
const FIGURES: [Figure; fig::COUNT] = [
    Figure {
        label: "stdio echo throughput",
        unit: Unit::Rate,
        goals: &[Goal::RmcpAtLeast(2.0), Goal::BareAtLeast(0.8)],
    },
    Figure { label: "stdio echo latency p50", unit: Unit::Micros, goals: &[] },
    Figure { label: "stdio echo latency p99", unit: Unit::Micros, goals: &[] },
    Figure { label: "stdio elicitation round trip p50", unit: Unit::Micros, goals: &[Goal::RmcpAtMost(0.7)] },
    Figure { label: "stdio elicitation round trip p99", unit: Unit::Micros, goals: &[] },
    Figure { label: "HTTP echo throughput, 64 sessions", unit: Unit::Rate, goals: &[Goal::RmcpAtLeast(1.5)] },
    Figure { label: "HTTP echo latency p50, 64 sessions", unit: Unit::Micros, goals: &[] },
    Figure { label: "HTTP echo latency p99, 64 sessions", unit: Unit::Micros, goals: &[] },
    Figure {
        label: "HTTP stateless echo throughput, {connections} connections (2026-07-28, no session)",
        unit: Unit::Rate,
        goals: &[Goal::RmcpAtLeast(2.5)],
    },
    Figure { label: "HTTP stateless echo latency p50, {connections} connections", unit: Unit::Micros, goals: &[] },
    Figure { label: "HTTP stateless echo latency p99, {connections} connections", unit: Unit::Micros, goals: &[] },
    Figure { label: "HTTP echo throughput, {connections} sessions (the session path)", unit: Unit::Rate, goals: &[] },
    Figure {
        label: "HTTP stateless ÷ session echo throughput, {connections} connections each",
        unit: Unit::Ratio,
        goals: &[Goal::AtLeast(0.9)],
    },
    Figure { label: "memory per idle HTTP session (1,000 sessions)", unit: Unit::KiB, goals: &[Goal::AtMost(16.0)] },
    Figure {
        label: "RSS with 10,000 pending elicitations (1,000 sessions), streams closed",
        unit: Unit::MiB,
        goals: &[Goal::AtMost(64.0)],
    },
    Figure {
        label: "RSS with 10,000 pending elicitations, each holding its SSE stream open",
        unit: Unit::MiB,
        goals: &[],
    },
    Figure {
        label: "those 10,000 answered at once: until every call returned its own result",
        unit: Unit::Millis,
        goals: &[],
    },
    Figure { label: "RSS before those sessions", unit: Unit::MiB, goals: &[] },
    Figure { label: "clean release build", unit: Unit::Seconds, goals: &[Goal::RmcpAtMost(0.8)] },
    Figure {
        label: "release rebuild after a one-line tool edit",
        unit: Unit::Seconds,
        goals: &[Goal::RmcpAtMost(0.7)],
    },
];

/// Per figure, per server (table order), the value of each round (NaN where not measured).
struct Results {
    values: Vec<[Vec<f64>; 3]>,
    rounds: usize,
    build_rounds: usize,
    /// Connections of the stateless scenario (and of the session path it is compared with).
    connections: usize,
}

impl Results {
    fn new(rounds: usize, build_rounds: usize) -> Self {
        Results {
            values: (0..FIGURES.len()).map(|_| Default::default()).collect(),
            rounds,
            build_rounds,
            connections: STATELESS_CONNECTIONS,
        }
    }

    fn record(&mut self, figure: usize, server: usize, round: usize, value: f64) {
        let v = &mut self.values[figure][server];
        if v.len() <= round {
            v.resize(round + 1, f64::NAN);
        }
        v[round] = value;
    }

    fn median(&self, figure: usize, server: usize) -> f64 {
        median(&self.values[figure][server])
    }

    /// The median over rounds of ours/other.
    fn ratio(&self, figure: usize, other: usize) -> f64 {
        let ours = &self.values[figure][0];
        let theirs = &self.values[figure][other];
        let ratios: Vec<f64> = ours.iter().zip(theirs).map(|(a, b)| a / b).filter(|r| r.is_finite()).collect();
        median(&ratios)
    }

    /// The table of every figure.
    fn table(&self) -> String {
        self.table_of(0..FIGURES.len())
    }

    /// The table of the figures in `rows`.
    fn table_of(&self, rows: std::ops::Range<usize>) -> String {
        let mut t = String::new();
        t.push_str("| scenario | ours | rmcp 3.11.0 | bare | ours/rmcp | ours/bare | target | met |\n");
        t.push_str("| --- | ---: | ---: | ---: | ---: | ---: | --- | :---: |\n");
        for (i, f) in FIGURES.iter().enumerate().filter(|(i, _)| rows.contains(i)) {
            // A row that is itself a ratio (of each server to itself) has no ratio to the others.
            let (vs_rmcp, vs_bare) =
                if matches!(f.unit, Unit::Ratio) { (f64::NAN, f64::NAN) } else { (self.ratio(i, 1), self.ratio(i, 2)) };
            let ratio = |r: f64| if r.is_nan() { "–".to_owned() } else { format!("{r:.2}×") };
            let mut targets = Vec::new();
            let mut met = Vec::new();
            for g in f.goals {
                let (text, value, ok) = match *g {
                    Goal::RmcpAtLeast(x) => (format!("≥ {x}× rmcp"), vs_rmcp, vs_rmcp >= x),
                    Goal::RmcpAtMost(x) => (format!("≤ {x}× rmcp"), vs_rmcp, vs_rmcp <= x),
                    Goal::BareAtLeast(x) => (format!("≥ {x}× bare"), vs_bare, vs_bare >= x),
                    Goal::AtMost(x) => (format!("≤ {}", f.unit.format(x)), self.median(i, 0), self.median(i, 0) <= x),
                    Goal::AtLeast(x) => (format!("≥ {}", f.unit.format(x)), self.median(i, 0), self.median(i, 0) >= x),
                };
                targets.push(text);
                met.push(if value.is_nan() {
                    "–"
                } else if ok {
                    "yes"
                } else {
                    "no"
                });
            }
            let _ = writeln!(
                t,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                f.label.replace("{connections}", &self.connections.to_string()),
                f.unit.format(self.median(i, 0)),
                f.unit.format(self.median(i, 1)),
                f.unit.format(self.median(i, 2)),
                ratio(vs_rmcp),
                ratio(vs_bare),
                targets.join(", "),
                met.join(", "),
            );
        }
        t
    }
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find_map(|l| l.strip_prefix("model name").map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned()))
        })
        .unwrap_or_else(|| "unknown".into())
}

fn rustc_version() -> String {
    Command::new("rustc")
        .arg("-V")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|| "unknown".into())
}

/// Runs one round of every load and memory scenario, servers in `order`.
fn round(results: &mut Results, r: usize, order: &[usize]) -> Result<(), String> {
    let rt = runtime();
    for &s in order {
        let program = server_program(SERVERS[s]);
        eprintln!("round {}: stdio echo, {}", r + 1, SERVERS[s]);
        let mut load = StdioRun {
            command: vec![program.clone()],
            tool: Tool::Echo,
            calls: STDIO_ECHO_CALLS,
            warmup: 2_000,
            window: STDIO_ECHO_WINDOW,
            limit: RUN_LIMIT,
        }
        .run()?;
        results.record(fig::STDIO_RATE, s, r, load.rate());
        results.record(fig::STDIO_P50, s, r, load.latency_us(0.5));
        results.record(fig::STDIO_P99, s, r, load.latency_us(0.99));
    }
    for &s in order {
        eprintln!("round {}: stdio elicitation, {}", r + 1, SERVERS[s]);
        let mut load = StdioRun {
            command: vec![server_program(SERVERS[s])],
            tool: Tool::Form,
            calls: STDIO_ELICIT_CALLS,
            warmup: 300,
            window: 1,
            limit: RUN_LIMIT,
        }
        .run()?;
        results.record(fig::ELICIT_P50, s, r, load.latency_us(0.5));
        results.record(fig::ELICIT_P99, s, r, load.latency_us(0.99));
    }
    for &s in order {
        eprintln!("round {}: HTTP echo, {}", r + 1, SERVERS[s]);
        let server = HttpServer::start(&server_program(SERVERS[s]))?;
        let mut load = rt.block_on(scenario::http_echo(server.addr, HTTP_SESSIONS, HTTP_ECHO_CALLS, 10, RUN_LIMIT))?;
        results.record(fig::HTTP_RATE, s, r, load.rate());
        results.record(fig::HTTP_P50, s, r, load.latency_us(0.5));
        results.record(fig::HTTP_P99, s, r, load.latency_us(0.99));
    }
    let load = StatelessLoad { connections: STATELESS_CONNECTIONS, calls: STATELESS_CALLS, limit: RUN_LIMIT };
    stateless_round(results, r, order, &load, wire::Revision::Stateless)?;
    for &s in order {
        eprintln!("round {}: idle HTTP sessions, {}", r + 1, SERVERS[s]);
        let server = HttpServer::start(&server_program(SERVERS[s]))?;
        let m = rt.block_on(scenario::idle_sessions(&server, IDLE_SESSIONS))?;
        results.record(fig::IDLE_KIB, s, r, m.after.saturating_sub(m.before) as f64 / 1024.0 / IDLE_SESSIONS as f64);
    }
    for &s in order {
        eprintln!("round {}: pending elicitations, {}", r + 1, SERVERS[s]);
        let server = HttpServer::start(&server_program(SERVERS[s]))?;
        let m = rt.block_on(scenario::pending_elicitations(&server, PENDING_SESSIONS, PENDING_PER_SESSION, false))?;
        results.record(fig::PENDING_MIB, s, r, m.after as f64 / MIB);
        results.record(fig::RSS_BEFORE_MIB, s, r, m.before as f64 / MIB);
    }
    for &s in order {
        eprintln!("round {}: pending elicitations with open streams, {}", r + 1, SERVERS[s]);
        let server = HttpServer::start(&server_program(SERVERS[s]))?;
        let m = rt.block_on(scenario::pending_elicitations(&server, PENDING_SESSIONS, PENDING_PER_SESSION, true))?;
        results.record(fig::HELD_MIB, s, r, m.after as f64 / MIB);
        let answered = m.answered_in.ok_or("the held calls were not answered")?;
        results.record(fig::ANSWERED_MS, s, r, answered.as_secs_f64() * 1000.0);
    }
    Ok(())
}

/// The size of a stateless run, and of the session run it is compared with.
struct StatelessLoad {
    connections: usize,
    calls: usize,
    limit: Duration,
}

/// The command starting benchmark server `s` for stateless calls: rmcp needs `--stateless`
/// (its stateless mode, answering with JSON); ours and bare answer them beside their sessions.
fn stateless_command(s: usize) -> Vec<String> {
    let mut command = vec![server_program(SERVERS[s])];
    if SERVERS[s] == "rmcp" {
        command.push("--stateless".into());
    }
    command
}

/// One round of the stateless scenario, servers in `order`: each server's stateless echo, and
/// its echo over as many sessions (its session path), in alternating order from round to
/// round; records both, and their ratio. rmcp is sent calls of `rmcp_revision`, the others
/// 2026-07-28 calls.
fn stateless_round(
    results: &mut Results,
    r: usize,
    order: &[usize],
    load: &StatelessLoad,
    rmcp_revision: wire::Revision,
) -> Result<(), String> {
    let rt = runtime();
    for &s in order {
        let mut rates = [f64::NAN; 2];
        let kinds = if r.is_multiple_of(2) { [true, false] } else { [false, true] };
        for stateless in kinds {
            if stateless {
                let revision = if SERVERS[s] == "rmcp" { rmcp_revision } else { wire::Revision::Stateless };
                let server = HttpServer::start_command(&stateless_command(s))?;
                let mut run = rt.block_on(scenario::http_stateless(
                    server.addr,
                    revision,
                    load.connections,
                    load.calls,
                    10,
                    load.limit,
                ))?;
                let streamed =
                    if run.streamed > 0 { format!(", {} answered with SSE", run.streamed) } else { "".into() };
                eprintln!(
                    "round {}: HTTP stateless echo ({}), {}: {:.0} calls/s{streamed}",
                    r + 1,
                    revision.version(),
                    SERVERS[s],
                    run.rate()
                );
                rates[0] = run.rate();
                results.record(fig::STATELESS_RATE, s, r, run.rate());
                results.record(fig::STATELESS_P50, s, r, run.latency_us(0.5));
                results.record(fig::STATELESS_P99, s, r, run.latency_us(0.99));
            } else {
                let server = HttpServer::start(&server_program(SERVERS[s]))?;
                let run =
                    rt.block_on(scenario::http_echo(server.addr, load.connections, load.calls, 10, load.limit))?;
                eprintln!(
                    "round {}: HTTP echo, {} sessions, {}: {:.0} calls/s",
                    r + 1,
                    load.connections,
                    SERVERS[s],
                    run.rate()
                );
                rates[1] = run.rate();
                results.record(fig::SESSION_RATE, s, r, run.rate());
            }
        }
        results.record(fig::STATELESS_PER_SESSION, s, r, rates[0] / rates[1]);
    }
    Ok(())
}

/// The stateless scenario on its own: `rounds` rounds of [`stateless_round`], servers in
/// alternating order, then the table of its rows.
fn stateless(
    rounds: usize,
    connections: usize,
    calls: usize,
    limit: Duration,
    rmcp_revision: wire::Revision,
) -> Result<(), String> {
    build_servers()?;
    let mut results = Results::new(rounds, 0);
    results.connections = connections;
    let load = StatelessLoad { connections, calls, limit };
    for r in 0..rounds {
        let order: Vec<usize> = (0..SERVERS.len()).map(|i| (i + r) % SERVERS.len()).collect();
        stateless_round(&mut results, r, &order, &load, rmcp_revision)?;
    }
    println!(
        "Medians of {rounds} alternating runs; ratios are medians of the per-run ratios. rmcp was sent {} calls.\n",
        rmcp_revision.version()
    );
    print!("{}", results.table_of(fig::STATELESS_RATE..fig::STATELESS_PER_SESSION + 1));
    Ok(())
}

fn all(rounds: usize, build_rounds: usize) -> Result<(), String> {
    build_servers()?;
    let mut results = Results::new(rounds, build_rounds);
    for r in 0..rounds {
        // Each round starts with a different server, so drift on a shared machine (other
        // builds, thermal state) does not always favour the same one.
        let order: Vec<usize> = (0..SERVERS.len()).map(|i| (i + r) % SERVERS.len()).collect();
        round(&mut results, r, &order)?;
    }
    let scratch = release_dir().join("build-cost");
    for r in 0..build_rounds {
        let order = if r % 2 == 0 { [0, 1] } else { [1, 0] };
        for s in order {
            eprintln!("build round {}: {}", r + 1, SERVERS[s]);
            let cost = buildcost::measure(&bench_dir(), SERVERS[s], &scratch)?;
            results.record(fig::CLEAN_BUILD, s, r, cost.clean.as_secs_f64());
            results.record(fig::REBUILD, s, r, cost.rebuild.as_secs_f64());
        }
    }
    let mut report = String::new();
    let _ = writeln!(
        report,
        "Medians of {} alternating runs ({} for the builds); ratios are medians of the per-run ratios.\n",
        results.rounds, results.build_rounds
    );
    report.push_str(&results.table());
    let _ = writeln!(
        report,
        "\nMachine: {} logical CPUs ({}), {}; stdio window {STDIO_ECHO_WINDOW}, stateless calls of 2026-07-28 to all three, builds with CARGO_BUILD_JOBS={}.",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpu_model(),
        rustc_version(),
        std::env::var("CARGO_BUILD_JOBS").unwrap_or_else(|_| "2".into()),
    );
    print!("{report}");
    let raw: Vec<String> = FIGURES
        .iter()
        .zip(&results.values)
        .map(|(f, v)| {
            let label = f.label.replace("{connections}", &results.connections.to_string());
            format!("{label}: ours {:?}, rmcp {:?}, bare {:?}", v[0], v[1], v[2])
        })
        .collect();
    let out = release_dir().join("bench-results.md");
    let _ = std::fs::write(&out, format!("{report}\nEvery run:\n\n{}\n", raw.join("\n")));
    eprintln!("(also written to {}, with every run's figures)", out.display());
    Ok(())
}

/// A `redis-server` of the benchmark's own on a free loopback port, persisting nothing.
struct RedisServer {
    child: std::process::Child,
    port: u16,
}

impl RedisServer {
    fn start() -> Result<Self, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .map_err(|e| {
                format!("cannot start redis-server ({e}); install it (Debian: apt-get install redis-server)")
            })?;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if std::time::Instant::now() > deadline {
                return Err("redis-server did not start".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(RedisServer { child, port })
    }

    /// How many commands Redis has processed so far (`INFO stats`).
    fn commands(&self) -> Result<u64, String> {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        stream.write_all(b"INFO stats\r\nQUIT\r\n").map_err(|e| e.to_string())?;
        let mut text = String::new();
        stream.read_to_string(&mut text).map_err(|e| e.to_string())?;
        text.lines()
            .find_map(|l| l.strip_prefix("total_commands_processed:"))
            .and_then(|n| n.trim().parse().ok())
            .ok_or_else(|| "no total_commands_processed in INFO".into())
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The HTTP echo of one instance alone, of the same on a Redis backplane with every call
/// landing on its session's owner, with every call landing on another instance (which serves
/// it there, a replica), and with every call landing on another instance with `echo` bound to
/// the owner (`--on-owner echo`: forwarded to the owner over the hop): throughputs, median
/// latencies and Redis commands per call, in one run.
fn backplane(rounds: usize, sessions: usize, calls: usize) -> Result<(), String> {
    build_these(&["ours"])?;
    let program = server_program("ours");
    let redis = RedisServer::start()?;
    let url = format!("redis://127.0.0.1:{}/", redis.port);
    let rt = runtime();
    let kinds = ["alone", "owner", "non-owner", "forwarded"];
    let mut rates: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut p50s: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut per_call: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for round in 0..rounds {
        for kind in kinds {
            let mut shared = vec![program.clone(), "--redis".into(), url.clone()];
            if kind == "forwarded" {
                shared.extend(["--on-owner".into(), "echo".into()]);
            }
            let (a, b) = if kind == "alone" {
                (HttpServer::start(&program)?, None)
            } else {
                (HttpServer::start_command(&shared)?, Some(HttpServer::start_command(&shared)?))
            };
            // Both instances have announced themselves (their first heartbeat).
            std::thread::sleep(Duration::from_millis(300));
            let calls_to = if matches!(kind, "non-owner" | "forwarded") { b.as_ref().map(|b| b.addr) } else { None };
            let before = redis.commands()?;
            let mut load =
                rt.block_on(scenario::http_echo_via(a.addr, calls_to, None, None, sessions, calls, 10, RUN_LIMIT))?;
            let commands = redis.commands()?.saturating_sub(before);
            let p50 = load.latency_us(0.5);
            // Sessions opened, warm-up calls and heartbeats are counted too: an upper bound.
            let measured = (load.completed + sessions * 10) as f64;
            eprintln!(
                "round {}: {kind}: {:.0} calls/s, p50 {p50:.1} µs, {commands} Redis commands",
                round + 1,
                load.rate()
            );
            rates.entry(kind).or_default().push(load.rate());
            p50s.entry(kind).or_default().push(p50);
            per_call.entry(kind).or_default().push(commands as f64 / measured);
        }
    }
    let m = |map: &BTreeMap<&str, Vec<f64>>, kind: &str| median(map.get(kind).map_or(&[][..], Vec::as_slice));
    println!("| HTTP echo, {sessions} sessions, median of {rounds} | calls/s | p50 µs | Redis commands per call |");
    println!("|---|---|---|---|");
    for kind in kinds {
        println!(
            "| {kind} | {:.0} | {:.1} | {:.3} |",
            m(&rates, kind),
            m(&p50s, kind),
            if kind == "alone" { 0.0 } else { m(&per_call, kind) }
        );
    }
    let owner_ratio = m(&rates, "owner") / m(&rates, "alone");
    let elsewhere_ratio = m(&p50s, "non-owner") / m(&p50s, "owner");
    println!("backplane, calls on the owner: {owner_ratio:.2}x the throughput alone (target >= 0.9)");
    println!("non-owner (served there) p50: {elsewhere_ratio:.2}x the p50 on the owner (target <= 1.3)");
    let forwarded_ratio = m(&p50s, "forwarded") / m(&p50s, "owner");
    println!("forwarded to the owner p50: {forwarded_ratio:.2}x the p50 on the owner (target <= 1.3)");
    Ok(())
}

/// Our server as it is, with OpenTelemetry on (`--otel`: spans and metrics of every request,
/// batched to an exporter that drops them, through `Telemetry::from_sdk`; the same through
/// `Telemetry::new`, which takes any meter provider and so records each duration with its
/// attributes; and with one trace in ten sampled, metrics still of every request), and with
/// every request through a rate limiter
/// that never refuses (`--rate-limit`): stdio echo and HTTP echo, alternating, in one run; last,
/// `off` again, which shows how far apart two runs of one server are.
fn operations(rounds: usize, sessions: usize, calls: usize, stdio_calls: usize) -> Result<(), String> {
    let program = server_program("ours");
    let variants: [(&str, &[&str]); 6] = [
        ("off", &[]),
        ("otel", &["--otel"]),
        ("otel, any meter provider", &["--otel", "--otel-any-provider"]),
        ("otel, 1 in 10 traces", &["--otel", "--otel-ratio", "0.1"]),
        ("rate limiter", &["--rate-limit"]),
        // The noise of the measure: the same server as `off`, run last in each round.
        ("off again", &[]),
    ];
    let rt = runtime();
    let mut stdio: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    let mut http: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    let mut stdio_cpu: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for round in 0..rounds {
        for (i, (name, flags)) in variants.iter().enumerate() {
            let mut command = vec![program.clone()];
            command.extend(flags.iter().map(|f| (*f).to_owned()));
            let run = StdioRun {
                command: command.clone(),
                tool: Tool::Echo,
                calls: stdio_calls,
                warmup: 500,
                window: STDIO_ECHO_WINDOW,
                limit: RUN_LIMIT,
            };
            let load = run.run()?;
            eprintln!("round {}: stdio, {name}: {:.0} calls/s", round + 1, load.rate());
            stdio[i].push(load.rate());
            if let Some(cpu) = load.server_cpu {
                stdio_cpu[i].push(cpu.as_secs_f64() * 1e6 / load.completed.max(1) as f64);
            }
            let server = HttpServer::start_command(&command)?;
            let load = rt.block_on(scenario::http_echo(server.addr, sessions, calls, 10, RUN_LIMIT))?;
            eprintln!("round {}: HTTP, {name}: {:.0} calls/s", round + 1, load.rate());
            http[i].push(load.rate());
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut stdio_off = f64::NAN;
    for (transport, rates) in [("stdio echo", &stdio), (&*format!("HTTP echo, {sessions} sessions"), &http)] {
        let off = median(rates[0].clone());
        let mut line = format!("{transport}, median of {rounds}: off {off:.0} calls/s");
        for (i, (name, _)) in variants.iter().enumerate().skip(1) {
            let on = median(rates[i].clone());
            // The ratio is the median of each round's ratio to the `off` run just before it:
            // the machine's speed drifts between rounds more than within one.
            let ratio = median(rates[i].iter().zip(&rates[0]).map(|(on, off)| on / off).collect());
            line.push_str(&format!(", {name} {on:.0} calls/s ({ratio:.2}x)"));
        }
        println!("{line}");
        if transport == "stdio echo" {
            stdio_off = off;
        }
    }
    // The server's own CPU time per stdio call (all its threads), steadier than calls per
    // second on a shared machine.
    if stdio_cpu.iter().all(|v| !v.is_empty()) {
        let off = median(stdio_cpu[0].clone());
        let mut line = format!("stdio echo, server CPU per call, median of {rounds}: off {off:.2} µs");
        for (i, (name, _)) in variants.iter().enumerate().skip(1) {
            let on = median(stdio_cpu[i].clone());
            line.push_str(&format!(", {name} {on:.2} µs ({:+.2})", on - off));
        }
        println!("{line}");
    }
    // What the OpenTelemetry SDK alone costs per request, against what the 0.85x target leaves
    // for it: at `off` calls/s, a call may cost (1/0.85 - 1) / off seconds more.
    let output = std::process::Command::new(&program)
        .args(["--otel-floor", "1000000"])
        .output()
        .map_err(|e| format!("cannot run {program} --otel-floor: {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let floor: Vec<f64> = text.split_whitespace().filter_map(|n| n.parse().ok()).collect();
    let [span, record, both] = floor[..] else {
        return Err(format!("{program} --otel-floor printed {text:?}"));
    };
    let budget = (1.0 / 0.85 - 1.0) / stdio_off * 1e9;
    println!(
        "OpenTelemetry SDK alone, per request: span {span:.0} ns, histogram record {record:.0} ns, both {both:.0} ns; \
         the 0.85x target leaves {budget:.0} ns per stdio call ({:.2}x of it)",
        both / budget
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_row_names_point_at_their_rows() {
        let label = |i: usize| FIGURES[i].label;
        assert!(label(fig::HTTP_P99).starts_with("HTTP echo latency p99"));
        assert!(label(fig::STATELESS_RATE).starts_with("HTTP stateless echo throughput"));
        assert!(label(fig::STATELESS_P99).starts_with("HTTP stateless echo latency p99"));
        assert!(label(fig::SESSION_RATE).contains("session path"));
        assert!(label(fig::STATELESS_PER_SESSION).contains("÷ session"));
        assert!(label(fig::IDLE_KIB).starts_with("memory per idle"));
        assert!(label(fig::RSS_BEFORE_MIB).starts_with("RSS before"));
        assert!(label(fig::REBUILD).starts_with("release rebuild"));
        assert_eq!(fig::REBUILD + 1, FIGURES.len());
    }

    #[test]
    fn the_stateless_targets_are_judged() {
        let mut results = Results::new(2, 0);
        for r in 0..2 {
            results.record(fig::STATELESS_RATE, 0, r, 100_000.0);
            results.record(fig::STATELESS_RATE, 1, r, 30_000.0);
            results.record(fig::STATELESS_PER_SESSION, 0, r, 0.45);
            results.record(fig::STATELESS_PER_SESSION, 1, r, 1.1);
        }
        let table = results.table_of(fig::STATELESS_RATE..fig::STATELESS_PER_SESSION + 1);
        let row = |needle: &str| table.lines().find(|l| l.contains(needle)).unwrap().to_owned();
        let rate = row("stateless echo throughput, 32 connections");
        assert!(rate.contains("3.33×") && rate.contains("≥ 2.5× rmcp") && rate.ends_with("| yes |"), "{rate}");
        let ratio = row("÷ session");
        assert!(
            ratio.contains("| 0.45× | 1.10× |") && ratio.contains("≥ 0.90×") && ratio.ends_with("| no |"),
            "{ratio}"
        );
        assert!(!table.contains("{connections}"), "{table}");
    }
}
