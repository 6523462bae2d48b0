//! Testing a server's tools in process: a [`Client`] connected to your [`Server`] through
//! memory, with the user's answers to elicitations scripted in advance.
//!
//! ```
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
//! /// Greets whoever is using it.
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
//! Inside `#[tokio::test]` functions, the same lines test a tool end to end: the server sees a
//! real session over the same line transport stdio uses, with the capabilities the script
//! declares.
//!
//! [`connect_in_era`] connects in either protocol era, and [`compare_eras`] (or
//! [`assert_same_in_both_eras`]) runs one test in both and reports a tool that behaves
//! differently in them: a side effect before a question, questions that change on replay.

mod eras;
mod task_store;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::client::{Client, ClientBuilder, ClientError, ElicitationHandler, ElicitationModes, ElicitationRequest};
use crate::protocol::{CallToolResult, ElicitResult, GetPromptResult, JsonObject, ReadResourceResult};
use crate::server::Server;
pub use eras::{Effects, EraDifference, EraMismatch, assert_same_in_both_eras, compare_eras, connect_in_era};
pub use task_store::assert_task_store_contract;

impl ClientBuilder {
    /// Connects to `server` in this process, through memory (see also [the `testing` module](self)).
    pub async fn connect_in_process(self, server: &Server) -> Result<Client, ClientError> {
        let (client_io, server_io) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server_io);
        let server = server.clone();
        let task = tokio::spawn(async move {
            if let Err(e) = server.serve_io(server_read, server_write).await {
                tracing::debug!(error = %e, "the in-process server stopped");
            }
        });
        let (client_read, client_write) = tokio::io::split(client_io);
        self.connect_lines(client_read, client_write, |c| c.with_server_task(task)).await
    }
}

/// A client builder named `mcp-test-client`, for tests that need more than a script.
pub fn client() -> ClientBuilder {
    Client::builder("mcp-test-client", env!("CARGO_PKG_VERSION"))
}

/// Connects a client that declares no capabilities to `server`, in process.
///
/// # Panics
///
/// Panics when the server does not complete the `initialize` handshake.
pub async fn connect(server: &Server) -> Client {
    client().connect_in_process(server).await.unwrap_or_else(|e| panic!("cannot connect to the server: {e}"))
}

/// Connects a client to `server`, in process, whose elicitation answers come from `script`
/// (it declares the script's modes: form and URL unless told otherwise).
///
/// The client is a [`TestClient`]: a [`Client`] whose calls fail the test as soon as a scripted
/// answer did not fit the form it answered.
///
/// # Panics
///
/// Panics when the server does not complete the `initialize` handshake.
pub async fn connect_with(server: &Server, script: &ElicitationScript) -> TestClient {
    let client = client()
        .elicitation(script.clone())
        .connect_in_process(server)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to the server: {e}"));
    TestClient { client, script: script.clone() }
}

/// A [`Client`] answering elicitations from an [`ElicitationScript`] (see [`connect_with`]). It
/// derefs to the client, so every method of [`Client`] works on it.
///
/// A scripted answer that does not fit the form it answers (a field the form does not have, a
/// missing required field, a value of the wrong type or out of range) is a mistake in the test,
/// not the tool's: the script answers the server with an error, and [`call_tool`](Self::call_tool),
/// [`call_tool_with_url_elicitation`](Self::call_tool_with_url_elicitation),
/// [`get_prompt`](Self::get_prompt) and [`read_resource`](Self::read_resource) then panic,
/// showing the form and the answer side by side. (Through other calls, such as
/// `client.tool(…).send()`, [`ElicitationScript::assert_done`] reports it.)
pub struct TestClient {
    client: Client,
    script: ElicitationScript,
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient").field("script", &self.script).finish_non_exhaustive()
    }
}

impl std::ops::Deref for TestClient {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

impl std::ops::DerefMut for TestClient {
    fn deref_mut(&mut self) -> &mut Client {
        &mut self.client
    }
}

impl TestClient {
    /// The client itself, without the check of scripted answers.
    pub fn into_inner(self) -> Client {
        self.client
    }

    /// [`Client::call_tool`], then the check of scripted answers.
    ///
    /// # Panics
    ///
    /// Panics when a scripted answer did not fit the form it answered.
    pub async fn call_tool(&self, name: &str, arguments: impl Serialize) -> Result<CallToolResult, ClientError> {
        let result = self.client.call_tool(name, arguments).await;
        self.script.assert_answers_fit();
        result
    }

    /// [`Client::call_tool_with_url_elicitation`], then the check of scripted answers.
    ///
    /// # Panics
    ///
    /// Panics when a scripted answer did not fit the form it answered.
    pub async fn call_tool_with_url_elicitation(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, ClientError> {
        let result = self.client.call_tool_with_url_elicitation(name, arguments).await;
        self.script.assert_answers_fit();
        result
    }

    /// [`Client::get_prompt`], then the check of scripted answers.
    ///
    /// # Panics
    ///
    /// Panics when a scripted answer did not fit the form it answered.
    pub async fn get_prompt(&self, name: &str, arguments: &[(&str, &str)]) -> Result<GetPromptResult, ClientError> {
        let result = self.client.get_prompt(name, arguments).await;
        self.script.assert_answers_fit();
        result
    }

    /// [`Client::read_resource`], then the check of scripted answers.
    ///
    /// # Panics
    ///
    /// Panics when a scripted answer did not fit the form it answered.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        let result = self.client.read_resource(uri).await;
        self.script.assert_answers_fit();
        result
    }
}

type Respond = Box<dyn FnOnce(&ElicitationRequest) -> ElicitResult + Send>;

/// One scripted answer.
enum Answer {
    Accept(JsonObject),
    AcceptDefaults,
    Decline,
    Cancel,
    With(Respond),
}

#[derive(Default)]
struct Script {
    answers: VecDeque<Answer>,
    requests: Vec<ElicitationRequest>,
    unexpected: Vec<String>,
    /// Scripted answers that did not fit their forms, each described with the form.
    misfits: Vec<String>,
}

/// The user's answers to elicitation requests, in order. Cheap to clone: clones share the
/// script, so a test keeps one to inspect what was asked.
///
/// Each request takes the next answer. Form content is completed with the schema's defaults
/// and checked against the schema like any client's. Content that does not fit is a mistake
/// in the test: the server gets an error, and the test fails at the next call of its
/// [`TestClient`] (or at [`assert_done`](Self::assert_done)), showing the form and the answer
/// side by side. A request arriving when no answer is left is declined and reported by
/// [`assert_done`](Self::assert_done).
#[derive(Clone)]
pub struct ElicitationScript {
    script: Arc<Mutex<Script>>,
    modes: ElicitationModes,
}

impl Default for ElicitationScript {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ElicitationScript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElicitationScript")
            .field("modes", &self.modes)
            .field("remaining", &self.remaining())
            .field("asked", &self.requests().len())
            .finish()
    }
}

impl ElicitationScript {
    /// An empty script declaring both modes.
    pub fn new() -> Self {
        ElicitationScript { script: Arc::default(), modes: ElicitationModes::ALL }
    }

    /// Declares `modes` instead of both (e.g. [`ElicitationModes::FORM`] to test how a tool
    /// copes with a client that has no URL mode).
    pub fn modes(mut self, modes: ElicitationModes) -> Self {
        self.modes = modes;
        self
    }

    fn push(self, answer: Answer) -> Self {
        self.lock().answers.push_back(answer);
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Accepts with `content`, a JSON object (missing fields get their defaults). For a URL
    /// request, accepts (consents to open it); the content is not sent.
    ///
    /// # Panics
    ///
    /// Panics when `content` is not a JSON object.
    pub fn accept(self, content: Value) -> Self {
        match content {
            Value::Object(o) => self.push(Answer::Accept(o)),
            other => panic!("ElicitationScript::accept takes a JSON object, not {other}"),
        }
    }

    /// Accepts with `value` serialized (typically a value of the form's type).
    ///
    /// # Panics
    ///
    /// Panics when `value` does not serialize to a JSON object.
    pub fn accept_value<T: Serialize>(self, value: &T) -> Self {
        match serde_json::to_value(value) {
            Ok(v) => self.accept(v),
            Err(e) => panic!("ElicitationScript::accept_value: the value does not serialize: {e}"),
        }
    }

    /// Accepts with the schema's defaults alone, as a user submitting the pre-filled form.
    pub fn accept_defaults(self) -> Self {
        self.push(Answer::AcceptDefaults)
    }

    /// Declines.
    pub fn decline(self) -> Self {
        self.push(Answer::Decline)
    }

    /// Cancels (dismisses without choosing).
    pub fn cancel(self) -> Self {
        self.push(Answer::Cancel)
    }

    /// Answers with whatever `respond` makes of the request.
    pub fn answer_with(self, respond: impl FnOnce(&ElicitationRequest) -> ElicitResult + Send + 'static) -> Self {
        self.push(Answer::With(Box::new(respond)))
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ElicitationRequest> {
        self.lock().requests.clone()
    }

    /// How many answers are left.
    pub fn remaining(&self) -> usize {
        self.lock().answers.len()
    }

    /// Checks that every scripted answer that was used fit the form it answered.
    ///
    /// # Panics
    ///
    /// Panics with the form and the answer side by side when one did not.
    pub fn assert_answers_fit(&self) {
        let misfits = std::mem::take(&mut self.lock().misfits);
        if let Some(first) = misfits.first() {
            panic!("{first}");
        }
    }

    /// Checks that every answer was used, each fit its form, and no request came without one.
    ///
    /// # Panics
    ///
    /// Panics, saying what happened, when any of that is not so.
    pub fn assert_done(&self) {
        self.assert_answers_fit();
        let script = self.lock();
        assert!(
            script.unexpected.is_empty(),
            "elicitation requests arrived with no scripted answer left (they were declined): {:?}",
            script.unexpected
        );
        assert!(script.answers.is_empty(), "{} scripted elicitation answer(s) were never used", script.answers.len());
    }

    fn answer(&self, request: &ElicitationRequest) -> ElicitResult {
        let answer = {
            let mut script = self.lock();
            script.requests.push(request.clone());
            let next = script.answers.pop_front();
            if next.is_none() {
                script.unexpected.push(request.message().to_owned());
            }
            next
        };
        match answer {
            None | Some(Answer::Decline) => ElicitResult::decline(),
            Some(Answer::Cancel) => ElicitResult::cancel(),
            Some(Answer::Accept(content)) => match request {
                ElicitationRequest::Url(_) => ElicitResult::accept_url(),
                ElicitationRequest::Form(form) => {
                    let mut completed = content.clone();
                    if let Err(problem) =
                        crate::elicit::validate::validate_content(form.schema().as_object(), &mut completed)
                    {
                        // The client refuses such content before it reaches the server (with an
                        // error the tool sees); the test is told what was wrong, and where.
                        let report = misfit_report(&form.message, form.schema().as_object(), &content, &problem);
                        self.lock().misfits.push(report);
                    }
                    ElicitResult::accept(content)
                }
            },
            Some(Answer::AcceptDefaults) => match request.as_form() {
                Some(form) => ElicitResult::accept(form.defaults()),
                None => ElicitResult::accept_url(),
            },
            Some(Answer::With(respond)) => respond(request),
        }
    }
}

impl ElicitationHandler for ElicitationScript {
    fn modes(&self) -> ElicitationModes {
        self.modes
    }

    async fn elicit(&self, request: ElicitationRequest) -> ElicitResult {
        self.answer(&request)
    }
}

/// What a test is shown when a scripted answer does not fit its form.
fn misfit_report(message: &str, schema: &JsonObject, answer: &JsonObject, problem: &dyn std::fmt::Display) -> String {
    let form = serde_json::to_string_pretty(schema).unwrap_or_else(|_| format!("{schema:?}"));
    let given = serde_json::to_string_pretty(answer).unwrap_or_else(|_| format!("{answer:?}"));
    let (form_lines, given_lines): (Vec<&str>, Vec<&str>) = (form.lines().collect(), given.lines().collect());
    let width = form_lines.iter().map(|l| l.chars().count()).max().unwrap_or(0).max("the form".len());
    let mut table = format!("{:<width$}   {}\n", "the form", "the scripted answer");
    for i in 0..form_lines.len().max(given_lines.len()) {
        let left = form_lines.get(i).copied().unwrap_or("");
        let right = given_lines.get(i).copied().unwrap_or("");
        table.push_str(format!("{left:<width$}   {right}").trim_end());
        table.push('\n');
    }
    format!(
        "a scripted elicitation answer does not fit the form it answers ({problem}); the question was {message:?}:\n{table}"
    )
}

/// Reading tool results in tests.
pub trait ToolResultExt {
    /// The text of the text blocks, joined with newlines.
    fn text(&self) -> String;
    /// The structured content read as `T`; the error says why it could not be (there is none,
    /// or it does not fit `T`, and where).
    fn structured<T: DeserializeOwned>(&self) -> Result<T, StructuredError>;
}

/// Why [`ToolResultExt::structured`] could not read a result's structured content.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StructuredError {
    /// The result has no `structuredContent` (its text: the tool's output, or its error).
    #[error("the result has no structured content (isError: {is_error}; text: {text:?})")]
    Missing {
        /// Whether the result reports a failure.
        is_error: bool,
        /// The text of its text blocks.
        text: String,
    },
    /// The structured content does not deserialize into the type asked for.
    #[error("the structured content does not fit `{type_name}`: {source} (content: {content})")]
    Mismatch {
        /// The type asked for.
        type_name: &'static str,
        /// What serde said.
        source: serde_json::Error,
        /// The content.
        content: Value,
    },
}

impl ToolResultExt for CallToolResult {
    fn text(&self) -> String {
        self.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("\n")
    }

    fn structured<T: DeserializeOwned>(&self) -> Result<T, StructuredError> {
        let Some(content) = &self.structured_content else {
            return Err(StructuredError::Missing { is_error: self.is_error == Some(true), text: self.text() });
        };
        T::deserialize(content).map_err(|source| StructuredError::Mismatch {
            type_name: std::any::type_name::<T>(),
            source,
            content: content.clone(),
        })
    }
}
