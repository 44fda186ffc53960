//! Benchmark points in time bounds: a point that may stall (the GPU receive path with many
//! lanes did, for minutes) runs in a child process, the bench binary itself started again
//! with [`POINT_ENV`] naming the point. The child prints its result as one `#result` line
//! and its trace (lane, ring and kernel progress over time) as `#trace` lines on stdout; the
//! parent forwards the trace to stderr, keeps the last lines, and kills the child when the
//! point's time bound passes: the point is then reported as STALL with what the trace saw,
//! and the run goes on with the next point.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Environment variable that makes a bench binary run one point and exit (set by
/// [`run_isolated`] for its child).
pub const POINT_ENV: &str = "BENCH_POINT";

/// Prefix of the child's result line.
pub const RESULT: &str = "#result ";
/// Prefix of the child's trace lines.
pub const TRACE: &str = "#trace ";

/// Trace lines kept for a stall report.
const KEEP: usize = 6;

/// The point this process was started to run, if it is a child of [`run_isolated`].
pub fn child_point() -> Option<String> {
    std::env::var(POINT_ENV).ok()
}

/// How an isolated point ended.
pub enum Outcome {
    /// The child printed its result line (the text after [`RESULT`]).
    Done {
        /// The result line.
        result: String,
        /// The last trace lines.
        trace: Vec<String>,
    },
    /// The child ran past its bound and was killed.
    Stall {
        /// Seconds it ran.
        secs: f64,
        /// The last trace lines.
        trace: Vec<String>,
    },
    /// The child ended without a result (crash, failed start).
    Failed {
        /// Why.
        why: String,
        /// The last trace lines.
        trace: Vec<String>,
    },
}

impl Outcome {
    /// The trace lines kept, joined for a figure's notes.
    pub fn trace_note(trace: &[String]) -> String {
        if trace.is_empty() {
            "no trace line".to_string()
        } else {
            trace.join(" | ")
        }
    }
}

/// Runs this bench binary again with the same arguments and `POINT_ENV=point`, at most
/// `limit`.
pub fn run_isolated(point: &str, limit: Duration) -> Outcome {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            return Outcome::Failed {
                why: format!("current_exe: {e}"),
                trace: Vec::new(),
            }
        }
    };
    let mut cmd = Command::new(exe);
    cmd.args(std::env::args_os().skip(1)).env(POINT_ENV, point);
    run_command(point, cmd, limit)
}

/// Runs `cmd` as the process of point `point` (see [`run_isolated`]), at most `limit`.
pub fn run_command(point: &str, mut cmd: Command, limit: Duration) -> Outcome {
    let mut child = match cmd
        // A process group of its own: a stall kills whatever the point started too.
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            return Outcome::Failed {
                why: format!("starting the point's process: {e}"),
                trace: Vec::new(),
            }
        }
    };
    let out = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let start = Instant::now();
    let mut trace: Vec<String> = Vec::new();
    let mut result = None;
    let stalled = loop {
        let left = limit.saturating_sub(start.elapsed());
        if left.is_zero() {
            break true;
        }
        match rx.recv_timeout(left) {
            Ok(line) => {
                if let Some(r) = line.strip_prefix(RESULT) {
                    result = Some(r.to_string());
                } else if let Some(t) = line.strip_prefix(TRACE) {
                    eprintln!("[{point}] {t}");
                    trace.push(t.to_string());
                    if trace.len() > KEEP {
                        trace.remove(0);
                    }
                } else {
                    // Figures or anything else the child printed: pass it on.
                    println!("{line}");
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => break true,
            Err(mpsc::RecvTimeoutError::Disconnected) => break false,
        }
    };
    if stalled {
        // SAFETY: plain kill(2) of the child's process group (made above with it as leader).
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        let _ = child.kill();
        let _ = child.wait();
        // The reader ends when the last writer of the pipe is gone; it is not waited for
        // (something outside the group may still hold the pipe).
        drop(reader);
        // Lines that came in while it was being killed.
        for line in rx.try_iter() {
            if let Some(t) = line.strip_prefix(TRACE) {
                trace.push(t.to_string());
            }
        }
        let keep = trace.len().saturating_sub(KEEP);
        return Outcome::Stall {
            secs: start.elapsed().as_secs_f64(),
            trace: trace.split_off(keep),
        };
    }
    let status = child.wait();
    let _ = reader.join();
    match result {
        Some(result) => Outcome::Done { result, trace },
        None => Outcome::Failed {
            why: format!("the point's process ended without a result ({status:?})"),
            trace,
        },
    }
}
