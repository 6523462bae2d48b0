use typed_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema, Elicit)]
enum Topping {
    /// Extra cheese
    Cheese,
    /// Black olives
    Olives,
}

#[derive(Deserialize, JsonSchema, Elicit)]
struct Pizza {
    #[elicit(style = "enum_names")]
    toppings: Vec<Topping>,
}

fn main() {}
