//! `mcp-gateway`: one MCP endpoint in front of the servers a configuration file names.
//!
//! ```text
//! mcp-gateway --config gateway.toml                 # serves stdio
//! mcp-gateway --config gateway.toml --port 8080     # serves http://127.0.0.1:8080/mcp
//! mcp-gateway --config gateway.toml --port 0 --host 0.0.0.0
//! mcp-gateway --config gateway.toml --threads 4     # stdio on four worker threads
//! ```
//!
//! `--threads N` sets the runtime's worker threads. Over stdio the default is one: the gateway
//! serves a single client and does little work per message, and a second worker would mostly
//! hand messages between threads while the upstream servers it started wait for a core. Over
//! HTTP, serving many clients at once, the default is one per core.
//!
//! Over HTTP, the first line on stdout is `LISTENING <url>` (with the port chosen when `--port
//! 0`). Logs go to stderr, filtered by `RUST_LOG` (default `info`). Traces and metrics go over
//! OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` names a collector (the other standard `OTEL_*`
//! variables apply).

use std::io::{IsTerminal, Write};
use std::net::IpAddr;
use std::process::ExitCode;

use typed_mcp::transport::http::HttpConfig;
use typed_mcp_gateway::{Config, Gateway};

/// A gateway allocates and frees for each message it relays, on every worker thread at once;
/// mimalloc's per-thread heaps serve that with less work and no contention between threads.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "usage: mcp-gateway --config FILE [--port N [--host H]] [--threads N]";

struct Options {
    config: String,
    port: Option<u16>,
    host: IpAddr,
    /// Worker threads, when given.
    threads: Option<usize>,
}

impl Options {
    /// The runtime's worker threads: as given, else one over stdio and one per core over HTTP.
    fn worker_threads(&self) -> usize {
        self.threads.unwrap_or_else(|| match self.port {
            None => 1,
            Some(_) => std::thread::available_parallelism().map_or(1, usize::from),
        })
    }
}

fn options() -> Result<Options, String> {
    let mut config = None;
    let mut port = None;
    let mut host = None;
    let mut threads = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = || inline.clone().or_else(|| args.next()).ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--config" => config = Some(value()?),
            "--port" => {
                let v = value()?;
                port = Some(v.parse().map_err(|_| format!("--port: `{v}` is not a port number"))?);
            }
            "--host" => {
                let v = value()?;
                host = Some(v.parse().map_err(|_| format!("--host: `{v}` is not an IP address"))?);
            }
            "--threads" => {
                let v = value()?;
                threads = Some(
                    v.parse()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| format!("--threads: `{v}` is not a number above 0"))?,
                );
            }
            "--help" | "-h" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    let config = config.ok_or_else(|| format!("--config is required\n{USAGE}"))?;
    Ok(Options { config, port, host: host.unwrap_or(IpAddr::from([127, 0, 0, 1])), threads })
}

fn main() -> ExitCode {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let outcome = options().and_then(|options| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(options.worker_threads())
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the runtime: {e}"))?
            .block_on(run(options))
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("mcp-gateway: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(options: Options) -> Result<(), String> {
    let config = Config::from_file(&options.config).map_err(|e| e.to_string())?;
    #[cfg_attr(not(feature = "otlp"), allow(unused_mut))]
    let mut gateway = Gateway::from_config(config).map_err(|e| format!("{}: {e}", options.config))?;
    // Traces and metrics go over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT (or the traces' or
    // metrics' own) is set, and are flushed when the gateway stops.
    #[cfg(feature = "otlp")]
    let otlp = typed_mcp::telemetry::otlp_from_env().map_err(|e| e.to_string())?;
    #[cfg(feature = "otlp")]
    if let Some(otlp) = &otlp {
        gateway = gateway.telemetry(otlp.telemetry());
    }
    let server = gateway.start(gateway.server_builder()).await.map_err(|e| format!("{}: {e}", options.config))?;
    let served = match options.port {
        None => tokio::select! {
            served = server.serve_stdio() => served,
            () = interrupted() => Ok(()),
        },
        Some(port) => {
            let listener = tokio::net::TcpListener::bind((options.host, port))
                .await
                .map_err(|e| format!("cannot listen on {}:{port} (--port, --host): {e}", options.host))?;
            let address = listener.local_addr().map_err(|e| e.to_string())?;
            let mut stdout = std::io::stdout();
            let _ = writeln!(stdout, "LISTENING http://{address}/mcp");
            let _ = stdout.flush();
            tracing::info!(%address, "serving MCP over Streamable HTTP at /mcp");
            let config = if options.host.is_loopback() {
                HttpConfig::default()
            } else {
                HttpConfig::default().disable_host_checks()
            };
            server.streamable_http(config).serve(listener, interrupted()).await
        }
    };
    gateway.shutdown().await;
    #[cfg(feature = "otlp")]
    drop(otlp);
    served.map_err(|e| e.to_string())
}

/// Ctrl-C, or (on Unix) SIGTERM: the gateway then stops its upstreams before it exits.
async fn interrupted() {
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
