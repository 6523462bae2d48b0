use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
#[elicit(style = "fancy")]
enum Size {
    Small,
    Large,
}

#[derive(Deserialize, JsonSchema, Elicit)]
#[elicit(style = "titled")]
struct Order {
    #[elicit(style = "radio")]
    size: Size,
}

fn main() {}
