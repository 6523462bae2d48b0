//! Shared plumbing for the example servers.

use std::net::{Ipv4Addr, SocketAddr};

use mcp_core::Server;

/// Sends logs to stderr (stdout carries the protocol), filtered by `RUST_LOG` (default `info`).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(ansi)
        .init();
}

/// The value of `--name N`, `--name=N`, or else of the environment variable `env`.
pub fn option(name: &str, env: &str) -> Option<String> {
    let flag = format!("--{name}");
    let prefix = format!("--{name}=");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == flag {
            return args.next();
        }
        if let Some(value) = arg.strip_prefix(&prefix) {
            return Some(value.to_owned());
        }
    }
    std::env::var(env).ok().filter(|v| !v.is_empty())
}

/// A port from `--name`/`env`, or `default`.
pub fn port_option(name: &str, env: &str, default: Option<u16>) -> Result<Option<u16>, String> {
    match option(name, env) {
        Some(v) => v.parse().map(Some).map_err(|_| format!("--{name} / {env}: `{v}` is not a port number")),
        None => Ok(default),
    }
}

/// Serves `server` over Streamable HTTP on `127.0.0.1:<port>/mcp` when a port is given
/// (`--port N` or `PORT`), else over stdio.
pub async fn serve(server: Server) -> Result<(), Box<dyn std::error::Error>> {
    match port_option("port", "PORT", None)? {
        Some(port) => server.serve_http(SocketAddr::from((Ipv4Addr::LOCALHOST, port)), None).await?,
        None => server.serve_stdio().await?,
    }
    Ok(())
}
