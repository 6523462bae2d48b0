//! # Resources, prompts, logging, completion, sampling and roots
//!
//! ```rust
//! use typed_mcp::prelude::*;
//! use typed_mcp::protocol::{CreateMessageParams, SamplingMessage};
//!
//! /// The project's readme.
//! #[resource("file:///README.md", mime_type = "text/markdown")]
//! fn readme() -> &'static str {
//!     "# Hello"
//! }
//!
//! /// One user's profile (`{id}` must be an argument of the function).
//! #[resource("users://{id}/profile", mime_type = "application/json")]
//! fn profile(id: u64) -> Option<String> {
//!     (id == 1).then(|| r#"{"name": "Ada"}"#.to_owned())
//! }
//!
//! /// Asks for a code review.
//! ///
//! /// # Arguments
//! /// * `code` - The code to review.
//! /// * `focus` - What to look at first.
//! #[prompt(title = "Code review")]
//! fn review(code: String, focus: Option<String>) -> Vec<PromptMessage> {
//!     let focus = focus.unwrap_or_else(|| "anything".into());
//!     vec![PromptMessage::user(format!("Review this code, focusing on {focus}:\n{code}"))]
//! }
//!
//! /// Asks the client's model for a haiku, logging as it goes.
//! #[tool]
//! async fn haiku(ctx: Context, topic: String) -> Result<String, typed_mcp::server::ClientRequestError> {
//!     ctx.info(format!("writing about {topic}")).await;
//!     let params = CreateMessageParams::new(vec![SamplingMessage::user(format!("A haiku about {topic}"))], 100);
//!     Ok(ctx.sample(params).await?.text().unwrap_or_default())
//! }
//!
//! fn server() -> Result<Server, typed_mcp::BuildError> {
//!     Server::builder("everything", "1.0.0")
//!         .resources(resources![readme, profile])
//!         .resource_subscriptions()
//!         .prompts(prompts![review])
//!         .complete_prompt_argument("review", "focus", Completer::values(["naming", "errors", "tests"]))
//!         .tools(tools![haiku])
//!         .build()
//! }
//! # fn main() { server().unwrap(); }
//! ```
//!
//! - Resources: a URI makes a static resource (`resources/list`), a URI template (RFC 6570:
//!   `{var}`, `{+path}`, `{#frag}`, `{.ext}`, `{/seg}`, `{?a,b}`) a template
//!   (`resources/templates/list`) whose variables are parsed into the arguments of the same name; a
//!   variable without an argument is a compile error naming it. Return text, bytes (`Vec<u8>`,
//!   `Blob`), `Json<T>`, `ResourceContents`, or `Option` (`None` is -32002 "Resource not found",
//!   as is any URI nothing serves). With `resource_subscriptions()`,
//!   `server.notify_resource_updated(uri)` reaches the sessions subscribed to it.
//! - Prompts: arguments are strings on the wire, parsed into the argument's type (`String`,
//!   numbers, `bool`, or your `ArgumentValue`), required unless `Option`. An unknown prompt or a
//!   missing required argument is -32602. Return text, `PromptMessage`s (text, image, embedded
//!   resource) or a `GetPromptResult`.
//! - Logging: each session has the level its client set with `logging/setLevel`; `ctx.log(level,
//!   data)`, `ctx.info(…)` and friends send `notifications/message` at or above it. Before the
//!   client sets a level nothing is sent, unless `ServerBuilder::default_log_level` chose one.
//! - Completion: `complete_prompt_argument` / `complete_template_variable` (or `.complete(…)` on a
//!   definition) register a `Completer`; the `completions` capability is declared only then, and
//!   answers are cut to MCP's 100 values with `total` and `hasMore`.
//! - Sampling and roots: `ctx.sample(params)` and `ctx.roots()` check the client's capabilities
//!   (`sampling`, `sampling.tools` for tool use, `roots`) and send nothing without them;
//!   `on_roots_list_changed(|session| async { … })` hears `notifications/roots/list_changed`.
//! - Lists: `page_size(n)` paginates every list with opaque cursors. `dynamic_tools()`,
//!   `dynamic_prompts()` and `dynamic_resources()` declare `listChanged` and allow
//!   `server.add_tool(…)`, `remove_prompt(…)`, `add_resource(…)`… at run time, each announced to
//!   every session. Capabilities follow what is registered. Without macros: `PromptDef::new`,
//!   `ResourceDef::new` and `ResourceDef::template`. The `notes` example shows all of it.
