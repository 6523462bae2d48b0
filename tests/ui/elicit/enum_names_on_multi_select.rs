use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
enum Topping {
    /// Extra cheese
    Cheese,
    /// Black olives
    Olives,
}

#[derive(Deserialize, Elicit)]
struct Pizza {
    #[elicit(style = "enum_names")]
    toppings: Vec<Topping>,
}

fn main() {}
