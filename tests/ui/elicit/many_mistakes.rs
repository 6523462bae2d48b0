use mcp_core::prelude::*;
use serde::Deserialize;

#[derive(Deserialize)]
struct Inner {
    x: i32,
}

#[derive(Deserialize, Elicit)]
#[serde(rename_all = "camelCase")]
struct Everything {
    #[elicit(format = "phone", color = "red")]
    phone: String,
    #[elicit(min_length = 3)]
    count: u32,
    password: String,
    #[elicit(maximum = 10)]
    inner: Inner,
    #[serde(rename = "phone")]
    other_phone: String,
    #[elicit(min_items = 3, max_items = 1)]
    flag: bool,
}

fn main() {}
