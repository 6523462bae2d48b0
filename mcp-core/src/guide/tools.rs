//! # Tools in detail
//!
//! A tool is a function the model may call. `#[tool]` turns an ordinary function into one (or a
//! method, inside a `#[toolbox]` block), `tools![…]` collects them, and
//! [`ServerBuilder::tools`](crate::ServerBuilder::tools) registers them. The function stays
//! callable as written, so unit tests can call it directly. This chapter goes through what a
//! tool takes, what it returns, how it fails, and what it can ask of its request.
//!
//! # Arguments and doc comments become the input schema
//!
//! Each argument is a property of the tool's `inputSchema`, with the JSON Schema schemars
//! generates for its type; an `Option<T>` argument is optional (left out of `required`), never
//! nullable. The doc comment's first paragraphs become the tool's `description`; its
//! `# Arguments` section is not part of it, but describes the arguments, one `` * `name` - ``
//! line each. The sample below is a runnable doctest that reads the schema back from the built
//! server:
//!
//! ```rust
//! use typed_mcp::prelude::*;
//! use serde_json::json;
//!
//! /// Converts an amount between two currencies, at a fixed rate.
//! ///
//! /// # Arguments
//! /// * `amount` - The amount to convert, in the source currency.
//! /// * `from` - ISO 4217 code of the source currency.
//! /// * `to` - ISO 4217 code of the target currency; EUR when left out.
//! #[tool(read_only, idempotent)]
//! fn convert(amount: f64, from: String, to: Option<String>) -> Result<String, String> {
//!     let to = to.unwrap_or_else(|| "EUR".to_owned());
//!     match (from.as_str(), to.as_str()) {
//!         ("USD", "EUR") => Ok(format!("{:.2} EUR", amount * 0.9)),
//!         _ => Err(format!("no rate from {from} to {to}; known: USD to EUR")),
//!     }
//! }
//!
//! let server = Server::builder("fx", "1.0.0").tools(tools![convert]).build().unwrap();
//! let tool = &server.tools().tools[0];
//! assert_eq!(tool.name, "convert");
//! assert_eq!(tool.description.as_deref(), Some("Converts an amount between two currencies, at a fixed rate."));
//! assert_eq!(
//!     serde_json::Value::Object(tool.input_schema.clone()),
//!     json!({
//!         "type": "object",
//!         "properties": {
//!             "amount": {"type": "number", "description": "The amount to convert, in the source currency."},
//!             "from": {"type": "string", "description": "ISO 4217 code of the source currency."},
//!             "to": {"type": "string", "description": "ISO 4217 code of the target currency; EUR when left out."}
//!         },
//!         "required": ["amount", "from"]
//!     })
//! );
//! // The hints of `#[tool(read_only, idempotent)]` are the tool's annotations.
//! let hints = tool.annotations.as_ref().unwrap();
//! assert_eq!((hints.read_only_hint, hints.idempotent_hint), (Some(true), Some(true)));
//! // And the function is still a function.
//! assert_eq!(convert(10.0, "USD".into(), None), Ok("9.00 EUR".to_owned()));
//! ```
//!
//! - An `# Arguments` entry that names no argument is a compile error at that line (a renamed
//!   argument whose doc was forgotten), listing the arguments there are.
//! - `#[arg(description = "…")]` on an argument says the same as its `# Arguments` line;
//!   `#[arg(rename = "…")]` gives it another name in the schema than in your code.
//!   `Params<T>` takes the fields of a struct of yours as the arguments.
//! - `#[tool(name, title, description, read_only, destructive, idempotent, open_world)]`
//!   override the name, title and description, and set the hints; `#[tool(scopes =
//!   ["notes:write"])]` names the OAuth scopes a call needs on a protected server (see
//!   [Protecting an HTTP server](super::authorization)); `#[tool(task = "optional")]` lets it run
//!   as a task (see [Long-running tools](super::tasks)).
//! - [`Context`](crate::Context) and [`State<T>`](crate::State) arguments are injected, not part
//!   of the schema (see below), and so are the other extractors of
//!   [`typed_mcp::handler`](crate::handler).
//! - A call with a missing argument, or one of the wrong type, never reaches your function.
//!   From revision 2025-11-25 on (and in the 2026-07-28 era) it is answered as a tool error, a
//!   result with `isError: true` whose text names the argument and the problem (``missing
//!   required argument `b` ``), so the model can correct its call; sessions of older revisions
//!   get JSON-RPC error -32602 with the same message, as their spec says. What is still a
//!   protocol error is -32602 in every revision: an unknown tool, or `tools/call` parameters of
//!   the wrong shape (no `name`, `arguments` that are not an object).
//! - Wrong argument or return types fail to compile at the offending token, with a note listing
//!   the allowed kinds.
//!
//! # Results and errors
//!
//! A tool returns text-like values (strings, numbers, `bool`), `()`, `Content`, `Vec<Content>`,
//! `CallToolResult`, [`Json<T>`](crate::Json) (structured output, below), or a `Result` of one of
//! these. There are two ways for a call to fail, and they go to different readers:
//!
//! - **A tool error**: any `Err(e)` whose `E` is `Display` (a `String`, your own error type)
//!   becomes a *result* with `isError: true` and the error's message as its text. It goes into
//!   the conversation: the model reads it and can react, by calling again with other
//!   arguments, trying another tool, or telling the user. This is the right choice for almost
//!   everything that goes wrong in a tool: a record that does not exist, a refused payment, a
//!   service that timed out.
//! - **A protocol error**: an `Err(ErrorObject)` becomes a JSON-RPC error response instead. The
//!   host handles it and the model usually never sees it, so keep it for a request that cannot be
//!   served at all, whatever the model does: a server-side fault (`ErrorObject::internal`,
//!   -32603), or a hand-written tool refusing malformed parameters (`invalid_params`, -32602).
//!   `UrlElicitationRequired` is the third kind: error -32042, asking the client to send the user
//!   to a page first (see [`elicitation`](super::elicitation)).
//!
//! ```rust
//! use typed_mcp::prelude::*;
//! use typed_mcp::testing::{self, ToolResultExt};
//! use typed_mcp::client::ClientError;
//! use serde_json::json;
//!
//! /// Why an order could not be shipped: shown to the model as the tool's result.
//! #[derive(Debug, thiserror::Error)]
//! enum ShipError {
//!     #[error("order {0} does not exist; list the open orders with `open_orders`")]
//!     NoSuchOrder(u32),
//!     #[error("order {0} was shipped already")]
//!     AlreadyShipped(u32),
//! }
//!
//! /// Ships an order.
//! ///
//! /// # Arguments
//! /// * `order` - The order's number.
//! #[tool(destructive)]
//! fn ship(order: u32) -> Result<String, ShipError> {
//!     match order {
//!         1 => Ok("order 1 shipped".into()),
//!         2 => Err(ShipError::AlreadyShipped(2)),
//!         n => Err(ShipError::NoSuchOrder(n)),
//!     }
//! }
//!
//! /// Reports the warehouse's stock.
//! #[tool(read_only)]
//! fn stock() -> Result<String, ErrorObject> {
//!     // A fault of this server, not something the model could fix by asking differently.
//!     Err(ErrorObject::internal("the stock database is not configured"))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::builder("shop", "1.0.0").tools(tools![ship, stock]).build().unwrap();
//! let client = testing::connect(&server).await;
//!
//! let result = client.call_tool("ship", json!({"order": 7})).await.unwrap();
//! assert_eq!(result.is_error, Some(true));
//! assert_eq!(result.text(), "order 7 does not exist; list the open orders with `open_orders`");
//!
//! match client.call_tool("stock", ()).await {
//!     Err(ClientError::Rpc(error)) => assert_eq!(error.code, -32603),
//!     other => panic!("expected a JSON-RPC error, got {other:?}"),
//! }
//! # }
//! ```
//!
//! A tool that panics failed like one that returned an error: the panic is caught and logged,
//! and the call is answered as a tool error (``the tool `ship` panicked: …``); the session goes on.
//!
//! ## Structured output
//!
//! `Json<T>` sends `T` as `structuredContent` (and as its JSON text, for older clients), and gives
//! the tool an `outputSchema`, the schema of `T`. MCP wants both to be objects: a `T` whose schema
//! is not one (a `Vec`, a number) is wrapped as `{"result": …}`.
//!
//! ```rust
//! use typed_mcp::prelude::*;
//! use typed_mcp::testing::{self, ToolResultExt};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use serde_json::json;
//!
//! /// A forecast for one day.
//! #[derive(Serialize, Deserialize, JsonSchema)]
//! struct Forecast {
//!     /// Highest temperature, in degrees Celsius.
//!     high: i32,
//!     /// Chance of rain, from 0 to 1.
//!     rain: f64,
//! }
//!
//! /// The forecast for a city.
//! ///
//! /// # Arguments
//! /// * `city` - The city's name.
//! #[tool(read_only)]
//! fn forecast(city: String) -> Json<Forecast> {
//!     let _ = city;
//!     Json(Forecast { high: 21, rain: 0.25 })
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::builder("weather", "1.0.0").tools(tools![forecast]).build().unwrap();
//! let output = server.tools().tools[0].output_schema.clone().unwrap();
//! assert_eq!(output["required"], json!(["high", "rain"]));
//!
//! let client = testing::connect(&server).await;
//! let result = client.call_tool("forecast", json!({"city": "Lyon"})).await.unwrap();
//! let today: Forecast = result.structured().unwrap();
//! assert_eq!((today.high, today.rain), (21, 0.25));
//! # }
//! ```
//!
//! # Shared state: `State<T>`
//!
//! Whatever the tools share (a connection pool, a cache, a client of another service) is given
//! to the builder once with [`ServerBuilder::state`](crate::ServerBuilder::state), one value per
//! type, and a tool receives it by taking a `State<T>` argument: an `Arc<T>` that derefs to `T`.
//! Every session and every request sees the same value, so it synchronizes its own interior
//! (a `Mutex`, atomics, a pool). `ServerBuilder::state_arc` registers an `Arc` the application
//! keeps a handle to; `ctx.state::<T>()` reads the same value from a [`Context`](crate::Context).
//! A tool whose state was never registered is answered with error -32603 naming the type.
//!
//! ```rust
//! use std::sync::{Arc, Mutex};
//!
//! use typed_mcp::prelude::*;
//! use typed_mcp::testing::{self, ToolResultExt};
//! use serde_json::json;
//!
//! /// The notes taken so far, shared by every session.
//! #[derive(Default)]
//! struct Notes {
//!     list: Mutex<Vec<String>>,
//! }
//!
//! /// Keeps a note.
//! ///
//! /// # Arguments
//! /// * `text` - What to remember.
//! #[tool]
//! fn remember(notes: State<Notes>, text: String) -> String {
//!     let mut list = notes.list.lock().unwrap();
//!     list.push(text);
//!     format!("{} notes", list.len())
//! }
//!
//! /// Lists the notes.
//! #[tool(read_only)]
//! fn recall(notes: State<Notes>) -> String {
//!     notes.list.lock().unwrap().join("\n")
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let notes = Arc::new(Notes::default());
//! let server = Server::builder("notes", "1.0.0").state_arc(notes.clone()).tools(tools![remember, recall]).build().unwrap();
//! // `State<Notes>` is injected: it is not part of the input schema.
//! assert_eq!(server.tools().tools[0].input_schema["required"], json!(["text"]));
//!
//! let client = testing::connect(&server).await;
//! client.call_tool("remember", json!({"text": "buy milk"})).await.unwrap();
//! let other = testing::connect(&server).await; // another session, the same notes
//! assert_eq!(other.call_tool("recall", ()).await.unwrap().text(), "buy milk");
//! assert_eq!(notes.list.lock().unwrap().len(), 1); // and the application's handle sees them too
//! # }
//! ```
//!
//! # Methods: `#[toolbox]`
//!
//! State that belongs to a group of tools can also be the tools' `self`: put `#[toolbox]` on an
//! `impl` block, `#[tool]` on its methods (taking `&self`, or no receiver), and register the value
//! with [`ServerBuilder::toolbox`](crate::ServerBuilder::toolbox) (`toolbox_arc` to keep a
//! handle). Methods take the same arguments and return the same kinds as functions.
//!
//! ```rust
//! use std::sync::atomic::{AtomicU64, Ordering};
//!
//! use typed_mcp::prelude::*;
//!
//! /// Hands out ticket numbers.
//! struct Tickets {
//!     prefix: String,
//!     next: AtomicU64,
//! }
//!
//! #[toolbox]
//! impl Tickets {
//!     /// Opens a ticket and returns its number.
//!     ///
//!     /// # Arguments
//!     /// * `title` - What the ticket is about.
//!     #[tool]
//!     fn open_ticket(&self, title: String) -> String {
//!         let n = self.next.fetch_add(1, Ordering::Relaxed);
//!         format!("{}-{n}: {title}", self.prefix)
//!     }
//!
//!     /// Says how many tickets were opened.
//!     #[tool(read_only)]
//!     fn ticket_count(&self) -> u64 {
//!         self.next.load(Ordering::Relaxed) - 1
//!     }
//! }
//!
//! let tickets = Tickets { prefix: "OPS".into(), next: AtomicU64::new(1) };
//! let server = Server::builder("tickets", "1.0.0").toolbox(tickets).build().unwrap();
//! let names: Vec<_> = server.tools().tools.into_iter().map(|t| t.name).collect();
//! assert_eq!(names, ["open_ticket", "ticket_count"]);
//! ```
//!
//! # Progress and cancellation
//!
//! A long tool keeps the user informed with [`ctx.progress(done, total, message)`](crate::Context::progress):
//! each report is a `notifications/progress` for the request's `progressToken`, sent only when the
//! client asked for progress (`ctx.wants_progress()` tells) and only when the value grew, as MCP
//! requires. Run as a task, the same reports become the task's `statusMessage`.
//!
//! When the client cancels the call (`notifications/cancelled`), or the session closes, the tool's
//! future is dropped at its next `.await` and nothing is sent back. So an `async` tool needs no
//! code to stop, except for work that does not live in its future: a blocking computation in
//! `tokio::task::spawn_blocking`, a task it spawned. For those, `ctx.is_cancelled()` is a cheap
//! check between steps, `ctx.cancelled()` a future that completes on cancellation (for
//! `tokio::select!`), and `ctx.cancellation()` a `CancellationToken` to hand to them.
//!
//! ```rust
//! use std::sync::{Arc, Mutex};
//!
//! use typed_mcp::prelude::*;
//! use typed_mcp::testing::{self, ToolResultExt};
//! use serde_json::json;
//!
//! /// Checks every file of a batch.
//! ///
//! /// # Arguments
//! /// * `files` - How many files there are.
//! #[tool(read_only)]
//! async fn check_files(ctx: Context, files: u32) -> Result<String, String> {
//!     for done in 1..=files {
//!         // Blocking work runs beside the async runtime; it is told when the call is cancelled.
//!         let cancel = ctx.cancellation().clone();
//!         let checked = tokio::task::spawn_blocking(move || !cancel.is_cancelled())
//!             .await
//!             .map_err(|e| e.to_string())?;
//!         if !checked {
//!             return Err("cancelled".into());
//!         }
//!         let message = format!("checked file {done} of {files}");
//!         ctx.progress(f64::from(done), Some(f64::from(files)), Some(&message)).await.map_err(|e| e.to_string())?;
//!     }
//!     Ok(format!("{files} files checked"))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = Server::builder("checker", "1.0.0").tools(tools![check_files]).build().unwrap();
//! let client = testing::connect(&server).await;
//!
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let log = seen.clone();
//! let result = client
//!     .tool("check_files")
//!     .arguments(json!({"files": 3}))
//!     .on_progress(move |p| log.lock().unwrap().push((p.progress, p.message)))
//!     .send()
//!     .await
//!     .unwrap();
//! assert_eq!(result.text(), "3 files checked");
//! let seen = seen.lock().unwrap();
//! assert_eq!(seen.len(), 3);
//! assert_eq!(seen[2], (3.0, Some("checked file 3 of 3".to_owned())));
//! # }
//! ```
//!
//! On the client side, `client.tool(name).on_progress(…)` asks for progress, and
//! `.cancel_on(token)`, `.timeout(…)` or dropping the call's future withdraws it with
//! `notifications/cancelled` (see [the client](super::client)).
//!
//! # Without macros, and synchronous tools
//!
//! - `ToolDef::new(name, input_schema, |call| async { … })` defines a tool at run time; the
//!   handler reads its arguments from the request's text with `call.arguments.get::<T>("name")`
//!   (or all at once with `call.arguments.deserialize::<Struct>()`), with no JSON tree in between.
//!   A hand-written tool that returns `ErrorObject::invalid_params(…)` is answered with -32602,
//!   like the protocol errors above.
//! - A tool that is not `async` (or `ToolDef::new_sync`) runs as soon as its call is read and is
//!   answered at once, with no future at all; keep such tools quick, since the session reads its
//!   next message after them. Long or blocking work belongs in an `async` tool with
//!   `tokio::task::spawn_blocking`.
