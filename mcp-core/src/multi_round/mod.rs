//! Multi round-trip requests (MCP 2026-07-28): how one handler serves both protocol eras, and
//! what its author must know.
//!
//! In a 2025-era session, `ctx.elicit(…)` sends `elicitation/create` to the client and the
//! handler waits, suspended in memory, for the answer. A 2026-era request has no session and the
//! server sends no requests of its own: when the handler asks something, the server answers the
//! request itself with
//!
//! ```json
//! {"resultType": "input_required",
//!  "inputRequests": {"input-0": {"method": "elicitation/create", "params": {…}}},
//!  "requestState": "…"}
//! ```
//!
//! and the client sends the same request again with `inputResponses` (the answers, by key) and
//! the `requestState` unchanged. The same handler code serves both; nothing in it changes.
//!
//! # The handler is replayed
//!
//! Each round runs the handler again **from the start**. Every `ctx.elicit` (and its
//! shorthands), `ctx.elicit_url`, `ctx.sample` and `ctx.roots` is answered from what the
//! client has given so far: the retry's `inputResponses` and the answers of earlier rounds,
//! carried in the sealed `requestState`. When the handler waits on a question that has no
//! answer yet, the run ends (its future is dropped) and the server replies `input_required`
//! with every unanswered question the run asked. So:
//!
//! - **Code before a question runs again on every round.** A handler that asks two questions
//!   one after the other runs its first part three times. Do what must happen once (a write, a
//!   payment, an e-mail) after the last question, or make it idempotent. Even after the last
//!   question, a client may resend its final retry, and the handler then completes again: key
//!   the side effect by [`Context::round_trip_id`](crate::Context::round_trip_id), which is the
//!   same in every round of one request and new for the next request, and skip it when that
//!   key was seen before.
//! - Reads before a question may return something else on a later round; base decisions on the
//!   arguments and the answers, which are the same on every round.
//! - Questions asked together (`tokio::join!`) go out in one round; questions asked one after
//!   the other take a round each.
//! - Only the answers the handler used travel on in `requestState`: answers to keys nobody asked
//!   are dropped, a missing answer is asked again, and an answer sealed in an earlier round
//!   stands (a retry cannot replace it).
//! - Per-call timeouts (`.timeout(…)`) do not apply: nothing waits between rounds.
//!
//! # Keys
//!
//! A question's key names it in `inputRequests` and `inputResponses`. By default it is its place
//! in the order the run asks (`input-0`, `input-1`, …; `ctx.sample` and `ctx.roots` count
//! too), so a handler must ask in the same order on every run. That holds when what it asks
//! depends only on the arguments and on earlier answers. When it depends on anything else (the
//! time, a database read, a feature flag, a new version deployed while requests are in flight),
//! give the question a stable key of its own, which takes no place in the order:
//!
//! ```no_run
//! # async fn f(ctx: typed_mcp::Context) -> Result<(), typed_mcp::ElicitError> {
//! let ok = ctx.confirm("Delete the draft too?").key("delete-draft").await?;
//! let name = ctx.elicit_value::<String>("New name?").key("name").await?;
//! let flow = ctx.elicit_url("https://example.com/connect?flow={elicitationId}", "Connect").key("connect").await?;
//! # Ok(()) }
//! ```
//!
//! Keys must be unique within a request; do not use the `input-N` form. A flow of a
//! [`UrlElicitationRequired`](crate::UrlElicitationRequired) error is keyed by its
//! elicitation id.
//!
//! # Why replay
//!
//! Between rounds the server keeps nothing: no suspended task, no session, no table of pending
//! requests. It stays stateless, so any instance behind a load balancer can take any round, a
//! restart loses nothing but the runs in progress, and a request the client abandons costs
//! nothing. A retry that lands on another instance completes when the instances share the state
//! key ([`ServerBuilder::request_state_key`](crate::ServerBuilder::request_state_key)); with
//! another key it is refused with -32602 `invalid requestState: requestState failed
//! verification`, before the handler runs, and the client must start the request again. The
//! price is the replay above.
//!
//! # The sealed state
//!
//! `requestState` passes through the client, so the server seals it (HMAC-SHA256) and binds it
//! to the request: the method, the tool or prompt name or resource URI, a digest of the
//! arguments, and the authenticated principal (over HTTP, the `Principal` a layer in front of
//! the endpoint sets), with an expiry. A state that was altered, sealed under another key,
//! expired, or presented on another request (other arguments, another tool, another user) is
//! refused with -32602 and the handler does not run.
//!
//! - [`ServerBuilder::request_state_key`](crate::ServerBuilder::request_state_key): 32 secret
//!   bytes ([`StateKey::from_bytes`](state::StateKey::from_bytes)). By default each process
//!   makes a random key, so retries fail after a restart or on another instance; give every
//!   instance the same key from your secret store. Changing it fails the requests in flight
//!   once.
//! - [`ServerBuilder::request_state_ttl`](crate::ServerBuilder::request_state_ttl): how long a
//!   round may take, a person answering included (default 15 minutes).
//!
//! The state is signed, not encrypted: the client can read what it carries, which is only the
//! answers it gave and the request's round-trip id.
//!
//! # What else differs in the 2026 era
//!
//! - URL mode: the input request has the `message` and `url` but no `elicitationId`, and there
//!   is no `notifications/elicitation/complete`:
//!   [`UrlElicitations::complete`](crate::server::UrlElicitations::complete) only marks the flow
//!   done, and the client's retry finds it done. `ctx.new_url_elicitation_id()` and
//!   `ctx.elicit_url(…)` make the same ids in every round of one request (the n-th id of a run
//!   is the same each time), so the flow the user visited is the one the handler sees.
//! - A tool's [`UrlElicitationRequired`](crate::UrlElicitationRequired) error becomes a URL
//!   input request per flow (the client must declare URL mode, else -32021). On the retry, if the
//!   handler still returns it: flows the user accepted are still under way, and the server
//!   answers `input_required` with nothing to ask, so the client retries; a declined or
//!   cancelled flow ends the request with the error (-32042). Make the ids with
//!   `ctx.new_url_elicitation_id()`, which repeats them on every round: an id that changes
//!   between rounds is a new flow, asked for again on each retry.
//! - [`Context::session_key`](crate::Context::session_key) is the same in every round of one
//!   request and different for every request: what a handler remembers by session lasts for one
//!   request.
//! - Questions can be asked in `tools/call`, `prompts/get` and `resources/read`. Elsewhere (a
//!   completer) a question fails the request (-32603).
//! - Log messages go out only when the request's `_meta` names a level
//!   (`io.modelcontextprotocol/logLevel`).
//! - A question the client did not declare it can answer (`ctx.elicit` without `elicitation`,
//!   `ctx.sample` without `sampling`, `ctx.roots` without `roots`) returns `NotSupported` as in
//!   the 2025 era; if the handler then fails, the request fails with -32021
//!   (`MissingRequiredClientCapability`, the missing capabilities in
//!   `data.requiredCapabilities`). A handler that goes on without the answer completes as usual.
//! - An answer that is not a result of the request it answers (an `ElicitResult` without a
//!   valid `action`, say) fails the request with -32602 instead of reaching the handler; content
//!   that does not fit a form still reaches it as `ElicitError::InvalidResponse`.
//! - [`Context::is_multi_round_trip`](crate::Context::is_multi_round_trip) tells which era a request is in.
//! - A question's key is its place in call order unless the handler names one:
//!   [`ElicitRequest::key`](crate::server::ElicitRequest::key) for a typed form, or [`keyed`] around any
//!   question (an elicitation passed on as it is, a sampling or roots request), which is how a
//!   gateway keeps the keys of the server it relays. Keys must be unique within a request.

pub mod state;

tokio::task_local! {
    static KEY: String;
}

/// Runs `asking` (a question to the client: `ctx.elicit_raw`, `ctx.sample`, `ctx.roots`, …)
/// so that, in the 2026 era, the question has the key `key` in the `input_required` result
/// (and in a task's `inputRequests`) instead of its place in call order. In a session, where
/// questions are requests of their own, the key means nothing. A key named on the request
/// itself (`ctx.elicit::<T>(…).key(…)`) wins over this one.
///
/// ```no_run
/// # async fn f(ctx: typed_mcp::Context, params: typed_mcp::protocol::ElicitRequestParams) {
/// let answer = typed_mcp::multi_round::keyed("user_name", ctx.elicit_raw(params, None)).await;
/// # }
/// ```
pub async fn keyed<F: Future>(key: impl Into<String>, asking: F) -> F::Output {
    KEY.scope(key.into(), asking).await
}

/// The key [`keyed`] gives the questions asked now, if any.
pub(crate) fn scoped_key() -> Option<String> {
    KEY.try_with(Clone::clone).ok()
}

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::engine::Cancellation;
use crate::protocol::{ErrorObject, JsonObject};

/// The inputs of one run of a handler serving a 2026-era request.
#[derive(Debug)]
pub(crate) struct Rounds {
    /// Fixed in the request's first round and carried in its state (see [`state::Carried`]).
    /// (Chosen when first needed: most requests never ask.)
    chain: std::sync::OnceLock<String>,
    answers: JsonObject,
    next_key: AtomicU32,
    next_url_id: AtomicU32,
    asked: Mutex<JsonObject>,
    used: Mutex<Vec<String>>,
    /// Woken when a question is asked, so the run ends even when the question comes from a
    /// task the handler spawned (the handler itself is then waiting on something else).
    waker: Mutex<Option<Waker>>,
    /// Cancelled when the run is over: a question still waiting (in a spawned task) ends.
    /// (Its token is made only if something waits for the end.)
    ended: Cancellation,
    /// The client capabilities the handler needed and the client did not declare (a
    /// `ClientCapabilities` object, merged), for a -32021 error if the handler then fails.
    required: Mutex<JsonObject>,
    /// An answer that is not what its question asks for: the request fails with this error.
    rejected: Mutex<Option<ErrorObject>>,
    /// Holds on making the call a task (see [`crate::task::hold_start`]): while any is kept,
    /// a handler that waits is waited for, and its questions go in this round.
    holds: std::sync::atomic::AtomicUsize,
}

impl Rounds {
    /// The first round of a request: no answers yet, a fresh chain.
    #[cfg(test)]
    pub(crate) fn first() -> Self {
        Self::starting(JsonObject::new())
    }

    /// A round of a request carried over from the one before.
    pub(crate) fn new(carried: state::Carried) -> Self {
        let rounds = Self::starting(carried.answers);
        let _ = rounds.chain.set(carried.chain);
        rounds
    }

    /// The first round of a request, with what the client answered unasked: its chain is
    /// chosen when first needed.
    pub(crate) fn starting(answers: JsonObject) -> Self {
        Rounds {
            chain: std::sync::OnceLock::new(),
            answers,
            next_key: AtomicU32::new(0),
            next_url_id: AtomicU32::new(0),
            asked: Mutex::default(),
            used: Mutex::default(),
            waker: Mutex::default(),
            ended: Cancellation::new(),
            required: Mutex::default(),
            rejected: Mutex::default(),
            holds: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Keeps the call from becoming a task until the returned hold is dropped.
    pub(crate) fn hold(self: &Arc<Self>) -> Hold {
        self.holds.fetch_add(1, Ordering::AcqRel);
        Hold(self.clone())
    }

    /// Whether something holds the call from becoming a task.
    pub(crate) fn held(&self) -> bool {
        self.holds.load(Ordering::Acquire) > 0
    }

    /// What stays the same across the rounds of this request.
    pub(crate) fn chain(&self) -> &str {
        self.chain.get_or_init(new_chain)
    }

    /// A number that is the same in every round of this request (and, with 63 random bits,
    /// different for every other request): the request's session key. The top bit is set, so
    /// it never equals the keys counted out to 2025-era sessions.
    pub(crate) fn session_bits(&self) -> u64 {
        let hash = Sha256::new().chain_update(b"session:").chain_update(self.chain().as_bytes()).finalize();
        let mut bits = [0u8; 8];
        bits.copy_from_slice(&hash[..8]);
        u64::from_be_bytes(bits) | 1 << 63
    }

    /// The next URL elicitation id the handler makes: derived from the chain and the call
    /// order, so a replayed handler makes the ids it made before and the page the user visited
    /// in an earlier round is the one it sees. 128 bits, as unguessable as the chain.
    pub(crate) fn url_elicitation_id(&self) -> String {
        let n = self.next_url_id.fetch_add(1, Ordering::Relaxed);
        let hash = Sha256::digest(format!("url-elicitation:{}:{n}", self.chain()).as_bytes());
        hex::encode(&hash[..16])
    }

    /// The key of the next input request: `explicit`, or the next in call order.
    pub(crate) fn key(&self, explicit: Option<&str>) -> String {
        match explicit {
            Some(k) => k.to_owned(),
            None => format!("input-{}", self.next_key.fetch_add(1, Ordering::Relaxed)),
        }
    }

    /// The client's answer to the request `key`, or `None` after recording the request
    /// (`method`, `params`) to be sent in the `input_required` result.
    pub(crate) fn answer_or_ask(&self, key: &str, method: &str, params: Value) -> Option<Value> {
        if let Some(answer) = self.answers.get(key) {
            if let Ok(mut used) = self.used.lock() {
                used.push(key.to_owned());
            }
            return Some(answer.clone());
        }
        if let Ok(mut asked) = self.asked.lock() {
            asked.insert(key.to_owned(), serde_json::json!({"method": method, "params": params}));
        }
        if let Some(waker) = self.waker.lock().ok().and_then(|mut w| w.take()) {
            waker.wake();
        }
        None
    }

    /// Records that the handler needed the client capability at `path` (`sampling`,
    /// `sampling.tools`, `roots`, `elicitation`, `elicitation.url`, …), which the client did not
    /// declare. Should the handler then fail, the request fails with
    /// `MissingRequiredClientCapability` naming every capability recorded.
    pub(crate) fn require(&self, path: &str) {
        let Ok(mut required) = self.required.lock() else { return };
        let mut object = &mut *required;
        for part in path.split('.') {
            let entry = object.entry(part.to_owned()).or_insert_with(|| Value::Object(JsonObject::new()));
            if !entry.is_object() {
                *entry = Value::Object(JsonObject::new());
            }
            let Value::Object(next) = entry else { return };
            object = next;
        }
    }

    /// The capabilities recorded by [`require`](Self::require), as a `ClientCapabilities`
    /// object; `None` when there are none.
    pub(crate) fn required(&self) -> Option<JsonObject> {
        self.required.lock().ok().filter(|r| !r.is_empty()).map(|r| r.clone())
    }

    /// Ends the run with `error`: the client's answer to a question is not what the question
    /// asks for (a protocol error, not something the handler should see).
    pub(crate) fn reject(&self, error: ErrorObject) {
        if let Ok(mut rejected) = self.rejected.lock() {
            rejected.get_or_insert(error);
        }
        if let Some(waker) = self.waker.lock().ok().and_then(|mut w| w.take()) {
            waker.wake();
        }
    }

    fn take_rejection(&self) -> Option<ErrorObject> {
        self.rejected.lock().ok().and_then(|mut r| r.take())
    }

    /// Completes when the run is over (its answer, if any, comes to another run).
    pub(crate) async fn ended(&self) {
        self.ended.cancelled().await
    }

    /// The client's answer to the request `key`, if it gave one (and then it is carried on).
    pub(crate) fn answer(&self, key: &str) -> Option<&Value> {
        let answer = self.answers.get(key)?;
        if let Ok(mut used) = self.used.lock() {
            used.push(key.to_owned());
        }
        Some(answer)
    }

    fn has_asked(&self) -> bool {
        self.asked.lock().map(|a| !a.is_empty()).unwrap_or(false)
    }

    /// The answers this run relied on, to carry into the next round.
    pub(crate) fn used_answers(&self) -> JsonObject {
        let used = self.used.lock().map(|u| u.clone()).unwrap_or_default();
        used.into_iter().filter_map(|k| self.answers.get(&k).map(|v| (k, v.clone()))).collect()
    }

    /// What the next round carries: the chain and the answers this run relied on.
    pub(crate) fn carried(&self) -> state::Carried {
        state::Carried { chain: self.chain().to_owned(), answers: self.used_answers() }
    }

    fn take_asked(&self) -> JsonObject {
        self.asked.lock().map(|mut a| std::mem::take(&mut *a)).unwrap_or_default()
    }
}

/// A fresh chain: 128 random bits, hex.
pub(crate) fn new_chain() -> String {
    crate::elicit::url::new_elicitation_id()
}

/// How one run of a handler ended.
pub(crate) enum Outcome<T> {
    /// The handler finished.
    Complete(T),
    /// The handler is waiting for these input requests (by key).
    InputRequired(JsonObject),
    /// The client answered a question with something that is not an answer to it.
    Rejected(ErrorObject),
}

/// Ends a run when dropped.
struct EndsRun<'a>(&'a Cancellation);

impl Drop for EndsRun<'_> {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Runs `handler` until it finishes or waits on an unanswered input request, or until one of
/// the client's answers is rejected (see [`Rounds::reject`]). Requests it makes together (in
/// one poll) are gathered into one round. When it returns (or is dropped), the
/// run is over: questions still waiting in tasks the handler spawned end with
/// [`PeerError::Cancelled`](crate::engine::PeerError::Cancelled).
pub(crate) async fn drive<F: Future>(handler: F, rounds: &Rounds) -> Outcome<F::Output> {
    let mut handler = pin!(handler);
    let _over = EndsRun(&rounds.ended);
    std::future::poll_fn(|cx| {
        if let Ok(mut waker) = rounds.waker.lock() {
            *waker = Some(cx.waker().clone());
        }
        match handler.as_mut().poll(cx) {
            // A rejected answer fails the request even if the handler went on without it.
            Poll::Ready(output) => Poll::Ready(match rounds.take_rejection() {
                Some(error) => Outcome::Rejected(error),
                None => Outcome::Complete(output),
            }),
            Poll::Pending => match rounds.take_rejection() {
                Some(error) => Poll::Ready(Outcome::Rejected(error)),
                None if rounds.has_asked() => Poll::Ready(Outcome::InputRequired(rounds.take_asked())),
                None => Poll::Pending,
            },
        }
    })
    .await
}

/// [`drive`] for a handler that answered without waiting: how it ended. The run is over.
pub(crate) fn answered<T>(output: T, rounds: &Rounds) -> Outcome<T> {
    rounds.ended.cancel();
    match rounds.take_rejection() {
        Some(error) => Outcome::Rejected(error),
        None => Outcome::Complete(output),
    }
}

/// Polls `handler` once, for a call that may become a task: how it ended if it finished, was
/// rejected, or asked the client something in this round (as [`drive`]); the handler itself,
/// still running, if it waits on anything else (it goes on as a task).
pub(crate) async fn first_run<T>(
    mut handler: crate::engine::BoxFuture<'static, T>,
    rounds: &Rounds,
) -> Result<Outcome<T>, crate::engine::BoxFuture<'static, T>> {
    let polled = std::future::poll_fn(|cx| {
        if let Ok(mut waker) = rounds.waker.lock() {
            *waker = Some(cx.waker().clone());
        }
        Poll::Ready(match handler.as_mut().poll(cx) {
            Poll::Ready(output) => Some(match rounds.take_rejection() {
                Some(error) => Outcome::Rejected(error),
                None => Outcome::Complete(output),
            }),
            Poll::Pending => match rounds.take_rejection() {
                Some(error) => Some(Outcome::Rejected(error)),
                None if rounds.has_asked() => Some(Outcome::InputRequired(rounds.take_asked())),
                // Held: the handler is waited for (dropping the hold wakes this).
                None if rounds.held() => return Poll::Pending,
                None => None,
            },
        })
    })
    .await;
    match polled {
        Some(outcome) => {
            rounds.ended.cancel();
            Ok(outcome)
        }
        None => Err(handler),
    }
}

/// A hold on making a call a task, on the round it was taken in; dropping it lets the call
/// become one (see [`crate::task::hold_start`]).
pub(crate) struct Hold(Arc<Rounds>);

impl Drop for Hold {
    fn drop(&mut self) {
        self.0.holds.fetch_sub(1, Ordering::AcqRel);
        if let Some(waker) = self.0.waker.lock().ok().and_then(|w| w.clone()) {
            waker.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    async fn ask(rounds: &Rounds, what: &str) -> Value {
        let key = rounds.key(None);
        match rounds.answer_or_ask(&key, "elicitation/create", json!({"message": what})) {
            Some(v) => v,
            None => std::future::pending().await,
        }
    }

    #[tokio::test]
    async fn requests_made_together_form_one_round_and_answers_replay() {
        let rounds = Rounds::first();
        let outcome = drive(async { tokio::join!(ask(&rounds, "a"), ask(&rounds, "b")) }, &rounds).await;
        let Outcome::InputRequired(asked) = outcome else { panic!("expected input_required") };
        assert_eq!(asked.keys().collect::<Vec<_>>(), ["input-0", "input-1"]);

        let answers = json!({"input-0": "A", "input-1": "B", "extra": 1}).as_object().unwrap().clone();
        let rounds = Rounds::new(state::Carried { chain: "c".into(), answers });
        let outcome = drive(async { tokio::join!(ask(&rounds, "a"), ask(&rounds, "b")) }, &rounds).await;
        let Outcome::Complete((a, b)) = outcome else { panic!("expected completion") };
        assert_eq!((a, b), (json!("A"), json!("B")));
        assert_eq!(rounds.used_answers().len(), 2, "unknown extra answers are not carried forward");
    }

    #[test]
    fn ids_repeat_in_every_round_of_one_request_only() {
        let carried = state::Carried { chain: new_chain(), answers: JsonObject::new() };
        let (one, two) = (Rounds::new(carried.clone()), Rounds::new(carried));
        let ids = |r: &Rounds| [r.url_elicitation_id(), r.url_elicitation_id()];
        let first = ids(&one);
        assert_eq!(first, ids(&two), "a replay makes the ids it made before, in order");
        assert_ne!(first[0], first[1]);
        assert_eq!(first[0].len(), 32);
        assert_eq!(one.session_bits(), two.session_bits());
        assert!(one.session_bits() >= 1 << 63, "never a key counted out to a 2025-era session");
        let other = Rounds::first();
        assert_ne!(ids(&other), first);
        assert_ne!(other.session_bits(), one.session_bits());
    }

    #[test]
    fn required_capabilities_merge_into_one_object() {
        let rounds = Rounds::first();
        assert_eq!(rounds.required(), None);
        for path in ["sampling.tools", "roots", "sampling"] {
            rounds.require(path);
        }
        let expected = json!({"sampling": {"tools": {}}, "roots": {}});
        assert_eq!(rounds.required().map(Value::Object), Some(expected));
    }

    #[tokio::test]
    async fn a_rejected_answer_ends_the_run_whatever_the_handler_does() {
        let rounds = Rounds::first();
        let outcome = drive(
            async {
                rounds.reject(ErrorObject::invalid_params("bad answer"));
                // The handler would go on, but the request has failed.
                7
            },
            &rounds,
        )
        .await;
        let Outcome::Rejected(error) = outcome else { panic!("expected the rejection") };
        assert_eq!(error.message, "bad answer");

        let rounds = Rounds::first();
        let outcome = drive(
            async {
                rounds.reject(ErrorObject::invalid_params("first"));
                rounds.reject(ErrorObject::invalid_params("second"));
                std::future::pending::<()>().await
            },
            &rounds,
        )
        .await;
        let Outcome::Rejected(error) = outcome else { panic!("expected the rejection") };
        assert_eq!(error.message, "first", "the first rejection is the one reported");
    }

    #[tokio::test]
    async fn a_first_run_that_waits_on_something_else_hands_back_the_running_handler() {
        // Done at once: the outcome.
        let rounds = Rounds::first();
        let done = first_run(Box::pin(async { 7 }), &rounds).await;
        assert!(matches!(done, Ok(Outcome::Complete(7))));
        // A question in this round: input required.
        let rounds = Arc::new(Rounds::first());
        let asking = rounds.clone();
        let asked = first_run(Box::pin(async move { ask(&asking, "name?").await }), &rounds).await;
        let Ok(Outcome::InputRequired(asked)) = asked else { panic!("expected input_required") };
        assert_eq!(asked.keys().collect::<Vec<_>>(), ["input-0"]);
        // Waiting on anything else: the handler itself, which goes on to its end.
        let (tx, rx) = tokio::sync::oneshot::channel::<u8>();
        let rounds = Rounds::first();
        let Err(handler) = first_run(Box::pin(async move { rx.await.unwrap_or(0) + 1 }), &rounds).await else {
            panic!("a waiting handler is handed back");
        };
        tx.send(41).unwrap();
        assert_eq!(handler.await, 42);
    }

    #[tokio::test]
    async fn sequential_requests_take_one_round_each() {
        let answers = json!({"input-0": "first"}).as_object().unwrap().clone();
        let rounds = Rounds::new(state::Carried { chain: "c".into(), answers });
        let outcome = drive(
            async {
                let first = ask(&rounds, "one").await;
                tokio::task::yield_now().await;
                let second = ask(&rounds, "two").await;
                (first, second)
            },
            &rounds,
        )
        .await;
        let Outcome::InputRequired(asked) = outcome else { panic!("expected input_required") };
        assert_eq!(asked.keys().collect::<Vec<_>>(), ["input-1"]);
        assert_eq!(rounds.used_answers(), json!({"input-0": "first"}).as_object().unwrap().clone());
    }
}
