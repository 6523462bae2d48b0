//! What the test servers in `src/bin/` share: logging, their command-line options, and serving
//! over stdio or Streamable HTTP, alone or as one instance of a deployment sharing its sessions
//! through Redis. (The examples people copy do all of this inline, or with
//! `Server::serve_stdio_or_http`.)

use std::io::IsTerminal;
use std::net::Ipv4Addr;

use typed_mcp::Server;

/// Sends logs to stderr (stdout carries the protocol), filtered by `RUST_LOG` (default `info`).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
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
///
/// # Errors
///
/// A value that is not a port number, naming the flag.
pub fn port_option(name: &str, env: &str, default: Option<u16>) -> Result<Option<u16>, String> {
    match option(name, env) {
        Some(v) => v.parse().map(Some).map_err(|_| format!("--{name} / {env}: `{v}` is not a port number")),
        None => Ok(default),
    }
}

/// The Redis of a shared deployment, from `--redis URL` or `REDIS_URL`. An unusable URL ends
/// the program with one line naming the flag.
pub fn redis() -> Option<typed_mcp_redis::Redis> {
    let url = option("redis", "REDIS_URL")?;
    match typed_mcp_redis::Redis::connect(&url) {
        Ok(redis) => Some(redis),
        Err(e) => exit_with(&format!("--redis / REDIS_URL: {e}")),
    }
}

/// `builder` with the `requestState` key shared by every instance and its tasks kept in Redis
/// when `--redis` is given; as it is otherwise.
pub async fn shared_state_key(builder: typed_mcp::ServerBuilder) -> typed_mcp::ServerBuilder {
    let Some(redis) = redis() else { return builder };
    let builder = builder.task_store(redis.task_store());
    match redis.shared_secret("request-state").await {
        Ok(bytes) => builder.request_state_key(typed_mcp::multi_round::state::StateKey::from_bytes(bytes)),
        Err(e) => exit_with(&format!("--redis / REDIS_URL: cannot agree on the request-state key: {e}")),
    }
}

/// Serves `server` over Streamable HTTP on `127.0.0.1:<port>/mcp` when a port is given
/// (`--port N` or `PORT`), with the Redis backplane of `--redis` when given; else over stdio.
///
/// # Errors
///
/// A port that is not a number, or an error of the transport.
pub async fn serve(server: Server) -> Result<(), Box<dyn std::error::Error>> {
    serve_keeping_on_owner(server, &[]).await
}

/// [`serve`], the calls of `on_owner` running on their session's owner in a Redis deployment
/// (`Backplane::on_owner`: they keep per-session state in the process).
///
/// # Errors
///
/// A port that is not a number, or an error of the transport.
pub async fn serve_keeping_on_owner(server: Server, on_owner: &[&str]) -> Result<(), Box<dyn std::error::Error>> {
    match port_option("port", "PORT", None)? {
        Some(port) => {
            let listener = bind(port, "--port / PORT").await;
            serve_http_with(&server, listener, on_owner).await?;
        }
        None => server.serve_stdio().await?,
    }
    Ok(())
}

/// Serves `server` over Streamable HTTP at `/mcp` on `listener` until Ctrl-C, with the Redis
/// backplane of `--redis` when given.
///
/// # Errors
///
/// An error of the transport.
pub async fn serve_http_on(server: &Server, listener: tokio::net::TcpListener) -> std::io::Result<()> {
    serve_http_with(server, listener, &[]).await
}

async fn serve_http_with(server: &Server, listener: tokio::net::TcpListener, on_owner: &[&str]) -> std::io::Result<()> {
    let address = listener.local_addr()?;
    tracing::info!(%address, "serving MCP over Streamable HTTP at /mcp");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let mut config = typed_mcp::transport::http::HttpConfig::default();
    if let Some(redis) = redis() {
        // The instances of a test share their secret through the Redis they share.
        let secret = redis.shared_secret("deployment").await.map_err(std::io::Error::other)?;
        let backplane = on_owner
            .iter()
            .fold(redis.backplane(format!("http://{address}/mcp")).secret(secret), |b, tool| b.on_owner(*tool));
        tracing::info!(instance = backplane.instance(), "sharing sessions through Redis");
        config = config.backplane(backplane);
    }
    server.streamable_http(config).serve(listener, shutdown).await
}

/// Binds `127.0.0.1:port`; when that fails, prints one line naming `flag` and exits with
/// status 2.
pub async fn bind(port: u16, flag: &str) -> tokio::net::TcpListener {
    match tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await {
        Ok(listener) => listener,
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            exit_with(&format!("port {port} is already in use: choose another with {flag} (0 picks a free one)"))
        }
        Err(e) => exit_with(&format!("cannot listen on 127.0.0.1:{port} ({flag}): {e}")),
    }
}

/// Prints `error: {message}` on one line to stderr and exits with status 2.
pub fn exit_with(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(2)
}
