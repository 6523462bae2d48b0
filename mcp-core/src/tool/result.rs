//! What a `#[tool]` function may return.

use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Display;
use std::sync::{OnceLock, PoisonError, RwLock};

use crate::engine::ResultText;
use schemars::JsonSchema;
use serde::Serialize;

use super::schema::root_schema_for;
use crate::elicit::UrlElicitationRequired;
use crate::protocol::{CallToolResult, Content, ErrorObject, JsonObject};

/// A value a tool may return.
///
/// Text-like values (strings, numbers, `bool`, `char`) become one text block; `()` an empty
/// result; [`Content`], `Vec<Content>` and [`CallToolResult`] are sent as they are; [`Json<T>`]
/// becomes `structuredContent` (plus its JSON text) and gives the tool an `outputSchema`.
/// `Result<T, E>`: `Ok` converts as `T`; `Err` becomes a result with `isError: true` carrying
/// the error's message, except an [`ErrorObject`], which becomes a JSON-RPC error response.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[tool]` function",
    label = "not a tool result",
    note = "a tool returns text (`String`, `&str`, numbers, `bool`), `()`, `Content`, `Vec<Content>`, `CallToolResult`, `Json<T>` for structured output, or `Result<T, E>` of one of these with `E: Display`"
)]
pub trait IntoToolResult: Send + 'static {
    /// Converts the value into a result, or into a JSON-RPC error.
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject>;

    /// Converts the value into the JSON text of its result, or into a JSON-RPC error. The
    /// server calls this one; the default goes through
    /// [`into_tool_result`](Self::into_tool_result), and text-like values write their result
    /// directly, without building a [`CallToolResult`] first.
    fn into_result_text(self) -> Result<ResultText, ErrorObject>
    where
        Self: Sized,
    {
        raw(&self.into_tool_result()?)
    }

    /// The `outputSchema` this kind of value implies, if any.
    fn output_schema() -> Option<JsonObject> {
        None
    }
}

fn text(s: impl Into<String>) -> Result<CallToolResult, ErrorObject> {
    Ok(CallToolResult::success(vec![Content::text(s)]))
}

/// The JSON text of a result.
pub(crate) fn raw(result: &CallToolResult) -> Result<ResultText, ErrorObject> {
    ResultText::serialize(result)
        .map_err(|e| ErrorObject::internal(format!("the tool's result could not be encoded: {e}")))
}

/// The JSON text of a successful result with one text block: what `text(s)` serializes to.
fn raw_text(text: &str) -> Result<ResultText, ErrorObject> {
    const HEAD: &str = r#"{"content":[{"type":"text","text":"#;
    const TAIL: &str = "}]}";
    // Most text needs no escapes: it is copied as it is, between quotes. The check is one
    // pass the compiler vectorizes (no early exit).
    let plain = !text.bytes().fold(false, |escape, b| escape | (b < 0x20) | (b == b'"') | (b == b'\\'));
    let mut buf = ResultText::buffer(HEAD.len() + text.len() + 2 + TAIL.len());
    buf.push_str(HEAD);
    if plain {
        buf.push('"');
        buf.push_str(text);
        buf.push('"');
    } else {
        let quoted = serde_json::to_string(text)
            .map_err(|e| ErrorObject::internal(format!("the tool's result could not be encoded: {e}")))?;
        buf.push_str(&quoted);
    }
    buf.push_str(TAIL);
    Ok(ResultText::written(buf))
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        text(self)
    }

    fn into_result_text(self) -> Result<ResultText, ErrorObject> {
        raw_text(&self)
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        text(self)
    }

    fn into_result_text(self) -> Result<ResultText, ErrorObject> {
        raw_text(self)
    }
}

impl IntoToolResult for Cow<'static, str> {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        text(self)
    }

    fn into_result_text(self) -> Result<ResultText, ErrorObject> {
        raw_text(&self)
    }
}

macro_rules! display_as_text {
    ($($t:ty),*) => {$(
        impl IntoToolResult for $t {
            fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
                text(self.to_string())
            }

            fn into_result_text(self) -> Result<ResultText, ErrorObject> {
                raw_text(&self.to_string())
            }
        }
    )*};
}
display_as_text!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64, bool, char);

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::success(Vec::new()))
    }
}

impl IntoToolResult for Content {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::success(vec![self]))
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::success(self))
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(self)
    }
}

/// A tool result already in JSON text: a `CallToolResult` as another server sent it (read with
/// `ToolCallBuilder::send_raw`), returned from a tool to be sent on as it is. What a server
/// relaying calls returns, with no decoding and encoding again. Text that is not a JSON object
/// is refused with an internal error when it is sent.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(transparent)]
pub struct RawToolResult(Box<serde_json::value::RawValue>);

impl RawToolResult {
    /// The result's JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The JSON text `raw`, as a result.
    pub fn from_raw(raw: Box<serde_json::value::RawValue>) -> Self {
        RawToolResult(raw)
    }

    /// The JSON text.
    pub fn into_raw(self) -> Box<serde_json::value::RawValue> {
        self.0
    }
}

impl IntoToolResult for RawToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        serde_json::from_str(self.get()).map_err(|e| ErrorObject::internal(format!("an unreadable tool result: {e}")))
    }

    fn into_result_text(self) -> Result<ResultText, ErrorObject> {
        if !self.get().trim_start().starts_with('{') {
            return Err(ErrorObject::internal("a tool result that is not a JSON object"));
        }
        Ok(ResultText::from(self.0))
    }
}

/// Structured tool output: sent as `structuredContent` (and as JSON text for older clients),
/// with the schema of `T` as the tool's `outputSchema`.
///
/// MCP requires both to be objects. When `T`'s schema is not an object (a `Vec<T>`, a number,
/// an enum…), the value is wrapped as `{"result": value}` and the output schema is
/// `{"type": "object", "properties": {"result": <schema of T>}, "required": ["result"]}`:
///
/// ```
/// use typed_mcp::prelude::*;
/// use typed_mcp::tool::IntoToolResult;
///
/// let result = Json(vec![1, 2, 3]).into_tool_result().unwrap();
/// assert_eq!(result.structured_content, Some(serde_json::json!({"result": [1, 2, 3]})));
/// let schema = <Json<Vec<i32>>>::output_schema().unwrap();
/// assert_eq!(schema["properties"]["result"]["type"], "array");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Json<T>(pub T);

/// The key a non-object output is wrapped under.
const RESULT: &str = "result";

/// Whether `T`'s schema is an object (then its values are sent as they are), decided once per
/// type.
fn is_object_schema<T: JsonSchema + 'static>() -> bool {
    static KNOWN: OnceLock<RwLock<HashMap<TypeId, bool>>> = OnceLock::new();
    let known = KNOWN.get_or_init(Default::default);
    let id = TypeId::of::<T>();
    if let Some(&object) = known.read().unwrap_or_else(PoisonError::into_inner).get(&id) {
        return object;
    }
    let object = root_schema_for::<T>().get("type").and_then(serde_json::Value::as_str) == Some("object");
    known.write().unwrap_or_else(PoisonError::into_inner).insert(id, object);
    object
}

impl<T: Serialize + JsonSchema + Send + 'static> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        let mut value = serde_json::to_value(&self.0)
            .map_err(|e| ErrorObject::internal(format!("the tool's output could not be serialized: {e}")))?;
        if !is_object_schema::<T>() {
            value = serde_json::Value::Object(JsonObject::from_iter([(RESULT.to_owned(), value)]));
        }
        let text = value.to_string();
        Ok(CallToolResult { content: vec![Content::text(text)], structured_content: Some(value), ..Default::default() })
    }

    fn output_schema() -> Option<JsonObject> {
        let mut schema = root_schema_for::<T>();
        if schema.get("type").and_then(serde_json::Value::as_str) == Some("object") {
            return Some(schema);
        }
        // Recursive parts stay at the root, where their `$ref`s point; the title schemars
        // makes up for a root (`Array_of_string`) says nothing.
        let defs = schema.remove("$defs");
        schema.remove("title");
        let mut root = JsonObject::new();
        root.insert("type".into(), "object".into());
        root.insert("properties".into(), serde_json::json!({ RESULT: schema }));
        root.insert("required".into(), serde_json::json!([RESULT]));
        if let Some(defs) = defs {
            root.insert("$defs".into(), defs);
        }
        Some(root)
    }
}

/// The JSON-RPC error an error value stands for, if it is one of the protocol-level errors
/// ([`ErrorObject`], [`UrlElicitationRequired`]), directly or boxed.
pub(crate) fn protocol_error(e: &(dyn Any + Send)) -> Option<ErrorObject> {
    if let Some(rpc) = e.downcast_ref::<ErrorObject>() {
        return Some(rpc.clone());
    }
    if let Some(url) = e.downcast_ref::<UrlElicitationRequired>() {
        return Some(url.to_error_object());
    }
    let boxed: &(dyn std::error::Error + 'static) =
        if let Some(b) = e.downcast_ref::<Box<dyn std::error::Error + Send + Sync>>() {
            &**b
        } else if let Some(b) = e.downcast_ref::<Box<dyn std::error::Error + Send>>() {
            &**b
        } else {
            return None;
        };
    if let Some(rpc) = boxed.downcast_ref::<ErrorObject>() {
        return Some(rpc.clone());
    }
    boxed.downcast_ref::<UrlElicitationRequired>().map(UrlElicitationRequired::to_error_object)
}

/// The result (or the JSON-RPC error) a tool's `Err` stands for.
fn self_error<E: Display + Send + 'static>(e: E) -> Result<CallToolResult, ErrorObject> {
    match protocol_error(&e) {
        Some(rpc) => Err(rpc),
        None => Ok(CallToolResult::error_text(e.to_string())),
    }
}

impl<T: IntoToolResult, E: Display + Send + 'static> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => self_error(e),
        }
    }

    fn into_result_text(self) -> Result<ResultText, ErrorObject> {
        match self {
            Ok(v) => v.into_result_text(),
            Err(e) => self_error(e).and_then(|r| raw(&r)),
        }
    }

    fn output_schema() -> Option<JsonObject> {
        T::output_schema()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_result_in_json_text_is_sent_as_it_is_and_only_if_an_object() {
        let text = r#"{"content":[{"type":"text","text":"relayed"}],"isError":false,"extra":{"kept":1}}"#;
        let relayed: RawToolResult = serde_json::from_str(text).unwrap();
        assert_eq!(relayed.clone().into_result_text().unwrap().get(), text);
        assert_eq!(relayed.into_tool_result().unwrap().content, vec![Content::text("relayed")]);
        let not_an_object =
            RawToolResult::from_raw(serde_json::value::RawValue::from_string("[1, 2]".to_owned()).unwrap());
        assert!(not_an_object.into_result_text().is_err());
    }

    #[derive(Serialize, JsonSchema)]
    struct Sum {
        total: i64,
    }

    /// The JSON text the server sends for `value`, both ways.
    fn both<T: IntoToolResult + Clone>(value: T) -> (String, String) {
        let direct = value.clone().into_result_text().unwrap().get().to_owned();
        let built = raw(&value.into_tool_result().unwrap()).unwrap().get().to_owned();
        (direct, built)
    }

    #[test]
    fn text_results_written_directly_are_the_same() {
        for (direct, built) in [
            both("plain".to_owned()),
            both("quotes \" and \\ and \n and \u{1} and é".to_owned()),
            both(""),
            both(Cow::Borrowed("cow")),
            both(-17i64),
            both(2.5f64),
            both(true),
            both('c'),
            both(Ok::<_, String>("fine".to_owned())),
            both(Err::<String, _>("broke".to_owned())),
            both(()),
        ] {
            assert_eq!(direct, built);
        }
        let (direct, _) = both("x".to_owned());
        assert_eq!(direct, r#"{"content":[{"type":"text","text":"x"}]}"#);
    }

    #[test]
    fn conversions() {
        assert_eq!(5i64.into_tool_result().unwrap().content[0].as_text(), Some("5"));
        assert!(().into_tool_result().unwrap().content.is_empty());
        let r = Json(Sum { total: 3 }).into_tool_result().unwrap();
        assert_eq!(r.structured_content, Some(json!({"total": 3})));
        assert_eq!(r.content[0].as_text(), Some(r#"{"total":3}"#));
        assert_eq!(<Result<Json<Sum>, String>>::output_schema().unwrap()["type"], "object");
        let r = Json(vec![Sum { total: 1 }]).into_tool_result().unwrap();
        assert_eq!(r.structured_content, Some(json!({"result": [{"total": 1}]})));
        assert_eq!(r.content[0].as_text(), Some(r#"{"result":[{"total":1}]}"#));
        let schema = <Json<Vec<Sum>>>::output_schema().unwrap();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["result"]));
        assert_eq!(schema["properties"]["result"]["items"]["properties"]["total"]["type"], "integer");
        assert_eq!(Json(7u8).into_tool_result().unwrap().structured_content, Some(json!({"result": 7})));
        let r = Err::<i64, _>("disk full".to_owned()).into_tool_result().unwrap();
        assert!(r.is_error());
        assert_eq!(r.content[0].as_text(), Some("disk full"));
        let e = Err::<i64, _>(ErrorObject::invalid_params("nope")).into_tool_result().unwrap_err();
        assert_eq!(e.code, -32602);
        let url = UrlElicitationRequired::single("id", "https://x.test", "go");
        assert_eq!(Err::<i64, _>(url.clone()).into_tool_result().unwrap_err().code, -32042);
        let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(url);
        assert_eq!(Err::<i64, _>(boxed).into_tool_result().unwrap_err().code, -32042);
    }
}
