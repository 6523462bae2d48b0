use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
enum Size {
    Small,
    Large,
}

#[derive(Deserialize, Elicit)]
struct Order {
    #[elicit(default = 3)]
    name: String,
    #[elicit(default = "true")]
    gift: bool,
    #[elicit(default = Size::Large)]
    fallback: Option<u8>,
    // Fine: the value of an option, or the variant itself.
    #[elicit(default = "Large")]
    size: Size,
    #[elicit(default = Size::Small)]
    other: Size,
}

fn main() {}
