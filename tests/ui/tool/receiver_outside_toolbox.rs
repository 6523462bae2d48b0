use typed_mcp::prelude::*;

struct Counter {
    start: i64,
}

impl Counter {
    /// Adds `n` to the start.
    #[tool]
    async fn bump(&self, n: i64) -> i64 {
        self.start + n
    }
}

fn main() {
    let _ = Counter { start: 1 }.bump(2);
}
