//! The harness benches' command lines, with clap (derive): each bench declares its flags in
//! a struct that flattens [`Common`] and parses with [`parse`]. `cargo bench` passes
//! `--bench`, which is accepted and ignored; `--help` prints the flags and exits 0, bad
//! input exits 2 with clap's message.

/// Flags every harness bench takes.
#[derive(clap::Args, Debug, Clone, PartialEq, Eq)]
pub struct Common {
    /// Short runs (the CI smoke of scripts/bench --quick)
    #[arg(long)]
    pub quick: bool,
    /// Added by `cargo bench`; ignored
    #[arg(long, hide = true)]
    pub bench: bool,
}

impl Common {
    /// `if_quick` under `--quick`, else `full`.
    pub fn pick<T>(&self, if_quick: T, full: T) -> T {
        if self.quick {
            if_quick
        } else {
            full
        }
    }
}

/// The load flags of the throughput benches: queue counts, frame sizes, frames per sender
/// and tries per figure.
#[derive(clap::Args, Debug, Clone, PartialEq, Eq)]
pub struct Load {
    /// Queue counts to measure
    #[arg(long, value_delimiter = ',')]
    pub queues: Option<Vec<usize>>,
    /// Frame sizes in bytes
    #[arg(long, value_delimiter = ',', default_value = "64,1024")]
    pub size: Vec<usize>,
    /// Frames per sender
    #[arg(long)]
    pub frames: Option<u64>,
    /// Tries per figure (the best counts)
    #[arg(long)]
    pub tries: Option<usize>,
}

impl Load {
    /// `--frames`, else 20 000 (quick) or 100 000.
    pub fn frames(&self, c: &Common) -> u64 {
        self.frames.unwrap_or(c.pick(20_000, 100_000))
    }

    /// `--tries`, else 2 (quick) or 3.
    pub fn tries(&self, c: &Common) -> usize {
        self.tries.unwrap_or(c.pick(2, 3))
    }

    /// `--queues`, else `quick` or `full`.
    pub fn queues(&self, c: &Common, quick: Vec<usize>, full: Vec<usize>) -> Vec<usize> {
        self.queues.clone().unwrap_or_else(|| c.pick(quick, full))
    }
}

/// Parses the process arguments (help, version and errors exit).
pub fn parse<T: clap::Parser>() -> T {
    T::parse()
}
