//! Snapshots of the `requestedSchema` that `#[derive(Elicit)]` produces: one type per property
//! kind and per spelling of a choice, each compared in full with the JSON it must equal. Where
//! serde attributes shape the names or the defaults, the test also deserializes what a client
//! would send, so the schema and serde cannot drift apart.

// Most forms here exist for their schema; their fields are never read.
#![allow(dead_code)]

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use typed_mcp::elicit::{Elicit, FormSchema};

/// The schema of `T`, which must build.
fn schema_of<T: Elicit>() -> &'static FormSchema {
    match T::form_schema() {
        Ok(schema) => schema,
        Err(e) => panic!("the schema of {} does not build: {e}", std::any::type_name::<T>()),
    }
}

fn property_names(schema: &Value) -> Vec<String> {
    schema["properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default()
}

/// Asserts that `T`'s schema equals `expected`, and lists its properties in the same order
/// (JSON object equality ignores order; a form's field order is what the user sees).
#[track_caller]
fn assert_schema<T: Elicit>(expected: Value) {
    let actual = schema_of::<T>().to_value();
    assert_eq!(
        actual,
        expected,
        "schema of {}:\n{}",
        std::any::type_name::<T>(),
        serde_json::to_string_pretty(&actual).unwrap()
    );
    assert_eq!(property_names(&actual), property_names(&expected), "property order");
}

/// What the server does with an accepted answer: fill in defaults, check it against the
/// schema that was sent, then deserialize.
#[track_caller]
fn accept<T: Elicit>(content: Value) -> T {
    let Value::Object(mut content) = content else { panic!("content must be an object") };
    if let Err(e) = schema_of::<T>().validate(&mut content) {
        panic!("content rejected: {e}");
    }
    match serde_json::from_value(Value::Object(content)) {
        Ok(value) => value,
        Err(e) => panic!("serde rejects content the schema accepts: {e}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Strings, numbers, booleans

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Strings {
    /// The name to show.
    #[schemars(title = "Display name", length(min = 1, max = 50))]
    name: String,
    #[schemars(email, description = "Where to write to.")]
    email: String,
    #[schemars(url)]
    homepage: String,
    #[schemars(extend("format" = "date"))]
    birthday: String,
    #[schemars(extend("format" = "date-time"))]
    meeting: String,
    /// First line.
    /// Second line.
    notes: String,
}

#[test]
fn string_fields() {
    assert_schema::<Strings>(json!({
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "title": "Display name",
                "description": "The name to show.",
                "minLength": 1,
                "maxLength": 50
            },
            "email": {"type": "string", "description": "Where to write to.", "format": "email"},
            "homepage": {"type": "string", "format": "uri"},
            "birthday": {"type": "string", "format": "date"},
            "meeting": {"type": "string", "format": "date-time"},
            "notes": {"type": "string", "description": "First line.\nSecond line."}
        },
        "required": ["name", "email", "homepage", "birthday", "meeting", "notes"]
    }));
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Numbers {
    #[schemars(range(min = 0.5, max = 9.5))]
    ratio: f64,
    #[schemars(range(min = -1, max = 1))]
    balance: f32,
    /// Stars, one to five.
    #[schemars(range(min = 1, max = 5))]
    stars: u8,
    count: i64,
}

#[test]
fn number_fields() {
    assert_schema::<Numbers>(json!({
        "type": "object",
        "properties": {
            "ratio": {"type": "number", "minimum": 0.5, "maximum": 9.5},
            "balance": {"type": "number", "minimum": -1, "maximum": 1},
            // The options replace the bounds of `u8`.
            "stars": {"type": "integer", "description": "Stars, one to five.", "minimum": 1, "maximum": 5},
            "count": {"type": "integer"}
        },
        "required": ["ratio", "balance", "stars", "count"]
    }));
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Integers {
    a: i8,
    b: u8,
    c: i16,
    d: u16,
    e: i32,
    f: u32,
    g: i64,
    h: u64,
    i: isize,
    j: usize,
}

/// Each integer type bounds its field, so the client cannot send a value it cannot hold.
/// 64-bit bounds are left out (most clients cannot represent them exactly), except that
/// unsigned types cannot go below zero.
#[test]
fn integer_fields_carry_their_type_bounds() {
    assert_schema::<Integers>(json!({
        "type": "object",
        "properties": {
            "a": {"type": "integer", "minimum": -128, "maximum": 127},
            "b": {"type": "integer", "minimum": 0, "maximum": 255},
            "c": {"type": "integer", "minimum": -32768, "maximum": 32767},
            "d": {"type": "integer", "minimum": 0, "maximum": 65535},
            "e": {"type": "integer", "minimum": -2147483648_i64, "maximum": 2147483647},
            "f": {"type": "integer", "minimum": 0, "maximum": 4294967295_u64},
            "g": {"type": "integer"},
            "h": {"type": "integer", "minimum": 0},
            "i": {"type": "integer"},
            "j": {"type": "integer", "minimum": 0}
        },
        "required": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
    }));
}

/// A negative answer for an unsigned field is caught by the schema, before serde sees it.
#[test]
fn unsigned_fields_reject_negative_answers() {
    let mut content = Map::new();
    for (name, value) in [("a", 0), ("b", 0), ("c", 0), ("d", 0), ("e", 0), ("f", 0), ("g", 0), ("h", -1)] {
        content.insert(name.into(), json!(value));
    }
    content.insert("i".into(), json!(0));
    content.insert("j".into(), json!(0));
    let e = schema_of::<Integers>().validate(&mut content).unwrap_err();
    assert_eq!(e.field, "h");
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Flags {
    /// Subscribe to the newsletter.
    #[schemars(title = "Newsletter")]
    subscribe: bool,
}

#[test]
fn boolean_field() {
    assert_schema::<Flags>(json!({
        "type": "object",
        "properties": {
            "subscribe": {"type": "boolean", "title": "Newsletter", "description": "Subscribe to the newsletter."}
        },
        "required": ["subscribe"]
    }));
}

// ---------------------------------------------------------------------------------------------
// Choices: the three single-select spellings and the two multi-select ones

/// No titles: a plain `enum` of values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
enum Color {
    Red,
    Green,
    Blue,
}

/// Titles from doc comments: `oneOf` of `{const, title}`.
#[derive(Debug, PartialEq, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "snake_case")]
enum Plan {
    /// Free tier
    Free,
    /// Pro, billed monthly
    ProMonthly,
}

/// Titles from `#[elicit(title)]`, which wins over a doc comment; an option without a title
/// shows its value.
#[derive(Debug, PartialEq, Deserialize, JsonSchema, Elicit)]
enum Region {
    /// Not shown: the attribute wins.
    #[elicit(title = "Europe")]
    Eu,
    #[elicit(title = "United States")]
    Us,
    Apac,
}

/// The legacy spelling, asked for by the type: `enum` with `enumNames`.
#[derive(Debug, PartialEq, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
#[elicit(style = "enum_names")]
enum Priority {
    /// Low priority
    Low,
    /// High priority
    High,
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct SingleChoices {
    color: Color,
    plan: Plan,
    region: Region,
    priority: Priority,
    /// The field's style wins over the type's.
    #[elicit(style = "plain")]
    plan_plain: Plan,
    #[elicit(style = "titled")]
    color_titled: Color,
    #[elicit(style = "enum_names")]
    plan_names: Plan,
}

#[test]
fn single_select_spellings() {
    assert_schema::<SingleChoices>(json!({
        "type": "object",
        "properties": {
            "color": {"type": "string", "enum": ["red", "green", "blue"]},
            "plan": {
                "type": "string",
                "oneOf": [
                    {"const": "free", "title": "Free tier"},
                    {"const": "pro_monthly", "title": "Pro, billed monthly"}
                ]
            },
            "region": {
                "type": "string",
                "oneOf": [
                    {"const": "Eu", "title": "Europe"},
                    {"const": "Us", "title": "United States"},
                    {"const": "Apac", "title": "Apac"}
                ]
            },
            "priority": {"type": "string", "enum": ["low", "high"], "enumNames": ["Low priority", "High priority"]},
            "plan_plain": {
                "type": "string",
                "description": "The field's style wins over the type's.",
                "enum": ["free", "pro_monthly"]
            },
            "color_titled": {
                "type": "string",
                "oneOf": [
                    {"const": "red", "title": "red"},
                    {"const": "green", "title": "green"},
                    {"const": "blue", "title": "blue"}
                ]
            },
            "plan_names": {
                "type": "string",
                "enum": ["free", "pro_monthly"],
                "enumNames": ["Free tier", "Pro, billed monthly"]
            }
        },
        "required": ["color", "plan", "region", "priority", "plan_plain", "color_titled", "plan_names"]
    }));
    let answer: SingleChoices = accept(json!({
        "color": "green",
        "plan": "pro_monthly",
        "region": "Apac",
        "priority": "high",
        "plan_plain": "free",
        "color_titled": "blue",
        "plan_names": "free"
    }));
    assert_eq!((answer.color, answer.plan, answer.region), (Color::Green, Plan::ProMonthly, Region::Apac));
    assert_eq!(answer.priority, Priority::High);
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct MultiChoices {
    /// Pick one to three.
    #[schemars(length(min = 1, max = 3))]
    colors: Vec<Color>,
    plans: Vec<Plan>,
    #[elicit(style = "plain")]
    #[schemars(length(max = 1))]
    plans_plain: Vec<Plan>,
    /// `enumNames` has no multi-select spelling; the plain one is used.
    priorities: Vec<Priority>,
}

#[test]
fn multi_select_spellings() {
    assert_schema::<MultiChoices>(json!({
        "type": "object",
        "properties": {
            "colors": {
                "type": "array",
                "description": "Pick one to three.",
                "items": {"type": "string", "enum": ["red", "green", "blue"]},
                "minItems": 1,
                "maxItems": 3
            },
            "plans": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "free", "title": "Free tier"},
                        {"const": "pro_monthly", "title": "Pro, billed monthly"}
                    ]
                }
            },
            "plans_plain": {"type": "array", "items": {"type": "string", "enum": ["free", "pro_monthly"]}, "maxItems": 1},
            "priorities": {
                "type": "array",
                "description": "`enumNames` has no multi-select spelling; the plain one is used.",
                "items": {"type": "string", "enum": ["low", "high"]}
            }
        },
        "required": ["colors", "plans", "plans_plain", "priorities"]
    }));
    let answer: MultiChoices =
        accept(json!({"colors": ["red", "blue"], "plans": [], "plans_plain": ["free"], "priorities": ["low"]}));
    assert_eq!(answer.colors, [Color::Red, Color::Blue]);
    assert_eq!(answer.plans_plain, [Plan::Free]);
}

// ---------------------------------------------------------------------------------------------
// Optional fields

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Optional {
    nickname: Option<String>,
    #[schemars(length(min = 2))]
    motto: Option<String>,
    age: Option<u8>,
    color: Option<Color>,
    colors: Option<Vec<Color>>,
    agree: Option<bool>,
    name: String,
}

/// `Option<T>` is `T`'s schema, not required: never `"type": [.., "null"]` nor `anyOf` with
/// `null`, which MCP's subset does not have.
#[test]
fn option_fields_are_not_required_and_not_nullable() {
    assert_schema::<Optional>(json!({
        "type": "object",
        "properties": {
            "nickname": {"type": "string"},
            "motto": {"type": "string", "minLength": 2},
            "age": {"type": "integer", "minimum": 0, "maximum": 255},
            "color": {"type": "string", "enum": ["red", "green", "blue"]},
            "colors": {"type": "array", "items": {"type": "string", "enum": ["red", "green", "blue"]}},
            "agree": {"type": "boolean"}
        ,
            "name": {"type": "string"}
        },
        "required": ["name"]
    }));
    // Left out or `null`, an optional field deserializes to `None`.
    let answer: Optional = accept(json!({"name": "x", "nickname": null}));
    assert_eq!((answer.nickname, answer.age, answer.color), (None, None, None));
    let answer: Optional = accept(json!({"name": "x", "age": 30, "colors": ["red"]}));
    assert_eq!((answer.age, answer.colors), (Some(30), Some(vec![Color::Red])));
}

// ---------------------------------------------------------------------------------------------
// Names: serde's `rename` and `rename_all`

#[derive(Debug, PartialEq, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "kebab-case")]
enum Usage {
    PersonalUse,
    BusinessUse,
    #[serde(rename = "other")]
    SomethingElse,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
struct Renamed {
    first_name: String,
    #[serde(rename = "e-mail")]
    email: String,
    r#type: Usage,
    #[serde(rename(serialize = "postcode", deserialize = "zip"))]
    postal_code: String,
    /// Not asked for: serde fills it in.
    #[serde(skip)]
    cache: String,
    #[serde(skip_deserializing)]
    computed: u32,
}

#[test]
fn serde_names_are_the_form_names() {
    assert_schema::<Renamed>(json!({
        "type": "object",
        "properties": {
            "firstName": {"type": "string"},
            "e-mail": {"type": "string"},
            "type": {"type": "string", "enum": ["personal-use", "business-use", "other"]},
            "zip": {"type": "string"}
        },
        "required": ["firstName", "e-mail", "type", "zip"]
    }));
    let answer: Renamed =
        accept(json!({"firstName": "Ada", "e-mail": "ada@example.com", "type": "business-use", "zip": "123"}));
    assert_eq!(
        answer,
        Renamed {
            first_name: "Ada".into(),
            email: "ada@example.com".into(),
            r#type: Usage::BusinessUse,
            postal_code: "123".into(),
            cache: String::new(),
            computed: 0,
        }
    );
    assert_eq!(accept::<Renamed>(json!({"firstName": "A", "e-mail": "a@b.c", "type": "other", "zip": "1"})).r#type, {
        Usage::SomethingElse
    });
}

/// For every `rename_all` rule, on fields and on variants: an answer written with the names
/// in the schema deserializes.
#[test]
fn every_rename_all_rule_agrees_with_serde() {
    macro_rules! rule {
        ($rule:literal, $form:ident, $choice:ident, $fields:expr, $options:expr) => {{
            #[derive(Debug, PartialEq, Deserialize, JsonSchema, Elicit)]
            #[serde(rename_all = $rule)]
            enum $choice {
                DateTime,
                A,
                HttpUrl2,
            }

            #[derive(Debug, Deserialize, JsonSchema, Elicit)]
            #[serde(rename_all = $rule)]
                        struct $form {
                project_name: String,
                x: bool,
                http_url2: $choice,
            }

            let schema = schema_of::<$form>().to_value();
            assert_eq!(property_names(&schema), $fields, "fields under {}", $rule);
            let options = schema["properties"][$fields[2]]["enum"].clone();
            assert_eq!(options, json!($options), "options under {}", $rule);
            for option in $options {
                let answer: $form = accept(json!({$fields[0]: "p", $fields[1]: true, $fields[2]: option}));
                assert!(answer.x);
            }
        }};
    }
    rule!("lowercase", F1, C1, ["project_name", "x", "http_url2"], ["datetime", "a", "httpurl2"]);
    rule!("UPPERCASE", F2, C2, ["PROJECT_NAME", "X", "HTTP_URL2"], ["DATETIME", "A", "HTTPURL2"]);
    rule!("PascalCase", F3, C3, ["ProjectName", "X", "HttpUrl2"], ["DateTime", "A", "HttpUrl2"]);
    rule!("camelCase", F4, C4, ["projectName", "x", "httpUrl2"], ["dateTime", "a", "httpUrl2"]);
    rule!("snake_case", F5, C5, ["project_name", "x", "http_url2"], ["date_time", "a", "http_url2"]);
    rule!("SCREAMING_SNAKE_CASE", F6, C6, ["PROJECT_NAME", "X", "HTTP_URL2"], ["DATE_TIME", "A", "HTTP_URL2"]);
    rule!("kebab-case", F7, C7, ["project-name", "x", "http-url2"], ["date-time", "a", "http-url2"]);
    rule!("SCREAMING-KEBAB-CASE", F8, C8, ["PROJECT-NAME", "X", "HTTP-URL2"], ["DATE-TIME", "A", "HTTP-URL2"]);
}

// ---------------------------------------------------------------------------------------------
// Defaults

fn default_level() -> u8 {
    3
}
fn ada() -> String {
    "Ada".into()
}
fn one_tenth() -> f32 {
    0.1
}
fn green() -> Color {
    Color::Green
}
fn blue() -> Color {
    Color::Blue
}
fn red_and_blue() -> Vec<Color> {
    vec![Color::Red, Color::Blue]
}
fn seven() -> Option<u8> {
    Some(7)
}
fn hello() -> Option<String> {
    Some("hello".into())
}
fn fourteen() -> u8 {
    14
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Defaults {
    #[serde(default)]
    verbose: bool,
    #[serde(default)]
    retries: u8,
    #[serde(default = "default_level")]
    level: u8,
    #[serde(default)]
    nickname: Option<String>,
    #[serde(default = "ada")]
    name: String,
    #[serde(default = "one_tenth")]
    ratio: f32,
    #[serde(default = "green")]
    color: Color,
    /// A choice's default can be written as the value of an option.
    #[serde(default = "blue")]
    other_color: Color,
    #[serde(default = "red_and_blue")]
    palette: Vec<Color>,
    #[serde(default = "seven")]
    lucky: Option<u8>,
    #[serde(default = "hello")]
    greeting: Option<String>,
    question: String,
}

/// A default becomes the schema's `default` and makes the field optional; a missing answer
/// is filled in from it (serde would fill it in too).
#[test]
fn defaults() {
    assert_schema::<Defaults>(json!({
        "type": "object",
        "properties": {
            "verbose": {"type": "boolean", "default": false},
            "retries": {"type": "integer", "minimum": 0, "maximum": 255, "default": 0},
            "level": {"type": "integer", "minimum": 0, "maximum": 255, "default": 3},
            "nickname": {"type": "string"},
            "name": {"type": "string", "default": "Ada"},
            "ratio": {"type": "number", "default": 0.1},
            "color": {"type": "string", "enum": ["red", "green", "blue"], "default": "green"},
            "other_color": {
                "type": "string",
                "description": "A choice's default can be written as the value of an option.",
                "enum": ["red", "green", "blue"],
                "default": "blue"
            },
            "palette": {
                "type": "array",
                "items": {"type": "string", "enum": ["red", "green", "blue"]},
                "default": ["red", "blue"]
            },
            "lucky": {"type": "integer", "minimum": 0, "maximum": 255, "default": 7},
            "greeting": {"type": "string", "default": "hello"},
            "question": {"type": "string"}
        },
        "required": ["question"]
    }));
    let answer: Defaults = accept(json!({"question": "?"}));
    assert_eq!((answer.verbose, answer.retries, answer.level), (false, 0, 3));
    assert_eq!((answer.name.as_str(), answer.ratio, answer.nickname), ("Ada", 0.1, None));
    assert_eq!(
        (answer.color, answer.other_color, answer.palette),
        (Color::Green, Color::Blue, vec![Color::Red, Color::Blue])
    );
    assert_eq!((answer.lucky, answer.greeting.as_deref()), (Some(7), Some("hello")));
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(default)]
struct Preferences {
    theme: Color,
    font_size: u8,
    signature: String,
    /// The field's own default wins over the container's.
    #[serde(default = "fourteen")]
    zoom: u8,
    nickname: Option<String>,
}

impl Default for Preferences {
    fn default() -> Self {
        Preferences { theme: Color::Blue, font_size: 12, signature: "--".into(), zoom: 100, nickname: None }
    }
}

#[test]
fn container_default() {
    assert_schema::<Preferences>(json!({
        "type": "object",
        "properties": {
            "theme": {"type": "string", "enum": ["red", "green", "blue"], "default": "blue"},
            "font_size": {"type": "integer", "minimum": 0, "maximum": 255, "default": 12},
            "signature": {"type": "string", "default": "--"},
            "zoom": {
                "type": "integer",
                "description": "The field's own default wins over the container's.",
                "minimum": 0,
                "maximum": 255,
                "default": 14
            },
            "nickname": {"type": "string"}
        }
    }));
    let answer: Preferences = accept(json!({}));
    assert_eq!((answer.theme, answer.font_size, answer.zoom), (Color::Blue, 12, 14));
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(default = "Limits::strict")]
struct Limits {
    max_items: u16,
    #[serde(default)]
    lenient: bool,
}

impl Limits {
    fn strict() -> Self {
        Limits { max_items: 10, lenient: true }
    }
}

#[test]
fn container_default_path() {
    assert_schema::<Limits>(json!({
        "type": "object",
        "properties": {
            "max_items": {"type": "integer", "minimum": 0, "maximum": 65535, "default": 10},
            "lenient": {"type": "boolean", "default": false}
        }
    }));
    let answer: Limits = accept(json!({}));
    assert_eq!((answer.max_items, answer.lenient), (10, false));
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct NotAnOption {
    #[schemars(extend("default" = "purple"))]
    color: Color,
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct TooShort {
    #[schemars(length(min = 5), extend("default" = "abc"))]
    code: String,
}

/// A default the field itself would reject makes the schema an error, reported when it is
/// first built (and by every `ctx.elicit` of the type) rather than sent to a client.
#[test]
fn inconsistent_defaults_are_schema_errors() {
    let e = NotAnOption::form_schema().unwrap_err();
    assert_eq!(e.property.as_deref(), Some("color"));
    assert!(e.reason.contains("purple"), "{e}");
    let e = TooShort::form_schema().unwrap_err();
    assert_eq!(e.property.as_deref(), Some("code"));
    assert!(e.reason.contains("at least 5"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Order

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Ordered {
    zebra: String,
    apple: Option<u8>,
    mango: bool,
    banana: Color,
    cherry: String,
}

#[test]
fn properties_keep_declaration_order() {
    assert_schema::<Ordered>(json!({
        "type": "object",
        "properties": {
            "zebra": {"type": "string"},
            "apple": {"type": "integer", "minimum": 0, "maximum": 255},
            "mango": {"type": "boolean"},
            "banana": {"type": "string", "enum": ["red", "green", "blue"]},
            "cherry": {"type": "string"}
        },
        "required": ["zebra", "mango", "banana", "cherry"]
    }));
    let schema = schema_of::<Ordered>().to_value();
    assert_eq!(property_names(&schema), ["zebra", "apple", "mango", "banana", "cherry"]);
    assert_eq!(schema["required"], json!(["zebra", "mango", "banana", "cherry"]));
}

// ---------------------------------------------------------------------------------------------
// The `elicitation` example: its own types, the seed's form and confirmation

#[allow(dead_code)]
#[path = "../../examples/src/bin/elicitation.rs"]
mod example;

use example::{Confirmation, Framework, ProjectDetails};

#[test]
fn example_project_details() {
    assert_schema::<ProjectDetails>(json!({
        "type": "object",
        "properties": {
            "projectName": {"type": "string", "description": "Project name.", "minLength": 1},
            "framework": {
                "type": "string",
                "description": "Front-end framework to use.",
                "enum": ["react", "vue", "angular", "none"]
            },
            "includeTests": {"type": "boolean", "description": "Include a test setup.", "default": true}
        },
        "required": ["projectName"]
    }));
    assert_eq!(property_names(&schema_of::<ProjectDetails>().to_value()), ["projectName", "framework", "includeTests"]);
    let answer: ProjectDetails = accept(json!({"projectName": "demo", "framework": "none"}));
    assert_eq!(answer.project_name, "demo");
    assert!(matches!(answer.framework, Some(Framework::None)), "{:?}", answer.framework);
    assert!(answer.include_tests, "includeTests defaults to true");
}

#[test]
fn example_confirmation() {
    assert_schema::<Confirmation>(json!({
        "type": "object",
        "properties": {"proceed": {"type": "boolean", "description": "Whether to go on with the processing."}},
        "required": ["proceed"]
    }));
}

/// Every schema above is in MCP's subset: `form_schema` checks it when it builds.
#[test]
fn schemas_are_cached() {
    fn same<T: Elicit + DeserializeOwned>() -> bool {
        std::ptr::eq(schema_of::<T>(), schema_of::<T>())
    }
    assert!(same::<ProjectDetails>() && same::<Defaults>() && same::<Strings>());
}
