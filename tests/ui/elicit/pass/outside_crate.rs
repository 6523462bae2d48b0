//! A crate outside the workspace (trybuild builds each case as its own package, depending on
//! typed-mcp by path) writes a form with schemars and serde attributes, and its schema says what
//! they ask for. trybuild runs this `main`: a wrong schema fails the test.

use typed_mcp::elicit::Elicit;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
enum Plan {
    Free,
    Team,
    #[serde(rename = "big-co")]
    Enterprise,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
struct Signup {
    /// What to call you.
    #[schemars(length(min = 2, max = 40))]
    display_name: String,
    #[schemars(email)]
    email: String,
    #[schemars(range(min = 18, max = 130))]
    age: u8,
    /// Send the newsletter.
    #[serde(default = "yes")]
    newsletter: bool,
    plan: Option<Plan>,
}

fn main() {
    let schema = Signup::form_schema().expect("the form builds").to_value();
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "displayName": {"type": "string", "description": "What to call you.", "minLength": 2, "maxLength": 40},
                "email": {"type": "string", "format": "email"},
                "age": {"type": "integer", "minimum": 18, "maximum": 130},
                "newsletter": {"type": "boolean", "description": "Send the newsletter.", "default": true},
                "plan": {"type": "string", "enum": ["free", "team", "big-co"]}
            },
            "required": ["displayName", "email", "age"]
        }),
        "{schema:#}"
    );
    let mut content = json!({"displayName": "Ada", "email": "ada@example.com", "age": 36, "plan": "big-co"});
    let object = content.as_object_mut().unwrap();
    Signup::form_schema().unwrap().validate(object).expect("valid content");
    let signup: Signup = serde_json::from_value(content).unwrap();
    assert!(signup.newsletter);
    assert!(matches!(signup.plan, Some(Plan::Enterprise)));
}
