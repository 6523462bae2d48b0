use typed_mcp::prelude::*;

struct Store;

impl Store {
    /// One item.
    #[resource("test://items/{id}")]
    fn item(&self, id: String) -> String {
        id
    }
}

fn main() {}
