//! One JSON line per figure on stdout, the format `scripts/bench` collects.
//!
//! Keys: `figure` (name), `value`, `unit`, `baseline` / `baseline_value` (measured in the same
//! run), `target` (text), `ratio` (value / baseline), `status` (`pass`, `miss`, `info` when
//! there is no target to compare, `skipped`, `STALL` when the point ran past its time bound),
//! `notes`.

use std::fmt::Write as _;

/// Outcome of a figure against its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Target met.
    Pass,
    /// Target not met.
    Miss,
    /// Measured, no target applies (a baseline, or a figure measured on a path that is not
    /// the one the target is for).
    Info,
    /// Not measured (the reason is in the notes).
    Skipped,
    /// The point did not end within its time bound: killed, with what its trace saw in the
    /// notes.
    Stall,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Miss => "miss",
            Status::Info => "info",
            Status::Skipped => "skipped",
            Status::Stall => "STALL",
        }
    }

    /// Pass if `ok`, else miss.
    pub fn check(ok: bool) -> Status {
        if ok {
            Status::Pass
        } else {
            Status::Miss
        }
    }
}

/// One measured (or skipped) figure.
#[derive(Clone, Debug)]
pub struct Figure {
    /// Name, `bench/what/params`.
    pub name: String,
    /// The measured value (None when skipped).
    pub value: Option<f64>,
    /// Unit of `value`.
    pub unit: String,
    /// Name of the baseline figure, when there is one.
    pub baseline: Option<String>,
    /// The baseline's value, measured in the same run.
    pub baseline_value: Option<f64>,
    /// The target, as text (e.g. `ratio >= 1.0`).
    pub target: Option<String>,
    /// Outcome.
    pub status: Status,
    /// Free text: conditions, loss, what was not measured.
    pub notes: String,
}

impl Figure {
    /// A measured figure with no baseline and no target.
    pub fn info(name: impl Into<String>, value: f64, unit: &str, notes: impl Into<String>) -> Self {
        Figure {
            name: name.into(),
            value: Some(value),
            unit: unit.to_string(),
            baseline: None,
            baseline_value: None,
            target: None,
            status: Status::Info,
            notes: notes.into(),
        }
    }

    /// A figure that was not measured, with the reason.
    pub fn skipped(
        name: impl Into<String>,
        target: Option<&str>,
        reason: impl Into<String>,
    ) -> Self {
        Figure {
            name: name.into(),
            value: None,
            unit: String::new(),
            baseline: None,
            baseline_value: None,
            target: target.map(str::to_string),
            status: Status::Skipped,
            notes: reason.into(),
        }
    }

    /// A point that ran past its time bound, with what it saw.
    pub fn stalled(name: impl Into<String>, target: Option<&str>, what: impl Into<String>) -> Self {
        Figure {
            status: Status::Stall,
            ..Figure::skipped(name, target, what)
        }
    }

    /// Adds the baseline measured in the same run.
    pub fn with_baseline(mut self, name: impl Into<String>, value: f64) -> Self {
        self.baseline = Some(name.into());
        self.baseline_value = Some(value);
        self
    }

    /// Sets the target text and the outcome.
    pub fn with_target(mut self, target: &str, status: Status) -> Self {
        self.target = Some(target.to_string());
        self.status = status;
        self
    }

    /// value / baseline, when both exist and the baseline is not zero.
    pub fn ratio(&self) -> Option<f64> {
        match (self.value, self.baseline_value) {
            (Some(v), Some(b)) if b != 0.0 => Some(v / b),
            _ => None,
        }
    }

    /// The JSON line.
    pub fn to_json(&self) -> String {
        let mut s = String::from("{");
        field(&mut s, "figure", &json_str(&self.name));
        field(&mut s, "value", &json_num(self.value));
        field(&mut s, "unit", &json_str(&self.unit));
        field(&mut s, "baseline", &json_opt_str(self.baseline.as_deref()));
        field(&mut s, "baseline_value", &json_num(self.baseline_value));
        field(&mut s, "target", &json_opt_str(self.target.as_deref()));
        field(&mut s, "ratio", &json_num(self.ratio()));
        field(&mut s, "status", &json_str(self.status.as_str()));
        field(&mut s, "notes", &json_str(&self.notes));
        s.pop();
        s.push('}');
        s
    }

    /// Prints the JSON line on stdout.
    pub fn emit(&self) {
        println!("{}", self.to_json());
    }
}

fn field(s: &mut String, k: &str, v: &str) {
    let _ = write!(s, "\"{k}\":{v},");
}

fn json_num(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x}"),
        _ => "null".to_string(),
    }
}

fn json_opt_str(v: Option<&str>) -> String {
    v.map_or_else(|| "null".to_string(), json_str)
}

/// A JSON string literal.
pub fn json_str(v: &str) -> String {
    let mut s = String::with_capacity(v.len() + 2);
    s.push('"');
    for c in v.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(s, "\\u{:04x}", c as u32);
            }
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

/// Progress and diagnostics go to stderr so stdout holds only figures.
#[macro_export]
macro_rules! say {
    ($($t:tt)*) => { eprintln!("[{}] {}", env!("CARGO_CRATE_NAME"), format!($($t)*)) };
}

/// Whether a CUDA driver can be loaded on this machine.
pub fn gpu_present() -> bool {
    doca_test_support::cuda_driver_present()
}

/// The reason a GPU figure is skipped without a driver: what is missing and how to get it.
pub fn no_gpu_reason() -> String {
    format!(
        "needs GPU: skipped ({})",
        doca_test_support::no_cuda_reason("")
    )
}

/// The reason GPU variants are skipped today.
pub fn gpu_skip_reason(what_is_missing: &str) -> String {
    if gpu_present() {
        format!("needs GPU piece not landed yet ({what_is_missing}): skipped")
    } else {
        no_gpu_reason()
    }
}
