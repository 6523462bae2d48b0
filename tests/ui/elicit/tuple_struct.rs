use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Pair(String, bool);

#[derive(Deserialize, JsonSchema, Elicit)]
struct Nothing;

fn main() {}
