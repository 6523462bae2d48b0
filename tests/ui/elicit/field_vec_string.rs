use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Tags {
    tags: Vec<String>,
}

fn main() {}
