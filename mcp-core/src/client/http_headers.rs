//! The HTTP headers a 2026-07-28 request carries besides its body:
//! `MCP-Protocol-Version` (the revision in its `_meta`), `Mcp-Method`, `Mcp-Name` (the tool or
//! prompt name, or the resource URI) and one `Mcp-Param-{Header}` per tool argument the tool's
//! input schema marks with `x-mcp-header`. The client learns those marks from `tools/list`;
//! a tool whose marks break the rules is refused (see [`ToolHeaders::learn`]).
//!
//! Every transport learns the marks (a refused tool is refused on all of them); only the HTTP
//! client (feature `http-client`) writes the headers.
#![cfg_attr(not(feature = "http-client"), allow(dead_code))]

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::RwLock;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::protocol::era_2026::{MCP_METHOD_HEADER, MCP_NAME_HEADER, MCP_PARAM_HEADER_PREFIX};
use crate::protocol::methods::{self, Era, Method, Target};
use crate::protocol::{CancelledParams, JsonObject, Message, RequestId, Tool};
use crate::tool::{HeaderKind, HeaderParam, header_params};

/// The `x-mcp-header` declarations of the tools a client has listed, and the revision its
/// 2026-07-28 requests speak.
#[derive(Debug)]
pub(crate) struct ToolHeaders {
    version: RwLock<String>,
    tools: RwLock<HashMap<String, Result<Vec<HeaderParam>, String>>>,
}

impl ToolHeaders {
    pub(crate) fn new(version: &str) -> Self {
        ToolHeaders { version: RwLock::new(version.to_owned()), tools: RwLock::default() }
    }

    /// The revision a message without one in `_meta` is sent under (a notification).
    pub(crate) fn set_version(&self, version: &str) {
        if let Ok(mut v) = self.version.write() {
            version.clone_into(&mut v);
        }
    }

    /// Remembers which arguments of `tool` are mirrored into headers. `Err` (with the reason)
    /// when its declarations are invalid: such a tool must not be called.
    pub(crate) fn learn(&self, tool: &Tool) -> Result<(), String> {
        let found = header_params(&tool.input_schema).map_err(|e| e.to_string());
        if let Ok(mut tools) = self.tools.write() {
            tools.insert(tool.name.clone(), found.clone());
        }
        found.map(drop)
    }

    /// What is known of `tool`: `None` when it was never listed, `Some(Err)` when it is refused.
    pub(crate) fn known(&self, tool: &str) -> Option<Result<(), String>> {
        let tools = self.tools.read().ok()?;
        tools.get(tool).map(|r| r.as_ref().map(drop).map_err(Clone::clone))
    }

    /// The headers for one outgoing message (its JSON text), as lowercase names and values.
    pub(crate) fn headers(&self, frame: &str) -> Vec<(String, String)> {
        let (method, params) = match Message::decode(frame) {
            Ok(Message::Request(r)) => (r.method.as_str().to_owned(), r.params),
            Ok(Message::Notification(n)) => (n.method.as_str().to_owned(), n.params),
            _ => return self.version_only(),
        };
        // Only the members the headers need are read (the rest, `_meta`'s capabilities say,
        // are skipped, not built into values).
        let params: Peek<'_> = params.as_deref().and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or_default();
        let text = |raw: Option<&RawValue>| raw.and_then(|r| serde_json::from_str::<Cow<'_, str>>(r.get()).ok());
        let version = params
            .meta
            .and_then(|m| text(m.version))
            .map(Cow::into_owned)
            .unwrap_or_else(|| self.version.read().map(|v| v.clone()).unwrap_or_default());
        let mut headers =
            vec![("mcp-protocol-version".to_owned(), version), (MCP_METHOD_HEADER.to_owned(), encode_value(&method))];
        // The method's target, as the method table names it (in this era's methods).
        let row = methods::find(&method);
        let name = row.filter(|m| m.valid_in(Era::Y2026)).and_then(|m| m.target).and_then(|target| {
            text(match target {
                Target::Name => params.name,
                Target::Uri => params.uri,
                Target::TaskId => params.task_id,
            })
        });
        if let Some(name) = &name {
            headers.push((MCP_NAME_HEADER.to_owned(), encode_value(name)));
        }
        if row.is_some_and(|m| m.id == Method::ToolsCall) {
            let declared = name
                .as_deref()
                .and_then(|n| self.tools.read().ok()?.get(n).cloned())
                .and_then(Result::ok)
                .unwrap_or_default();
            if !declared.is_empty() {
                let arguments: JsonObject =
                    params.arguments.and_then(|a| serde_json::from_str(a.get()).ok()).unwrap_or_default();
                for param in declared {
                    if let Some(value) = param.value(&arguments) {
                        let name = format!("{MCP_PARAM_HEADER_PREFIX}{}", param.header.to_ascii_lowercase());
                        headers.push((name, param_value(param.kind, value)));
                    }
                }
            }
        }
        headers
    }

    fn version_only(&self) -> Vec<(String, String)> {
        vec![("mcp-protocol-version".to_owned(), self.version.read().map(|v| v.clone()).unwrap_or_default())]
    }
}

/// The members of a message's parameters its headers are made from, each as its JSON text.
#[derive(Default, Deserialize)]
struct Peek<'a> {
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<MetaPeek<'a>>,
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    uri: Option<&'a RawValue>,
    #[serde(rename = "taskId", borrow, default)]
    task_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

/// The member of `_meta` the headers are made from.
#[derive(Deserialize)]
struct MetaPeek<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    version: Option<&'a RawValue>,
}

/// The request a `notifications/cancelled` frame withdraws.
pub(crate) fn cancelled_request(frame: &str) -> Option<RequestId> {
    let Ok(Message::Notification(n)) = Message::decode(frame) else { return None };
    if n.method.as_str() != "notifications/cancelled" {
        return None;
    }
    let params: CancelledParams = serde_json::from_str(n.params.as_deref()?.get()).ok()?;
    params.request_id
}

/// A tool argument as its header carries it: integers in decimal, booleans as `true`/`false`,
/// strings as they are or Base64-encoded (see [`encode_value`]).
fn param_value(kind: HeaderKind, value: &Value) -> String {
    match (kind, value) {
        (HeaderKind::Integer, Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            // `42.0` is the integer 42.
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => format!("{f:.0}"),
            _ => n.to_string(),
        },
        (_, Value::Bool(b)) => b.to_string(),
        (_, Value::String(s)) => encode_value(s),
        (_, other) => encode_value(&other.to_string()),
    }
}

/// A header value: as it is when it is printable ASCII without leading or trailing whitespace,
/// else `=?base64?{Base64 of its UTF-8}?=` (as is a value that itself starts like that).
pub(crate) fn encode_value(value: &str) -> String {
    let plain = value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && value.trim_matches(|c| c == ' ' || c == '\t') == value
        && !value.starts_with("=?base64?");
    if plain {
        value.to_owned()
    } else {
        use base64::Engine as _;
        format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(value.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::era_2026::META_PROTOCOL_VERSION;
    use serde_json::json;

    fn tool(name: &str, schema: Value) -> Tool {
        serde_json::from_value(json!({"name": name, "inputSchema": schema})).unwrap()
    }

    #[test]
    fn values_are_encoded_when_they_are_not_plain_header_text() {
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(encode_value("us west 1"), "us west 1");
        assert_eq!(encode_value(""), "");
        assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(encode_value("\tindented"), "=?base64?CWluZGVudGVk?=");
        assert!(encode_value("=?base64?eA==?=").starts_with("=?base64?PT9iYXNl"));
    }

    #[test]
    fn a_tool_call_mirrors_its_marked_arguments() {
        let headers = ToolHeaders::new("2026-07-28");
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "query": {"type": "string"}
        }});
        headers.learn(&tool("search", schema)).unwrap();
        let frame = json!({"jsonrpc": "2.0", "id": 1, "method": Method::ToolsCall.name(), "params": {
            "name": "search", "arguments": {"region": "eu", "priority": 42.0, "verbose": null, "query": "x"},
            "_meta": {META_PROTOCOL_VERSION: "2026-07-28"}
        }});
        let got = headers.headers(&frame.to_string());
        let want: Vec<(String, String)> = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", Method::ToolsCall.name()),
            ("mcp-name", "search"),
            ("mcp-param-region", "eu"),
            ("mcp-param-priority", "42"),
        ]
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn headers_come_from_the_members_they_name_and_a_member_of_the_wrong_type_is_left_out() {
        let headers = ToolHeaders::new("2026-07-28");
        let of = |params: Value| -> Vec<(String, String)> {
            let frame = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": params});
            headers.headers(&frame.to_string())
        };
        let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
        // The URI, with the revision of `_meta` (and large members skipped, not read).
        let read = of(json!({"uri": "notes://1", "_meta": {
            META_PROTOCOL_VERSION: "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {"x": {"deep": [1, 2, {"a": "b"}]}}}
        }}));
        assert_eq!(
            read,
            [
                pair("mcp-protocol-version", "2026-07-28"),
                pair("mcp-method", "resources/read"),
                pair("mcp-name", "notes://1")
            ]
        );
        // A URI that is not a string names nothing; no `_meta` takes the client's revision.
        let odd = of(json!({"uri": 7}));
        assert_eq!(odd, [pair("mcp-protocol-version", "2026-07-28"), pair("mcp-method", "resources/read")]);
    }

    #[test]
    fn tools_with_invalid_marks_are_refused() {
        let headers = ToolHeaders::new("2026-07-28");
        for (name, schema) in [
            ("empty", json!({"properties": {"v": {"type": "string", "x-mcp-header": ""}}})),
            ("number", json!({"properties": {"v": {"type": "number", "x-mcp-header": "V"}}})),
            ("object", json!({"properties": {"v": {"type": "object", "x-mcp-header": "V"}}})),
            ("colon", json!({"properties": {"v": {"type": "string", "x-mcp-header": "A:B"}}})),
            ("accent", json!({"properties": {"v": {"type": "string", "x-mcp-header": "Région"}}})),
            (
                "twice",
                json!({"properties": {"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}}),
            ),
        ] {
            assert!(headers.learn(&tool(name, schema)).is_err(), "{name}");
            assert!(matches!(headers.known(name), Some(Err(_))), "{name}");
        }
        assert!(headers.known("never-listed").is_none());
    }
}
