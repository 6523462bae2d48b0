//! A request's `params`, read once: where its `_meta`, its target (`name`, `uri` or `taskId`),
//! its `arguments`, and a 2026-07-28 retry's `requestState` and `inputResponses` are in the
//! text. Whoever needs one of them (the HTTP header checks, the scopes a call needs, the
//! multi-round driver, the tool call itself) reads it from the view rather than parsing the
//! text again.

use std::ops::Range;

use std::sync::Arc;

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

/// The parts of a 2026-07-28 request's `_meta` this crate reads, each still as JSON text
/// (`null` reads as absent).
#[derive(Debug, Default)]
pub(crate) struct Meta2026Text<'a> {
    pub(crate) protocol_version: Option<&'a str>,
    pub(crate) capabilities: Option<&'a str>,
    pub(crate) client_info: Option<&'a str>,
    pub(crate) log_level: Option<&'a str>,
}

impl<'a> Meta2026Text<'a> {
    /// Reads the `_meta` object `text` (JSON serde_json has read already; an error when it is
    /// not an object, or names one of these members twice). Only the members' places are
    /// found: nothing is decoded.
    pub(crate) fn read(text: &'a str) -> Result<Self, ErrorObject> {
        let invalid = |reason: String| ErrorObject::invalid_params(format!("invalid `_meta`: {reason}"));
        let mut meta = Meta2026Text::default();
        for member in Members::of(text, 0..text.len()).map_err(|e| invalid(e.0))? {
            let (key, span) = member.map_err(|e| invalid(e.0))?;
            let name = key.in_text(text);
            let slot = match name {
                META_PROTOCOL_VERSION => &mut meta.protocol_version,
                META_CLIENT_CAPABILITIES => &mut meta.capabilities,
                META_CLIENT_INFO => &mut meta.client_info,
                META_LOG_LEVEL => &mut meta.log_level,
                _ => continue,
            };
            let value = text.get(span).unwrap_or("null");
            if slot.replace(value).is_some() {
                return Err(invalid(format!("duplicate field `{name}`")));
            }
        }
        for slot in [&mut meta.protocol_version, &mut meta.capabilities, &mut meta.client_info, &mut meta.log_level] {
            if *slot == Some("null") {
                *slot = None;
            }
        }
        Ok(meta)
    }

    /// The protocol version it names, if any (not checked).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn version(&self) -> Option<&'a str> {
        self.protocol_version.and_then(unescaped_str)
    }
}

/// What a client says of itself: the revision it speaks, its capabilities and who it is. In
/// the 2025 era `initialize` says it once for the session; in the 2026 era each request's
/// `_meta` says it again.
#[derive(Debug)]
pub(crate) struct ClientState {
    pub(crate) protocol_version: String,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) info: Implementation,
}

/// What a 2026-07-28 request's `_meta` says of the client.
#[derive(Debug)]
pub(crate) struct Meta2026 {
    /// The revision, capabilities and identity (`unknown` when it does not say). Shared: a
    /// client sends the same on every request, read once (see [`Meta2026::read`]).
    pub(crate) client: Arc<ClientState>,
    /// The level of log messages it wants.
    pub(crate) log_level: Option<LoggingLevel>,
}

fn field<T: serde::de::DeserializeOwned>(raw: Option<&str>, key: &str) -> Result<Option<T>, ErrorObject> {
    match raw {
        None => Ok(None),
        Some(text) => serde_json::from_str(text)
            .map(Some)
            .map_err(|e| ErrorObject::invalid_params(format!("invalid `_meta[\"{key}\"]`: {}", without_position(&e)))),
    }
}

impl Meta2026 {
    /// Reads the fields of `meta`; the version must be present, and so must the capabilities
    /// (an empty object declares none).
    ///
    /// A client declares the same revision, capabilities and identity on each of its
    /// requests, so what was read from one text is kept (per thread, a few clients, small
    /// texts only) and shared by the requests that send that text again.
    pub(crate) fn read(meta: &Meta2026Text<'_>) -> Result<Meta2026, ErrorObject> {
        let log_level = field(meta.log_level, META_LOG_LEVEL)?;
        let parts =
            [meta.protocol_version.unwrap_or(""), meta.capabilities.unwrap_or(""), meta.client_info.unwrap_or("")];
        if let Some(client) = KnownClients::find(&parts) {
            return Ok(Meta2026 { client, log_level });
        }
        let protocol_version: String = field(meta.protocol_version, META_PROTOCOL_VERSION)?
            .ok_or_else(|| ErrorObject::invalid_params("missing protocol version"))?;
        let capabilities: ClientCapabilities = field(meta.capabilities, META_CLIENT_CAPABILITIES)?.ok_or_else(|| {
            ErrorObject::invalid_params(format!(
                "missing `_meta[\"{META_CLIENT_CAPABILITIES}\"]`: every 2026-07-28 request declares the client's capabilities"
            ))
        })?;
        let info =
            field(meta.client_info, META_CLIENT_INFO)?.unwrap_or_else(|| Implementation::new("unknown", "unknown"));
        let client = Arc::new(ClientState { protocol_version, capabilities, info });
        KnownClients::keep(&parts, &client);
        Ok(Meta2026 { client, log_level })
    }
}

/// The clients a thread read the `_meta` of lately: the texts of their version, capabilities
/// and identity, and what was read from them. The newest first; a few, of a bounded size, so
/// that a client sending ever-new texts costs a little memory at most.
struct KnownClients;

/// An entry: the three texts, one after another, where each ends, and what they say.
type KnownClient = (Box<str>, [usize; 2], Arc<ClientState>);

thread_local! {
    static KNOWN_CLIENTS: std::cell::RefCell<Vec<KnownClient>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl KnownClients {
    /// How many a thread keeps.
    const KEPT: usize = 16;
    /// The longest texts (together) kept.
    const MAX_TEXT: usize = 2048;

    fn find(parts: &[&str; 3]) -> Option<Arc<ClientState>> {
        KNOWN_CLIENTS.with(|known| {
            let known = known.borrow();
            known.iter().find(|(text, ends, _)| Self::split(text, ends) == *parts).map(|(_, _, client)| client.clone())
        })
    }

    fn keep(parts: &[&str; 3], client: &Arc<ClientState>) {
        let len = parts.iter().map(|p| p.len()).sum::<usize>();
        if len > Self::MAX_TEXT {
            return;
        }
        let text: Box<str> = parts.concat().into();
        let ends = [parts[0].len(), parts[0].len() + parts[1].len()];
        KNOWN_CLIENTS.with(|known| {
            let mut known = known.borrow_mut();
            known.truncate(Self::KEPT - 1);
            known.insert(0, (text, ends, client.clone()));
        });
    }

    fn split<'t>(text: &'t str, ends: &[usize; 2]) -> [&'t str; 3] {
        [&text[..ends[0]], &text[ends[0]..ends[1]], &text[ends[1]..]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Method;

    #[test]
    fn one_scan_finds_every_part() {
        let text =
            r#"{"name":"echo","arguments":{"text":"hi"},"_meta":{"k":1},"requestState":"s","inputResponses":null}"#;
        let view = ParamsView::read(text, Some(Method::ToolsCall.info())).unwrap();
        assert_eq!(view.target(text), Some("echo"));
        assert_eq!(ParamsView::text(text, &view.arguments), Some(r#"{"text":"hi"}"#));
        assert_eq!(ParamsView::text(text, &view.meta), Some(r#"{"k":1}"#));
        assert_eq!(ParamsView::text(text, &view.request_state), Some(r#""s""#));
        assert_eq!(view.input_responses, None);
        // A method without a target reads `name` as any other member.
        assert!(ParamsView::read(text, Some(Method::ToolsList.info())).unwrap().target.is_none());
        let escaped = r#"{"uri":"file:\/\/a"}"#;
        assert_eq!(
            ParamsView::read(escaped, Some(Method::ResourcesRead.info())).unwrap().target(escaped),
            Some("file://a")
        );
    }

    #[test]
    fn malformed_params_are_invalid() {
        for text in [r#"[1]"#, r#"{"name":1}"#, r#"{"name":"a","name":"b"}"#, r#"{"_meta":{},"_meta":{}}"#] {
            assert!(ParamsView::read(text, Some(Method::ToolsCall.info())).is_err(), "{text}");
        }
    }

    #[test]
    fn meta_members_are_found_without_decoding() {
        let text = r#"{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","other":[1,{"a":"}"}],
            "io.modelcontextprotocol/clientCapabilities":{"x":{}},"io.modelcontextprotocol/logLevel":null}"#;
        let meta = Meta2026Text::read(text).unwrap();
        assert_eq!(meta.version(), Some("2026-07-28"));
        assert_eq!(meta.capabilities, Some(r#"{"x":{}}"#));
        assert_eq!((meta.client_info, meta.log_level), (None, None));
        let twice = r#"{"io.modelcontextprotocol/clientInfo":{},"io.modelcontextprotocol/clientInfo":{}}"#;
        assert!(Meta2026Text::read(twice).unwrap_err().message.contains("duplicate field"));
        assert!(Meta2026Text::read("[]").unwrap_err().message.contains("expected an object"));
    }

    #[test]
    fn a_client_sending_the_same_meta_is_read_once() {
        let meta = |info: &str| {
            let text = format!(
                r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{info}}}"#
            );
            Meta2026::read(&Meta2026Text::read(&text).unwrap()).unwrap()
        };
        let (a, b) = (meta(r#"{"name":"a","version":"1"}"#), meta(r#"{"name":"a","version":"1"}"#));
        assert!(Arc::ptr_eq(&a.client, &b.client));
        let other = meta(r#"{"name":"b","version":"1"}"#);
        assert_eq!((a.client.info.name.as_str(), other.client.info.name.as_str()), ("a", "b"));
        // A text too long to keep is read each time, to the same result.
        let long = format!(r#"{{"name":"{}","version":"1"}}"#, "n".repeat(4000));
        let (c, d) = (meta(&long), meta(&long));
        assert!(!Arc::ptr_eq(&c.client, &d.client));
        assert_eq!(c.client.info.name, d.client.info.name);
        // What is not kept is still checked.
        let text = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;
        assert!(Meta2026::read(&Meta2026Text::read(text).unwrap()).is_err());
    }
}
