use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Settings {
    #[schemars(range(max = 1000))]
    level: u8,
    #[schemars(range(min = -1, max = 10))]
    count: Option<u32>,
    #[schemars(range(min = -5))]
    size: usize,
    // Fine: within what the type holds.
    #[schemars(range(min = 1, max = 100))]
    percent: u8,
    #[schemars(range(min = -1.5))]
    ratio: f32,
}

fn main() {}
