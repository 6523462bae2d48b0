use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Settings {
    #[serde(default = "not a path")]
    level: u8,
}

fn main() {}
