//! One frame, as a transport hands it to the engine: `Message::decode`, then the typed
//! parameters or result of the main methods of both eras.
//!
//! Checked besides "no panic": only an object decodes; a decoded id is echoed exactly in a
//! response; every rejection encodes as a JSON-RPC error with a standard code; typed values
//! survive a round trip through their wire form.

#![no_main]

use libfuzzer_sys::fuzz_target;
use typed_mcp::protocol::jsonrpc::{DecodeError, codes, encode_error, encode_result};
use typed_mcp::protocol::{
    CallToolParams, CancelledParams, CompleteParams, CreateMessageParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationCompleteParams, ErrorObject, GetPromptParams, InitializeParams, InitializeResult,
    ListRootsResult, Message, PaginatedParams, ProgressParams, RequestId, ResourceUriParams, SetLevelParams,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

/// `text` read as `T`; when it reads, its wire form must read back as the same value.
fn typed<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(text: &str) {
    let Ok(value) = serde_json::from_str::<T>(text) else { return };
    let wire = serde_json::to_string(&value).expect("a decoded value encodes");
    let again: T = serde_json::from_str(&wire).unwrap_or_else(|e| panic!("{wire} does not read back: {e}"));
    assert_eq!(again, value, "round trip through {wire}");
}

fn id_json(id: &RequestId) -> Value {
    match id {
        RequestId::Number(n) => Value::from(*n),
        RequestId::String(s) => Value::from(&**s),
    }
}

/// The response to `id` carries `id` exactly.
fn echoes(id: &RequestId) {
    let empty = RawValue::from_string("{}".into()).expect("valid JSON");
    let response: Value = serde_json::from_str(&encode_result(id, &empty)).expect("a response is JSON");
    assert_eq!(response["id"], id_json(id));
    let error: Value =
        serde_json::from_str(&encode_error(Some(id), &ErrorObject::internal("x"))).expect("an error is JSON");
    assert_eq!(error["id"], id_json(id));
}

fn params(method: &str, text: &str) {
    match method {
        "initialize" => typed::<InitializeParams>(text),
        "tools/call" => typed::<CallToolParams>(text),
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => typed::<PaginatedParams>(text),
        "prompts/get" => typed::<GetPromptParams>(text),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => typed::<ResourceUriParams>(text),
        "completion/complete" => typed::<CompleteParams>(text),
        "logging/setLevel" => typed::<SetLevelParams>(text),
        "sampling/createMessage" => typed::<CreateMessageParams>(text),
        "elicitation/create" => {
            if let Ok(value) = serde_json::from_str::<Value>(text)
                && let Ok(p) = ElicitRequestParams::from_wire(value)
            {
                let back = ElicitRequestParams::from_wire(serde_json::to_value(&p).expect("encodes"));
                assert_eq!(back.expect("reads back"), p);
            }
        }
        "notifications/cancelled" => typed::<CancelledParams>(text),
        "notifications/progress" => typed::<ProgressParams>(text),
        "notifications/elicitation/complete" => typed::<ElicitationCompleteParams>(text),
        _ => {}
    }
}

/// A result, read as each kind of answer the server or the client awaits.
fn result(text: &str) {
    typed::<ElicitResult>(text);
    typed::<CreateMessageResult>(text);
    typed::<ListRootsResult>(text);
    typed::<InitializeResult>(text);
}

fuzz_target!(|data: &[u8]| {
    let Ok(frame) = std::str::from_utf8(data) else { return };
    let decoded = Message::decode(frame);
    // Only a JSON object is a message (serde would read one from an array, by position).
    assert!(decoded.is_err() || frame.trim_start().starts_with('{'), "decoded a non-object: {frame}");
    match decoded {
        Ok(Message::Request(r)) => {
            echoes(&r.id);
            let text = r.params.as_deref().map_or("{}", RawValue::get);
            assert!(serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok(), "params are JSON");
            params(&r.method, text);
        }
        Ok(Message::Notification(n)) => params(&n.method, n.params.as_deref().map_or("{}", RawValue::get)),
        Ok(Message::Response(r)) => match r.outcome {
            Ok(raw) => result(raw.get()),
            Err(e) => {
                let _ = typed_mcp::UrlElicitationRequired::from_error_object(&e);
            }
        },
        Err(DecodeError { id, error, respond }) => {
            let standard = [codes::PARSE_ERROR, codes::INVALID_REQUEST];
            assert!(standard.contains(&error.code), "unexpected code {}", error.code);
            if let Some(id) = &id {
                echoes(id);
            }
            if respond {
                // What we send back must read as a response on the other side, or (without an
                // id) be an error response nobody answers.
                let sent = encode_error(id.as_ref(), &error);
                match Message::decode(&sent) {
                    Ok(Message::Response(r)) => assert!(id.is_some() && r.outcome.is_err(), "{sent}"),
                    Err(e) => assert!(id.is_none() && !e.respond, "{sent}"),
                    Ok(_) => panic!("our error response decodes as a request: {sent}"),
                }
            }
        }
    }
});
