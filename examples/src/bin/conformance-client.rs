//! A client for the client scenarios of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`), written with `mcp_core::client`.
//!
//! The suite starts a test server for a scenario and runs this program with the server's URL as
//! the last argument and the scenario's name in `MCP_CONFORMANCE_SCENARIO`:
//!
//! ```sh
//! npx @modelcontextprotocol/conformance client --scenario tools_call \
//!     --command "cargo run -q -p examples --bin conformance-client"
//! ```
//!
//! Scenarios: `initialize`, `tools_call`, `elicitation-sep1034-client-defaults` (accepts every
//! form with nothing filled in, so the schema's defaults are what is sent), `sse-retry` and
//! `json-schema-2020-12-preservation`. The `auth/*` scenarios need OAuth, which this client does
//! not do: it reports that and exits with status 1. Logs go to stderr (`RUST_LOG`).

use std::error::Error;
use std::process::ExitCode;

use mcp_core::client::{Client, ClientBuilder, ElicitationModes, elicitation_fn};
use mcp_core::protocol::ElicitResult;
use serde_json::json;

fn client() -> ClientBuilder {
    Client::builder("mcp-sdk-conformance-client", env!("CARGO_PKG_VERSION"))
}

/// Connects, lists the tools, and calls the first with `{a, b}` (the suite's `add_numbers`).
async fn tools_call(url: &str) -> Result<(), Box<dyn Error>> {
    let client = client().connect_http(url).await?;
    let tools = client.list_all_tools().await?;
    if let Some(tool) = tools.first() {
        let result = client.call_tool(&tool.name, json!({"a": 2, "b": 3})).await?;
        tracing::info!(tool = %tool.name, ?result, "called");
    }
    client.close().await;
    Ok(())
}

/// Connects, lists the tools, and closes.
async fn initialize(url: &str) -> Result<(), Box<dyn Error>> {
    let client = client().connect_http(url).await?;
    tracing::info!(server = ?client.server_info(), version = client.protocol_version(), "initialized");
    client.list_tools(None).await?;
    client.close().await;
    Ok(())
}

/// Accepts the server's form without filling anything in: the client completes the content
/// with the schema's defaults before sending it (SEP-1034).
async fn elicitation_defaults(url: &str) -> Result<(), Box<dyn Error>> {
    let accept_untouched = elicitation_fn(ElicitationModes::FORM, |request| async move {
        tracing::info!(message = request.message(), "elicitation request; accepting the defaults");
        ElicitResult::accept(Default::default())
    });
    let client = client().elicitation(accept_untouched).connect_http(url).await?;
    let tools = client.list_all_tools().await?;
    let name = "test_client_elicitation_defaults";
    if !tools.iter().any(|t| t.name == name) {
        return Err(format!("the server does not offer `{name}`").into());
    }
    let result = client.call_tool(name, json!({})).await?;
    tracing::info!(?result, "called");
    client.close().await;
    Ok(())
}

/// Calls the tool whose response stream the server closes early; the transport resumes it
/// with `GET` and `Last-Event-ID` after the server's `retry` delay.
async fn sse_retry(url: &str) -> Result<(), Box<dyn Error>> {
    let client = client().connect_http(url).await?;
    let tools = client.list_all_tools().await?;
    let tool = tools.first().ok_or("the server offers no tool")?;
    let result = client.call_tool(&tool.name, json!({})).await?;
    tracing::info!(?result, "called");
    client.close().await;
    Ok(())
}

/// Echoes the focal tool's input schema back exactly as received.
async fn schema_preservation(url: &str) -> Result<(), Box<dyn Error>> {
    let client = client().connect_http(url).await?;
    let tools = client.list_all_tools().await?;
    let focal = tools.iter().find(|t| t.name == "json_schema_2020_12_tool").ok_or("no focal tool")?;
    client.call_tool("json_schema_echo", json!({"schema": focal.input_schema})).await?;
    client.close().await;
    Ok(())
}

async fn run(scenario: &str, url: &str) -> Result<(), Box<dyn Error>> {
    match scenario {
        "initialize" => initialize(url).await,
        "tools_call" | "tools-call" => tools_call(url).await,
        "elicitation-sep1034-client-defaults" | "elicitation-defaults" => elicitation_defaults(url).await,
        "sse-retry" => sse_retry(url).await,
        "json-schema-2020-12-preservation" => schema_preservation(url).await,
        s if s.starts_with("auth/") => Err(format!("scenario `{s}` needs OAuth, which this client does not do").into()),
        s => Err(format!("unknown scenario `{s}`").into()),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    examples::init_logging();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance-client <server-url>   (with MCP_CONFORMANCE_SCENARIO set)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&scenario, &url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client: {scenario}: {e}");
            ExitCode::FAILURE
        }
    }
}
