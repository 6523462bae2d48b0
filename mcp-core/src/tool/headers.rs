//! Tool parameters mirrored into HTTP headers (`x-mcp-header`, revision 2026-07-28, SEP-2243).
//!
//! A property of a tool's input schema annotated with `"x-mcp-header": "Region"` is sent by
//! Streamable HTTP clients as the header `Mcp-Param-Region` too, so intermediaries can route on
//! it without reading the body. The server checks that each such header agrees with the body.

use serde_json::Value;

use super::ToolSchemaError;
use crate::protocol::JsonObject;

/// The schema keyword naming a parameter's header.
pub const X_MCP_HEADER: &str = "x-mcp-header";

/// The largest integer a header may carry (JavaScript's safe range).
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// The JSON type of a mirrored parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderKind {
    /// A string, sent as is (or Base64-encoded when it is not a plain header value).
    String,
    /// An integer within ±(2^53 − 1), sent in decimal.
    Integer,
    /// `true` or `false`.
    Boolean,
}

/// One parameter mirrored into an `Mcp-Param-{header}` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The name after `Mcp-Param-`.
    pub header: String,
    /// The chain of `properties` keys from the schema root to the parameter.
    pub path: Vec<String>,
    /// The parameter's type.
    pub kind: HeaderKind,
}

impl HeaderParam {
    /// The parameter's value in `arguments`, if it has one (`null` counts as none).
    pub fn value<'a>(&self, arguments: &'a JsonObject) -> Option<&'a Value> {
        let (last, parents) = self.path.split_last()?;
        let mut object = arguments;
        for key in parents {
            object = object.get(key)?.as_object()?;
        }
        object.get(last).filter(|v| !v.is_null())
    }

    /// Whether the (decoded) header value `header` stands for the body value `body`: strings
    /// are compared exactly, integers as numbers (`42.0` is `42`), booleans as `true`/`false`.
    pub fn matches(&self, header: &str, body: &Value) -> bool {
        match (self.kind, body) {
            (HeaderKind::String, Value::String(s)) => header == s,
            (HeaderKind::Integer, Value::Number(n)) => {
                header.trim().parse::<f64>().ok().zip(n.as_f64()).is_some_and(|(h, b)| h == b)
            }
            (HeaderKind::Boolean, Value::Bool(b)) => header == if *b { "true" } else { "false" },
            // The body does not have the declared type: compare what a client would have sent.
            (_, Value::String(s)) => header == s,
            (_, other) => serde_json::to_string(other).is_ok_and(|text| text == header),
        }
    }
}

/// The parameters of `input_schema` mirrored into headers, checked against the rules of
/// `x-mcp-header`: a non-empty HTTP token, unique among the tool's headers (ignoring case), on a
/// property of type string, integer or boolean that is reached from the root through
/// `properties` only (not through `items`, composition or conditional keywords, or `$ref`).
pub fn header_params(input_schema: &JsonObject) -> Result<Vec<HeaderParam>, ToolSchemaError> {
    if let Some(problem) = input_schema.get(super::schema::INVALID).and_then(Value::as_str) {
        return Err(ToolSchemaError(problem.to_owned()));
    }
    let mut found = Vec::new();
    collect(input_schema, &mut Vec::new(), &mut found)?;
    let reachable = found.len();
    if count_annotations(&Value::Object(input_schema.clone()), false) != reachable {
        return Err(ToolSchemaError(format!(
            "`{X_MCP_HEADER}` may only annotate a property reached from the schema root through `properties` alone \
             (not through `items`, `anyOf`/`oneOf`/`allOf`/`not`, `if`/`then`/`else` or `$ref`)"
        )));
    }
    for (i, param) in found.iter().enumerate() {
        if found[..i].iter().any(|p| p.header.eq_ignore_ascii_case(&param.header)) {
            return Err(ToolSchemaError(format!(
                "two parameters are mirrored into the header `Mcp-Param-{}` (header names ignore case)",
                param.header
            )));
        }
    }
    Ok(found)
}

fn collect(schema: &JsonObject, path: &mut Vec<String>, found: &mut Vec<HeaderParam>) -> Result<(), ToolSchemaError> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return Ok(()) };
    for (name, property) in properties {
        let Some(property) = property.as_object() else { continue };
        path.push(name.clone());
        if let Some(header) = property.get(X_MCP_HEADER) {
            found.push(annotated(path, header, property)?);
        }
        collect(property, path, found)?;
        path.pop();
    }
    Ok(())
}

fn annotated(path: &[String], header: &Value, property: &JsonObject) -> Result<HeaderParam, ToolSchemaError> {
    let at = path.join(".");
    let header =
        header.as_str().ok_or_else(|| ToolSchemaError(format!("`{X_MCP_HEADER}` of `{at}` must be a string")))?;
    if header.is_empty() || !header.bytes().all(is_tchar) {
        return Err(ToolSchemaError(format!(
            "`{X_MCP_HEADER}` of `{at}` must be a non-empty HTTP token (letters, digits and !#$%&'*+-.^_`|~), not {header:?}"
        )));
    }
    let kind = match property.get("type").and_then(Value::as_str) {
        Some("string") => HeaderKind::String,
        Some("integer") => HeaderKind::Integer,
        Some("boolean") => HeaderKind::Boolean,
        _ => {
            return Err(ToolSchemaError(format!(
                "`{at}` is mirrored into a header, so its type must be string, integer or boolean"
            )));
        }
    };
    if kind == HeaderKind::Integer {
        let out_of_range =
            |key: &str, beyond: fn(f64) -> bool| property.get(key).and_then(Value::as_f64).is_some_and(beyond);
        if out_of_range("minimum", |m| m < -(MAX_SAFE_INTEGER as f64))
            || out_of_range("maximum", |m| m > MAX_SAFE_INTEGER as f64)
        {
            return Err(ToolSchemaError(format!(
                "`{at}` is mirrored into a header: its bounds must stay within ±(2^53 − 1)"
            )));
        }
    }
    Ok(HeaderParam { header: header.to_owned(), path: path.to_vec(), kind })
}

/// `tchar` of RFC 9110.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// How many `x-mcp-header` annotations `value` holds anywhere. The keys of a `properties` map
/// are property names, not keywords.
fn count_annotations(value: &Value, names: bool) -> usize {
    match value {
        Value::Object(object) => object
            .iter()
            .map(|(key, v)| {
                let own = usize::from(!names && key == X_MCP_HEADER);
                own + count_annotations(v, !names && key == "properties")
            })
            .sum(),
        Value::Array(items) => items.iter().map(|v| count_annotations(v, false)).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn annotated_properties_are_found_at_any_depth_through_properties() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "query": {"type": "string"},
                "target": {"type": "object", "properties": {
                    "shard": {"type": "integer", "x-mcp-header": "Shard"},
                    "x-mcp-header": {"type": "boolean"}
                }}
            }
        }));
        let params = header_params(&s).unwrap();
        assert_eq!(params.len(), 2);
        assert_eq!(
            params[0],
            HeaderParam { header: "Region".into(), path: vec!["region".into()], kind: HeaderKind::String }
        );
        assert_eq!(params[1].path, ["target", "shard"]);
        let args = schema(json!({"region": "eu", "target": {"shard": 3}}));
        assert_eq!(params[0].value(&args), Some(&json!("eu")));
        assert_eq!(params[1].value(&args), Some(&json!(3)));
        assert_eq!(params[1].value(&schema(json!({"target": null}))), None);
        assert!(params[1].matches("3.0", &json!(3)));
        assert!(!params[1].matches("4", &json!(3)));
        assert!(params[0].matches("eu", &json!("eu")));
        assert!(!params[0].matches("EU", &json!("eu")));
    }

    #[test]
    fn misplaced_or_malformed_annotations_are_refused() {
        let bad = [
            json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A\r\n"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": 1}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "a"}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
            json!({"$defs": {"a": {"type": "string", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "integer", "maximum": 1e300, "x-mcp-header": "A"}}}),
        ];
        for s in bad {
            assert!(header_params(&schema(s.clone())).is_err(), "{s}");
        }
        assert_eq!(header_params(&schema(json!({"type": "object"}))).unwrap(), []);
    }
}
