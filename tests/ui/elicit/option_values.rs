use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Malformed {
    #[elicit(title = 5, description = Some("x"))]
    a: String,
    #[elicit(min_length = "1", max_length = -1)]
    b: String,
    #[elicit(max_length = 99999999999999999999999)]
    c: String,
    #[elicit(minimum = "0", maximum = x)]
    d: i32,
    #[elicit(not_secret = true)]
    e: String,
    #[elicit(default)]
    f: bool,
    #[elicit]
    g: String,
    #[elicit = "x"]
    h: String,
    #[elicit(max_length = 1, max_length = 2)]
    i: String,
    #[elicit(min_length 1)]
    j: String,
}

#[derive(Deserialize, Elicit)]
enum Color {
    #[elicit(title = "Red", title = "Crimson")]
    Red,
    #[elicit(title = red)]
    Blue,
}

fn main() {}
