use typed_mcp::prelude::*;

struct Library;

impl Library {
    /// Reviews.
    #[prompt]
    fn review(&self, code: String) -> String {
        code
    }
}

fn main() {}
