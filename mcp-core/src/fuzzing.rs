//! What the fuzz targets in `fuzz/` need and cannot reach through the public API: opening a
//! `requestState` the way a 2026-era retry does, the scanner of tool arguments, and the
//! client's SSE parser. Built only under `--cfg fuzzing`, which `cargo fuzz` sets; not a public API, no stability
//! promise.

use std::time::Duration;

use serde_json::Value;

use crate::multi_round::state::{self, Binding, Carried, StateKey};
use crate::protocol::JsonObject;

pub use crate::multi_round::state::StateError;

/// The request a state is presented on (or sealed for).
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub method: &'a str,
    /// The tool or prompt name, or the resource URI.
    pub name: &'a str,
    /// The request's original arguments.
    pub arguments: &'a Value,
    /// The authenticated user.
    pub principal: Option<&'a str>,
}

impl Request<'_> {
    fn binding(&self) -> Binding {
        Binding {
            method: self.method.to_owned(),
            name: self.name.to_owned(),
            digest: state::digest(self.arguments),
            principal: self.principal.map(str::to_owned),
        }
    }
}

/// The server's sealer of `requestState`, with a key of the target's choosing.
#[derive(Debug, Clone)]
pub struct Sealer(state::Sealer);

impl Sealer {
    /// A sealer with `key` whose states live for `ttl`.
    pub fn new(key: [u8; 32], ttl: Duration) -> Self {
        Sealer(state::Sealer::new(StateKey::from_bytes(key), ttl))
    }

    /// Opens `text` as the server does when `request` presents it: on success, the round-trip
    /// chain and the answers it carries.
    pub fn open(&self, text: &str, request: &Request<'_>) -> Result<(String, JsonObject), StateError> {
        self.0.open(text, &request.binding()).map(|c| (c.chain, c.answers))
    }

    /// Seals `chain` and `answers` for `request`.
    pub fn seal(&self, request: &Request<'_>, chain: &str, answers: &JsonObject) -> String {
        self.0.seal(&request.binding(), &Carried { chain: chain.to_owned(), answers: answers.clone() })
    }

    /// A state whose tag is valid for any `payload`: what only a holder of the key could make,
    /// so that the target reaches the checks behind the signature.
    pub fn sign(&self, payload: &[u8]) -> String {
        self.0.sign(payload)
    }
}

/// Reads `text` as a tool's arguments object, both with the scanner the server uses and with
/// serde_json, and panics if they disagree (on whether it is an object, or on its members).
pub fn check_arguments(text: &str) {
    crate::tool::check_against_serde(text);
}

/// Parses `data` as a `text/event-stream` body whole and in chunks, with a limit read from
/// its first byte, and panics unless both agree and what the parser holds stays bounded.
pub fn check_sse(data: &[u8]) {
    crate::client::sse::check_chunking(data);
}
