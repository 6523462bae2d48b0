//! Checks for form schemas (MCP's restricted subset of JSON Schema) and for the content a
//! client sends back.

use serde_json::{Map, Value};

use crate::protocol::JsonObject;

/// A schema outside MCP's restricted subset for forms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid form schema{}: {reason}", .property.as_ref().map(|p| format!(" (property `{p}`)")).unwrap_or_default())]
pub struct SchemaError {
    /// The property at fault, if one is.
    pub property: Option<String>,
    /// What is wrong.
    pub reason: String,
}

impl SchemaError {
    fn root(reason: impl Into<String>) -> Self {
        SchemaError { property: None, reason: reason.into() }
    }
    fn at(property: &str, reason: impl Into<String>) -> Self {
        SchemaError { property: Some(property.to_owned()), reason: reason.into() }
    }
}

/// Content that does not match the schema it answers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field `{field}`: {rule}")]
pub struct ContentError {
    /// The field at fault.
    pub field: String,
    /// The rule it breaks.
    pub rule: String,
}

fn content_error(field: &str, rule: impl Into<String>) -> ContentError {
    ContentError { field: field.to_owned(), rule: rule.into() }
}

const STRING_FORMATS: &[&str] = &["email", "uri", "date", "date-time"];
const COMMON_KEYS: &[&str] = &["type", "title", "description", "default"];

fn check_keys(name: &str, o: &JsonObject, allowed: &[&str]) -> Result<(), SchemaError> {
    match o.keys().find(|k| !COMMON_KEYS.contains(&k.as_str()) && !allowed.contains(&k.as_str())) {
        Some(k) => Err(SchemaError::at(name, format!("`{k}` is not allowed here by MCP's form schema subset"))),
        None => Ok(()),
    }
}

fn non_negative_integer(name: &str, o: &JsonObject, key: &str) -> Result<Option<u64>, SchemaError> {
    match o.get(key) {
        None => Ok(None),
        Some(v) => {
            v.as_u64().map(Some).ok_or_else(|| SchemaError::at(name, format!("`{key}` must be a non-negative integer")))
        }
    }
}

fn options_of(name: &str, list: &Value, key: &str) -> Result<Vec<String>, SchemaError> {
    let Some(items) = list.as_array() else {
        return Err(SchemaError::at(name, format!("`{key}` must be an array")));
    };
    if items.is_empty() {
        return Err(SchemaError::at(name, format!("`{key}` must offer at least one option")));
    }
    let values = items
        .iter()
        .map(|item| match (key, item) {
            ("enum", Value::String(s)) => Ok(s.clone()),
            ("oneOf" | "anyOf", Value::Object(o)) => match (o.get("const"), o.get("title")) {
                (Some(Value::String(c)), Some(Value::String(_))) if o.len() == 2 => Ok(c.clone()),
                _ => Err(SchemaError::at(
                    name,
                    format!("each `{key}` entry must be `{{\"const\": string, \"title\": string}}`"),
                )),
            },
            _ => Err(SchemaError::at(name, format!("`{key}` options must be strings"))),
        })
        .collect::<Result<Vec<String>, SchemaError>>()?;
    if let Some((_, value)) = values.iter().enumerate().find(|(i, v)| values[..*i].contains(v)) {
        return Err(SchemaError::at(name, format!("`{key}` offers `{value}` more than once")));
    }
    Ok(values)
}

/// Checks that a lower bound does not exceed its upper bound.
fn ordered(name: &str, o: &JsonObject, low: &str, high: &str) -> Result<(), SchemaError> {
    match (o.get(low).and_then(Value::as_f64), o.get(high).and_then(Value::as_f64)) {
        (Some(l), Some(h)) if l > h => {
            Err(SchemaError::at(name, format!("`{low}` ({l}) is greater than `{high}` ({h}): no answer can meet both")))
        }
        _ => Ok(()),
    }
}

/// Checks that `schema` is a form MCP allows: a flat `type: object` whose properties are
/// strings, numbers, integers, booleans, single-select or multi-select enums.
pub fn check_form_schema(schema: &JsonObject) -> Result<(), SchemaError> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(SchemaError::root("the schema must have `\"type\": \"object\"`"));
    }
    if let Some(k) = schema.keys().find(|k| !matches!(k.as_str(), "type" | "properties" | "required" | "$schema")) {
        return Err(SchemaError::root(format!("`{k}` is not allowed at the root of a form schema")));
    }
    let properties = match schema.get("properties") {
        Some(Value::Object(p)) => p,
        None => return Err(SchemaError::root("the schema must have `properties`")),
        Some(_) => return Err(SchemaError::root("`properties` must be an object")),
    };
    for (name, property) in properties {
        let Value::Object(o) = property else {
            return Err(SchemaError::at(name, "a property schema must be an object"));
        };
        check_property(name, o)?;
        if let Some(default) = o.get("default") {
            let mut probe = Map::new();
            probe.insert(name.clone(), default.clone());
            check_value(name, o, &probe[name])
                .map_err(|e| SchemaError::at(name, format!("invalid `default`: {}", e.rule)))?;
        }
    }
    match schema.get("required") {
        None => {}
        Some(Value::Array(required)) => {
            for r in required {
                match r.as_str() {
                    Some(n) if properties.contains_key(n) => {}
                    Some(n) => {
                        return Err(SchemaError::root(format!("`required` names `{n}`, which is not a property")));
                    }
                    None => return Err(SchemaError::root("`required` must list property names")),
                }
            }
        }
        Some(_) => return Err(SchemaError::root("`required` must be an array of property names")),
    }
    Ok(())
}

fn check_property(name: &str, o: &JsonObject) -> Result<(), SchemaError> {
    for key in ["title", "description"] {
        if o.get(key).is_some_and(|v| !v.is_string()) {
            return Err(SchemaError::at(name, format!("`{key}` must be a string")));
        }
    }
    match o.get("type").and_then(Value::as_str) {
        Some("string") if o.contains_key("oneOf") => {
            check_keys(name, o, &["oneOf"])?;
            options_of(name, &o["oneOf"], "oneOf").map(drop)
        }
        Some("string") if o.contains_key("enum") => {
            check_keys(name, o, &["enum", "enumNames"])?;
            let values = options_of(name, &o["enum"], "enum")?;
            match o.get("enumNames") {
                None => Ok(()),
                Some(Value::Array(names)) if names.len() == values.len() && names.iter().all(Value::is_string) => {
                    Ok(())
                }
                Some(_) => Err(SchemaError::at(name, "`enumNames` must be strings, one per `enum` value")),
            }
        }
        Some("string") => {
            check_keys(name, o, &["minLength", "maxLength", "format"])?;
            non_negative_integer(name, o, "minLength")?;
            non_negative_integer(name, o, "maxLength")?;
            ordered(name, o, "minLength", "maxLength")?;
            match o.get("format") {
                None => Ok(()),
                Some(Value::String(f)) if STRING_FORMATS.contains(&f.as_str()) => Ok(()),
                Some(f) => {
                    Err(SchemaError::at(name, format!("`format` {f} is not one of email, uri, date, date-time")))
                }
            }
        }
        Some("number" | "integer") => {
            check_keys(name, o, &["minimum", "maximum"])?;
            for key in ["minimum", "maximum"] {
                if o.get(key).is_some_and(|v| !v.is_number()) {
                    return Err(SchemaError::at(name, format!("`{key}` must be a number")));
                }
            }
            ordered(name, o, "minimum", "maximum")
        }
        Some("boolean") => check_keys(name, o, &[]),
        Some("array") => {
            check_keys(name, o, &["items", "minItems", "maxItems"])?;
            let min_items = non_negative_integer(name, o, "minItems")?;
            non_negative_integer(name, o, "maxItems")?;
            ordered(name, o, "minItems", "maxItems")?;
            let Some(Value::Object(items)) = o.get("items") else {
                return Err(SchemaError::at(name, "a multi-select needs `items` with `enum` or `anyOf`"));
            };
            let options = if let Some(any_of) = items.get("anyOf") {
                if items.len() != 1 {
                    return Err(SchemaError::at(name, "`items` with `anyOf` takes no other keys"));
                }
                options_of(name, any_of, "anyOf")?
            } else if items.get("type").and_then(Value::as_str) == Some("string") && items.len() == 2 {
                options_of(name, items.get("enum").unwrap_or(&Value::Null), "enum")?
            } else {
                return Err(SchemaError::at(
                    name,
                    "`items` must be `{\"type\": \"string\", \"enum\": […]}` or `{\"anyOf\": […]}`",
                ));
            };
            match min_items {
                Some(min) if min > options.len() as u64 => Err(SchemaError::at(
                    name,
                    format!(
                        "`minItems` is {min}, but there {} to choose from",
                        match options.len() {
                            1 => "is only 1 option".to_owned(),
                            n => format!("are only {n} options"),
                        }
                    ),
                )),
                _ => Ok(()),
            }
        }
        Some("object") => {
            Err(SchemaError::at(name, "nested objects are not allowed in forms; properties must be primitive"))
        }
        Some(other) => Err(SchemaError::at(name, format!("type `{other}` is not allowed in forms"))),
        None => Err(SchemaError::at(name, "a property needs a `type`")),
    }
}

fn allowed_values(o: &JsonObject) -> Option<Vec<&str>> {
    if let Some(Value::Array(e)) = o.get("enum") {
        return Some(e.iter().filter_map(Value::as_str).collect());
    }
    let list = o.get("oneOf").or_else(|| o.get("anyOf"))?.as_array()?;
    Some(list.iter().filter_map(|x| x.get("const").and_then(Value::as_str)).collect())
}

fn check_value(name: &str, o: &JsonObject, value: &Value) -> Result<(), ContentError> {
    match o.get("type").and_then(Value::as_str).unwrap_or_default() {
        "string" => check_string(name, o, value),
        "number" => check_number(name, o, value),
        "integer" => check_integer(name, o, value),
        "boolean" if value.is_boolean() => Ok(()),
        "boolean" => Err(content_error(name, "expected a boolean")),
        "array" => check_choices(name, o, value),
        other => Err(content_error(name, format!("the schema has an unsupported type `{other}`"))),
    }
}

/// `n` and `noun`, with the noun in the plural unless `n` is 1: "1 character", "3 characters".
fn count(n: u64, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// A `string` field: one of its options if it has some, within its length bounds, in its format.
fn check_string(name: &str, o: &JsonObject, value: &Value) -> Result<(), ContentError> {
    let Value::String(s) = value else { return Err(content_error(name, "expected a string")) };
    if let Some(allowed) = allowed_values(o)
        && !allowed.contains(&s.as_str())
    {
        return Err(content_error(name, format!("`{s}` is not one of the options {allowed:?}")));
    }
    let len = s.chars().count() as u64;
    if let Some(min) = o.get("minLength").and_then(Value::as_u64)
        && len < min
    {
        return Err(content_error(name, format!("must be at least {} long (got {len})", count(min, "character"))));
    }
    if let Some(max) = o.get("maxLength").and_then(Value::as_u64)
        && len > max
    {
        return Err(content_error(name, format!("must be at most {} long (got {len})", count(max, "character"))));
    }
    if let Some(format) = o.get("format").and_then(Value::as_str)
        && !matches_format(format, s)
    {
        return Err(content_error(name, format!("`{s}` is not a valid {format}")));
    }
    Ok(())
}

/// A `number` field: a JSON number within the field's bounds.
fn check_number(name: &str, o: &JsonObject, value: &Value) -> Result<(), ContentError> {
    let Some(n) = value.as_f64().filter(|_| value.is_number()) else {
        return Err(content_error(name, "expected a number"));
    };
    check_bounds(name, o, value, n)
}

/// An `integer` field: an integer (`1.0` counts) that fits the type holding it, within the
/// field's bounds.
fn check_integer(name: &str, o: &JsonObject, value: &Value) -> Result<(), ContentError> {
    let value = &integral(value);
    let Some(n) = value.as_f64().filter(|_| value.is_number()) else {
        return Err(content_error(name, "expected an integer"));
    };
    if !(value.is_i64() || value.is_u64()) {
        let rule = if n.fract() == 0.0 { "an integer that fits in 64 bits" } else { "an integer" };
        return Err(content_error(name, format!("expected {rule}, got {value}")));
    }
    // A field that may be negative is held by a signed type, at most 64 bits wide: an
    // integer past `i64::MAX` would pass a check done in doubles (`maximum` is absent for
    // 64-bit fields, and near it doubles are 2,048 apart), then fail to deserialize.
    let may_be_negative = o.get("minimum").and_then(Value::as_f64).is_none_or(|min| min < 0.0);
    if may_be_negative && !value.is_i64() {
        return Err(content_error(name, format!("expected a signed 64-bit integer, got {value}")));
    }
    check_bounds(name, o, value, n)
}

/// `minimum` and `maximum` of a numeric field, against `value` (read as `n`).
fn check_bounds(name: &str, o: &JsonObject, value: &Value, n: f64) -> Result<(), ContentError> {
    if let Some(min) = o.get("minimum").and_then(Value::as_f64)
        && n < min
    {
        return Err(content_error(name, format!("must be at least {min} (got {value})")));
    }
    if let Some(max) = o.get("maximum").and_then(Value::as_f64)
        && n > max
    {
        return Err(content_error(name, format!("must be at most {max} (got {value})")));
    }
    Ok(())
}

/// An `array` field (a multiple choice): distinct options, as many as its bounds allow.
fn check_choices(name: &str, o: &JsonObject, value: &Value) -> Result<(), ContentError> {
    let Value::Array(items) = value else { return Err(content_error(name, "expected an array of options")) };
    let item_schema = o.get("items").and_then(Value::as_object);
    let allowed = item_schema.and_then(allowed_values).unwrap_or_default();
    for (i, item) in items.iter().enumerate() {
        match item.as_str() {
            Some(s) if allowed.contains(&s) => {}
            _ => return Err(content_error(name, format!("{item} is not one of the options {allowed:?}"))),
        }
        if items[..i].contains(item) {
            return Err(content_error(name, format!("chooses {item} more than once")));
        }
    }
    let count = items.len() as u64;
    if let Some(min) = o.get("minItems").and_then(Value::as_u64)
        && count < min
    {
        return Err(content_error(name, format!("choose at least {min} (got {count})")));
    }
    if let Some(max) = o.get("maxItems").and_then(Value::as_u64)
        && count > max
    {
        return Err(content_error(name, format!("choose at most {max} (got {count})")));
    }
    Ok(())
}

/// Fills in defaults for missing fields, then checks `content` against `schema`: required
/// fields present, each value of its property's type and within its constraints. Fields the
/// schema does not define, and `null` values, are removed.
pub fn validate_content(schema: &JsonObject, content: &mut JsonObject) -> Result<(), ContentError> {
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    // `null` counts as not answered.
    content.retain(|k, v| properties.contains_key(k) && !v.is_null());
    for (name, property) in properties {
        let Some(o) = property.as_object() else { continue };
        if !content.contains_key(name)
            && let Some(default) = o.get("default")
        {
            content.insert(name.clone(), default.clone());
        }
    }
    if let Some(Value::Array(required)) = schema.get("required") {
        for r in required.iter().filter_map(Value::as_str) {
            if !content.contains_key(r) {
                return Err(content_error(r, "is required but missing"));
            }
        }
    }
    // In the schema's order, so that the first error reported is the first field in the form.
    for (name, property) in properties {
        let (Some(o), Some(value)) = (property.as_object(), content.get_mut(name)) else { continue };
        if o.get("type").and_then(Value::as_str) == Some("integer") {
            // serde reads `3.0` as a float only; the schema's `integer` allows it.
            *value = integral(value);
        }
        check_value(name, o, value)?;
    }
    Ok(())
}

/// A whole number written as a float (`3.0`), as an integer (`3`), if it fits in 64 bits;
/// anything else unchanged.
fn integral(value: &Value) -> Value {
    match value.as_f64() {
        Some(n) if value.is_f64() && n.fract() == 0.0 => {
            if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&n) {
                Value::from(n as i64)
            } else if (0.0..1.844_674_407_370_955_2e19).contains(&n) {
                Value::from(n as u64)
            } else {
                value.clone()
            }
        }
        _ => value.clone(),
    }
}

/// Light syntactic checks for the four formats MCP allows.
fn matches_format(format: &str, s: &str) -> bool {
    match format {
        "email" => match s.split_once('@') {
            Some((local, domain)) => {
                !local.is_empty()
                    && !domain.is_empty()
                    && !domain.starts_with('.')
                    && !domain.ends_with('.')
                    && !s.chars().any(char::is_whitespace)
                    && !domain.contains('@')
            }
            None => false,
        },
        "uri" => match s.split_once(':') {
            Some((scheme, rest)) => {
                !rest.is_empty()
                    && scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                    && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                    && !s.chars().any(char::is_whitespace)
            }
            None => false,
        },
        "date" => is_date(s),
        "date-time" => match s.split_once(['T', 't']) {
            Some((date, time)) => is_date(date) && is_time(time),
            None => false,
        },
        _ => true,
    }
}

fn digits(s: &str, n: usize) -> Option<u32> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
}

fn is_date(s: &str) -> bool {
    let mut parts = s.split('-');
    let (Some(y), Some(m), Some(d), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let (Some(y), Some(m), Some(d)) = (digits(y, 4), digits(m, 2), digits(d, 2)) else { return false };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

fn is_time(s: &str) -> bool {
    let (clock, offset) = if let Some(c) = s.strip_suffix(['Z', 'z']) {
        (c, None)
    } else if let Some(i) = s.rfind(['+', '-']) {
        (&s[..i], Some(&s[i + 1..]))
    } else {
        return false;
    };
    if let Some(off) = offset {
        let Some((h, m)) = off.split_once(':') else { return false };
        if !matches!((digits(h, 2), digits(m, 2)), (Some(h), Some(m)) if h < 24 && m < 60) {
            return false;
        }
    }
    let (hms, fraction) = clock.split_once('.').unwrap_or((clock, "0"));
    let mut parts = hms.split(':');
    let (Some(h), Some(m), Some(sec), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    matches!((digits(h, 2), digits(m, 2), digits(sec, 2)), (Some(h), Some(m), Some(s)) if h < 24 && m < 60 && s <= 60)
        && !fraction.is_empty()
        && fraction.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn accepts_every_spelling_of_the_subset() {
        let schema = obj(json!({
            "type": "object",
            "properties": {
                "s": {"type": "string", "minLength": 1, "maxLength": 9, "format": "email", "default": "a@b.c"},
                "n": {"type": "number", "minimum": 0.5, "maximum": 2, "default": 1},
                "i": {"type": "integer", "minimum": 0},
                "b": {"type": "boolean", "default": true},
                "e1": {"type": "string", "enum": ["a", "b"]},
                "e2": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
                "e3": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
                "m1": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 1, "default": ["a"]},
                "m2": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}, "maxItems": 1}
            },
            "required": ["s"]
        }));
        check_form_schema(&schema).unwrap();
    }

    #[test]
    fn rejects_what_is_outside_the_subset() {
        let bad = [
            json!({"type": "array"}),
            json!({"type": "object", "properties": {"x": {"type": "object", "properties": {}}}}),
            json!({"type": "object", "properties": {"x": {"type": "string", "pattern": "a+"}}}),
            json!({"type": "object", "properties": {"x": {"type": "string", "format": "ipv4"}}}),
            json!({"type": "object", "properties": {"x": {"type": ["string", "null"]}}}),
            json!({"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}),
            json!({"type": "object", "properties": {"x": {"type": "array", "items": {"type": "integer"}}}}),
            json!({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["y"]}),
            json!({"type": "object", "properties": {"x": {"type": "integer", "default": "one"}}}),
            json!({"type": "object", "properties": {"x": {"type": "string", "enum": []}}}),
        ];
        for schema in bad {
            assert!(check_form_schema(&obj(schema.clone())).is_err(), "accepted {schema}");
        }
    }

    #[test]
    fn validates_content_and_fills_defaults() {
        let schema = obj(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "tests": {"type": "boolean", "default": true},
                "n": {"type": "integer", "maximum": 10},
                "fw": {"type": "string", "enum": ["react", "vue"]},
                "tags": {
                    "type": "array",
                    "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]},
                    "maxItems": 1
                }
            },
            "required": ["name"]
        }));
        let mut ok = obj(json!({"name": "x", "extra": 1}));
        validate_content(&schema, &mut ok).unwrap();
        assert_eq!(Value::Object(ok), json!({"name": "x", "tests": true}));
        let cases = [
            (json!({}), "name", "required"),
            (json!({"name": ""}), "name", "must be at least 1 character long (got 0)"),
            (json!({"name": 5}), "name", "string"),
            (json!({"name": "x", "n": 11}), "n", "at most 10"),
            (json!({"name": "x", "n": 1.5}), "n", "integer"),
            (json!({"name": "x", "fw": "svelte"}), "fw", "options"),
            (json!({"name": "x", "tags": ["c"]}), "tags", "options"),
            (json!({"name": "x", "tags": ["a", "b"]}), "tags", "at most 1"),
            (json!({"name": "x", "tests": "yes"}), "tests", "boolean"),
        ];
        for (content, field, rule) in cases {
            let e = validate_content(&schema, &mut obj(content.clone())).unwrap_err();
            assert_eq!(e.field, field, "{content}");
            assert!(e.rule.contains(rule), "{content}: {}", e.rule);
        }
    }

    #[test]
    fn lengths_are_counted_in_the_singular_and_the_plural() {
        let schema = one_field(json!({"type": "string", "minLength": 2, "maxLength": 1}));
        let short = validate_content(&schema, &mut obj(json!({"x": "a"}))).unwrap_err();
        assert_eq!(short.rule, "must be at least 2 characters long (got 1)");
        let long = validate_content(&schema, &mut obj(json!({"x": "ab"}))).unwrap_err();
        assert_eq!(long.rule, "must be at most 1 character long (got 2)");
    }

    fn one_field(property: Value) -> JsonObject {
        obj(json!({"type": "object", "properties": {"x": property}}))
    }

    #[test]
    fn a_field_that_may_be_negative_holds_only_signed_64_bit_integers() {
        // Found by fuzzing: 9223772036854775807 passed for an `i64` field (no `maximum` on
        // 64-bit fields), then did not deserialize.
        for schema in [json!({"type": "integer"}), json!({"type": "integer", "minimum": -1})] {
            let schema = one_field(schema);
            for ok in [json!(i64::MAX), json!(-1), json!(0)] {
                validate_content(&schema, &mut obj(json!({"x": ok}))).unwrap();
            }
            for too_big in [json!(9_223_772_036_854_775_807_u64), json!(i64::MAX as u64 + 1), json!(u64::MAX)] {
                let e = validate_content(&schema, &mut obj(json!({"x": too_big}))).unwrap_err();
                assert!(e.rule.contains("signed 64-bit"), "{too_big}: {}", e.rule);
            }
        }
        // Where the schema says it cannot be negative, an unsigned 64-bit value is fine.
        let unsigned = one_field(json!({"type": "integer", "minimum": 0}));
        validate_content(&unsigned, &mut obj(json!({"x": u64::MAX}))).unwrap();
    }

    #[test]
    fn integers_written_as_floats_become_integers() {
        // serde will not read `3.0` into an integer type; the schema's `integer` accepts it.
        let schema = one_field(json!({"type": "integer", "minimum": -5, "maximum": 5}));
        for (sent, kept) in [(json!(3.0), json!(3)), (json!(-2.0), json!(-2)), (json!(4), json!(4))] {
            let mut content = obj(json!({"x": sent}));
            validate_content(&schema, &mut content).unwrap();
            assert_eq!(content["x"], kept);
            assert!(content["x"].is_i64(), "{sent} kept as {}", content["x"]);
        }
        let schema = one_field(json!({"type": "integer"}));
        let e = validate_content(&schema, &mut obj(json!({"x": 1e20}))).unwrap_err();
        assert!(e.rule.contains("integer"), "{}", e.rule);
        // A `number` stays as sent.
        let schema = one_field(json!({"type": "number"}));
        let mut content = obj(json!({"x": 3.0}));
        validate_content(&schema, &mut content).unwrap();
        assert!(content["x"].is_f64());
    }

    #[test]
    fn a_multi_select_chooses_each_option_once() {
        let schema =
            one_field(json!({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 2}));
        let e = validate_content(&schema, &mut obj(json!({"x": ["a", "a"]}))).unwrap_err();
        assert!(e.rule.contains("more than once"), "{}", e.rule);
        validate_content(&schema, &mut obj(json!({"x": ["b", "a"]}))).unwrap();
        let e = validate_content(&schema, &mut obj(json!({"x": "a"}))).unwrap_err();
        assert!(e.rule.contains("array"), "{}", e.rule);
    }

    #[test]
    fn null_is_no_answer() {
        let schema = obj(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "tests": {"type": "boolean", "default": true},
                "note": {"type": "string"}
            },
            "required": ["name"]
        }));
        let e = validate_content(&schema, &mut obj(json!({"name": null}))).unwrap_err();
        assert_eq!((e.field.as_str(), e.rule.as_str()), ("name", "is required but missing"));
        let mut content = obj(json!({"name": "x", "tests": null, "note": null}));
        validate_content(&schema, &mut content).unwrap();
        assert_eq!(Value::Object(content), json!({"name": "x", "tests": true}));
    }

    #[test]
    fn errors_follow_the_schema_order_not_the_answer_order() {
        let schema = obj(json!({
            "type": "object",
            "properties": {"first": {"type": "string"}, "second": {"type": "boolean"}}
        }));
        let e = validate_content(&schema, &mut obj(json!({"second": 1, "first": 2}))).unwrap_err();
        assert_eq!(e.field, "first");
    }

    #[test]
    fn string_lengths_count_characters_not_bytes() {
        let schema = one_field(json!({"type": "string", "minLength": 2, "maxLength": 2}));
        validate_content(&schema, &mut obj(json!({"x": "é👍"}))).unwrap();
        assert!(validate_content(&schema, &mut obj(json!({"x": "é"}))).is_err());
    }

    #[test]
    fn rejects_bounds_no_answer_can_meet() {
        for property in [
            json!({"type": "string", "minLength": 3, "maxLength": 2}),
            json!({"type": "integer", "minimum": 3, "maximum": 2}),
            json!({"type": "array", "items": {"type": "string", "enum": ["a"]}, "minItems": 2, "maxItems": 1}),
            json!({"type": "array", "items": {"type": "string", "enum": ["a"]}, "minItems": 2}),
            json!({"type": "string", "enum": ["a", "a"]}),
            json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}, {"const": "a", "title": "B"}]}),
        ] {
            assert!(check_form_schema(&one_field(property.clone())).is_err(), "accepted {property}");
        }
        check_form_schema(&one_field(json!({"type": "string", "minLength": 2, "maxLength": 2}))).unwrap();
    }

    #[test]
    fn formats() {
        assert!(
            matches_format("email", "a@b.co") && !matches_format("email", "a b@c") && !matches_format("email", "ab")
        );
        assert!(matches_format("uri", "https://x.y/z") && !matches_format("uri", "no scheme"));
        assert!(matches_format("date", "2024-02-29") && !matches_format("date", "2023-02-29"));
        assert!(matches_format("date-time", "2024-01-02T03:04:05Z"));
        assert!(matches_format("date-time", "2024-01-02T03:04:05.123+01:00"));
        assert!(!matches_format("date-time", "2024-01-02 03:04:05"));
    }
}
