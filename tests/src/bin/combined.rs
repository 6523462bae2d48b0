//! The test server with the whole surface the `elicitation` example had before it was split
//! into `elicitation`, `url_elicitation`, `tasks` and `shared`: forms (`create_project`,
//! `create_project_from`, `process_data`), URL mode (`auth_via_url`, `protected_action`, the page
//! on `--url-port`), a task (`deploy`), over stdio or Streamable HTTP (`--port`), alone or as one
//! instance of a Redis deployment (`--redis`). It names itself `elicitation`, as the interop
//! scripts and the bad-input catalog that drive it expect.
//!
//! The tools and the page are the examples' own: their files are modules of this program, so
//! what the tests drive here is what the examples serve.
//!
//! The tests that cross these features in one session (the HTTP interop scripts, the bad-input
//! catalog, the backplane tests of URL flows and of the pinned clients across instances) start
//! it; the examples themselves are tested on their own.

use std::sync::Arc;

use typed_mcp::prelude::*;

#[allow(dead_code)]
#[path = "../../../examples/src/bin/elicitation.rs"]
mod elicitation;
#[allow(dead_code)]
#[path = "../../../examples/src/bin/tasks.rs"]
mod tasks;
#[allow(dead_code)]
#[path = "../../../examples/src/bin/url_elicitation.rs"]
mod url_elicitation;

use elicitation::{Framework, ProjectDetails, create_project, process_data};
use tasks::deploy;
use url_elicitation::{AuthPage, auth_via_url, page_listener, page_routes, protected_action};

/// Creates a new project from details given as the call's arguments (the fields of the form
/// `create_project` asks for), without asking. Its input schema is schemars' full JSON Schema
/// of the form's type.
#[tool]
fn create_project_from(details: Params<ProjectDetails>) -> String {
    let framework = format!("{:?}", details.0.framework.unwrap_or(Framework::None)).to_lowercase();
    format!("Created project '{}' with framework: {framework}", details.0.project_name)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tests::programs::init_logging();
    let listener = page_listener().await.unwrap_or_else(|e| tests::programs::exit_with(&e));
    let address = listener.local_addr()?;
    tracing::info!("authorization page on http://{address}/auth");
    let page = Arc::new(AuthPage::new(format!("http://{address}")));

    let builder = Server::builder("elicitation", env!("CARGO_PKG_VERSION"))
        .title("Elicitation examples")
        .tools(tools![create_project, create_project_from, process_data, auth_via_url, protected_action, deploy])
        .state_arc(page.clone());
    let server = tests::programs::shared_state_key(builder).await.build()?;

    let app = page_routes(server.url_elicitations().clone(), page);
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "the authorization page stopped");
        }
    });
    // The page's authorizations are kept in this process, by session: the flow and the action
    // checking it run where the session is owned.
    tests::programs::serve_keeping_on_owner(server, &["auth_via_url", "protected_action"]).await
}
