use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
enum Size {
    Small,
    Large,
}

#[derive(Deserialize, JsonSchema, Elicit)]
struct Order {
    #[schemars(length(min = 1))]
    size: Size,
}

fn main() {}
