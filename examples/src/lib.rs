//! Shared plumbing for the example servers.

use std::io::IsTerminal;
use std::net::Ipv4Addr;

use typed_mcp::Server;

/// Sends logs to stderr (stdout carries the protocol), filtered by `RUST_LOG` (default `info`).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let ansi = std::io::stderr().is_terminal();
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

/// The MCP Inspector release the README's "Try it" commands and the banner name.
pub const INSPECTOR: &str = "@modelcontextprotocol/inspector@2.12.0";

/// The Redis of a shared deployment, from `--redis URL` or the environment variable `REDIS_URL`:
/// several copies of an example with different `--port`s and the same `--redis` serve any
/// session between them (see the README, "Running on more than one machine"). An unusable URL
/// ends the program with one line naming the flag.
pub fn redis() -> Option<typed_mcp_redis::Redis> {
    let url = option("redis", "REDIS_URL")?;
    match typed_mcp_redis::Redis::connect(&url) {
        Ok(redis) => Some(redis),
        Err(e) => exit_with(&format!("--redis / REDIS_URL: {e}")),
    }
}

/// `builder` with the key sealing 2026-era `requestState` shared by every instance of the
/// deployment when `--redis` is given (a retry may then land on any of them), and its tasks kept
/// in that Redis (any instance answers `tasks/get`, and a finished task's result outlives the
/// instance that ran it); as it is otherwise. Ends the program when Redis cannot be reached to
/// agree on the key.
pub async fn shared_state_key(builder: typed_mcp::ServerBuilder) -> typed_mcp::ServerBuilder {
    let Some(redis) = redis() else { return builder };
    let builder = builder.task_store(redis.task_store());
    match redis.shared_secret("request-state").await {
        Ok(bytes) => builder.request_state_key(typed_mcp::multi_round::state::StateKey::from_bytes(bytes)),
        Err(e) => exit_with(&format!("--redis / REDIS_URL: cannot agree on the request-state key: {e}")),
    }
}

/// Serves `server` over Streamable HTTP on `127.0.0.1:<port>/mcp` when a port is given
/// (`--port N` or `PORT`), else over stdio. With `--redis URL` (or `REDIS_URL`) as well, the
/// endpoint is one instance of a deployment sharing its sessions through that Redis.
///
/// Over stdio, when standard input is a terminal (a person started the program, not a host),
/// it first prints to stderr what the program is and how to try it ([`stdio_banner`]); through
/// a pipe it prints nothing but JSON-RPC on stdout.
///
/// A port that is taken ends the program with one line naming the flag.
pub async fn serve(server: Server) -> Result<(), Box<dyn std::error::Error>> {
    match port_option("port", "PORT", None)? {
        Some(port) => {
            let listener = bind(port, "--port / PORT").await;
            serve_http_on(&server, listener).await?
        }
        None => {
            if std::io::stdin().is_terminal() {
                eprint!("{}", stdio_banner(&server.info().name, &std::env::args().collect::<Vec<_>>()));
            }
            server.serve_stdio().await?
        }
    }
    Ok(())
}

/// Serves `server` over Streamable HTTP at `/mcp` on `listener` (loopback, so the default
/// `Host`/`Origin` checks apply) until Ctrl-C.
pub async fn serve_http_on(server: &Server, listener: tokio::net::TcpListener) -> std::io::Result<()> {
    let address = listener.local_addr()?;
    tracing::info!(%address, "serving MCP over Streamable HTTP at /mcp");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let mut config = typed_mcp::transport::http::HttpConfig::default();
    if let Some(redis) = redis() {
        let backplane = redis.backplane(format!("http://{address}/mcp"));
        tracing::info!(instance = backplane.instance(), "sharing sessions through Redis");
        config = config.backplane(backplane);
    }
    server.streamable_http(config).serve(listener, shutdown).await
}

/// Binds `127.0.0.1:port`. When that fails (most often because the port is taken), prints one
/// line naming `flag` and exits with status 2.
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

/// What a stdio example tells a person who started it in a terminal: that it waits for an MCP
/// client on stdin and stdout, how to try it with the MCP Inspector, and what to put into a
/// desktop host's server list. `args` is the command line (program first) it was started with.
pub fn stdio_banner(name: &str, args: &[String]) -> String {
    let program = std::env::current_exe()
        .ok()
        .map(|path| path.display().to_string())
        .or_else(|| args.first().cloned())
        .unwrap_or_else(|| name.to_owned());
    let command: Vec<String> = std::iter::once(program).chain(args.iter().skip(1).cloned()).collect();
    let shell = command.iter().map(|word| shell_word(word)).collect::<Vec<_>>().join(" ");
    let host_entry = serde_json::json!({"mcpServers": {name: {"command": command[0], "args": &command[1..]}}});
    format!(
        "{name}: an MCP server speaking JSON-RPC on stdin/stdout. It waits for an MCP client, not for typing.\n\
         Try it with the MCP Inspector (Node.js 22.19 or newer):\n\
         \x20 web UI:    npx {INSPECTOR} {shell}\n\
         \x20 one call:  npx {INSPECTOR} --cli {shell} --method tools/list\n\
         \x20 forms too: npx -p {INSPECTOR} mcpdo connect {shell}\n\
         \x20 (--protocol-era modern, or mcpdo connect --era modern, speaks the 2026-07-28 protocol)\n\
         In a desktop host, add it to the server list (Claude Desktop: claude_desktop_config.json):\n\
         \x20 {host_entry}\n\
         Press Ctrl-D to quit.\n"
    )
}

/// `word` as one word for a POSIX shell: as it stands when that is safe, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', "'\\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_names_the_program_the_inspector_and_a_host_entry() {
        let banner = stdio_banner("demo", &["/opt/demo".to_owned(), "--flag".to_owned(), "a b".to_owned()]);
        let exe = std::env::current_exe().unwrap().display().to_string();
        assert!(banner.starts_with("demo: an MCP server"), "{banner}");
        assert!(banner.contains(&format!("npx {INSPECTOR} --cli {exe} --flag 'a b' --method tools/list")), "{banner}");
        let entry = banner.lines().find(|line| line.trim_start().starts_with('{')).expect("a JSON line");
        let entry: serde_json::Value = serde_json::from_str(entry.trim()).expect("the host entry is JSON");
        assert_eq!(entry["mcpServers"]["demo"]["command"], exe.as_str());
        assert_eq!(entry["mcpServers"]["demo"]["args"], serde_json::json!(["--flag", "a b"]));
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("/usr/bin/x"), "/usr/bin/x");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
