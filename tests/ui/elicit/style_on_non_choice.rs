use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Note {
    #[elicit(style = "titled")]
    text: String,
}

fn main() {}
