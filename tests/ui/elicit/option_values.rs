use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Malformed {
    #[elicit(style = 5)]
    a: String,
    #[elicit(not_secret = true)]
    e: String,
    #[elicit]
    g: String,
    #[elicit = "x"]
    h: String,
    #[elicit(style = "plain", style = "titled")]
    i: String,
    #[elicit(styel = "plain")]
    j: String,
    #[elicit(min_length 1)]
    k: String,
}

#[derive(Deserialize, JsonSchema, Elicit)]
enum Color {
    #[elicit(title = "Red", title = "Crimson")]
    Red,
    #[elicit(title = red)]
    Blue,
}

fn main() {}
