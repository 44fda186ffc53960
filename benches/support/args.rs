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

/// Parses the process arguments (help, version and errors exit).
pub fn parse<T: clap::Parser>() -> T {
    T::parse()
}
