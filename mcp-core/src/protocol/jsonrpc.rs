//! The JSON-RPC 2.0 envelope: ids, errors, and decoding one frame into a [`Message`].
//!
//! Decoding parses a frame exactly once: `params`, `result` and `data` are kept as raw JSON
//! slices ([`RawValue`]) and only turned into typed values by whoever handles the message.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, IgnoredAny};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use super::methods::Method;

/// The only JSON-RPC version MCP speaks.
pub const JSONRPC_VERSION: &str = "2.0";

/// Standard and MCP-specific JSON-RPC error codes.
pub mod codes {
    /// The frame is not valid JSON.
    pub const PARSE_ERROR: i32 = -32700;
    /// The JSON is not a valid request object.
    pub const INVALID_REQUEST: i32 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i32 = -32602;
    /// Internal error.
    pub const INTERNAL_ERROR: i32 = -32603;
    /// A requested resource does not exist (MCP, 2025 revisions).
    pub const RESOURCE_NOT_FOUND: i32 = -32002;
    /// The request needs the user to complete one or more URL-mode elicitations first (MCP 2025-11-25).
    pub const URL_ELICITATION_REQUIRED: i32 = -32042;
    /// A header value disagrees with the body (Streamable HTTP, revision 2026-07-28).
    pub const HEADER_MISMATCH: i32 = -32020;
    /// The request needs a client capability the client did not declare (MCP 2026-07-28;
    /// `data.requiredCapabilities` names them).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i32 = -32021;
    /// The request's protocol version is not supported (revision 2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
}

/// A request id: a string or an integer (MCP forbids `null`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.into())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match IdField::deserialize(d)? {
            IdField::Valid(id) => Ok(id),
            IdField::Null => Err(de::Error::custom("request id must not be null")),
            IdField::Invalid(why) => Err(de::Error::custom(why)),
        }
    }
}

/// What the `id` member of a frame holds, before we decide whether it is acceptable.
#[derive(Debug)]
enum IdField {
    Valid(RequestId),
    Null,
    Invalid(&'static str),
}

impl<'de> Deserialize<'de> for IdField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = IdField;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or integer id")
            }
            fn visit_i64<E>(self, v: i64) -> Result<IdField, E> {
                Ok(IdField::Valid(RequestId::Number(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<IdField, E> {
                Ok(i64::try_from(v)
                    .map(|n| IdField::Valid(RequestId::Number(n)))
                    .unwrap_or(IdField::Invalid("request id is out of the 64-bit integer range")))
            }
            fn visit_f64<E>(self, _: f64) -> Result<IdField, E> {
                Ok(IdField::Invalid("request id must be an integer or a string"))
            }
            fn visit_str<E>(self, v: &str) -> Result<IdField, E> {
                Ok(IdField::Valid(RequestId::String(v.into())))
            }
            fn visit_unit<E>(self) -> Result<IdField, E> {
                Ok(IdField::Null)
            }
            fn visit_none<E>(self) -> Result<IdField, E> {
                Ok(IdField::Null)
            }
            fn visit_bool<E>(self, _: bool) -> Result<IdField, E> {
                Ok(IdField::Invalid("request id must be an integer or a string"))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<IdField, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(IdField::Invalid("request id must be an integer or a string"))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut a: A) -> Result<IdField, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(IdField::Invalid("request id must be an integer or a string"))
            }
        }
        d.deserialize_any(V)
    }
}

/// A JSON-RPC error object, as sent in an error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("JSON-RPC error {code}: {message}")]
pub struct ErrorObject {
    /// The error code (see [`codes`]).
    pub code: i32,
    /// A short description of the error.
    pub message: String,
    /// Additional information about the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

impl ErrorObject {
    /// An error with a code and message and no data.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        ErrorObject { code, message: message.into(), data: None }
    }
    /// Attaches `data` to the error.
    pub fn with_data(mut self, data: serde_json::Value) -> Self {
        self.data = Some(data);
        self
    }
    /// -32700.
    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(codes::PARSE_ERROR, message)
    }
    /// -32600.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(codes::INVALID_REQUEST, message)
    }
    /// -32601, naming the method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(codes::METHOD_NOT_FOUND, format!("method not found: {method}"))
    }
    /// -32602.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(codes::INVALID_PARAMS, message)
    }
    /// -32021: the request needs the client capabilities `required` (a `ClientCapabilities`
    /// object, e.g. `{"elicitation": {"url": {}}}`), which the client did not declare. The
    /// message names each by its path (`elicitation.url`); `data.requiredCapabilities` holds
    /// `required`. `context` says what needed them.
    pub fn missing_client_capabilities(context: &str, required: serde_json::Map<String, serde_json::Value>) -> Self {
        fn paths(prefix: &str, object: &serde_json::Map<String, serde_json::Value>, out: &mut Vec<String>) {
            for (key, value) in object {
                let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
                match value {
                    serde_json::Value::Object(inner) if !inner.is_empty() => paths(&path, inner, out),
                    _ => out.push(path),
                }
            }
        }
        let mut names = Vec::new();
        paths("", &required, &mut names);
        let message = format!("{context}: the client did not declare {}", names.join(", "));
        Self::new(codes::MISSING_REQUIRED_CLIENT_CAPABILITY, message)
            .with_data(serde_json::json!({"requiredCapabilities": serde_json::Value::Object(required)}))
    }
    /// -32603.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(codes::INTERNAL_ERROR, message)
    }
}

/// One decoded frame.
#[derive(Debug)]
pub enum Message {
    /// A request expecting a response.
    Request(Request),
    /// A notification (no id, no response).
    Notification(Notification),
    /// A response to a request this side sent.
    Response(Response),
}

/// The method of a request or notification, as its name came on the wire.
///
/// The methods of MCP are held as `&'static str` with their typed id ([`MethodName::id`]), so
/// reading one from a frame, matching on it and copying it (into a log line, say) allocates
/// nothing and searches the method table once; other names are held as they came.
#[derive(Clone)]
pub struct MethodName(Name);

/// A method's name: one of MCP's, by its id (its name is `'static`), or another, as it came.
#[derive(Clone)]
enum Name {
    Known(Method),
    Other(Box<str>),
}

impl MethodName {
    /// The method's name.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Name::Known(id) => id.name(),
            Name::Other(name) => name,
        }
    }

    /// The method, when it is one of MCP's.
    pub fn id(&self) -> Option<Method> {
        match self.0 {
            Name::Known(id) => Some(id),
            Name::Other(_) => None,
        }
    }

    /// The method's row of the method table, when it is one of MCP's.
    pub fn info(&self) -> Option<&'static super::methods::MethodInfo> {
        self.id().map(Method::info)
    }

    /// A method by name.
    pub fn new(name: impl Into<String> + AsRef<str>) -> Self {
        match Method::from_name(name.as_ref()) {
            Some(id) => MethodName(Name::Known(id)),
            None => MethodName(Name::Other(name.into().into_boxed_str())),
        }
    }
}

impl From<Method> for MethodName {
    fn from(id: Method) -> Self {
        MethodName(Name::Known(id))
    }
}

impl PartialEq for MethodName {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for MethodName {}

impl std::hash::Hash for MethodName {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl std::ops::Deref for MethodName {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for MethodName {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for MethodName {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for MethodName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for MethodName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq<str> for MethodName {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for MethodName {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl From<&str> for MethodName {
    fn from(name: &str) -> Self {
        MethodName::new(name)
    }
}

impl From<String> for MethodName {
    fn from(name: String) -> Self {
        MethodName::new(name)
    }
}

impl<'de> Deserialize<'de> for MethodName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = MethodName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a method name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MethodName, E> {
                Ok(MethodName::new(v))
            }
        }
        d.deserialize_str(V)
    }
}

impl Serialize for MethodName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// An incoming request.
#[derive(Debug)]
pub struct Request {
    /// The id the response must carry.
    pub id: RequestId,
    /// The method name.
    pub method: MethodName,
    /// The raw parameters, if any.
    pub params: Option<Box<RawValue>>,
}

/// An incoming notification.
#[derive(Debug)]
pub struct Notification {
    /// The method name.
    pub method: MethodName,
    /// The raw parameters, if any.
    pub params: Option<Box<RawValue>>,
}

/// A response to one of our requests.
#[derive(Debug)]
pub struct Response {
    /// The id of the request it answers.
    pub id: RequestId,
    /// The result or the error.
    pub outcome: Result<Box<RawValue>, ErrorObject>,
}

/// Why a frame could not be decoded, with the error response to send (if any).
#[derive(Debug)]
pub struct DecodeError {
    /// The id to answer with (`None` → `null`).
    pub id: Option<RequestId>,
    /// The error to report.
    pub error: ErrorObject,
    /// False when the frame was something that must not be answered (a malformed response).
    pub respond: bool,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default)]
    jsonrpc: Option<&'a str>,
    #[serde(default, deserialize_with = "present")]
    id: Option<IdField>,
    #[serde(default)]
    method: Option<MethodName>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<ErrorObject>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<IdField>, D::Error> {
    IdField::deserialize(d).map(Some)
}

/// Only the id, for answering frames whose other members are malformed.
#[derive(Deserialize)]
struct IdOnly {
    #[serde(default, deserialize_with = "present")]
    id: Option<IdField>,
}

impl Message {
    /// Decodes one frame. On failure, the error says what to answer.
    #[allow(clippy::result_large_err, reason = "the error is the response to send; callers take it apart at once")]
    pub fn decode(frame: &str) -> Result<Message, DecodeError> {
        let env: Envelope<'_> = match serde_json::from_str(frame) {
            // serde reads a struct from an array too, by position (`["2.0", 7, "ping"]` would
            // pass for a request): only an object is a message.
            Ok(env) if frame.trim_start().starts_with('{') => env,
            Ok(_) => return Err(Self::classify_failure(frame, None)),
            Err(e) => return Err(Self::classify_failure(frame, Some(e))),
        };
        let id = match env.id {
            None => None,
            Some(IdField::Valid(id)) => Some(id),
            Some(IdField::Null) if env.method.is_none() && env.error.is_some() => {
                // An error response the peer could not tie to any request: nothing to route.
                return Err(DecodeError {
                    id: None,
                    error: ErrorObject::invalid_request("error response with a null id"),
                    respond: false,
                });
            }
            Some(IdField::Null) => {
                return Err(DecodeError {
                    id: None,
                    error: ErrorObject::invalid_request("request id must not be null"),
                    respond: env.method.is_some(),
                });
            }
            Some(IdField::Invalid(why)) => {
                return Err(DecodeError {
                    id: None,
                    error: ErrorObject::invalid_request(why),
                    respond: env.method.is_some() || (env.result.is_none() && env.error.is_none()),
                });
            }
        };
        let id_for_errors = id.clone();
        let invalid = |msg: &str, respond: bool| DecodeError {
            id: id_for_errors.clone(),
            error: ErrorObject::invalid_request(msg.to_owned()),
            respond,
        };
        if env.jsonrpc != Some(JSONRPC_VERSION) {
            let is_response = env.method.is_none() && (env.result.is_some() || env.error.is_some());
            return Err(invalid("`jsonrpc` must be \"2.0\"", !is_response));
        }
        match (env.method, id) {
            (Some(method), Some(id)) => {
                if env.result.is_some() || env.error.is_some() {
                    return Err(invalid("a request must not carry `result` or `error`", true));
                }
                Ok(Message::Request(Request { id, method, params: env.params.map(RawValue::to_owned) }))
            }
            (Some(method), None) => {
                if env.result.is_some() || env.error.is_some() {
                    return Err(invalid("a notification must not carry `result` or `error`", false));
                }
                Ok(Message::Notification(Notification { method, params: env.params.map(RawValue::to_owned) }))
            }
            (None, Some(id)) => match (env.result, env.error) {
                (Some(result), None) => Ok(Message::Response(Response { id, outcome: Ok(result.to_owned()) })),
                (None, Some(error)) => Ok(Message::Response(Response { id, outcome: Err(error) })),
                (Some(_), Some(_)) => Err(invalid("a response must not carry both `result` and `error`", false)),
                (None, None) => Err(invalid("the frame has an id but no `method`, `result` or `error`", true)),
            },
            (None, None) => Err(invalid("the frame has neither `method` nor `id`", true)),
        }
    }

    /// Why `frame` is not a message; `e` is why it did not decode, if it did not.
    fn classify_failure(frame: &str, e: Option<serde_json::Error>) -> DecodeError {
        let syntax = match e {
            Some(ref e) if e.is_syntax() || e.is_eof() => true,
            _ => serde_json::from_str::<IgnoredAny>(frame).is_err(),
        };
        if syntax {
            let e = e.map_or_else(|| "invalid JSON".to_owned(), |e| e.to_string());
            let msg = if e.contains("recursion limit") {
                "parse error: JSON nested too deeply".to_owned()
            } else {
                format!("parse error: {e}")
            };
            return DecodeError { id: None, error: ErrorObject::parse_error(msg), respond: true };
        }
        let trimmed = frame.trim_start();
        let error = if trimmed.starts_with('[') {
            ErrorObject::invalid_request("batch requests are not supported; send one JSON-RPC object per message")
        } else if !trimmed.starts_with('{') {
            ErrorObject::invalid_request("a JSON-RPC message must be a JSON object")
        } else {
            ErrorObject::invalid_request(format!(
                "invalid JSON-RPC message: {}",
                e.map_or_else(|| "not an object".to_owned(), |e| e.to_string())
            ))
        };
        // Only an object has an id: serde would read `IdOnly` from an array too, taking its
        // first element for the id.
        let id = if trimmed.starts_with('{') {
            serde_json::from_str::<IdOnly>(frame).ok().and_then(|x| match x.id {
                Some(IdField::Valid(id)) => Some(id),
                _ => None,
            })
        } else {
            None
        };
        DecodeError { id, error, respond: true }
    }
}

/// Encodes a success response around an already-serialized result.
pub fn encode_result(id: &RequestId, result: &RawValue) -> String {
    let mut out = String::with_capacity(result.get().len() + 40);
    out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
    push_id(&mut out, id);
    out.push_str(",\"result\":");
    out.push_str(result.get());
    out.push('}');
    out
}

/// Encodes an error response (`id` `None` → `null`).
pub fn encode_error(id: Option<&RequestId>, error: &ErrorObject) -> String {
    #[derive(Serialize)]
    struct Out<'a> {
        jsonrpc: &'static str,
        id: Option<&'a RequestId>,
        error: &'a ErrorObject,
    }
    serde_json::to_string(&Out { jsonrpc: JSONRPC_VERSION, id, error }).unwrap_or_else(|_| {
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"unencodable error"}}"#.into()
    })
}

/// Encodes a request.
pub fn encode_request<P: Serialize + ?Sized>(id: &RequestId, method: &str, params: &P) -> serde_json::Result<String> {
    #[derive(Serialize)]
    struct Out<'a, P: ?Sized> {
        jsonrpc: &'static str,
        id: &'a RequestId,
        method: &'a str,
        params: &'a P,
    }
    // Room for a request with its `_meta` (a 2026-07-28 request's is a few hundred bytes), so
    // that most are written without growing the buffer.
    let mut out = Vec::with_capacity(512);
    serde_json::to_writer(&mut out, &Out { jsonrpc: JSONRPC_VERSION, id, method, params })?;
    // serde_json writes UTF-8 only; were it not to, the frame is refused rather than sent empty.
    String::from_utf8(out).map_err(|e| serde_json::Error::io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

/// Encodes a notification.
pub fn encode_notification<P: Serialize + ?Sized>(method: &str, params: &P) -> serde_json::Result<String> {
    #[derive(Serialize)]
    struct Out<'a, P: ?Sized> {
        jsonrpc: &'static str,
        method: &'a str,
        params: &'a P,
    }
    serde_json::to_string(&Out { jsonrpc: JSONRPC_VERSION, method, params })
}

fn push_id(out: &mut String, id: &RequestId) {
    match id {
        RequestId::Number(n) => out.push_str(itoa::Buffer::new().format(*n)),
        RequestId::String(s) => {
            // Serializing a str to JSON cannot fail.
            out.push_str(&serde_json::to_string(&**s).unwrap_or_default());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(frame: &str) -> DecodeError {
        Message::decode(frame).expect_err("frame should be rejected")
    }

    #[test]
    fn methods_of_mcp_are_held_without_copies() {
        let m = Message::decode(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#).unwrap();
        let Message::Request(r) = m else { panic!("a request") };
        assert!(matches!(r.method.0, Name::Known(Method::ToolsCall)));
        assert!(std::ptr::eq(r.method.as_str(), Method::ToolsCall.name()));
        let m = Message::decode(r#"{"jsonrpc":"2.0","id":1,"method":"x/\u0079"}"#).unwrap();
        let Message::Request(r) = m else { panic!("a request") };
        assert!(matches!(r.method.0, Name::Other(_)));
        assert_eq!(r.method.id(), None);
        // No bigger than two words: every request and notification carries one.
        assert_eq!(std::mem::size_of::<MethodName>(), 2 * std::mem::size_of::<usize>());
        assert_eq!((r.method.as_str(), r.method.to_string()), ("x/y", "x/y".to_owned()));
        assert_eq!(format!("{:?}", MethodName::new("ping")), "\"ping\"");
    }

    #[test]
    fn decodes_each_kind() {
        let m = Message::decode(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap();
        assert!(
            matches!(m, Message::Request(Request { id: RequestId::Number(7), ref method, params: None }) if method == "ping")
        );
        let m = Message::decode(r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}"#).unwrap();
        assert!(matches!(m, Message::Notification(ref n) if n.params.as_ref().unwrap().get() == "{}"));
        let m = Message::decode(r#"{"jsonrpc":"2.0","id":"a","result":{"x":1}}"#).unwrap();
        assert!(matches!(m, Message::Response(Response { outcome: Ok(ref r), .. }) if r.get() == r#"{"x":1}"#));
        let m = Message::decode(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}"#).unwrap();
        assert!(matches!(m, Message::Response(Response { outcome: Err(ErrorObject { code: -1, .. }), .. })));
    }

    #[test]
    fn classifies_bad_frames() {
        assert_eq!(err("{not json").error.code, codes::PARSE_ERROR);
        assert_eq!(err(r#"{"jsonrpc":"2.0","id":1,"method":"x""#).error.code, codes::PARSE_ERROR);
        let e = err(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert_eq!(e.error.code, codes::INVALID_REQUEST);
        assert!(e.error.message.contains("batch"));
        assert_eq!(err("42").error.code, codes::INVALID_REQUEST);
        let e = err(r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#);
        assert_eq!((e.error.code, e.id), (codes::INVALID_REQUEST, Some(RequestId::Number(3))));
        let e = err(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#);
        assert_eq!((e.error.code, e.id, e.respond), (codes::INVALID_REQUEST, None, true));
        let e = err(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#);
        assert_eq!(e.error.code, codes::INVALID_REQUEST);
        let e = err(r#"{"jsonrpc":"2.0","id":99999999999999999999999,"method":"ping"}"#);
        assert_eq!(e.error.code, codes::INVALID_REQUEST);
        let e = err(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#);
        assert_eq!(e.error.code, codes::INVALID_REQUEST);
        let e = err(r#"{"jsonrpc":"2.0","id":4,"method":17}"#);
        assert_eq!((e.error.code, e.id), (codes::INVALID_REQUEST, Some(RequestId::Number(4))));
        let e = err(r#"{"jsonrpc":"2.0","id":5}"#);
        assert_eq!(e.error.code, codes::INVALID_REQUEST);
        assert!(!err(r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}"#).respond);
    }

    #[test]
    fn a_frame_that_is_not_an_object_is_answered_without_an_id() {
        // serde reads a struct from an array too, by position: neither an element nor the
        // whole array may pass for an id or a message.
        for frame in ["[1]", r#"["a",{"id":2}]"#, "[7,\"x\"]", r#"["jsonrpc","tools/list"]"#, r#"["2.0",7,"ping"]"#] {
            let e = err(frame);
            assert_eq!((e.error.code, e.id, e.respond), (codes::INVALID_REQUEST, None, true), "{frame}");
        }
    }

    #[test]
    fn deep_nesting_is_rejected_without_overflowing_the_stack() {
        let frame = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(err(&frame).error.code, codes::INVALID_REQUEST);
        let frame = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
        assert_eq!(err(&frame).error.code, codes::INVALID_REQUEST);
        // Deep params are kept raw here; decoding them later fails cleanly at serde_json's depth limit.
        let frame = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{}{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let Ok(Message::Request(r)) = Message::decode(&frame) else { panic!("expected a request") };
        let e = serde_json::from_str::<serde_json::Value>(r.params.unwrap().get()).unwrap_err();
        assert!(e.to_string().contains("recursion limit"), "{e}");
    }

    #[test]
    fn encodes_responses() {
        let raw = RawValue::from_string("{\"ok\":true}".into()).unwrap();
        assert_eq!(
            encode_result(&RequestId::from("a\"b"), &raw),
            r#"{"jsonrpc":"2.0","id":"a\"b","result":{"ok":true}}"#
        );
        assert_eq!(
            encode_error(None, &ErrorObject::parse_error("bad")),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#
        );
    }
}
