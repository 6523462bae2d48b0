use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
enum Topping {
    Cheese,
    Olives,
}

#[derive(Deserialize, Elicit)]
struct Order {
    #[elicit(min_length = 10, max_length = 3)]
    name: String,
    #[elicit(minimum = 5, maximum = -5)]
    quantity: i32,
    #[elicit(min_items = 2, max_items = 1)]
    toppings: Vec<Topping>,
}

fn main() {}
