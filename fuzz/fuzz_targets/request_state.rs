//! `requestState` as a 2026-era retry presents it: attacker-controlled text, opened with the
//! server's key against the request it arrives on.
//!
//! Three ways in, by the first byte: the text as is (all a client can send); any payload with
//! a valid tag (what is behind the signature, as if the key had leaked or a future format
//! were sealed); and a state sealed for a request built from the input, then presented on it
//! and on requests that differ in one part.
//!
//! Checked besides "no panic": a sealed state opens on its own request with what was sealed,
//! and on no other; changing any character of it makes it fail.

#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use typed_mcp::fuzzing::{Request, Sealer, StateError};
use typed_mcp::protocol::JsonObject;
use serde::Deserialize;
use serde_json::Value;

const KEY: [u8; 32] = [42; 32];

fn sealer() -> Sealer {
    Sealer::new(KEY, Duration::from_secs(600))
}

fn expected() -> (Value, Request<'static>) {
    (
        serde_json::json!({"a": 1}),
        Request { method: "tools/call", name: "tool", arguments: &Value::Null, principal: None },
    )
}

/// A request, and what to seal for it, read from the input.
#[derive(Deserialize)]
struct Case {
    #[serde(default)]
    method: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    arguments: Value,
    #[serde(default)]
    principal: Option<String>,
    #[serde(default)]
    chain: String,
    #[serde(default)]
    answers: JsonObject,
}

fn round_trip(case: &Case) {
    let sealer = sealer();
    let request = Request {
        method: &case.method,
        name: &case.name,
        arguments: &case.arguments,
        principal: case.principal.as_deref(),
    };
    let state = sealer.seal(&request, &case.chain, &case.answers);
    assert!(state.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')), "{state}");
    let (chain, answers) = sealer.open(&state, &request).expect("a state opens on its own request");
    assert_eq!((chain.as_str(), &answers), (case.chain.as_str(), &case.answers));

    let method = format!("{}x", case.method);
    let name = format!("{}x", case.name);
    let arguments = serde_json::json!({"other": case.arguments});
    let principal = format!("{}x", case.principal.as_deref().unwrap_or_default());
    let others = [
        Request { method: &method, ..request.clone() },
        Request { name: &name, ..request.clone() },
        Request { arguments: &arguments, ..request.clone() },
        Request { principal: Some(&principal), ..request.clone() },
    ];
    for other in &others {
        assert!(
            matches!(sealer.open(&state, other), Err(StateError::Mismatch(_))),
            "a state opened on another request: {other:?}"
        );
    }
    if case.principal.is_some() {
        let anonymous = Request { principal: None, ..request.clone() };
        assert!(sealer.open(&state, &anonymous).is_err(), "a user's state opened anonymously");
    }
    // Another key, or any character changed.
    assert!(matches!(Sealer::new([0; 32], Duration::from_secs(600)).open(&state, &request), Err(StateError::Tampered)));
    let bytes = state.as_bytes();
    let at = case.chain.len() % bytes.len();
    for replacement in [b'A', b'_', b'.'] {
        if bytes[at] == replacement {
            continue;
        }
        let mut changed = bytes.to_vec();
        changed[at] = replacement;
        let changed = String::from_utf8(changed).expect("ASCII");
        assert!(sealer.open(&changed, &request).is_err(), "an altered state opened: {changed}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    match mode % 3 {
        0 => {
            let text = String::from_utf8_lossy(rest);
            let (arguments, mut request) = expected();
            request.arguments = &arguments;
            let _ = sealer().open(&text, &request);
        }
        1 => {
            let (arguments, mut request) = expected();
            request.arguments = &arguments;
            let sealer = sealer();
            let state = sealer.sign(rest);
            if let Ok((chain, answers)) = sealer.open(&state, &request) {
                // Only a payload bound to this very request opens.
                let payload: Value = serde_json::from_slice(rest).expect("an opened payload is JSON");
                assert_eq!(payload["method"], "tools/call");
                assert_eq!(payload["name"], "tool");
                let _ = (chain, answers);
            }
        }
        _ => {
            if let Ok(case) = serde_json::from_slice::<Case>(rest) {
                round_trip(&case);
            }
        }
    }
});
