use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Scores {
    scores: Vec<i32>,
}

fn main() {}
