//! The elicitation server: tools that ask the user for input in the middle of a call.
//!
//! Run it with `cargo run -p examples --bin elicitation`; the host must support elicitation.

use mcp_core::prelude::*;
use serde::Deserialize;

/// A front-end framework for a new project.
#[derive(Debug, Deserialize, Elicit)]
#[serde(rename_all = "lowercase")]
enum Framework {
    React,
    Vue,
    Angular,
    // No framework: plain HTML and JavaScript.
    #[serde(rename = "none")]
    Plain,
}

impl Framework {
    fn name(&self) -> &'static str {
        match self {
            Framework::React => "react",
            Framework::Vue => "vue",
            Framework::Angular => "angular",
            Framework::Plain => "none",
        }
    }
}

/// What `create_project` asks for.
#[derive(Debug, Deserialize, Elicit)]
#[serde(rename_all = "camelCase")]
struct ProjectDetails {
    /// Name of the project.
    #[elicit(min_length = 1)]
    project_name: String,
    /// Front-end framework to use.
    framework: Option<Framework>,
    /// Include a test setup.
    #[elicit(default = true)]
    include_tests: bool,
}

/// What `process_data` asks before handling a large input.
#[derive(Debug, Deserialize, Elicit)]
struct Confirmation {
    /// Process the data anyway?
    proceed: bool,
}

/// Creates a new project, asking the user for its details.
#[tool]
async fn create_project(ctx: Context) -> Result<String, String> {
    match ctx.elicit::<ProjectDetails>("Please provide the project details.").await {
        Ok(Elicitation::Accept(details)) => {
            let framework = details.framework.as_ref().map_or("none", Framework::name);
            tracing::info!(project = %details.project_name, framework, tests = details.include_tests, "creating a project");
            Ok(format!("Created project '{}' with framework: {framework}", details.project_name))
        }
        Ok(Elicitation::Decline) => Ok("The user declined to provide project details; no project was created.".into()),
        Ok(Elicitation::Cancel) => Err("The user cancelled project creation.".into()),
        Err(e) => Err(format!("Could not ask for the project details: {e}")),
    }
}

/// Processes data, asking for confirmation first when it is large (over 100 characters).
///
/// # Arguments
/// * `data` - The data to process.
#[tool]
async fn process_data(ctx: Context, data: String) -> Result<String, String> {
    let length = data.chars().count();
    if length > 100 {
        let question = format!("The data is {length} characters long. Process it anyway?");
        let answer =
            ctx.elicit::<Confirmation>(question).await.map_err(|e| format!("Could not ask for confirmation: {e}"))?;
        if !answer.accepted().is_some_and(|c| c.proceed) {
            return Ok("Processing cancelled by the user.".into());
        }
    }
    Ok(format!("Processed {length} characters"))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    examples::init_logging();
    let server = Server::builder("elicitation", env!("CARGO_PKG_VERSION"))
        .title("Elicitation examples")
        .enable_elicitation()
        .tools(tools![create_project, process_data])
        .build()?;
    server.serve_stdio().await?;
    Ok(())
}
