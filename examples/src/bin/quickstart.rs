//! The quickstart server: tools from plain functions (`add`, `echo`, and `text_stats` with
//! structured output), over stdio or Streamable HTTP from one `main`. It needs typed-mcp's
//! features `http` and `otel-otlp`, besides the default ones.
//!
//! Run it with `cargo run -p examples --bin quickstart` and point any MCP host at that command,
//! or start it with `--port N` (or `PORT=N`) to serve Streamable HTTP at
//! `http://127.0.0.1:N/mcp` instead. Logs go to stderr (`RUST_LOG`, default `info`).
//!
//! Try it, from the repository's root after `cargo build -p examples`:
//!
//! ```sh
//! npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/quickstart --method tools/call --tool-name add --tool-arg a=2 b=40
//! ```
//!
//! prints the tool's answer, `"42"`.

use std::io::IsTerminal;

use schemars::JsonSchema;
use serde::Serialize;
use tracing_subscriber::EnvFilter;
use typed_mcp::prelude::*;

/// Adds two integers and returns the sum.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(read_only, idempotent)]
pub(crate) async fn add(a: i64, b: i64) -> Result<i64, String> {
    a.checked_add(b).ok_or_else(|| format!("{a} + {b} overflows a 64-bit integer"))
}

/// Returns the text it is given.
///
/// # Arguments
/// * `text` - The text to send back.
#[tool(read_only, idempotent)]
pub(crate) fn echo(text: String) -> String {
    text
}

/// Statistics about a piece of text.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct TextStats {
    /// Number of characters.
    characters: usize,
    /// Number of whitespace-separated words.
    words: usize,
    /// Number of lines.
    lines: usize,
}

/// Counts the characters, words and lines of a text, as structured output.
///
/// # Arguments
/// * `text` - The text to measure.
#[tool(name = "text_stats", title = "Text statistics", read_only, idempotent)]
pub(crate) fn stats(text: String) -> Json<TextStats> {
    Json(TextStats {
        characters: text.chars().count(),
        words: text.split_whitespace().count(),
        lines: text.lines().count(),
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs go to stderr: over stdio, stdout carries the protocol.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .init();
    // Traces and metrics go over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (the other
    // standard OTEL_* variables apply), and are flushed when the program stops.
    let otlp = typed_mcp::telemetry::otlp_from_env()?;
    let mut builder = Server::builder("quickstart", env!("CARGO_PKG_VERSION"))
        .title("Quickstart")
        .instructions("Arithmetic and text helpers: `add`, `echo` and `text_stats`.")
        .tools(tools![add, echo, stats]);
    if let Some(otlp) = &otlp {
        builder = builder.telemetry(otlp.telemetry());
    }
    let server = builder.build()?;
    // `--port N` (or `PORT`): Streamable HTTP at http://127.0.0.1:N/mcp; otherwise stdio.
    tokio::select! {
        served = server.serve_stdio_or_http() => served?,
        () = typed_mcp::telemetry::shutdown_signal() => {}
    }
    drop(otlp);
    Ok(())
}
