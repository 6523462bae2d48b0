use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
enum Topping {
    Cheese,
    Olives,
}

#[derive(Deserialize, JsonSchema, Elicit)]
struct Order {
    #[schemars(length(min = 10, max = 3))]
    name: String,
    #[schemars(range(min = 5, max = -5))]
    quantity: i32,
    #[schemars(length(min = 2, max = 1))]
    toppings: Vec<Topping>,
}

fn main() {}
