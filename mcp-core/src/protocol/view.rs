//! A request's `params`, read once: where its `_meta`, its target (`name`, `uri` or `taskId`),
//! its `arguments`, and a 2026-07-28 retry's `requestState` and `inputResponses` are in the
//! text. Whoever needs one of them (the HTTP header checks, the scopes a call needs, the
//! multi-round driver, the tool call itself) reads it from the view rather than parsing the
//! text again.

use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::methods::{MethodInfo, Target};
use super::scan::{Key, Members, unescaped_str, without_position};
use super::{ClientCapabilities, ErrorObject, Implementation, LoggingLevel};
use super::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION};

/// Where the members of a request's `params` that the protocol gives meaning to are, in its
/// text. Spans index the text the view was read from.
#[derive(Debug, Clone, Default)]
pub(crate) struct ParamsView {
    /// `_meta`.
    pub(crate) meta: Option<Range<usize>>,
    /// The target's value (a string), for a method whose row names one.
    pub(crate) target: Option<Key>,
    /// `arguments`.
    pub(crate) arguments: Option<Range<usize>>,
    /// `requestState` (2026-07-28 retries).
    pub(crate) request_state: Option<Range<usize>>,
    /// `inputResponses` (2026-07-28 retries).
    pub(crate) input_responses: Option<Range<usize>>,
}

/// `params` text of a request without any: an empty object.
pub(crate) const NO_PARAMS: &str = "{}";

impl ParamsView {
    /// Reads the members of `text`, a request's `params` (read by serde_json already), that
    /// `method` gives meaning to. An error (invalid params) when `text` is not an object, a
    /// member appears twice, or the target is not a string (the reason, for the caller to put
    /// in its invalid-params error).
    pub(crate) fn read(text: &str, method: Option<&MethodInfo>) -> Result<ParamsView, String> {
        let invalid = |reason: String| reason;
        let target = method.and_then(|m| m.target).map(Target::param);
        let mut view = ParamsView::default();
        for member in Members::of(text, 0..text.len()).map_err(|e| invalid(e.0))? {
            let (key, value) = member.map_err(|e| invalid(e.0))?;
            let name = key.in_text(text);
            let slot = match name {
                "_meta" => &mut view.meta,
                "arguments" => &mut view.arguments,
                "requestState" => &mut view.request_state,
                "inputResponses" => &mut view.input_responses,
                _ if Some(name) == target => {
                    if view.target.is_some() {
                        return Err(invalid(format!("duplicate field `{name}`")));
                    }
                    view.target = Some(string_at(text, value, name).map_err(invalid)?);
                    continue;
                }
                _ => continue,
            };
            if slot.replace(value).is_some() {
                return Err(invalid(format!("duplicate field `{name}`")));
            }
        }
        // `null` reads as absent, as serde reads an `Option`.
        for slot in [&mut view.meta, &mut view.arguments, &mut view.request_state, &mut view.input_responses] {
            if slot.as_ref().is_some_and(|r| text.get(r.clone()) == Some("null")) {
                *slot = None;
            }
        }
        Ok(view)
    }

    /// The text of a member found by [`read`](Self::read).
    pub(crate) fn text<'t>(text: &'t str, span: &Option<Range<usize>>) -> Option<&'t str> {
        span.as_ref().and_then(|r| text.get(r.clone()))
    }

    /// The target's value, if the request names one.
    pub(crate) fn target<'t>(&'t self, text: &'t str) -> Option<&'t str> {
        self.target.as_ref().map(|k| k.in_text(text))
    }
}

/// The value of the JSON string at `text[span]`: where it is, unless it holds escapes.
fn string_at(text: &str, span: Range<usize>, field: &str) -> Result<Key, String> {
    let value = text.get(span.clone()).unwrap_or_default();
    match unescaped_str(value) {
        Some(inner) => Ok(Key::Span(span.start + 1..span.start + 1 + inner.len())),
        None => serde_json::from_str::<String>(value)
            .map(|s| Key::Decoded(s.into()))
            .map_err(|e| format!("`{field}` must be a string: {}", without_position(&e))),
    }
}

/// The parts of a 2026-07-28 request's `_meta` this crate reads, each still as text.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Meta2026Text<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    pub(crate) protocol_version: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow, default)]
    pub(crate) capabilities: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", borrow, default)]
    pub(crate) client_info: Option<&'a RawValue>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", borrow, default)]
    pub(crate) log_level: Option<&'a RawValue>,
}

impl<'a> Meta2026Text<'a> {
    /// Reads the `_meta` object `text` (an error when it is not one).
    pub(crate) fn read(text: &'a str) -> Result<Self, ErrorObject> {
        serde_json::from_str(text)
            .map_err(|e| ErrorObject::invalid_params(format!("invalid `_meta`: {}", without_position(&e))))
    }

    /// The protocol version it names, if any (not checked).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn version(&self) -> Option<&'a str> {
        self.protocol_version.and_then(|v| unescaped_str(v.get()))
    }
}

/// What a 2026-07-28 request's `_meta` says of the client.
#[derive(Debug)]
pub(crate) struct Meta2026 {
    /// The revision the request speaks.
    pub(crate) protocol_version: String,
    /// The client's capabilities for this request.
    pub(crate) capabilities: ClientCapabilities,
    /// Who the client is (`unknown` when it does not say).
    pub(crate) client_info: Implementation,
    /// The level of log messages it wants.
    pub(crate) log_level: Option<LoggingLevel>,
}

fn field<T: serde::de::DeserializeOwned>(raw: Option<&RawValue>, key: &str) -> Result<Option<T>, ErrorObject> {
    match raw.map(RawValue::get) {
        None | Some("null") => Ok(None),
        Some(text) => serde_json::from_str(text)
            .map(Some)
            .map_err(|e| ErrorObject::invalid_params(format!("invalid `_meta[\"{key}\"]`: {}", without_position(&e)))),
    }
}

impl Meta2026 {
    /// Reads the fields of `meta`; the version must be present, and so must the capabilities
    /// (an empty object declares none).
    pub(crate) fn read(meta: &Meta2026Text<'_>) -> Result<Meta2026, ErrorObject> {
        let protocol_version: String = field(meta.protocol_version, META_PROTOCOL_VERSION)?
            .ok_or_else(|| ErrorObject::invalid_params("missing protocol version"))?;
        let capabilities: ClientCapabilities = field(meta.capabilities, META_CLIENT_CAPABILITIES)?.ok_or_else(|| {
            ErrorObject::invalid_params(format!(
                "missing `_meta[\"{META_CLIENT_CAPABILITIES}\"]`: every 2026-07-28 request declares the client's capabilities"
            ))
        })?;
        let client_info =
            field(meta.client_info, META_CLIENT_INFO)?.unwrap_or_else(|| Implementation::new("unknown", "unknown"));
        let log_level = field(meta.log_level, META_LOG_LEVEL)?;
        Ok(Meta2026 { protocol_version, capabilities, client_info, log_level })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::methods::find;

    #[test]
    fn one_scan_finds_every_part() {
        let text =
            r#"{"name":"echo","arguments":{"text":"hi"},"_meta":{"k":1},"requestState":"s","inputResponses":null}"#;
        let view = ParamsView::read(text, find("tools/call")).unwrap();
        assert_eq!(view.target(text), Some("echo"));
        assert_eq!(ParamsView::text(text, &view.arguments), Some(r#"{"text":"hi"}"#));
        assert_eq!(ParamsView::text(text, &view.meta), Some(r#"{"k":1}"#));
        assert_eq!(ParamsView::text(text, &view.request_state), Some(r#""s""#));
        assert_eq!(view.input_responses, None);
        // A method without a target reads `name` as any other member.
        assert!(ParamsView::read(text, find("tools/list")).unwrap().target.is_none());
        let escaped = r#"{"uri":"file:\/\/a"}"#;
        assert_eq!(ParamsView::read(escaped, find("resources/read")).unwrap().target(escaped), Some("file://a"));
    }

    #[test]
    fn malformed_params_are_invalid() {
        for text in [r#"[1]"#, r#"{"name":1}"#, r#"{"name":"a","name":"b"}"#, r#"{"_meta":{},"_meta":{}}"#] {
            assert!(ParamsView::read(text, find("tools/call")).is_err(), "{text}");
        }
    }
}
