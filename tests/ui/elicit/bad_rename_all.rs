use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
#[serde(rename_all = "camel_case")]
struct Profile {
    full_name: String,
}

fn main() {}
