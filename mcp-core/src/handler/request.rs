//! What a handler can read of the request itself, beyond its arguments: its `_meta` (over HTTP,
//! the request's headers, extensions and the client's address are `engine::HttpRequestParts`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::protocol::{JsonObject, ProgressToken};

/// The `_meta` object of the request being served, as the client sent it.
///
/// Known keys have typed accessors ([`progress_token`](Self::progress_token),
/// [`traceparent`](Self::traceparent), [`protocol_version`](Self::protocol_version), …);
/// any other key is read with [`get`](Self::get) (decoded to a type of yours) or
/// [`get_raw`](Self::get_raw) (its JSON text). Nothing is decoded until asked for: the text is
/// kept as it came. Cheap to clone.
///
/// ```
/// use typed_mcp::handler::Meta;
///
/// let meta = Meta::from_json(r#"{"com.example/tenant": "acme", "progressToken": 7}"#).unwrap();
/// assert_eq!(meta.get::<String>("com.example/tenant").unwrap().unwrap(), "acme");
/// assert!(meta.progress_token().is_some());
/// assert!(meta.get_raw("missing").is_none());
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Meta {
    /// The object's text; `None` when the request had no `_meta`.
    text: Option<Arc<str>>,
}

impl std::fmt::Debug for Meta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.text {
            Some(text) => write!(f, "Meta({text})"),
            None => f.write_str("Meta(none)"),
        }
    }
}

/// The key of the 2026-07-28 `_meta` member naming the protocol revision.
const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

impl Meta {
    /// A `_meta` read from its JSON text, which must be an object.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        // Checked once here, so that every accessor can read it without failing.
        let _: BTreeMap<Cow<'_, str>, &RawValue> = serde_json::from_str(text)?;
        Ok(Meta { text: Some(text.into()) })
    }

    /// The `_meta` of a request whose parameters were checked already (its text is an object).
    pub(crate) fn checked(text: Option<&str>) -> Self {
        Meta { text: text.map(Arc::from) }
    }

    /// Whether the request carried a `_meta` object.
    pub fn is_present(&self) -> bool {
        self.text.is_some()
    }

    /// The object's JSON text, as the client sent it.
    pub fn as_str(&self) -> Option<&str> {
        self.text.as_deref()
    }

    fn members(&self) -> BTreeMap<Cow<'_, str>, &RawValue> {
        self.text.as_deref().and_then(|t| serde_json::from_str(t).ok()).unwrap_or_default()
    }

    /// The JSON text of the member `key`, if present.
    pub fn get_raw(&self, key: &str) -> Option<&RawValue> {
        self.members().remove(key)
    }

    /// The member `key` decoded as `T`: `None` when absent, `Some(Err(_))` when it is not a `T`.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Option<Result<T, serde_json::Error>> {
        self.get_raw(key).map(|raw| serde_json::from_str(raw.get()))
    }

    /// The member `key` when it is a string.
    pub fn get_str(&self, key: &str) -> Option<String> {
        self.get::<String>(key).and_then(Result::ok)
    }

    /// Every member, as a JSON object.
    pub fn to_object(&self) -> JsonObject {
        self.text.as_deref().and_then(|t| serde_json::from_str(t).ok()).unwrap_or_default()
    }

    /// `progressToken`: where progress notifications for this request point.
    pub fn progress_token(&self) -> Option<ProgressToken> {
        self.get("progressToken").and_then(Result::ok)
    }

    /// `traceparent`: the W3C trace context of the caller (reserved by the specification for
    /// tracing; see [`crate::guide::operations`]).
    pub fn traceparent(&self) -> Option<String> {
        self.get_str("traceparent")
    }

    /// `tracestate`: vendor-specific trace data that goes with `traceparent`.
    pub fn tracestate(&self) -> Option<String> {
        self.get_str("tracestate")
    }

    /// `baggage`: W3C baggage the caller propagates.
    pub fn baggage(&self) -> Option<String> {
        self.get_str("baggage")
    }

    /// The protocol revision a 2026-07-28 request names in its `_meta`.
    pub fn protocol_version(&self) -> Option<String> {
        self.get_str(PROTOCOL_VERSION)
    }
}
