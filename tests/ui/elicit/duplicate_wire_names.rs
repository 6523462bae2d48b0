use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
struct Profile {
    full_name: String,
    #[serde(rename = "fullName")]
    display_name: String,
}

#[derive(Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
enum Mode {
    Fast,
    #[serde(rename = "fast")]
    Quick,
}

fn main() {}
