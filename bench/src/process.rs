//! Starting servers and reading their memory.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server started with `--http 0`, killed when dropped.
pub struct HttpServer {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    /// The access token to send, when the server printed one after its port.
    pub token: Option<String>,
}

impl HttpServer {
    /// Starts `program --http 0` and reads the port it prints.
    pub fn start(program: &str) -> Result<Self, String> {
        Self::start_command(&[program.to_owned()])
    }

    /// Starts `command… --http 0` (a program and its first arguments, a wrapper such as valgrind
    /// for instance) and reads the port it prints.
    pub fn start_command(command: &[String]) -> Result<Self, String> {
        let (program, args) = command.split_first().ok_or("empty server command")?;
        let mut child = Command::new(program)
            .args(args)
            .args(["--http", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).map_err(|e| format!("{program}: {e}"))?;
        let mut words = line.split_whitespace();
        let port: u16 = words
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| format!("{program} printed `{}`, not a port", line.trim()))?;
        let token = words.next().map(str::to_owned);
        Ok(HttpServer { child, addr: SocketAddr::from(([127, 0, 0, 1], port)), token })
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's resident set size in bytes.
    pub fn rss(&self) -> Result<u64, String> {
        rss(self.child.id())
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        // SIGTERM first, so that a wrapper (a profiler) can write its report.
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        reap(&mut self.child, Duration::from_secs(10));
    }
}

/// The resident set size of process `pid`, in bytes (Linux).
pub fn rss(pid: u32) -> Result<u64, String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).map_err(|e| format!("/proc/{pid}: {e}"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kib| kib * 1024)
        .ok_or_else(|| format!("no VmRSS for process {pid}"))
}

/// Waits up to `grace` for `child` to exit on its own, then kills it.
pub fn reap(child: &mut Child, grace: Duration) {
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The CPU time the live threads of process `pid` have spent so far (the sum of their
/// `/proc/<pid>/task/*/schedstat`, in nanoseconds), or `None` where there is no such file.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let mut total = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(total))
}
