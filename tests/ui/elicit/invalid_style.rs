use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
#[elicit(style = "fancy")]
enum Size {
    Small,
    Large,
}

#[derive(Deserialize, Elicit)]
#[elicit(style = "titled")]
struct Order {
    #[elicit(style = "radio")]
    size: Size,
}

fn main() {}
