//! # Testing your tools
//!
//! `typed_mcp::testing` connects a client to your `Server` in process, with the user's answers to
//! elicitations scripted in advance, so a `#[tokio::test]` exercises a tool end to end in a few
//! lines:
//!
//! ```rust
//! use typed_mcp::prelude::*;
//! use typed_mcp::testing::{self, ElicitationScript, ToolResultExt};
//! use serde::Deserialize;
//! use serde_json::json;
//!
//! #[derive(Deserialize, schemars::JsonSchema, Elicit)]
//! struct Name {
//!     /// Your name.
//!     name: String,
//! }
//!
//! /// Greets the user.
//! #[tool]
//! async fn greet(ctx: Context) -> Result<String, String> {
//!     match ctx.elicit::<Name>("What is your name?").await {
//!         Ok(Elicitation::Accept(n)) => Ok(format!("Hello, {}!", n.name)),
//!         Ok(_) => Ok("Hello, stranger!".into()),
//!         Err(e) => Err(e.to_string()),
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // In a #[tokio::test] function:
//! let server = Server::builder("greeter", "1.0.0").tools(tools![greet]).build().unwrap();
//! let script = ElicitationScript::new().accept(json!({"name": "Ada"})).decline();
//! let client = testing::connect_with(&server, &script).await;
//!
//! assert_eq!(client.call_tool("greet", ()).await.unwrap().text(), "Hello, Ada!");
//! assert_eq!(client.call_tool("greet", ()).await.unwrap().text(), "Hello, stranger!");
//! assert_eq!(script.requests()[0].message(), "What is your name?");
//! script.assert_done();
//! # }
//! ```
//!
//! A script answers each request in turn: `accept(json)`, `accept_value(&value)`,
//! `accept_defaults()`, `decline()`, `cancel()` or `answer_with(closure)`; `modes(…)` makes the
//! client declare form or URL mode only. An answer that does not fit the form it answers (a wrong
//! field name, a missing required field, a value of the wrong type) is a mistake in the test: the
//! next `call_tool` of the client `connect_with` gives you (a `TestClient`, which derefs to a
//! `Client`) panics with the form and the answer side by side. The shorthands' forms have one
//! field each: `confirm` for `ctx.confirm`, `value` for `ctx.elicit_value`, `choice` for
//! `ctx.choose`. `result.structured::<T>()` reads structured output, or says why it cannot. `testing::connect(&server)` connects a client without
//! elicitation, and `testing::client()` is a builder for anything else (sampling, roots).
//! `tests/tests/testing_harness.rs` tests tools like the `elicitation` example's this way.
//!
//! # In both protocol eras
//!
//! A tool runs differently in the two eras. In a session (2025-11-25) a question waits for the
//! answer and the handler runs once. In the 2026-07-28 era the question goes back to
//! the client in an `input_required` result, and when the client retries with the answer the
//! handler runs again **from the start**: code before a question runs once per round.
//! `testing::connect_in_era(&server, &script, era)` connects in either era, and
//! `testing::compare_eras` runs one test in both, each against a fresh server and script, and
//! reports what differs: the outcome, the side effects the tool recorded in a `testing::Effects`
//! log (given to the server as state), and the questions asked. This tool charges before it asks,
//! and is caught:
//!
//! ```rust
//! use typed_mcp::prelude::*;
//! use typed_mcp::testing::{self, Effects, ElicitationScript, ToolResultExt};
//! use serde_json::json;
//!
//! /// Charges the order, then asks where the receipt goes.
//! #[tool]
//! async fn checkout(ctx: Context, effects: State<Effects>) -> Result<String, String> {
//!     effects.record("charged 10 EUR"); // before the question: runs again on every round
//!     let email = ctx.elicit_value::<String>("Where should the receipt go?").await.map_err(|e| e.to_string())?;
//!     Ok(format!("receipt to {}", email.accepted().unwrap_or_default()))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let mismatch = testing::compare_eras(
//!     |effects| {
//!         let server = Server::builder("shop", "1").state(effects.clone());
//!         let script = ElicitationScript::new().accept(json!({"value": "ada@example.com"}));
//!         (server.tools(tools![checkout]).build().unwrap(), script)
//!     },
//!     |client| async move { client.call_tool("checkout", ()).await.unwrap().text() },
//! )
//! .await
//! .unwrap_err();
//! // session:   ["charged 10 EUR"]
//! // 2026-07-28: ["charged 10 EUR", "charged 10 EUR"]
//! assert!(mismatch.to_string().contains("the side effects differ"));
//! # }
//! ```
//!
//! Moving `effects.record(…)` after the question makes both eras agree;
//! `testing::assert_same_in_both_eras` is the same check failing the test with the differences
//! and advice. A tool whose questions depend on anything but its arguments and earlier answers (a
//! counter, the time) is caught too: the questions differ on replay.
