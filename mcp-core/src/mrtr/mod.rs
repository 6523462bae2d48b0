//! Multi round-trip requests (MCP 2026-07-28, SEP-2322): the same handler code that sends
//! `elicitation/create` to a 2025-era client answers a 2026-era client with an
//! `input_required` result instead, and completes when the client retries with the answers.
//!
//! The handler is **replayed**: each retry runs it again from the start, and every
//! `ctx.elicit` / `ctx.sample` / `ctx.roots` call is answered from what the client has provided
//! so far (the retry's `inputResponses`, plus the answers of earlier rounds carried in the
//! sealed `requestState`). The first call without an answer ends the run: the server replies
//! `input_required` with every request the handler made in that run that is still unanswered
//! (so requests made together, e.g. with `join!`, go out in one round). Nothing is kept in
//! memory between rounds, so a retry may land on any instance that shares the state key.
//!
//! What a handler author must know: code before an elicitation runs again on every round, so
//! keep it free of side effects that must not repeat (or guard them); input requests are keyed
//! by the order in which the handler makes them (`input-0`, `input-1`, …) unless given a
//! stable key, so a handler must make them in the same order on every run.

pub mod state;

use std::future::Future;
use std::pin::pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::Poll;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::protocol::JsonObject;

/// The inputs of one run of a handler serving a 2026-era request.
#[derive(Debug)]
pub(crate) struct Rounds {
    /// Fixed in the request's first round and carried in its state (see [`state::Carried`]).
    chain: String,
    answers: JsonObject,
    next_key: AtomicU32,
    next_url_id: AtomicU32,
    asked: Mutex<JsonObject>,
    used: Mutex<Vec<String>>,
}

impl Rounds {
    /// The first round of a request: no answers yet, a fresh chain.
    #[cfg(test)]
    pub(crate) fn first() -> Self {
        Self::new(state::Carried { chain: new_chain(), answers: JsonObject::new() })
    }

    pub(crate) fn new(carried: state::Carried) -> Self {
        Rounds {
            chain: carried.chain,
            answers: carried.answers,
            next_key: AtomicU32::new(0),
            next_url_id: AtomicU32::new(0),
            asked: Mutex::default(),
            used: Mutex::default(),
        }
    }

    /// What stays the same across the rounds of this request.
    pub(crate) fn chain(&self) -> &str {
        &self.chain
    }

    /// A number that is the same in every round of this request (and, with 63 random bits,
    /// different for every other request): the request's session key. The top bit is set, so
    /// it never equals the keys counted out to 2025-era sessions.
    pub(crate) fn session_bits(&self) -> u64 {
        let hash = Sha256::digest(format!("session:{}", self.chain).as_bytes());
        let mut bits = [0u8; 8];
        bits.copy_from_slice(&hash[..8]);
        u64::from_be_bytes(bits) | 1 << 63
    }

    /// The next URL elicitation id the handler makes: derived from the chain and the call
    /// order, so a replayed handler makes the ids it made before and the page the user visited
    /// in an earlier round is the one it sees. 128 bits, as unguessable as the chain.
    pub(crate) fn url_elicitation_id(&self) -> String {
        let n = self.next_url_id.fetch_add(1, Ordering::Relaxed);
        let hash = Sha256::digest(format!("url-elicitation:{}:{n}", self.chain).as_bytes());
        hash[..16].iter().map(|b| format!("{b:02x}")).collect()
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
        None
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
        state::Carried { chain: self.chain.clone(), answers: self.used_answers() }
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
}

/// Runs `handler` until it finishes or waits on an unanswered input request. Requests it makes
/// together (in one poll) are gathered into one round.
pub(crate) async fn drive<F: Future>(handler: F, rounds: &Rounds) -> Outcome<F::Output> {
    let mut handler = pin!(handler);
    std::future::poll_fn(|cx| match handler.as_mut().poll(cx) {
        Poll::Ready(output) => Poll::Ready(Outcome::Complete(output)),
        Poll::Pending if rounds.has_asked() => Poll::Ready(Outcome::InputRequired(rounds.take_asked())),
        Poll::Pending => Poll::Pending,
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
