//! Which protocol era a client speaks: sessions opened with `initialize` (revisions up to
//! 2025-11-25), 2026-07-28 requests, or whichever the server speaks.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::cache::ListCache;
pub use super::choice::{ProtocolEra, VERSIONS_2026};
use super::http_headers::ToolHeaders;
use crate::protocol::era_2026::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION, PROTOCOL_VERSION_2026_07_28,
};
use crate::protocol::{ClientCapabilities, Implementation, JsonObject, LoggingLevel};

/// How long [`ProtocolEra::Auto`] waits for `server/discover` before trying `initialize`
/// (a server of the session era may leave an unknown request unanswered).
pub(crate) const DISCOVER_PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// What a 2026-07-28 connection adds to every request.
pub(crate) struct Era2026 {
    version: RwLock<String>,
    /// The client's capabilities, and the same encoded (what most requests carry as they are).
    capabilities: Value,
    capabilities_text: Option<Box<RawValue>>,
    /// The client's name and version, encoded; none when they could not be.
    client_info: Option<Box<RawValue>>,
    /// The level of log messages every request asks for (`_meta["io.modelcontextprotocol/logLevel"]`),
    /// set with [`Client::set_log_level`](super::Client::set_log_level); none until then.
    log_level: RwLock<Option<LoggingLevel>>,
    /// The `x-mcp-header` marks of the tools listed so far (the HTTP transport reads them).
    pub(crate) headers: Arc<ToolHeaders>,
    /// List results kept as long as the server's caching hints allow.
    pub(crate) cache: Arc<ListCache>,
}

impl std::fmt::Debug for Era2026 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Era2026").field("version", &self.version()).finish_non_exhaustive()
    }
}

impl Era2026 {
    pub(crate) fn new(capabilities: &ClientCapabilities, info: &Implementation) -> Self {
        let version = PROTOCOL_VERSION_2026_07_28;
        let capabilities = serde_json::to_value(capabilities).unwrap_or_else(|_| Value::Object(JsonObject::new()));
        let capabilities_text = serde_json::value::to_raw_value(&capabilities).ok();
        Era2026 {
            version: RwLock::new(version.to_owned()),
            capabilities,
            capabilities_text,
            client_info: serde_json::value::to_raw_value(info).ok(),
            log_level: RwLock::new(None),
            headers: Arc::new(ToolHeaders::new(version)),
            cache: Arc::default(),
        }
    }

    /// The revision requests carry.
    pub(crate) fn version(&self) -> String {
        self.version.read().map(|v| v.clone()).unwrap_or_else(|_| PROTOCOL_VERSION_2026_07_28.to_owned())
    }

    /// Asks for log messages at `level` and above in every request from now on.
    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        if let Ok(mut l) = self.log_level.write() {
            *l = Some(level);
        }
    }

    /// Switches to the newest revision in `supported` this client speaks; false when there is
    /// none (or it is the one already used).
    pub(crate) fn switch_to_supported(&self, supported: &[String], first_try: bool) -> bool {
        let Some(ours) = VERSIONS_2026.iter().find(|v| supported.iter().any(|s| s == *v)) else { return false };
        let current = self.version();
        if *ours == current && !first_try {
            return false;
        }
        if let Ok(mut v) = self.version.write() {
            (*ours).clone_into(&mut v);
        }
        self.headers.set_version(ours);
        true
    }

    /// `params` with the revision, capabilities, identity and log level added to its `_meta`
    /// (see [`Sent`]), as an object.
    pub(crate) fn with_meta(&self, params: JsonObject) -> JsonObject {
        match serde_json::to_value(Sent { era: self, params: &params, input_responses: None, request_state: None }) {
            Ok(Value::Object(sent)) => sent,
            _ => params,
        }
    }
}

/// A 2026-07-28 request's parameters as they are sent: `params` with the revision,
/// capabilities, identity and log level added to its `_meta` (keeping what is there, a
/// progress token say), and on a retry the answers and the server's state. Extensions that
/// `params` declares already in `_meta["io.modelcontextprotocol/clientCapabilities"].extensions`
/// (for this request only, such as the tasks extension of a call made as a task) are kept.
///
/// Written straight to the request's frame: neither `params` nor the client's `_meta` is
/// copied (the capabilities and identity are encoded once, when the connection is made).
pub(crate) struct Sent<'a> {
    pub(crate) era: &'a Era2026,
    pub(crate) params: &'a JsonObject,
    /// `inputResponses`, replacing any in `params`.
    pub(crate) input_responses: Option<&'a JsonObject>,
    /// `requestState`, replacing any in `params`.
    pub(crate) request_state: Option<&'a str>,
}

impl Serialize for Sent<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.params {
            let replaced = match key.as_str() {
                "_meta" => true,
                "inputResponses" => self.input_responses.is_some(),
                "requestState" => self.request_state.is_some(),
                _ => false,
            };
            if !replaced {
                map.serialize_entry(key, value)?;
            }
        }
        let own = self.params.get("_meta").and_then(Value::as_object);
        map.serialize_entry("_meta", &Meta { era: self.era, own })?;
        if let Some(responses) = self.input_responses {
            map.serialize_entry("inputResponses", responses)?;
        }
        if let Some(state) = self.request_state {
            map.serialize_entry("requestState", state)?;
        }
        map.end()
    }
}

/// The `_meta` of a [`Sent`]: the request's own members, then the client's.
struct Meta<'a> {
    era: &'a Era2026,
    own: Option<&'a JsonObject>,
}

impl Serialize for Meta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let era = self.era;
        let mut map = serializer.serialize_map(None)?;
        let mut own_level = false;
        let mut extra = None;
        for (key, value) in self.own.into_iter().flatten() {
            match key.as_str() {
                META_PROTOCOL_VERSION => {}
                META_CLIENT_CAPABILITIES => extra = value.get("extensions").and_then(Value::as_object),
                META_CLIENT_INFO if era.client_info.is_some() => {}
                _ => {
                    own_level |= key == META_LOG_LEVEL;
                    map.serialize_entry(key, value)?;
                }
            }
        }
        match era.version.read() {
            Ok(version) => map.serialize_entry(META_PROTOCOL_VERSION, version.as_str())?,
            Err(_) => map.serialize_entry(META_PROTOCOL_VERSION, PROTOCOL_VERSION_2026_07_28)?,
        }
        match extra {
            None => match &era.capabilities_text {
                Some(text) => map.serialize_entry(META_CLIENT_CAPABILITIES, &**text)?,
                None => map.serialize_entry(META_CLIENT_CAPABILITIES, &era.capabilities)?,
            },
            Some(extra) => {
                let mut capabilities = era.capabilities.clone();
                if let Value::Object(c) = &mut capabilities
                    && let Value::Object(extensions) =
                        c.entry("extensions").or_insert_with(|| Value::Object(JsonObject::new()))
                {
                    extensions.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                map.serialize_entry(META_CLIENT_CAPABILITIES, &capabilities)?;
            }
        }
        if let Some(info) = &era.client_info {
            map.serialize_entry(META_CLIENT_INFO, &**info)?;
        }
        if !own_level && let Some(level) = era.log_level.read().ok().and_then(|l| *l) {
            map.serialize_entry(META_LOG_LEVEL, &level)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn era() -> Era2026 {
        let mut extensions = JsonObject::new();
        extensions.insert("io.example/apps".into(), json!({}));
        let capabilities = ClientCapabilities { extensions: Some(extensions), ..ClientCapabilities::default() };
        Era2026::new(&capabilities, &Implementation::new("probe", "1.0"))
    }

    fn sent(era: &Era2026, params: Value, responses: Option<Value>, state: Option<&str>) -> Value {
        let Value::Object(params) = params else { panic!("parameters are an object") };
        let responses = responses.map(|r| match r {
            Value::Object(r) => r,
            _ => panic!("answers are an object"),
        });
        serde_json::to_value(Sent { era, params: &params, input_responses: responses.as_ref(), request_state: state })
            .unwrap()
    }

    #[test]
    fn the_clients_meta_joins_what_the_request_carries() {
        let era = era();
        let out = sent(&era, json!({"name": "echo", "_meta": {"progressToken": 7}}), None, None);
        assert_eq!(
            out,
            json!({"name": "echo", "_meta": {
                "progressToken": 7,
                META_PROTOCOL_VERSION: PROTOCOL_VERSION_2026_07_28,
                META_CLIENT_CAPABILITIES: {"extensions": {"io.example/apps": {}}},
                META_CLIENT_INFO: {"name": "probe", "version": "1.0"},
            }})
        );
    }

    #[test]
    fn a_requests_own_extensions_are_added_to_the_clients_and_its_revision_and_identity_replaced() {
        let era = era();
        let params = json!({"_meta": {
            META_CLIENT_CAPABILITIES: {"extensions": {"io.example/tasks": {"x": 1}}},
            META_PROTOCOL_VERSION: "1999-01-01",
            META_CLIENT_INFO: {"name": "other"},
        }});
        let meta = &sent(&era, params, None, None)["_meta"];
        assert_eq!(
            meta[META_CLIENT_CAPABILITIES],
            json!({"extensions": {"io.example/apps": {}, "io.example/tasks": {"x": 1}}})
        );
        assert_eq!(meta[META_PROTOCOL_VERSION], PROTOCOL_VERSION_2026_07_28);
        assert_eq!(meta[META_CLIENT_INFO], json!({"name": "probe", "version": "1.0"}));
    }

    #[test]
    fn a_retry_carries_the_answers_and_state_in_place_of_any_in_the_parameters() {
        let era = era();
        let params = json!({"name": "echo", "inputResponses": {"old": 1}, "requestState": "old"});
        let out = sent(&era, params.clone(), Some(json!({"q": {"action": "accept"}})), Some("sealed"));
        assert_eq!(out["inputResponses"], json!({"q": {"action": "accept"}}));
        assert_eq!(out["requestState"], "sealed");
        assert_eq!(out["name"], "echo");
        // Without answers or state, the request's own members stay.
        let out = sent(&era, params, None, None);
        assert_eq!(out["inputResponses"], json!({"old": 1}));
        assert_eq!(out["requestState"], "old");
    }

    #[test]
    fn the_log_level_is_asked_for_unless_the_request_names_one() {
        let era = era();
        assert!(sent(&era, json!({}), None, None)["_meta"].get(META_LOG_LEVEL).is_none());
        era.set_log_level(LoggingLevel::Warning);
        assert_eq!(sent(&era, json!({}), None, None)["_meta"][META_LOG_LEVEL], "warning");
        let own = sent(&era, json!({"_meta": {META_LOG_LEVEL: "debug"}}), None, None);
        assert_eq!(own["_meta"][META_LOG_LEVEL], "debug");
        // `with_meta` is the same, as an object.
        assert_eq!(Value::Object(era.with_meta(JsonObject::new())), sent(&era, json!({}), None, None));
    }
}
