use typed_mcp::prelude::*;

struct Calc;

#[toolbox]
impl Calc {
    /// Adds two integers.
    #[tool = "add"]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {
    let _ = Server::builder("t", "1").toolbox(Calc);
}
