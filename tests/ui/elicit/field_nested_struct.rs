use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize)]
struct Address {
    street: String,
    city: String,
}

#[derive(Deserialize, Elicit)]
struct Signup {
    name: String,
    address: Address,
}

fn main() {}
