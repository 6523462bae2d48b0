//! Load over stdio: newline-delimited JSON-RPC to a child process, pipelined.
//!
//! A writer thread keeps up to `window` calls in flight, writing as many as the window allows
//! before each flush; the reading thread matches answers to calls by id and answers every
//! `elicitation/create` at once with a fixed form.

use std::borrow::Cow;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use crate::stats::Load;
use crate::wire::{self, Tool};

/// One stdio run.
#[derive(Debug, Clone)]
pub struct StdioRun {
    /// The server command and its arguments.
    pub command: Vec<String>,
    /// Which tool every call invokes.
    pub tool: Tool,
    /// Calls measured.
    pub calls: usize,
    /// Calls made first and not measured.
    pub warmup: usize,
    /// Most calls in flight at once.
    pub window: usize,
    /// No new call is sent after this long.
    pub limit: Duration,
}

/// Any message from the server, as far as the driver cares.
#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    result: Option<Outcome>,
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Outcome {
    #[serde(rename = "isError", default)]
    is_error: bool,
}

struct Window {
    in_flight: Mutex<usize>,
    room: Condvar,
}

/// The id of the request that ends a run: its answer tells the reader nothing more will be sent.
const END_ID: &str = "\"end\"";

type Writer = Arc<Mutex<BufWriter<ChildStdin>>>;

fn send(writer: &Writer, frame: &str) -> std::io::Result<()> {
    let mut w = writer.lock().expect("writer lock");
    w.write_all(frame.as_bytes())?;
    w.write_all(b"\n")?;
    w.flush()
}

impl StdioRun {
    /// Runs the load and returns what the measured calls did.
    pub fn run(&self) -> Result<Load, String> {
        let (program, args) = self.command.split_first().ok_or("empty server command")?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let writer: Writer = Arc::new(Mutex::new(BufWriter::with_capacity(64 * 1024, stdin)));
        let mut reader = BufReader::with_capacity(64 * 1024, stdout);

        // A watchdog: a server that stops answering is killed, which ends the reads below.
        let pid = child.id();
        let finished = Arc::new(AtomicBool::new(false));
        let watchdog = {
            let finished = finished.clone();
            let limit = self.limit + Duration::from_secs(30);
            std::thread::spawn(move || {
                let start = Instant::now();
                while !finished.load(Ordering::Relaxed) {
                    if start.elapsed() > limit {
                        eprintln!("stdio run exceeded {limit:?}; killing the server");
                        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            })
        };

        let result = self.drive(&writer, &mut reader, pid);
        finished.store(true, Ordering::Relaxed);
        drop(writer);
        drop(reader);
        crate::process::reap(&mut child, Duration::from_secs(5));
        let _ = watchdog.join();
        result
    }

    fn drive(
        &self,
        writer: &Writer,
        reader: &mut BufReader<std::process::ChildStdout>,
        pid: u32,
    ) -> Result<Load, String> {
        let io = |e: std::io::Error| format!("stdio: {e}");
        send(writer, &wire::initialize_request(0)).map_err(io)?;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).map_err(io)? == 0 {
                return Err("the server closed stdout before answering `initialize`".into());
            }
            let m: Incoming = serde_json::from_str(&line).map_err(|e| format!("bad frame {line:?}: {e}"))?;
            if m.method.is_none() && m.id.is_some_and(|id| id.get() == "0") {
                if m.error.is_some() {
                    return Err(format!("`initialize` failed: {line}"));
                }
                break;
            }
        }
        send(writer, wire::INITIALIZED).map_err(io)?;

        let total = self.warmup + self.calls;
        let sent_at: Arc<Vec<AtomicU64>> = Arc::new((0..=total).map(|_| AtomicU64::new(0)).collect());
        let window = Arc::new(Window { in_flight: Mutex::new(0), room: Condvar::new() });
        let issued = Arc::new(AtomicUsize::new(0));
        let origin = Instant::now();
        let measure_from = Arc::new(AtomicU64::new(u64::MAX));

        let writer_thread = {
            let (writer, sent_at, window, issued) = (writer.clone(), sent_at.clone(), window.clone(), issued.clone());
            let (tool, size, limit, warmup) = (self.tool, self.window.max(1), self.limit, self.warmup);
            let measure_from = measure_from.clone();
            std::thread::spawn(move || -> std::io::Result<()> {
                let mut next = 1usize;
                let mut frame = String::with_capacity(256);
                while next <= total && origin.elapsed() < limit {
                    let room = {
                        let mut in_flight = window.in_flight.lock().expect("window lock");
                        while *in_flight >= size {
                            in_flight = window.room.wait(in_flight).expect("window lock");
                        }
                        let room = (size - *in_flight).min(total + 1 - next);
                        *in_flight += room;
                        room
                    };
                    let mut w = writer.lock().expect("writer lock");
                    for _ in 0..room {
                        let now = origin.elapsed().as_nanos() as u64;
                        if next == warmup + 1 {
                            measure_from.store(now, Ordering::Relaxed);
                        }
                        sent_at[next].store(now, Ordering::Relaxed);
                        frame.clear();
                        wire::call_request(&mut frame, next as u64, tool);
                        w.write_all(frame.as_bytes())?;
                        w.write_all(b"\n")?;
                        next += 1;
                    }
                    issued.store(next - 1, Ordering::Release);
                    w.flush()?;
                }
                // Its answer, after every call's, marks the end.
                let mut w = writer.lock().expect("writer lock");
                w.write_all(br#"{"jsonrpc":"2.0","id":"end","method":"ping"}"#)?;
                w.write_all(b"\n")?;
                w.flush()
            })
        };

        let mut latencies = Vec::with_capacity(self.calls);
        let mut cpu_from = None;
        let mut completed = 0usize;
        let mut end_seen = false;
        let mut last_answer = 0u64;
        let mut failures = 0usize;
        let mut first_failure = None;
        while !(end_seen && completed == issued.load(Ordering::Acquire)) {
            line.clear();
            if reader.read_line(&mut line).map_err(io)? == 0 {
                return Err(format!("the server closed stdout after {completed} answers"));
            }
            let m: Incoming = serde_json::from_str(&line).map_err(|e| format!("bad frame {line:?}: {e}"))?;
            match (m.id, m.method) {
                (Some(id), Some(method)) => {
                    let answer = if method == "elicitation/create" { wire::FORM_ANSWER } else { "{}" };
                    send(writer, &format!(r#"{{"jsonrpc":"2.0","id":{},"result":{answer}}}"#, id.get())).map_err(io)?;
                }
                (Some(id), None) if id.get() == END_ID => end_seen = true,
                (Some(id), None) => {
                    let now = origin.elapsed().as_nanos() as u64;
                    let n: usize = id.get().parse().map_err(|_| format!("unexpected answer {line:?}"))?;
                    if n == 0 || n > total {
                        return Err(format!("answer to an unknown id: {line:?}"));
                    }
                    if m.error.is_some() || m.result.is_none_or(|r| r.is_error) {
                        failures += 1;
                        first_failure.get_or_insert_with(|| line.trim().to_owned());
                    }
                    if n > self.warmup {
                        if latencies.is_empty() {
                            cpu_from = crate::process::cpu_time(pid);
                        }
                        latencies.push(now - sent_at[n].load(Ordering::Relaxed));
                        last_answer = now;
                    }
                    completed += 1;
                    let mut in_flight = window.in_flight.lock().expect("window lock");
                    *in_flight -= 1;
                    window.room.notify_one();
                }
                _ => {}
            }
        }
        writer_thread.join().map_err(|_| "the writer panicked".to_owned())?.map_err(io)?;
        if let Some(first) = first_failure {
            return Err(format!("{failures} calls failed; the first: {first}"));
        }
        let from = measure_from.load(Ordering::Relaxed);
        let elapsed = Duration::from_nanos(last_answer.saturating_sub(from));
        let server_cpu = cpu_from.zip(crate::process::cpu_time(pid)).map(|(from, to)| to.saturating_sub(from));
        Ok(Load { completed: latencies.len(), elapsed, latencies_ns: latencies, streamed: 0, server_cpu })
    }
}
