use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Person {
    #[elicit(minimum = 0)]
    name: String,
}

fn main() {}
