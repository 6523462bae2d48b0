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
//! # Code before a question runs more than once (2026-07-28)
//!
//! In a 2025-11-25 session, a question waits for the answer and the handler runs once. In the
//! 2026-07-28 era there is no session to wait in: the question goes back to the client in an
//! `input_required` result, and the client sends the request again with the answer. **Each such
//! retry runs the handler again from the start**, and the questions it asked before are answered
//! from what the client has given so far (replayed), until one has no answer yet. A handler that
//! asks two questions one after the other runs its first part three times. So:
//!
//! - **Do side effects after the last question.** Ask everything first, then write, pay, send.
//!   Code before a question should only read, and decide from the arguments and earlier answers
//!   (which are the same on every run), not from the time or a counter.
//! - **Make what must happen once idempotent, or key it.** Even after the last question a client
//!   may resend its final retry; [`ctx.round_trip_id()`](crate::Context::round_trip_id) is the same
//!   in every round of one request and new for the next, so a side effect keyed by it runs once.
//!   The [`eras`](super::eras) chapter has a complete payment tool built this way.
//! - **Ask in the same order, or name the question.** Answers are matched to questions by the
//!   order they are asked in (`input-0`, `input-1`, …). A question asked only on some runs gets a
//!   stable name with `.key("…")` on `ctx.elicit`, `elicit_value`, `confirm`, `choose` and
//!   `elicit_url`.
//! - **Test it.** [`testing::assert_same_in_both_eras`](crate::testing::assert_same_in_both_eras)
//!   runs one test in both eras and fails, naming the difference, when a tool records a side
//!   effect before a question or asks different questions on replay (see
//!   [Testing your tools](super::testing)). [`multi_round`](crate::multi_round) has the protocol's
//!   details.
//!
//! ```rust
//! use typed_mcp::prelude::*;
//! use typed_mcp::testing::{self, Effects, ElicitationScript, ToolResultExt};
//! use serde_json::json;
//!
//! /// Deletes a branch, once the user confirms.
//! ///
//! /// # Arguments
//! /// * `branch` - The branch to delete.
//! #[tool(destructive)]
//! async fn delete_branch(ctx: Context, log: State<Effects>, branch: String) -> Result<String, ElicitError> {
//!     // Before the question: only reads and formats, so running it again is harmless.
//!     let question = format!("Delete the branch `{branch}`? This cannot be undone.");
//!     if !ctx.confirm(question).key("confirm-delete").await? {
//!         return Ok(format!("`{branch}` was kept."));
//!     }
//!     // After the last question: runs once per call, in either era.
//!     log.record(format!("deleted {branch}"));
//!     Ok(format!("`{branch}` was deleted."))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let text = testing::assert_same_in_both_eras(
//!     |effects| {
//!         let server = Server::builder("git", "1").state(effects.clone()).tools(tools![delete_branch]);
//!         (server.build().unwrap(), ElicitationScript::new().accept(json!({"confirm": true})))
//!     },
//!     |client| async move { client.call_tool("delete_branch", json!({"branch": "old"})).await.unwrap().text() },
//! )
//! .await;
//! assert_eq!(text, "`old` was deleted.");
//! # }
//! ```
//!
//! # A form and the schema the client sees
//!
//! The form's `requestedSchema` is what schemars generates for the type (so serde's names and
//! defaults, doc comments and `#[schemars(title, description, length, range, email, url,
//! extend("format" = …))]` all apply), turned into exactly MCP's restricted subset by
//! [`FormTransform`](crate::elicit::FormTransform): a flat object of strings, numbers, booleans
//! and choices. It is checked and written once per type, and
//! [`Elicit::form_schema`](crate::elicit::Elicit::form_schema) returns it, so a test can hold it
//! against the JSON it expects. Here is a richer form than the first one, and, asserted by this
//! doctest, the schema a client receives for it:
//!
//! ```rust
//! use typed_mcp::prelude::*;
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//!
//! /// A machine size: a single choice whose options have labels.
//! #[derive(Debug, Deserialize, JsonSchema, Elicit)]
//! #[serde(rename_all = "lowercase")]
//! enum Size {
//!     /// Small (2 vCPU)
//!     Small,
//!     /// Large (16 vCPU)
//!     Large,
//! }
//!
//! /// A region: plain options, so a list of them is a multiple choice.
//! #[derive(Debug, Deserialize, JsonSchema, Elicit)]
//! #[serde(rename_all = "lowercase")]
//! enum Region {
//!     Eu,
//!     Us,
//!     Asia,
//! }
//!
//! /// How to deploy a service.
//! #[derive(Debug, Deserialize, JsonSchema, Elicit)]
//! #[serde(rename_all = "camelCase")]
//! struct Deployment {
//!     /// Name of the service.
//!     #[schemars(length(min = 3, max = 40))]
//!     service: String,
//!     /// Who is paged when it fails.
//!     #[schemars(email)]
//!     on_call: Option<String>,
//!     /// Day of the release.
//!     #[schemars(extend("format" = "date"))]
//!     release_day: String,
//!     /// How many replicas to run.
//!     #[schemars(range(min = 1, max = 10))]
//!     replicas: u8,
//!     /// Monthly budget, in euros.
//!     budget: f64,
//!     /// Machine size.
//!     size: Size,
//!     /// Where to run it.
//!     #[schemars(length(min = 1))]
//!     regions: Vec<Region>,
//!     /// Roll back automatically on failure.
//!     #[serde(default = "yes")]
//!     rollback: bool,
//! }
//!
//! fn yes() -> bool {
//!     true
//! }
//!
//! let schema = Deployment::form_schema().unwrap().to_value();
//! assert_eq!(
//!     schema,
//!     json!({
//!         "type": "object",
//!         "properties": {
//!             "service": {"type": "string", "description": "Name of the service.", "minLength": 3, "maxLength": 40},
//!             "onCall": {"type": "string", "description": "Who is paged when it fails.", "format": "email"},
//!             "releaseDay": {"type": "string", "description": "Day of the release.", "format": "date"},
//!             "replicas": {"type": "integer", "description": "How many replicas to run.", "minimum": 1, "maximum": 10},
//!             "budget": {"type": "number", "description": "Monthly budget, in euros."},
//!             "size": {
//!                 "type": "string",
//!                 "description": "Machine size.",
//!                 "oneOf": [
//!                     {"const": "small", "title": "Small (2 vCPU)"},
//!                     {"const": "large", "title": "Large (16 vCPU)"}
//!                 ]
//!             },
//!             "regions": {
//!                 "type": "array",
//!                 "description": "Where to run it.",
//!                 "items": {"type": "string", "enum": ["eu", "us", "asia"]},
//!                 "minItems": 1
//!             },
//!             "rollback": {"type": "boolean", "description": "Roll back automatically on failure.", "default": true}
//!         },
//!         "required": ["service", "releaseDay", "replicas", "budget", "size", "regions"]
//!     })
//! );
//! ```
//!
//! `onCall` is optional because it is an `Option`, `rollback` because it has a default (a
//! client that leaves it out gets `true`, filled in before the answer is checked). The same
//! struct can also be a tool's input, where it gets full JSON Schema.
//!
//! ## Which Rust types become which fields
//!
//! Derived from the field kinds `typed_mcp::elicit` implements (`ElicitField`) and the compile
//! errors the repository's `tests/ui/elicit` cases pin down:
//!
//! | Rust field | form field | what shapes it |
//! | --- | --- | --- |
//! | `String` | `"type": "string"` | `#[schemars(length(min, max))]` → `minLength`/`maxLength`; `#[schemars(email)]` → `"format": "email"`, `#[schemars(url)]` → `"uri"`, `#[schemars(extend("format" = "date"))]` or `"date-time"` |
//! | `i8`, `i16`, `i32`, `u8`, `u16`, `u32` | `"type": "integer"`, with the type's own `minimum`/`maximum` | `#[schemars(range(min, max))]` narrows them; a bound the type cannot hold is a compile error |
//! | `i64`, `isize`; `u64`, `usize` | `"type": "integer"` (unsigned: `"minimum": 0`) | 64-bit bounds are left out, since many clients hold numbers as doubles; `range` sets your own |
//! | `f32`, `f64` | `"type": "number"` | `range` |
//! | `bool` | `"type": "boolean"` | `#[serde(default)]` or `#[serde(default = "path")]` → `"default"` |
//! | a unit-only enum with `#[derive(Elicit)]` | single choice: `"type": "string"` with `"enum"`, or `"oneOf"` of `{const, title}` when an option has a label | variant doc comment, `#[schemars(title)]` or `#[elicit(title)]` → the label; `#[serde(rename_all)]` → the values; `#[elicit(style = "plain" \| "titled" \| "enum_names")]` picks the spelling |
//! | `Vec<E>` of such an enum | multiple choice: `"type": "array"` whose `items` are the options (`"enum"`, or `"anyOf"` with labels) | `length(min, max)` → `minItems`/`maxItems`; `enum_names` has no multi-select spelling (compile error) |
//! | `Option<T>` of any of these | the same field, not in `required` | never nullable |
//! | any field with a default | not in `required`, with `"default"` | `#[serde(default)]`, `#[serde(default = "path")]`, `#[schemars(extend("default" = …))]` |
//!
//! Refused at compile time, at the offending field or attribute:
//!
//! - field types that are no form field: a nested struct, a `HashMap`, a tuple, an enum whose
//!   variants carry data, `Vec<String>`, `Vec<i32>` (a list of anything but a `#[derive(Elicit)]`
//!   enum); the message says MCP forms are flat and suggests asking for the parts separately;
//! - shapes serde would read differently from the form: `#[serde(flatten)]`,
//!   `#[serde(transparent)]`, `untagged`/`tag` enums, `#[serde(from = …)]`; generic structs, tuple
//!   structs, and forms with no field;
//! - a field whose name looks like a password, API key, access token or payment credential
//!   (MCP forbids asking for those in a form; use URL mode, or `#[elicit(not_secret)]` when the
//!   name only looks like one);
//! - attributes MCP forms cannot express (`regex`, `contains`, `inner`, a `pattern`), an unknown
//!   `format` (only `email`, `uri`, `date`, `date-time`), and attributes on the wrong kind:
//!   `length` on a `bool` or a single choice, `range` on a string, `style` on a field that is no
//!   choice, `min` above `max`.
//!
//! Two more rules of the form:
//!
//! - `#[elicit(…)]` is only for what schemars cannot say: on an enum, `style = "plain" | "titled"
//!   | "enum_names"` (how the options are spelled) and on a variant `title = "…"` (an option's
//!   label; `#[schemars(title)]` or a doc comment also work); on a field, `style` and
//!   `not_secret` (a name that only looks like a secret).
//! - The answer is validated against the exact schema that was sent (after filling in defaults)
//!   before it is deserialized; a client that sends something else gets you
//!   `ElicitError::InvalidResponse` naming the field and the rule.
//!
//! # Decline, cancel, and the shorthands
//!
//! The user's answer is an [`Elicitation<T>`](crate::Elicitation): `Accept(T)` with the filled-in
//! form, `Decline` (they said no) or `Cancel` (they dismissed it without choosing). A refusal is
//! an answer, not an error: handle each case, and tell the model what happened, so it does not
//! simply ask again. `.accepted()` turns the answer into an `Option<T>` when declining and
//! cancelling mean the same to you, and `.is_accepted()` tests it. An `Err(ElicitError)` is
//! something else: the client cannot be asked (`NotSupported`; check `ctx.can_elicit()` first to
//! degrade gracefully), nobody answered in time (`Timeout`), the call was cancelled, or the answer
//! did not fit the form (`InvalidResponse`).
//!
//! For one value there is no need for a struct:
//!
//! - `ctx.confirm(message)` asks yes or no and returns `bool`: `true` only when the user accepted
//!   and ticked the box; declining or cancelling is `false`.
//! - `ctx.elicit_value::<V>(message)` asks for one string, number, boolean or `#[derive(Elicit)]`
//!   enum, as a one-field form whose property is `value`.
//! - `ctx.choose(message, options)` asks for one of options known only at run time (`&str`,
//!   `String`, or `(value, label)` pairs), and returns the chosen value.
//! - `ctx.elicit_raw(params, timeout)` sends a schema built at run time (checked, but its answer
//!   is returned unvalidated).
//!
//! The `elicitation` example keeps to the program it started from: its `process_data` asks a
//! yes-or-no question with a one-field form of its own (`struct Confirmation { proceed: bool }`)
//! and matches the three answers. With `ctx.confirm` the question is one line, and the answer a
//! `bool`:
//!
//! ```rust
//! use typed_mcp::prelude::*;
//! use typed_mcp::testing::{self, ElicitationScript, ToolResultExt};
//! use serde_json::json;
//!
//! /// Processes data, asking for confirmation first when it is over 100 characters long.
//! ///
//! /// # Arguments
//! /// * `data` - The data to process.
//! #[tool]
//! async fn process_data(ctx: Context, data: String) -> Result<String, ElicitError> {
//!     let length = data.chars().count();
//!     if length > 100 && !ctx.confirm(format!("The data is {length} characters long. Continue?")).await? {
//!         return Ok("Processing cancelled by the user.".into());
//!     }
//!     Ok(format!("Processed {length} characters"))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::builder("data", "1.0.0").tools(tools![process_data]).build().unwrap();
//! let script = ElicitationScript::new().accept(json!({"confirm": true})).decline();
//! let client = testing::connect_with(&server, &script).await;
//! let long = json!({"data": "x".repeat(150)});
//! assert_eq!(client.call_tool("process_data", &long).await.unwrap().text(), "Processed 150 characters");
//! assert_eq!(client.call_tool("process_data", &long).await.unwrap().text(), "Processing cancelled by the user.");
//! assert_eq!(client.call_tool("process_data", json!({"data": "short"})).await.unwrap().text(), "Processed 5 characters");
//! script.assert_done(); // the short input asked nothing
//! # }
//! ```
//!
//! And where the example's form has three fields, the `Deployment` form above shows what else a
//! typed form carries: formats, ranges, labelled and multiple choices, defaults. Put together
//! (the form hidden here), a tool that takes all three answers seriously and asks for
//! confirmation only when it matters, tested with scripted answers:
//!
//! ```rust
//! use typed_mcp::prelude::*;
//! use typed_mcp::testing::{self, ElicitationScript, ToolResultExt};
//! use serde_json::json;
//! # use schemars::JsonSchema;
//! # use serde::Deserialize;
//! # #[derive(Debug, Deserialize, JsonSchema, Elicit)]
//! # #[serde(rename_all = "lowercase")]
//! # enum Size {
//! #     /// Small (2 vCPU)
//! #     Small,
//! #     /// Large (16 vCPU)
//! #     Large,
//! # }
//! # #[derive(Debug, Deserialize, JsonSchema, Elicit)]
//! # #[serde(rename_all = "lowercase")]
//! # enum Region {
//! #     Eu,
//! #     Us,
//! #     Asia,
//! # }
//! # #[derive(Debug, Deserialize, JsonSchema, Elicit)]
//! # #[serde(rename_all = "camelCase")]
//! # struct Deployment {
//! #     /// Name of the service.
//! #     #[schemars(length(min = 3, max = 40))]
//! #     service: String,
//! #     /// Who is paged when it fails.
//! #     #[schemars(email)]
//! #     on_call: Option<String>,
//! #     /// Day of the release.
//! #     #[schemars(extend("format" = "date"))]
//! #     release_day: String,
//! #     /// How many replicas to run.
//! #     #[schemars(range(min = 1, max = 10))]
//! #     replicas: u8,
//! #     /// Monthly budget, in euros.
//! #     budget: f64,
//! #     /// Machine size.
//! #     size: Size,
//! #     /// Where to run it.
//! #     #[schemars(length(min = 1))]
//! #     regions: Vec<Region>,
//! #     /// Roll back automatically on failure.
//! #     #[serde(default = "yes")]
//! #     rollback: bool,
//! # }
//! # fn yes() -> bool {
//! #     true
//! # }
//!
//! /// Deploys a service, asking the user how.
//! #[tool]
//! async fn deploy(ctx: Context) -> Result<String, ElicitError> {
//!     if !ctx.can_elicit() {
//!         return Ok("This client cannot show forms; ask the user for the deployment details.".into());
//!     }
//!     let plan = match ctx.elicit::<Deployment>("How should the service be deployed?").await? {
//!         Elicitation::Accept(plan) => plan,
//!         Elicitation::Decline => return Ok("The user declined: nothing was deployed.".into()),
//!         Elicitation::Cancel => return Ok("The user dismissed the form: nothing was deployed.".into()),
//!     };
//!     let regions = plan.regions.len();
//!     if plan.replicas > 5 && !ctx.confirm(format!("Run {} replicas in {regions} regions?", plan.replicas)).await? {
//!         return Ok("The user did not confirm: nothing was deployed.".into());
//!     }
//!     let rollback = if plan.rollback { "with" } else { "without" };
//!     Ok(format!("Deploying {} ({:?}, {} replicas, {rollback} rollback)", plan.service, plan.size, plan.replicas))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::builder("deployer", "1.0.0").tools(tools![deploy]).build().unwrap();
//! let form = json!({"service": "billing", "releaseDay": "2026-09-01", "replicas": 8, "budget": 900.0,
//!                   "size": "large", "regions": ["eu", "us"]});
//! let script = ElicitationScript::new()
//!     .accept(form.clone()).accept(json!({"confirm": true})) // first call: the form, then the confirmation
//!     .accept(form).decline()                                // second call: the confirmation declined
//!     .cancel();                                             // third call: the form dismissed
//! let client = testing::connect_with(&server, &script).await;
//!
//! let deploy = || async { client.call_tool("deploy", ()).await.unwrap().text() };
//! assert_eq!(deploy().await, "Deploying billing (Large, 8 replicas, with rollback)");
//! assert_eq!(deploy().await, "The user did not confirm: nothing was deployed.");
//! assert_eq!(deploy().await, "The user dismissed the form: nothing was deployed.");
//! assert_eq!(script.requests()[1].message(), "Run 8 replicas in 2 regions?");
//! script.assert_done();
//!
//! // A client without the capability is never asked.
//! let plain = testing::connect(&server).await;
//! assert!(plain.call_tool("deploy", ()).await.unwrap().text().starts_with("This client cannot show forms"));
//! # }
//! ```
//!
//! - Nothing is sent to a client that did not declare the capability (`ElicitError::NotSupported`);
//!   `ctx.can_elicit()` lets a tool degrade gracefully. Waits time out (10 minutes by default,
//!   `.timeout(d)` per call) and end at once when the tool call is cancelled.
//!
//! # URL mode
//!
//! `ctx.elicit_url("https://…/connect?flow={elicitationId}", msg)` sends the user to a page of
//! yours, for what must not pass through the client (a password, a payment, a third party's
//! sign-in); the id (128 random bits) is owned by the session that asked, and
//! `server.url_elicitations().complete(id)` notifies that session only. Return
//! `UrlElicitationRequired` from a tool to answer with error -32042. A client that did not
//! declare URL mode is never sent a flow, in either era: it gets -32021 naming
//! `elicitation.url`, and no completion notification. Never put secrets in a URL, and on your
//! page check that the person completing the flow is the user it was created for, and complete
//! it only when they press a button (a POST): a link previewer fetches the page on its own (see
//! `examples/src/bin/url_elicitation.rs`).
//!
//! Which hosts show forms and URL requests today: see [Using a server from a host](super::hosts).
