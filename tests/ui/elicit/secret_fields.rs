use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
struct Login {
    user: String,
    password: String,
    api_key: String,
    #[serde(rename = "accessToken")]
    token_value: String,
    card_number: String,
}

#[derive(Deserialize, JsonSchema, Elicit)]
#[allow(non_snake_case)]
struct Camel {
    accessToken: String,
    #[serde(rename = "apiKey")]
    key: String,
}

fn main() {}
