use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
#[elicit(title = "Profile")]
struct Profile {
    #[elicit(pattern = "[a-z]+")]
    name: String,
}

#[derive(Deserialize, JsonSchema, Elicit)]
enum Color {
    #[elicit(description = "Red")]
    Red,
    Blue,
}

fn main() {}
