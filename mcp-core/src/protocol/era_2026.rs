//! Wire types of the 2026-07-28 revision: what each request carries in `_meta`,
//! `server/discover`, `resultType` and `input_required` results, and the HTTP headers that
//! mirror a request's body. Shared by the server and the client.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Implementation, JsonObject, SUPPORTED_PROTOCOL_VERSIONS, ServerCapabilities};

/// The 2026-07-28 revision: no `initialize`, every request says which revision it speaks.
pub const PROTOCOL_VERSION_2026_07_28: &str = "2026-07-28";

/// `_meta` key: the request's protocol revision.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's identity.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the level of log messages the client wants for this request.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of results: the server's identity.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// A header value disagrees with the body (Streamable HTTP).
pub const HEADER_MISMATCH: i32 = super::codes::HEADER_MISMATCH;
/// The request needs a client capability the client did not declare.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i32 = super::codes::MISSING_REQUIRED_CLIENT_CAPABILITY;
/// The request's protocol version is not supported (`data.supported` lists what is).
pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = super::codes::UNSUPPORTED_PROTOCOL_VERSION;

/// HTTP header naming the request's method.
pub const MCP_METHOD_HEADER: &str = "mcp-method";
/// HTTP header naming the tool or prompt (`name`) or resource (`uri`) a request is about.
pub const MCP_NAME_HEADER: &str = "mcp-name";
/// Prefix of the HTTP headers mirroring tool arguments marked `x-mcp-header`.
pub const MCP_PARAM_HEADER_PREFIX: &str = "mcp-param-";

/// `resultType` of a result that is the request's answer.
pub const RESULT_COMPLETE: &str = "complete";
/// `resultType` of a result asking the client for input before the request can finish.
pub const RESULT_INPUT_REQUIRED: &str = "input_required";

/// The `server/discover` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Every revision the server speaks.
    #[serde(default)]
    pub supported_versions: Vec<String>,
    /// What the server can do.
    #[serde(default)]
    pub capabilities: ServerCapabilities,
    /// The server's identity, when it gives it here (it may give it in `_meta` instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Implementation>,
    /// How to use the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl DiscoverResult {
    /// The server's identity, from the result or its `_meta`.
    pub fn server_info(&self) -> Option<Implementation> {
        self.server_info.clone().or_else(|| {
            let info = self.meta.as_ref()?.get(META_SERVER_INFO)?;
            serde_json::from_value(info.clone()).ok()
        })
    }
}

/// One question of an `input_required` result: a request the client answers locally.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub method: String,
    /// Its parameters.
    #[serde(default)]
    pub params: Value,
}

/// An `input_required` result: the questions to answer (by key), and the state to send back
/// unchanged with the answers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// The questions, by the key their answers go under in `inputResponses`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<serde_json::Map<String, Value>>,
    /// Opaque: returned as it is on the retry (when the server gave one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

/// Every revision this crate speaks, newest first (for `server/discover`).
pub fn supported_versions() -> Vec<&'static str> {
    std::iter::once(PROTOCOL_VERSION_2026_07_28).chain(SUPPORTED_PROTOCOL_VERSIONS.iter().copied()).collect()
}

/// Decodes the value of a header that mirrors the body (`Mcp-Name`, `Mcp-Param-*`): as it
/// is, or from the `=?base64?…?=` form that carries what a header cannot hold.
#[cfg(feature = "http")]
pub(crate) fn decode_header_value(raw: &str) -> Option<String> {
    match raw.strip_prefix("=?base64?").and_then(|r| r.strip_suffix("?=")) {
        Some(encoded) => {
            use base64::Engine as _;
            let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(raw.to_owned()),
    }
}

/// A searcher for [`META_PROTOCOL_VERSION`], built once: `str::contains` builds one per call,
/// which costs more than the rest of a `tools/call` of `echo`.
pub(crate) static META_PROTOCOL_VERSION_KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(META_PROTOCOL_VERSION));
