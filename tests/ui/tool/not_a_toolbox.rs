use typed_mcp::prelude::*;

/// A type whose impl block lacks `#[toolbox]`.
struct Calc;

impl Calc {
    /// Adds.
    #[allow(dead_code)]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {
    let _ = Server::builder("t", "1").toolbox(Calc);
}
