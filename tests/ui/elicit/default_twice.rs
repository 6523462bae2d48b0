use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Settings {
    #[serde(default)]
    #[elicit(default = true)]
    verbose: bool,
}

fn main() {}
