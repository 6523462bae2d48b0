use typed_mcp::prelude::*;

struct Calc;

#[tool]
impl Calc {
    /// Adds two integers.
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {
    let _ = Calc.add(1, 2);
}
