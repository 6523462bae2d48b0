use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Settings {
    #[serde(default = "not a path")]
    level: u8,
}

fn main() {}
