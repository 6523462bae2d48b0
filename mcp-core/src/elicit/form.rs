//! A form's `requestedSchema` from schemars: [`FormTransform`] turns what schemars generates for
//! a type into MCP's restricted subset, and [`form_schema_for`] builds and checks it.
//!
//! schemars reads the type as serde does (names, `rename_all`, `default`, `skip`) and takes
//! doc comments and `#[schemars(…)]` attributes (`title`, `description`, `length`, `range`,
//! `email`, `url`, `extend("format" = …)`). What it writes is full JSON Schema: a `$schema`, a
//! root title, `Option<T>` as "T or null", integer formats such as `int32`, unit enums as
//! `enum` or as a `oneOf` of `const`s. MCP forms allow a small flat subset; the transform
//! rewrites the first into the second and leaves anything it cannot express for
//! [`check_form_schema`](super::validate::check_form_schema) to report.

use schemars::generate::SchemaSettings;
use schemars::transform::Transform;
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value};

use super::{FieldKind, FormSchema, OptionStyle, SchemaError};
use crate::protocol::JsonObject;

/// Rewrites a schemars schema of a struct into MCP's form subset. Applied by
/// [`form_schema_for`]; usable on its own with `SchemaSettings::with_transform` (together
/// with `inline_subschemas`, since a form has no `$defs` to refer to).
///
/// - the root keeps `type`, `properties` and `required` only (no `$schema`, title,
///   description or `additionalProperties`);
/// - `Option<T>` is `T`, not "T or null" (the field is optional through `required`);
/// - integer formats (`int32`, `uint8`, …) become the type's bounds (`minimum`/`maximum`,
///   only for types whose bounds a double holds exactly) and other Rust-specific formats
///   (`double`, `float`) are dropped;
/// - a field with a `default` is not required;
/// - a unit enum's `oneOf` of `{const, description}` becomes options with titles, an
///   `enum` stays plain; in a multi-select's `items` the titled spelling is `anyOf`.
#[derive(Debug, Clone, Copy, Default)]
pub struct FormTransform;

impl Transform for FormTransform {
    fn transform(&mut self, schema: &mut Schema) {
        let Some(root) = schema.as_object_mut() else { return };
        root.retain(|k, _| matches!(k.as_str(), "type" | "properties" | "required"));
        let mut defaulted = Vec::new();
        if let Some(Value::Object(properties)) = root.get_mut("properties") {
            for (name, property) in properties.iter_mut() {
                if let Value::Object(o) = property {
                    field(o);
                    if o.contains_key("default") {
                        defaulted.push(name.clone());
                    }
                }
            }
        }
        // A field with a default is not required: a missing answer is filled in from it
        // (also when the default came from `extend("default" = …)`, which serde knows nothing of).
        if let Some(Value::Array(required)) = root.get_mut("required") {
            required.retain(|r| r.as_str().is_none_or(|r| !defaulted.iter().any(|d| d == r)));
        }
        if root.get("required").and_then(Value::as_array).is_some_and(Vec::is_empty) {
            root.remove("required");
        }
    }
}

/// One property: nulls out, formats into bounds, choices into MCP's spellings.
fn field(o: &mut JsonObject) {
    strip_null(o);
    if o.get("default").is_some_and(Value::is_null) {
        o.remove("default");
    }
    integer_format(o);
    if let Some(options) = choice_options(o) {
        o.remove("oneOf");
        o.remove("anyOf");
        o.remove("enum");
        o.remove("const");
        o.insert("type".into(), "string".into());
        render_single(o, &options, OptionStyle::Auto);
    }
    if o.get("type").and_then(Value::as_str) == Some("array") {
        if let Some(Value::Object(items)) = o.get_mut("items") {
            strip_null(items);
            if let Some(options) = choice_options(items) {
                *items = multi_items(&options, OptionStyle::Auto);
            }
        }
        o.remove("uniqueItems");
    }
}

/// `T` for "T or null": `type: [t, "null"]`, `anyOf: [T, {type: null}]`, a `null` among an
/// enum's values or a `{const: null}` option.
fn strip_null(o: &mut JsonObject) {
    if let Some(Value::Array(types)) = o.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let t = types.remove(0);
            o.insert("type".into(), t);
        }
    }
    if let Some(Value::Array(values)) = o.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(list)) = o.get_mut(key) else { continue };
        let before = list.len();
        list.retain(|s| !is_null_schema(s));
        if list.len() == before {
            continue;
        }
        // `anyOf: [T]` after the null went: T's keys move up, the property's own (title,
        // description, default) win.
        if list.len() == 1
            && let Some(Value::Object(inner)) = o.remove(key).and_then(|v| match v {
                Value::Array(mut l) => l.pop(),
                _ => None,
            })
        {
            for (k, v) in inner {
                o.entry(k).or_insert(v);
            }
        }
    }
}

fn is_null_schema(s: &Value) -> bool {
    s.get("type").and_then(Value::as_str) == Some("null") || s.get("const").is_some_and(Value::is_null)
}

/// schemars' integer formats as the bounds of the type (a client then cannot send what the
/// type cannot hold); 64-bit bounds are left out, since many clients hold numbers as doubles.
fn integer_format(o: &mut JsonObject) {
    let Some(format) = o.get("format").and_then(Value::as_str) else { return };
    let bounds: Option<(i64, i64)> = match format {
        "int8" => Some((i8::MIN.into(), i8::MAX.into())),
        "int16" => Some((i16::MIN.into(), i16::MAX.into())),
        "int32" => Some((i32::MIN.into(), i32::MAX.into())),
        "uint8" => Some((0, u8::MAX.into())),
        "uint16" => Some((0, u16::MAX.into())),
        "uint32" => Some((0, u32::MAX.into())),
        "uint64" | "uint" | "uint128" => {
            o.remove("format");
            o.entry("minimum").or_insert(Value::from(0));
            return;
        }
        "float" => {
            // An `f32` default went through `f64` (`0.1` became `0.10000000149011612`); the
            // shortest text that reads back as the same `f32` is what the user wrote.
            o.remove("format");
            if let Some(Value::Number(n)) = o.get("default")
                && let Some(short) = n.as_f64().and_then(|v| (v as f32).to_string().parse::<f64>().ok())
                && let Some(n) = serde_json::Number::from_f64(short)
            {
                o.insert("default".into(), Value::Number(n));
            }
            return;
        }
        "int64" | "int" | "int128" | "double" => {
            o.remove("format");
            return;
        }
        _ => return,
    };
    o.remove("format");
    if let Some((low, high)) = bounds {
        o.entry("minimum").or_insert(Value::from(low));
        o.entry("maximum").or_insert(Value::from(high));
    }
}

/// The options of a choice schemars wrote: an `enum` of strings (untitled), or a
/// `oneOf`/`anyOf` of `{const}` schemas whose `title` (or else `description`, where schemars
/// puts a variant's doc comment) is the option's title.
fn choice_options(o: &JsonObject) -> Option<Vec<(String, Option<String>)>> {
    if let Some(Value::Array(values)) = o.get("enum") {
        if o.contains_key("enumNames") {
            return None;
        }
        return values.iter().map(|v| v.as_str().map(|s| (s.to_owned(), None))).collect();
    }
    let list = o.get("oneOf").or_else(|| o.get("anyOf"))?.as_array()?;
    list.iter()
        .map(|s| {
            let value = s.get("const")?.as_str()?.to_owned();
            let title = s.get("title").or_else(|| s.get("description")).and_then(Value::as_str).map(str::to_owned);
            Some((value, title))
        })
        .collect()
}

fn resolve(field: OptionStyle, titled: bool) -> OptionStyle {
    match field {
        OptionStyle::Auto if titled => OptionStyle::Titled,
        OptionStyle::Auto => OptionStyle::Plain,
        s => s,
    }
}

fn titled_list(options: &[(String, Option<String>)]) -> Value {
    options.iter().map(|(v, t)| serde_json::json!({"const": v, "title": t.as_deref().unwrap_or(v)})).collect()
}

fn render_single(o: &mut JsonObject, options: &[(String, Option<String>)], style: OptionStyle) {
    let values = || options.iter().map(|(v, _)| Value::from(v.as_str())).collect::<Value>();
    match resolve(style, options.iter().any(|(_, t)| t.is_some())) {
        OptionStyle::Titled => {
            o.insert("oneOf".into(), titled_list(options));
        }
        OptionStyle::EnumNames => {
            o.insert("enum".into(), values());
            let names = options.iter().map(|(v, t)| Value::from(t.as_deref().unwrap_or(v))).collect();
            o.insert("enumNames".into(), names);
        }
        OptionStyle::Plain | OptionStyle::Auto => {
            o.insert("enum".into(), values());
        }
    }
}

fn multi_items(options: &[(String, Option<String>)], style: OptionStyle) -> JsonObject {
    let mut items = Map::new();
    match resolve(style, options.iter().any(|(_, t)| t.is_some())) {
        OptionStyle::Titled => {
            items.insert("anyOf".into(), titled_list(options));
        }
        // `enumNames` has no multi-select spelling; plain values are the closest.
        _ => {
            items.insert("type".into(), "string".into());
            items.insert("enum".into(), options.iter().map(|(v, _)| Value::from(v.as_str())).collect());
        }
    }
    items
}

/// One field of a `#[derive(Elicit)]` form, as the derive sees it: what schemars cannot say
/// (the spelling of a choice's options, their titles from `#[elicit(title)]`).
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct FormField {
    /// The property's name on the wire.
    pub name: &'static str,
    /// The field's kind.
    pub kind: FieldKind,
    /// The field's own schema (its options, for a choice).
    pub schema: fn(OptionStyle) -> JsonObject,
    /// `#[elicit(style = …)]` on the field.
    pub style: OptionStyle,
    /// The schema of the field's type on its own, whose title and description (an enum's doc
    /// comment) schemars copies into the field when it inlines it.
    pub type_schema: fn() -> Value,
}

/// The schema of `T` alone, as a form's generator writes it (for [`FormField::type_schema`]).
#[doc(hidden)]
pub fn type_schema<T: JsonSchema>() -> Value {
    form_settings().into_generator().subschema_for::<T>().to_value()
}

/// The settings of a form's generator: draft 2020-12, every subschema inline, no `$schema`,
/// read as serde deserializes, then [`FormTransform`].
pub fn form_settings() -> SchemaSettings {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .for_deserialize()
        .with_transform(FormTransform)
}

/// The form schema of `T`: schemars' schema through [`FormTransform`], then checked against
/// MCP's subset. `fields` (from `#[derive(Elicit)]`) replace each choice's options with the
/// ones the enum's own derive lists, in the style asked for.
pub fn form_schema_for<T: JsonSchema>(fields: &[FormField]) -> Result<FormSchema, SchemaError> {
    let schema = form_settings().into_generator().into_root_schema_for::<T>();
    let Value::Object(mut schema) = schema.to_value() else {
        return Err(SchemaError { property: None, reason: "schemars wrote a schema that is not an object".into() });
    };
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for f in fields.iter().filter(|f| f.kind.has_options()) {
            let Some(Value::Object(o)) = properties.get_mut(f.name) else { continue };
            for key in ["type", "enum", "enumNames", "oneOf", "anyOf", "items"] {
                o.remove(key);
            }
            // The enum's own doc comment describes the type, not this field.
            let of_type = (f.type_schema)();
            for key in ["title", "description"] {
                if of_type.get(key).is_some() && o.get(key) == of_type.get(key) {
                    o.remove(key);
                }
            }
            // The options first, then what schemars said about the field (title, limits,
            // default), in the order the derive used to write them.
            let mut own = (f.schema)(f.style);
            own.append(o);
            *o = own;
        }
    }
    FormSchema::new(schema)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        match v {
            Value::Object(o) => o,
            _ => unreachable!(),
        }
    }

    fn transformed(v: Value) -> Value {
        let mut s = Schema::try_from(v).expect("object");
        FormTransform.transform(&mut s);
        s.to_value()
    }

    #[test]
    fn nulls_go_and_formats_become_bounds() {
        let out = transformed(json!({
            "$schema": "x", "title": "Form", "description": "d", "type": "object",
            "properties": {
                "a": {"type": ["string", "null"], "default": null},
                "b": {"type": ["integer", "null"], "format": "uint8", "minimum": 18},
                "c": {"anyOf": [{"type": "string", "enum": ["x", "y"]}, {"type": "null"}], "description": "pick"},
                "d": {"type": "number", "format": "double"},
                "e": {"type": "integer", "format": "int64"},
            },
            "required": [],
        }));
        assert_eq!(
            out,
            json!({"type": "object", "properties": {
                "a": {"type": "string"},
                "b": {"type": "integer", "minimum": 18, "maximum": 255},
                "c": {"type": "string", "enum": ["x", "y"], "description": "pick"},
                "d": {"type": "number"},
                "e": {"type": "integer"},
            }})
        );
    }

    #[test]
    fn documented_variants_become_titled_options() {
        let out = transformed(json!({"type": "object", "properties": {
            "one": {"oneOf": [
                {"type": "string", "const": "eu", "description": "Europe"},
                {"type": "string", "const": "us"},
            ]},
            "many": {"type": "array", "items": {"oneOf": [
                {"type": "string", "const": "eu", "description": "Europe"},
                {"type": "string", "const": "us"},
            ]}},
        }}));
        assert_eq!(
            out["properties"],
            json!({
                "one": {"type": "string", "oneOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "us"}]},
                "many": {"type": "array", "items": {"anyOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "us"}]}},
            })
        );
        let _ = obj(out);
    }
}
