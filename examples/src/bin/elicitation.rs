//! Your first elicitation: `create_project` asks the user for a form (accept, decline or
//! cancel) and `process_data` asks for a confirmation, only when its input is long.
//!
//! Run it with `cargo run -p examples --bin elicitation`: it speaks stdio, for any MCP host
//! that supports elicitation.

use schemars::JsonSchema;
use serde::Deserialize;
use typed_mcp::prelude::*;

/// A front-end framework.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
enum Framework {
    React,
    Vue,
    Angular,
    Svelte,
}

/// What `create_project` asks for.
#[derive(Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
struct ProjectDetails {
    /// Name of the project.
    #[schemars(length(min = 1))]
    project_name: String,
    /// What the project is for.
    description: Option<String>,
    /// Front-end framework to use.
    framework: Framework,
    /// Use TypeScript.
    #[serde(default)]
    typescript: bool,
}

/// Creates a new project, asking the user for its details.
#[tool]
async fn create_project(ctx: Context) -> Result<String, String> {
    match ctx.elicit::<ProjectDetails>("Please provide the project details.").await {
        Ok(Elicitation::Accept(p)) => {
            let framework = format!("{:?}", p.framework).to_lowercase();
            let language = if p.typescript { "TypeScript" } else { "JavaScript" };
            let about = p.description.map(|d| format!(": {d}")).unwrap_or_default();
            Ok(format!("Created project '{}' with framework: {framework} ({language}){about}", p.project_name))
        }
        Ok(Elicitation::Decline) => Ok("The user declined; no project was created.".into()),
        Ok(Elicitation::Cancel) => Err("The user cancelled project creation.".into()),
        Err(e) => Err(format!("Could not ask for the project details: {e}")),
    }
}

/// Processes data, asking for confirmation first when it is over 100 characters long.
///
/// # Arguments
/// * `data` - The data to process.
#[tool]
async fn process_data(ctx: Context, data: String) -> Result<String, ElicitError> {
    let length = data.chars().count();
    if length > 100 && !ctx.confirm(format!("The data is {length} characters long. Process it anyway?")).await? {
        return Ok("Processing cancelled by the user.".into());
    }
    Ok(format!("Processed {length} characters"))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("elicitation", "1.0.0").tools(tools![create_project, process_data]).build()?;
    server.serve_stdio().await?;
    Ok(())
}
