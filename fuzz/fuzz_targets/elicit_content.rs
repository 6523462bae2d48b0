//! The content of an accepted elicitation, checked against the schema that was sent.
//!
//! The first byte picks the schema: one of the `#[derive(JsonSchema, Elicit)]` forms below, or (`0`) a
//! schema in the input itself, `[schema, content]`, used only when `check_form_schema`
//! accepts it (as `ctx.elicit_raw` and `FormSchema::new` do).
//!
//! Checked besides "no panic": content the validator accepts has only the schema's fields,
//! every required one, no `null`s, and passes again unchanged; for a derived form it
//! deserializes into the type (the schema and serde agree).

#![no_main]
// The forms exist for their schemas and their deserialization; their fields are never read.
#![allow(dead_code)]

use libfuzzer_sys::fuzz_target;
use typed_mcp::elicit::validate::{check_form_schema, validate_content};
use typed_mcp::elicit::{Elicit, FormSchema};
use typed_mcp::protocol::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
enum Framework {
    React,
    Vue,
    #[serde(rename = "none")]
    Plain,
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[elicit(style = "titled")]
enum Topping {
    /// Cheese.
    #[elicit(title = "Extra cheese")]
    Cheese,
    #[elicit(title = "Olives")]
    Olives,
    Basil,
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[elicit(style = "enum_names")]
enum Size {
    #[elicit(title = "Small")]
    S,
    #[elicit(title = "Large")]
    L,
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
struct Project {
    #[schemars(length(min = 1, max = 64))]
    project_name: String,
    framework: Option<Framework>,
    #[schemars(extend("default" = true))]
    include_tests: bool,
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Numbers {
    #[schemars(range(min = 0.5, max = 9.5))]
    ratio: f64,
    balance: f32,
    #[schemars(range(min = 1, max = 5))]
    stars: u8,
    small: i8,
    count: u16,
    delta: i32,
    big: Option<u32>,
    #[schemars(extend("default" = 3))]
    retries: i16,
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Wide {
    signed: i64,
    unsigned: u64,
    size: Option<usize>,
    offset: Option<isize>,
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Formats {
    #[schemars(email)]
    email: String,
    #[schemars(url)]
    homepage: Option<String>,
    #[schemars(extend("format" = "date"))]
    birthday: Option<String>,
    #[schemars(extend("format" = "date-time", "default" = "2024-01-02T03:04:05Z"))]
    meeting: String,
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Choices {
    #[schemars(length(min = 1, max = 2))]
    toppings: Vec<Topping>,
    frameworks: Option<Vec<Framework>>,
    size: Size,
    #[schemars(extend("default" = "vue"))]
    preferred: Framework,
    topping: Option<Topping>,
}

/// Accepted content deserializes into `T`.
fn derived<T: Elicit + std::fmt::Debug>(content: JsonObject) {
    let schema = T::form_schema().expect("the form's schema builds");
    check_form_schema(schema.as_object()).expect("a derived schema is in the subset");
    if let Some(content) = accepted(schema.as_object(), content)
        && let Err(e) = T::deserialize(Value::Object(content.clone()))
    {
        panic!("{} rejects content its schema accepts ({e}): {}", std::any::type_name::<T>(), Value::Object(content));
    }
}

/// Validates `content`; when accepted, checks what the validator promises and returns it.
fn accepted(schema: &JsonObject, mut content: JsonObject) -> Option<JsonObject> {
    validate_content(schema, &mut content).ok()?;
    let properties = schema["properties"].as_object().expect("properties");
    for (k, v) in &content {
        assert!(properties.contains_key(k), "`{k}` is not in the schema");
        assert!(!v.is_null(), "`{k}` is null");
    }
    for r in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
        assert!(content.contains_key(r.as_str().expect("names")), "required {r} missing");
    }
    let mut again = content.clone();
    validate_content(schema, &mut again).expect("accepted content passes again");
    assert_eq!(again, content, "validation is idempotent");
    Some(content)
}

fn object<T: DeserializeOwned>(text: &str) -> Option<T> {
    serde_json::from_str(text).ok()
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    if which % 7 == 0 {
        let Some((schema, content)) = object::<(JsonObject, JsonObject)>(text) else { return };
        if check_form_schema(&schema).is_ok() {
            let form = FormSchema::new(schema.clone()).expect("FormSchema::new agrees with check_form_schema");
            let mut via_form = content.clone();
            let kept = accepted(&schema, content);
            assert_eq!(form.validate(&mut via_form).is_ok(), kept.is_some());
        }
        return;
    }
    let Some(content) = object::<JsonObject>(text) else { return };
    match which % 7 {
        1 => derived::<Project>(content),
        2 => derived::<Numbers>(content),
        3 => derived::<Wide>(content),
        4 => derived::<Formats>(content),
        5 => derived::<Choices>(content),
        _ => derived::<Project>(content),
    }
});
