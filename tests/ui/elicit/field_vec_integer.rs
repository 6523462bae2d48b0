use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Scores {
    scores: Vec<i32>,
}

fn main() {}
