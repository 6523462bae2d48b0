//! Building a tool's `inputSchema` and `outputSchema` with schemars.
//!
//! Every schema is self-contained: subschemas are inlined (hosts and models handle that best);
//! only recursive types keep a `$ref` into `$defs` at the root. `Option<T>` never becomes a
//! nullable type: the property is simply left out of `required`.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value};

use crate::protocol::JsonObject;

/// A schema that is not usable where MCP needs it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolSchemaError(pub String);

/// The generator every tool schema is made with.
pub(crate) fn generator() -> SchemaGenerator {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    settings.into_generator()
}

/// Formats JSON Schema 2020-12 defines. schemars also emits Rust-specific ones (`int64`,
/// `uint`, `double` …) that strict validators reject as unknown; those are dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Makes a generated schema portable: removes `null` as an accepted type everywhere (absence,
/// not `null`, is how MCP schemas express an optional value, and some clients reject nullable
/// types outright) and drops non-standard `format`s.
pub(crate) fn strip_null(value: &mut Value) {
    match value {
        Value::Object(o) => {
            if o.get("format").and_then(Value::as_str).is_some_and(|f| !STANDARD_FORMATS.contains(&f)) {
                o.remove("format");
            }
            if let Some(Value::Array(types)) = o.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.pop().unwrap_or(Value::Null);
                    o.insert("type".to_owned(), only);
                }
            }
            for key in ["anyOf", "oneOf"] {
                let Some(Value::Array(alternatives)) = o.get_mut(key) else {
                    continue;
                };
                alternatives.retain(|s| !is_null_schema(s));
                if alternatives.len() == 1
                    && let Some(Value::Object(only)) = alternatives.pop()
                {
                    o.remove(key);
                    for (k, v) in only {
                        o.entry(k).or_insert(v);
                    }
                }
            }
            if let Some(Value::Array(values)) = o.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            for (key, child) in o.iter_mut() {
                if !matches!(key.as_str(), "default" | "examples" | "const" | "enum") {
                    strip_null(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_null),
        _ => {}
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").is_some_and(|t| t == "null") || schema.get("const").is_some_and(Value::is_null)
}

/// The schema of `T` as a plain JSON object, with `$defs` for recursive parts at its root.
pub(crate) fn root_schema_for<T: JsonSchema + ?Sized>() -> JsonObject {
    let mut generator = generator();
    let mut schema = generator.root_schema_for::<T>().to_value();
    strip_null(&mut schema);
    let mut object = match schema {
        Value::Object(o) => o,
        Value::Bool(true) => Map::new(),
        _ => Map::from_iter([("not".to_owned(), Value::Object(Map::new()))]),
    };
    object.remove("$schema");
    object
}

/// The `inputSchema` of a tool, built one argument at a time.
#[derive(Debug)]
pub struct InputSchema {
    generator: SchemaGenerator,
    properties: JsonObject,
    required: Vec<Value>,
    /// Why the schema cannot be a tool's input (a [`Params<T>`](super::Params) whose `T` is
    /// not an object), reported when the server is built.
    problem: Option<String>,
}

/// The member of a finished input schema that carries [`InputSchema`]'s problem to
/// [`header_params`](super::header_params), which the server's `build` calls on every tool.
pub(crate) const INVALID: &str = "x-mcp-invalid-input";

impl Default for InputSchema {
    fn default() -> Self {
        InputSchema { generator: generator(), properties: Map::new(), required: Vec::new(), problem: None }
    }
}

impl InputSchema {
    /// An empty object schema.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a property with the schema of `T`.
    pub fn property<T: JsonSchema + ?Sized>(&mut self, name: &str, description: Option<&str>, required: bool) {
        let mut schema = self.generator.subschema_for::<T>().to_value();
        strip_null(&mut schema);
        let mut schema = match schema {
            Value::Object(o) => o,
            Value::Bool(true) => Map::new(),
            _ => Map::from_iter([("not".to_owned(), Value::Object(Map::new()))]),
        };
        if let Some(d) = description {
            schema.insert("description".to_owned(), Value::String(d.to_owned()));
        }
        self.properties.insert(name.to_owned(), Value::Object(schema));
        if required {
            self.required.push(Value::String(name.to_owned()));
        }
    }

    /// Adds every top-level property of `T` (a struct) as a property of its own, required as
    /// `T` requires it: what [`Params<T>`](super::Params) does. When `T`'s schema is not an
    /// object with properties, the server refuses to build with the tool.
    pub fn properties_of<T: JsonSchema + ?Sized>(&mut self) {
        let mut schema = self.generator.subschema_for::<T>().to_value();
        strip_null(&mut schema);
        let object = schema.as_object().filter(|o| o.get("type").and_then(Value::as_str) == Some("object"));
        let Some(Value::Object(properties)) = object.and_then(|o| o.get("properties")) else {
            self.problem = Some(format!(
                "`Params<{}>` takes the fields of a struct as the tool's arguments, but its schema is not an object with properties; take it as one argument instead",
                T::schema_name()
            ));
            return;
        };
        for (name, property) in properties {
            self.properties.insert(name.clone(), property.clone());
        }
        if let Some(Value::Array(required)) = object.and_then(|o| o.get("required")) {
            self.required.extend(required.iter().cloned());
        }
    }

    /// The finished schema: `{"type":"object","properties":{…},"required":[…]}`.
    pub fn finish(mut self) -> JsonObject {
        let mut root = Map::new();
        if let Some(problem) = self.problem.take() {
            root.insert(INVALID.to_owned(), Value::String(problem));
        }
        root.insert("type".to_owned(), Value::String("object".to_owned()));
        root.insert("properties".to_owned(), Value::Object(std::mem::take(&mut self.properties)));
        if !self.required.is_empty() {
            root.insert("required".to_owned(), Value::Array(std::mem::take(&mut self.required)));
        }
        let defs = self.generator.take_definitions(true);
        if !defs.is_empty() {
            let mut defs = Value::Object(defs);
            strip_null(&mut defs);
            root.insert("$defs".to_owned(), defs);
        }
        root
    }
}

/// Checks that an output schema describes an object, as MCP requires of `outputSchema`.
pub(crate) fn check_output_schema(schema: &JsonObject) -> Result<(), ToolSchemaError> {
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(()),
        other => Err(ToolSchemaError(format!(
            "an output schema must have `\"type\": \"object\"` at its root (found {}); wrap the value in a struct",
            other.map_or_else(|| "no type".to_owned(), Value::to_string)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Point {
        /// Horizontal.
        x: f64,
        y: Option<f64>,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Tree {
        children: Vec<Tree>,
    }

    #[test]
    fn empty_schema_is_an_object() {
        assert_eq!(Value::Object(InputSchema::new().finish()), json!({"type": "object", "properties": {}}));
    }

    #[test]
    fn options_are_not_nullable_and_nested_types_inline() {
        let mut s = InputSchema::new();
        s.property::<i64>("a", Some("first"), true);
        s.property::<Option<String>>("b", None, false);
        s.property::<Point>("p", None, true);
        let v = Value::Object(s.finish());
        assert_eq!(v["properties"]["a"], json!({"type": "integer", "description": "first"}));
        assert_eq!(v["properties"]["b"], json!({"type": "string"}));
        assert_eq!(v["properties"]["p"]["properties"]["x"]["description"], "Horizontal.");
        assert_eq!(v["properties"]["p"]["properties"]["y"], json!({"type": "number"}));
        assert_eq!(v["required"], json!(["a", "p"]));
        assert!(v.get("$defs").is_none());
        assert!(!v.to_string().contains("null"));
    }

    #[test]
    fn recursive_types_use_defs_at_the_root() {
        let mut s = InputSchema::new();
        s.property::<Tree>("t", None, true);
        let v = Value::Object(s.finish());
        let text = v.to_string();
        assert!(text.contains("#/$defs/Tree"), "{text}");
        assert!(v["$defs"]["Tree"].is_object(), "{text}");
    }

    #[test]
    fn output_schema_must_be_an_object() {
        assert!(check_output_schema(&root_schema_for::<Point>()).is_ok());
        assert!(check_output_schema(&root_schema_for::<Vec<i32>>()).is_err());
    }
}
