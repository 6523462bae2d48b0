//! A long-running tool as a task: `deploy` builds a service, asks the user to confirm half-way,
//! then deploys it.
//!
//! A client that negotiated the tasks extension of revision 2026-07-28
//! (`io.modelcontextprotocol/tasks`) gets a task at once and polls it with `tasks/get`; the
//! confirmation waits in the task's `inputRequests` (status `input_required`) until the client
//! answers it with `tasks/update`, and the build is not done again. Other clients see an
//! ordinary call that asks a question. It needs typed-mcp's features `http` and `otel-otlp`,
//! besides the default ones.
//!
//! Run it with `cargo run -p examples --bin tasks` (stdio), or start it with `--port N` (or
//! `PORT=N`) to serve Streamable HTTP at `http://127.0.0.1:N/mcp`.
//!
//! Try it, from the repository's root after `cargo build -p examples`:
//!
//! ```sh
//! npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/tasks --method tools/list
//! ```
//!
//! lists `deploy` with `"taskSupport": "optional"`: a client may run it as a task or not.

use std::time::Duration;

use typed_mcp::prelude::*;

/// Builds a service, asks the user to confirm once it is built, then deploys it.
///
/// # Arguments
/// * `service` - The service to deploy.
#[tool(destructive, task = "optional")]
pub(crate) async fn deploy(ctx: Context, service: String) -> Result<String, ElicitError> {
    // Building takes a while.
    tokio::time::sleep(Duration::from_millis(200)).await;
    // `key` names the question in the task's `inputRequests`.
    let go = ctx.confirm(format!("{service} is built. Deploy it to production?")).key("deploy").await?;
    if !go {
        return Ok(format!("{service} was built but not deployed."));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Deployed {service} to production."))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Traces and metrics go over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (the other
    // standard OTEL_* variables apply), and are flushed when the program stops.
    let otlp = typed_mcp::telemetry::otlp_from_env()?;
    let server = Server::builder("tasks", env!("CARGO_PKG_VERSION"))
        .title("Tasks")
        // How long a finished task's result is kept, and how often clients should poll.
        .task_ttl(Some(Duration::from_secs(60 * 60)))
        .task_poll_interval(Duration::from_millis(500))
        .tools(tools![deploy])
        .telemetry(typed_mcp::telemetry::Telemetry::global())
        .build()?;
    // `--port N` (or `PORT`): Streamable HTTP at http://127.0.0.1:N/mcp; otherwise stdio.
    tokio::select! {
        served = server.serve_stdio_or_http() => served?,
        () = typed_mcp::telemetry::shutdown_signal() => {}
    }
    drop(otlp);
    Ok(())
}
