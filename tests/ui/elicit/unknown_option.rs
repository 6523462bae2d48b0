use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
#[elicit(title = "Profile")]
struct Profile {
    #[elicit(pattern = "[a-z]+")]
    name: String,
}

#[derive(Deserialize, Elicit)]
enum Color {
    #[elicit(description = "Red")]
    Red,
    Blue,
}

fn main() {}
