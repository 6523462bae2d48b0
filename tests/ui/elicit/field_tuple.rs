use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Position {
    name: String,
    coordinates: (f64, f64),
}

fn main() {}
