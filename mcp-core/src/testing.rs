//! Testing a server's tools in process: a [`Client`] connected to your [`Server`] through
//! memory, with the user's answers to elicitations scripted in advance.
//!
//! ```
//! use mcp_core::prelude::*;
//! use mcp_core::testing::{self, ElicitationScript, ToolResultExt};
//! use serde::Deserialize;
//! use serde_json::json;
//!
//! #[derive(Deserialize, Elicit)]
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
//! let server = Server::builder("greeter", "1.0.0").enable_elicitation().tools(tools![greet]).build().unwrap();
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

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::client::{Client, ClientBuilder, ElicitationHandler, ElicitationModes, ElicitationRequest};
use crate::protocol::{CallToolResult, ElicitResult, JsonObject};
use crate::server::Server;

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
/// # Panics
///
/// Panics when the server does not complete the `initialize` handshake.
pub async fn connect_with(server: &Server, script: &ElicitationScript) -> Client {
    client()
        .elicitation(script.clone())
        .connect_in_process(server)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to the server: {e}"))
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
}

/// The user's answers to elicitation requests, in order. Cheap to clone: clones share the
/// script, so a test keeps one to inspect what was asked.
///
/// Each request takes the next answer. Form content is completed with the schema's defaults
/// and checked against the schema like any client's (a mismatch reaches the server as an
/// error). A request arriving when no answer is left is declined and reported by
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

    /// Checks that every answer was used and no request came without one.
    ///
    /// # Panics
    ///
    /// Panics, saying what happened, when either is not so.
    pub fn assert_done(&self) {
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
                _ => ElicitResult::accept(content),
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

/// Reading tool results in tests.
pub trait ToolResultExt {
    /// The text of the text blocks, joined with newlines.
    fn text(&self) -> String;
    /// The structured content read as `T`, if there is some and it fits.
    fn structured<T: DeserializeOwned>(&self) -> Option<T>;
}

impl ToolResultExt for CallToolResult {
    fn text(&self) -> String {
        self.content.iter().filter_map(|c| c.as_text()).collect::<Vec<_>>().join("\n")
    }

    fn structured<T: DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_value(self.structured_content.clone()?).ok()
    }
}
