use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Contact {
    email: String,
}

#[derive(Deserialize, JsonSchema, Elicit)]
struct Profile {
    name: String,
    #[serde(flatten)]
    contact: Contact,
}

fn main() {}
