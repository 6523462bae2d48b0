use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
enum Size {
    Small,
    Large,
}

#[derive(Deserialize, Elicit)]
struct Order {
    #[elicit(min_items = 1)]
    size: Size,
}

fn main() {}
