use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize)]
enum Shape {
    Circle { radius: f64 },
    Square(f64),
}

#[derive(Deserialize, Elicit)]
struct Drawing {
    title: String,
    shape: Shape,
}

fn main() {}
