use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize, Elicit)]
struct Server {
    #[elicit(format = "ipv4")]
    address: String,
}

fn main() {}
