//! A server run for others: every request audited, each caller rate-limited, traces and
//! metrics over OTLP. Nothing of it touches the tools themselves: it is middleware around them.
//! It needs typed-mcp's features `http` and `otel-otlp`, besides the default ones.
//!
//! ```sh
//! cargo run -p examples --bin audited -- --audit-log audit.jsonl --rate 60
//! ```
//!
//! - `--audit-log FILE` (or `AUDIT_LOG`): one JSON line per request (time, method, what it was
//!   about, who asked, from where, how it ended, how long it took); without it, lines go to
//!   stderr.
//! - `--rate N` (or `RATE_LIMIT`): at most N tool calls per minute per caller (the verified
//!   user, else the session, else the client's address), bursts of N; the call over the limit
//!   is answered with error -32029 and `data.retryAfterMs`. Default 60.
//! - `OTEL_EXPORTER_OTLP_ENDPOINT` (and the other standard `OTEL_*` variables): traces and
//!   metrics over OTLP.
//! - `--port N` (or `PORT=N`): Streamable HTTP at `http://127.0.0.1:N/mcp`; otherwise stdio.
//!
//! Try it, from the repository's root after `cargo build -p examples`:
//!
//! ```sh
//! npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/audited --method tools/call --tool-name echo --tool-arg text=hi
//! ```
//!
//! prints the Inspector's result, `hi`, and on stderr the server's audit line for each request,
//! the call's with `"method":"tools/call"` and `"target":"echo"`.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use typed_mcp::middleware::{self, Incoming, Next, RateLimit};
use typed_mcp::prelude::*;
use typed_mcp::protocol::Method;
use typed_mcp::telemetry::{Telemetry, otlp_from_env, shutdown_signal};

/// Returns the text it is given.
///
/// # Arguments
/// * `text` - The text to send back.
#[tool(read_only, idempotent)]
fn echo(text: String) -> String {
    text
}

/// Deletes a document (pretends to).
///
/// # Arguments
/// * `name` - The document.
#[tool(destructive)]
fn delete_document(name: String) -> Result<String, String> {
    if name.is_empty() {
        return Err("name the document to delete".into());
    }
    Ok(format!("Deleted {name}."))
}

/// Where audit lines go.
type AuditLog = Arc<Mutex<Box<dyn Write + Send>>>;

/// The audit middleware: one JSON line per request, written once it has been answered.
fn audit(log: AuditLog) -> impl middleware::Middleware {
    middleware::from_fn(move |request: Incoming, next: Next| {
        let log = log.clone();
        async move {
            let started = Instant::now();
            let answer = next.run().await;
            let outcome = match &answer {
                Ok(result) if result.get().contains("\"isError\":true") => "tool_error".to_owned(),
                Ok(_) => "ok".to_owned(),
                Err(error) => error.code.to_string(),
            };
            let line = serde_json::json!({
                "time": SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
                "method": request.method(),
                "target": request.target(),
                "id": request.id().to_string(),
                "user": request.auth().map(|a| a.subject().to_owned()).or_else(|| request.principal().map(str::to_owned)),
                "session": request.session(),
                "from": request.http().and_then(|h| h.remote_address()).map(|a| a.to_string()),
                "outcome": outcome,
                "ms": started.elapsed().as_secs_f64() * 1000.0,
            });
            if let Ok(mut log) = log.lock() {
                let _ = writeln!(log, "{line}");
                let _ = log.flush();
            }
            answer
        }
    })
}

/// The value after `flag` on the command line, else the environment variable `env`.
fn option(flag: &str, env: &str) -> Option<String> {
    let mut args = std::env::args().skip_while(|a| a != flag);
    args.next().and_then(|_| args.next()).or_else(|| std::env::var(env).ok()).filter(|v| !v.is_empty())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let otlp = otlp_from_env()?;
    let log: Box<dyn Write + Send> = match option("--audit-log", "AUDIT_LOG") {
        Some(path) => Box::new(std::fs::OpenOptions::new().create(true).append(true).open(&path)?),
        None => Box::new(std::io::stderr()),
    };
    let rate: u32 = option("--rate", "RATE_LIMIT").map_or(Ok(60), |r| r.parse()).map_err(|_| "--rate: a number")?;
    let server = Server::builder("audited", env!("CARGO_PKG_VERSION"))
        .tools(tools![echo, delete_document])
        // Outermost first: refused calls are audited too.
        .middleware(audit(Arc::new(Mutex::new(log))))
        .middleware(RateLimit::new(rate, Duration::from_secs(60)).only_methods([Method::ToolsCall]))
        .telemetry(Telemetry::global())
        .build()?;
    tokio::select! {
        served = server.serve_stdio_or_http() => served?,
        () = shutdown_signal() => {}
    }
    drop(otlp);
    Ok(())
}
