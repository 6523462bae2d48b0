//! Every supported shape of `#[prompt]`, compiled under strict lints.
#![deny(warnings, missing_docs)]

use typed_mcp::prelude::*;

/// Shared settings.
pub struct Settings {
    /// The house style.
    pub style: String,
}

/// Reviews code.
///
/// # Arguments
/// * `code` - The code.
/// * `focus` - What to look at.
/// * `rounds` - How many rounds.
#[prompt(title = "Code review")]
pub fn review(code: String, focus: Option<String>, rounds: Option<u8>) -> String {
    format!("{code} {focus:?} {rounds:?}")
}

/// Writes with the house style.
#[prompt(name = "write")]
pub async fn write_prompt(
    ctx: Context,
    settings: State<Settings>,
    #[arg(rename = "topic", description = "What to write about.")] subject: String,
    strict: bool,
) -> Result<Vec<PromptMessage>, String> {
    let _ = ctx.request_id();
    Ok(vec![
        PromptMessage::user(format!("{subject} in {} ({strict})", settings.style)),
        PromptMessage::image(Role::User, &[0, 1], "image/png"),
    ])
}

/// A fixed prompt.
#[prompt]
pub fn fixed() -> GetPromptResult {
    GetPromptResult::new(vec![PromptMessage::assistant("Hi")]).with_description("Fixed")
}

/// Builds the server.
pub fn server() -> Result<Server, typed_mcp::BuildError> {
    Server::builder("p", "1")
        .state(Settings { style: "plain".into() })
        .prompts(prompts![review, write_prompt, fixed])
        .build()
}

fn main() {
    let _ = server();
}
