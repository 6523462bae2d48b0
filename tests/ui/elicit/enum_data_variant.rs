use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
enum Delivery {
    Pickup,
    Courier(String),
    Post { address: String },
}

fn main() {}
