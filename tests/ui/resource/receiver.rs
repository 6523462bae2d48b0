use mcp_core::prelude::*;

struct Store;

impl Store {
    /// One item.
    #[resource("test://items/{id}")]
    fn item(&self, id: String) -> String {
        id
    }
}

fn main() {}
