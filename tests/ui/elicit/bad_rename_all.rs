use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camel_case")]
struct Profile {
    full_name: String,
}

fn main() {}
