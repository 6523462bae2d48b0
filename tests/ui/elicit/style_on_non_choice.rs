use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Note {
    #[elicit(style = "titled")]
    text: String,
}

fn main() {}
