//! Which protocol era a client speaks: sessions opened with `initialize` (revisions up to
//! 2025-11-25), 2026-07-28 requests, or whichever the server speaks.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::Value;

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
    capabilities: Value,
    client_info: Value,
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
        Era2026 {
            version: RwLock::new(version.to_owned()),
            capabilities: serde_json::to_value(capabilities).unwrap_or_else(|_| Value::Object(JsonObject::new())),
            client_info: serde_json::to_value(info).unwrap_or(Value::Null),
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

    /// `params` with the revision, capabilities, identity and log level added to its `_meta` (keeping what
    /// is there, a progress token say). Extensions that `params` declares already in
    /// `_meta["io.modelcontextprotocol/clientCapabilities"].extensions` (for this request only,
    /// such as the tasks extension of a call made as a task) are kept.
    pub(crate) fn with_meta(&self, mut params: JsonObject) -> JsonObject {
        let meta = params.entry("_meta").or_insert_with(|| Value::Object(JsonObject::new()));
        if !meta.is_object() {
            *meta = Value::Object(JsonObject::new());
        }
        if let Value::Object(meta) = meta {
            meta.insert(META_PROTOCOL_VERSION.into(), Value::String(self.version()));
            let mut capabilities = self.capabilities.clone();
            if let Some(Value::Object(extra)) =
                meta.remove(META_CLIENT_CAPABILITIES).and_then(|mut c| c.get_mut("extensions").map(Value::take))
                && let Value::Object(c) = &mut capabilities
            {
                let extensions = c.entry("extensions").or_insert_with(|| Value::Object(JsonObject::new()));
                if let Value::Object(extensions) = extensions {
                    extensions.extend(extra);
                }
            }
            meta.insert(META_CLIENT_CAPABILITIES.into(), capabilities);
            if !self.client_info.is_null() {
                meta.insert(META_CLIENT_INFO.into(), self.client_info.clone());
            }
            if let Some(level) = self.log_level.read().ok().and_then(|l| *l)
                && !meta.contains_key(META_LOG_LEVEL)
                && let Ok(level) = serde_json::to_value(level)
            {
                meta.insert(META_LOG_LEVEL.into(), level);
            }
        }
        params
    }
}
