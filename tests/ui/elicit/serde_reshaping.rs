use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
#[serde(transparent)]
struct Name {
    value: String,
}

#[derive(Deserialize, JsonSchema, Elicit)]
#[serde(untagged)]
enum Answer {
    Yes,
    No,
}

#[derive(Deserialize, JsonSchema, Elicit)]
#[serde(tag = "kind")]
enum Kind {
    A,
    B,
}

#[derive(Deserialize, JsonSchema)]
struct Raw {
    size: String,
}

#[derive(Deserialize, JsonSchema, Elicit)]
#[serde(from = "Raw")]
struct Converted {
    size: String,
}

impl From<Raw> for Converted {
    fn from(raw: Raw) -> Self {
        Converted { size: raw.size }
    }
}

fn main() {}
