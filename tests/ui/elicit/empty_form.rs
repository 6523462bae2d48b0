use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Nothing {}

#[derive(Deserialize, JsonSchema, Elicit)]
struct AllSkipped {
    #[serde(skip)]
    cache: String,
}

#[derive(Deserialize, JsonSchema, Elicit)]
enum NoOptions {}

#[derive(Deserialize, JsonSchema, Elicit)]
enum AllSkippedOptions {
    #[serde(skip)]
    Hidden,
}

fn main() {}
