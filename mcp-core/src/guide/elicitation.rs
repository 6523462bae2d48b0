//! # Asking the user: elicitation
//!
//! A tool asks the person at the host for more input in the middle of a call: a form whose
//! fields are a Rust type's, or a page of yours to visit (URL mode). There is nothing to switch
//! on: any tool that takes a [`Context`](crate::Context) may ask, and the question goes to
//! every client that declared the `elicitation` capability. The whole program this chapter
//! grows from is the repository's `examples/src/bin/elicitation.rs`, shown in the README.
//!
//! ```rust
//! use typed_mcp::prelude::*;
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema, Elicit)]
//! #[serde(rename_all = "camelCase")]
//! struct ProjectDetails {
//!     /// Name of the project.
//!     #[schemars(length(min = 1, max = 64))]
//!     project_name: String,
//!     /// Where to send the invitation.
//!     #[schemars(email)]
//!     owner: Option<String>,
//!     /// Include a test setup.
//!     #[serde(default = "yes")]
//!     include_tests: bool,
//! }
//!
//! fn yes() -> bool {
//!     true
//! }
//!
//! #[tool]
//! async fn create_project(ctx: Context) -> Result<String, String> {
//!     match ctx.elicit::<ProjectDetails>("Please provide the project details.").await {
//!         Ok(Elicitation::Accept(p)) => Ok(format!("Created project '{}'", p.project_name)),
//!         Ok(Elicitation::Decline) => Ok("The user declined.".into()),
//!         Ok(Elicitation::Cancel) => Err("The user cancelled.".into()),
//!         Err(e) => Err(e.to_string()),
//!     }
//! }
//!
//! let server = Server::builder("projects", "1.0.0")
//!     // Optional: how long a user has to answer (10 minutes unless set; `.timeout(d)` per question).
//!     .elicitation_timeout(std::time::Duration::from_secs(300))
//!     .tools(tools![create_project])
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```
//!
//! - The form's `requestedSchema` is what schemars generates for the type (so serde's names and
//!   defaults, doc comments and `#[schemars(title, description, length, range, email, url,
//!   extend("format" = …))]` all apply), turned into exactly MCP's restricted subset by
//!   `typed_mcp::elicit::FormTransform` (flat object; strings with length and format, numbers,
//!   booleans, single- and multi-select enums in all three spellings, defaults; `Option<T>` is
//!   optional, not nullable), checked and written once per type. The same struct can also be a
//!   tool's input, where it gets full JSON Schema.
//! - A field that cannot be a form field (a nested struct, a map, `Vec<String>`…), a field whose
//!   name looks like a password, API key or token, and a schemars attribute MCP forms cannot
//!   express (`regex`, `contains`, `inner`…) are compile errors at that field.
//! - `#[elicit(…)]` is only for what schemars cannot say: on an enum, `style = "plain" | "titled"
//!   | "enum_names"` (how the options are spelled) and on a variant `title = "…"` (an option's
//!   label; `#[schemars(title)]` or a doc comment also work); on a field, `style` and
//!   `not_secret` (a name that only looks like a secret).
//! - The answer is validated against the exact schema that was sent (after filling in defaults)
//!   before it is deserialized; a client that sends something else gets you
//!   `ElicitError::InvalidResponse` naming the field and the rule.
//! - Nothing is sent to a client that did not declare the capability (`ElicitError::NotSupported`);
//!   `ctx.can_elicit()` lets a tool degrade gracefully. Waits time out (10 minutes by default,
//!   `.timeout(d)` per call) and end at once when the tool call is cancelled.
//! - Shorthands: `ctx.confirm(msg)`, `ctx.elicit_value::<T>(msg)`, `ctx.choose(msg, options)`;
//!   `ctx.elicit_raw(params, timeout)` for schemas built at run time.
//! - URL mode: `ctx.elicit_url("https://…/connect?flow={elicitationId}", msg)` sends the user to a
//!   page of yours; the id (128 random bits) is owned by the session that asked, and
//!   `server.url_elicitations().complete(id)` notifies that session only. Return
//!   `UrlElicitationRequired` from a tool to answer with error -32042. A client that did not
//!   declare URL mode is never sent a flow, in either era: it gets -32021 naming
//!   `elicitation.url`, and no completion notification. Never put secrets in a URL, and on your
//!   page check that the person completing the flow is the user it was created for, and complete
//!   it only when they press a button (a POST): a link previewer fetches the page on its own (see
//!   `examples/src/bin/url_elicitation.rs`).
