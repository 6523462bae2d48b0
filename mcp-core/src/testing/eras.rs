//! Running the same test in both protocol eras, and failing when a tool behaves differently in
//! them.
//!
//! In a session (2025-11-25) a handler that asks the user something waits for the answer and
//! runs once. In the 2026-07-28 era the question goes back in an `input_required`
//! result and the handler runs again from the start when the client retries with the answer
//! (see [`crate::multi_round`]): code before a question runs once per round. A tool whose side effect
//! comes before a question passes a session-only test and charges the card twice in
//! production. [`compare_eras`] runs the same script in both eras and reports such a tool.

use std::fmt::Write as _;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use super::{ElicitationScript, TestClient, client};
use crate::client::ProtocolEra;
use crate::server::Server;

/// [`connect_with`](super::connect_with) in `era`: a client connected to `server`, in
/// process, whose elicitation answers come from `script` (checked as there).
///
/// # Panics
///
/// Panics when the connection cannot be opened (`initialize` or `server/discover` fails).
pub async fn connect_in_era(server: &Server, script: &ElicitationScript, era: ProtocolEra) -> TestClient {
    let client = client()
        .protocol_era(era)
        .elicitation(script.clone())
        .connect_in_process(server)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to the server in the {era:?} era: {e}"));
    TestClient { client, script: script.clone() }
}

/// A log of what tools did to the world (rows written, messages sent, cards charged), for
/// [`compare_eras`]: give it to the server as state (`.state(effects.clone())`), take it in
/// the tool as `State<Effects>`, and [`record`](Self::record) each side effect. Cheap to clone;
/// clones share the log.
#[derive(Debug, Clone, Default)]
pub struct Effects(Arc<Mutex<Vec<String>>>);

impl Effects {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one side effect.
    pub fn record(&self, effect: impl Into<String>) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(effect.into());
    }

    /// Every side effect recorded so far, in order.
    pub fn list(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// One way the two eras' runs of a test differ.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EraDifference {
    /// The test's outcome (what its closure returned), as `Debug` text.
    Output {
        /// In the 2025-11-25 era.
        y2025: String,
        /// In the 2026-07-28 era.
        y2026: String,
    },
    /// The side effects recorded in [`Effects`].
    Effects {
        /// In the 2025-11-25 era.
        y2025: Vec<String>,
        /// In the 2026-07-28 era.
        y2026: Vec<String>,
    },
    /// The questions the user was asked (their messages, in order).
    Questions {
        /// In the 2025-11-25 era.
        y2025: Vec<String>,
        /// In the 2026-07-28 era.
        y2026: Vec<String>,
    },
}

/// The tool behaved differently in the 2025-11-25 era (a session) and in the 2026-07-28 era; what differed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(.differences))]
pub struct EraMismatch {
    /// Every difference found.
    pub differences: Vec<EraDifference>,
}

fn describe(differences: &[EraDifference]) -> String {
    let mut text = String::from("the test behaves differently in the 2025-11-25 and the 2026-07-28 era:");
    for difference in differences {
        match difference {
            EraDifference::Output { y2025, y2026 } => {
                let _ = write!(text, "\n- the outcome differs:\n    2025-11-25: {y2025}\n    2026-07-28: {y2026}");
            }
            EraDifference::Effects { y2025, y2026 } => {
                let _ = write!(
                    text,
                    "\n- the side effects differ:\n    2025-11-25: {y2025:?}\n    2026-07-28: {y2026:?}\n  \
                     In the 2026-07-28 era a handler runs again from the start on every round of questions, so code \
                     before a question runs once per round. Do side effects after the last question, or make them \
                     idempotent (key them by `ctx.round_trip_id()`)."
                );
            }
            EraDifference::Questions { y2025, y2026 } => {
                let _ = write!(
                    text,
                    "\n- the questions differ:\n    2025-11-25: {y2025:?}\n    2026-07-28: {y2026:?}\n  \
                     In the 2026-07-28 era each run of the handler must ask the same questions in the same order (an \
                     answer is matched to its question by its place in that order): base questions on the arguments \
                     and earlier answers only, or give them stable keys with `.key(…)`."
                );
            }
        }
    }
    text
}

/// What one era's run left behind.
struct Run<T> {
    output: T,
    effects: Vec<String>,
    questions: Vec<String>,
}

async fn run_in<T, S, F, Fut>(era: ProtocolEra, setup: &S, test: &F) -> Run<T>
where
    S: Fn(&Effects) -> (Server, ElicitationScript),
    F: Fn(TestClient) -> Fut,
    Fut: Future<Output = T>,
{
    let effects = Effects::new();
    let (server, script) = setup(&effects);
    let client = connect_in_era(&server, &script, era).await;
    let closing = client.client.clone();
    let output = test(client).await;
    closing.close().await;
    let questions = script.requests().iter().map(|r| r.message().to_owned()).collect();
    Run { output, effects: effects.list(), questions }
}

/// Runs `test` twice, in the 2025-11-25 era (a session) and in the 2026-07-28 era, each time against a fresh server
/// and script from `setup` (which gets a fresh [`Effects`] log to give the server), and compares
/// the outcomes, the side effects recorded and the questions asked. The outcome when they
/// agree; else every difference, with advice.
///
/// ```
/// use typed_mcp::prelude::*;
/// use typed_mcp::testing::{self, Effects, ElicitationScript, ToolResultExt};
/// use serde_json::json;
///
/// /// Sends a message after asking whether to.
/// #[tool]
/// async fn send(ctx: Context, effects: State<Effects>) -> Result<String, String> {
///     if ctx.confirm("Send it?").await.map_err(|e| e.to_string())? {
///         effects.record("sent");
///         return Ok("sent".into());
///     }
///     Ok("kept".into())
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let outcome = testing::compare_eras(
///     |effects| {
///         let server = Server::builder("mail", "1").state(effects.clone());
///         (server.tools(tools![send]).build().unwrap(), ElicitationScript::new().accept(json!({"confirm": true})))
///     },
///     |client| async move { client.call_tool("send", ()).await.unwrap().text() },
/// )
/// .await;
/// assert_eq!(outcome.unwrap(), "sent");
/// # }
/// ```
pub async fn compare_eras<T, S, F, Fut>(setup: S, test: F) -> Result<T, EraMismatch>
where
    T: PartialEq + std::fmt::Debug,
    S: Fn(&Effects) -> (Server, ElicitationScript),
    F: Fn(TestClient) -> Fut,
    Fut: Future<Output = T>,
{
    let y2025 = run_in(ProtocolEra::Y2025, &setup, &test).await;
    let y2026 = run_in(ProtocolEra::Y2026, &setup, &test).await;
    let mut differences = Vec::new();
    if y2025.output != y2026.output {
        differences
            .push(EraDifference::Output { y2025: format!("{:?}", y2025.output), y2026: format!("{:?}", y2026.output) });
    }
    if y2025.effects != y2026.effects {
        differences.push(EraDifference::Effects { y2025: y2025.effects, y2026: y2026.effects });
    }
    if y2025.questions != y2026.questions {
        differences.push(EraDifference::Questions { y2025: y2025.questions, y2026: y2026.questions });
    }
    if differences.is_empty() { Ok(y2025.output) } else { Err(EraMismatch { differences }) }
}

/// [`compare_eras`], failing the test (with every difference and advice) when the eras
/// disagree.
///
/// # Panics
///
/// Panics when the two runs differ.
pub async fn assert_same_in_both_eras<T, S, F, Fut>(setup: S, test: F) -> T
where
    T: PartialEq + std::fmt::Debug,
    S: Fn(&Effects) -> (Server, ElicitationScript),
    F: Fn(TestClient) -> Fut,
    Fut: Future<Output = T>,
{
    compare_eras(setup, test).await.unwrap_or_else(|mismatch| panic!("{mismatch}"))
}
