use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Position {
    name: String,
    coordinates: (f64, f64),
}

fn main() {}
