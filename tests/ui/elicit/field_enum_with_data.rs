use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
enum Shape {
    Circle { radius: f64 },
    Square(f64),
}

#[derive(Deserialize, JsonSchema, Elicit)]
struct Drawing {
    title: String,
    shape: Shape,
}

fn main() {}
