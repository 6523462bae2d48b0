//! Your first elicitation: `create_project` asks the user for the project's details in a form
//! (accept, decline or cancel), and `process_data` asks for a confirmation, only when its input
//! is over 100 characters long. It needs typed-mcp's feature `http`, besides the default ones.
//!
//! Run it with `cargo run -p examples --bin elicitation`: stdio, for any MCP host that supports
//! elicitation; `--port N` (or `PORT=N`) serves Streamable HTTP at `http://127.0.0.1:N/mcp`.
//! Logs go to stderr (`RUST_LOG`, default `info`). Try it after `cargo build -p examples`:
//! `npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/elicitation --method tools/call
//! --tool-name process_data --tool-arg data=hello` answers `Processed 5 characters`; the form of
//! `create_project` is answered with `mcpdo`, as the repository's README shows ("Try it").

use std::io::IsTerminal;

use schemars::JsonSchema;
use serde::Deserialize;
use tracing_subscriber::EnvFilter;
use typed_mcp::prelude::*;

/// A front-end framework.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Framework {
    React,
    Vue,
    Angular,
    None,
}

/// The form `create_project` asks the user to fill in.
#[derive(Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProjectDetails {
    /// Project name.
    #[schemars(length(min = 1))]
    pub(crate) project_name: String,
    /// Front-end framework to use.
    pub(crate) framework: Option<Framework>,
    /// Include a test setup.
    #[serde(default = "yes")]
    pub(crate) include_tests: bool,
}

/// Tests are set up unless the user says otherwise.
fn yes() -> bool {
    true
}

/// What `process_data` asks before it handles long input.
#[derive(Deserialize, JsonSchema, Elicit)]
pub(crate) struct Confirmation {
    /// Whether to go on with the processing.
    pub(crate) proceed: bool,
}

/// Creates a new project with the configuration the user gives.
#[tool]
pub(crate) async fn create_project(ctx: Context) -> Result<String, String> {
    match ctx.elicit::<ProjectDetails>("Please provide the project details.").await {
        Ok(Elicitation::Accept(details)) => {
            let framework = format!("{:?}", details.framework.unwrap_or(Framework::None)).to_lowercase();
            tracing::info!(project = %details.project_name, %framework, tests = details.include_tests, "creating");
            Ok(format!("Created project '{}' with framework: {framework}", details.project_name))
        }
        Ok(Elicitation::Decline) => Ok("Project creation cancelled: the user declined.".into()),
        Ok(Elicitation::Cancel) => Err("Project creation cancelled by the user.".into()),
        Err(e) => Err(format!("Could not ask for the project details: {e}")),
    }
}

/// Processes data, asking for confirmation first when it is over 100 characters long.
///
/// # Arguments
/// * `data` - The data to process.
#[tool]
pub(crate) async fn process_data(ctx: Context, data: String) -> Result<String, String> {
    let length = data.chars().count();
    if length > 100 {
        let question = format!("The data is {length} characters long. Continue?");
        let answer = ctx.elicit::<Confirmation>(question).await;
        match answer.map_err(|e| format!("Could not ask for confirmation: {e}"))? {
            Elicitation::Accept(Confirmation { proceed: true }) => {}
            Elicitation::Accept(_) => return Ok("The user chose not to proceed.".into()),
            Elicitation::Decline | Elicitation::Cancel => return Ok("Processing cancelled by the user.".into()),
        }
    }
    Ok(format!("Processed {length} characters"))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs go to stderr: over stdio, stdout carries the protocol.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .init();
    let server = Server::builder("elicitation", "1.0.0").tools(tools![create_project, process_data]).build()?;
    // `--port N` (or `PORT`): Streamable HTTP at http://127.0.0.1:N/mcp; otherwise stdio.
    server.serve_stdio_or_http().await?;
    Ok(())
}
