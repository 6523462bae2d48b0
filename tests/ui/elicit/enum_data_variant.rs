use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
enum Delivery {
    Pickup,
    Courier(String),
    Post { address: String },
}

fn main() {}
