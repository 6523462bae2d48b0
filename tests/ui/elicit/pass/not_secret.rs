use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

/// A field whose name only looks like a secret.
#[derive(Deserialize, JsonSchema, Elicit)]
struct Preferences {
    /// Whether the password reset email may be sent.
    #[elicit(not_secret)]
    password_reset_allowed: bool,
    /// Which token of the game board to play with.
    #[elicit(not_secret)]
    token: String,
}

fn main() {
    let schema = Preferences::form_schema().unwrap().to_value();
    assert_eq!(schema["required"], serde_json::json!(["password_reset_allowed", "token"]));
}
