//! A test server for the backplane tests: small surfaces that the examples do not combine with
//! a Redis deployment, served on `--port N`, sharing sessions through `--redis URL`.
//!
//! - `--surface quickstart` (the default): the `quickstart` example's tools, named `quickstart`,
//!   for the pinned clients' quickstart checks across three instances;
//! - `--surface notes`: `write_note`, which announces an update of the resource
//!   `notes://{name}`, with resource subscriptions, named `notes`, for the tests of event
//!   streams resumed on another instance.

use typed_mcp::prelude::*;

#[allow(dead_code)]
#[path = "../../../examples/src/bin/quickstart.rs"]
mod quickstart;

use quickstart::{add, echo, stats};

/// Announces that note `name` changed (the notes themselves are kept nowhere: only the
/// announcements cross instances).
///
/// # Arguments
/// * `name` - The note.
/// * `text` - Its new text.
#[tool]
async fn write_note(ctx: Context, name: String, text: String) -> String {
    let _ = text;
    ctx.server_handle().notify_resource_updated(&format!("notes://{name}")).await;
    format!("saved `{name}`")
}

/// A note (its text is its name).
#[resource("notes://{name}", name = "note", mime_type = "text/plain")]
fn note(name: String) -> Option<String> {
    Some(name)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tests::programs::init_logging();
    let builder = match tests::programs::option("surface", "SURFACE").as_deref() {
        None | Some("quickstart") => Server::builder("quickstart", env!("CARGO_PKG_VERSION"))
            .title("Quickstart")
            .instructions("Arithmetic and text helpers: `add`, `echo` and `text_stats`.")
            .tools(tools![add, echo, stats]),
        Some("notes") => Server::builder("notes", env!("CARGO_PKG_VERSION"))
            .tools(tools![write_note])
            .resources(resources![note])
            .resource_subscriptions(),
        Some(other) => tests::programs::exit_with(&format!("--surface: `{other}` is not quickstart or notes")),
    };
    let server = tests::programs::shared_state_key(builder).await.build()?;
    tests::programs::serve(server).await
}
