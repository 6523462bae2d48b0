use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Person {
    #[schemars(range(min = 0))]
    name: String,
}

fn main() {}
