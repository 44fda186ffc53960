//! The command line: the original's four flags (`-g/--gpu`, `-n/--nic`, `-q/--queue`,
//! `-s/--httpserver`) with its validation and messages, DOCA's general flags (`-l`,
//! `--sdk-log-level`, `-v`: the shared `common::cli::General`), and `--ready-file` for
//! scripts.

#![allow(dead_code)]

use crate::common::cli::{self as general_cli, General};

/// Most receive queues per protocol (`MAX_QUEUES`).
pub const MAX_QUEUES: u8 = 4;
/// The original copies PCI addresses into 13-byte fields.
pub const MAX_PCI_LEN: usize = 12;

/// GPU packet processing: UDP, TCP and ICMP on separate GPU queues steered by DOCA Flow,
/// DNS and HTTP counted in CUDA kernels, ICMP echo answered from the GPU, and with -s an
/// HTTP server inside a CUDA kernel.
#[derive(clap::Parser, Debug, Clone, PartialEq, Eq)]
#[command(name = "gpu_packet_processing")]
pub struct Args {
    /// GPU PCIe address to be used by the app
    #[arg(short = 'g', long = "gpu", value_name = "GPU PCIe address", value_parser = pci_address)]
    pub gpu: String,
    /// DOCA device PCIe address used by the app
    #[arg(short = 'n', long = "nic", value_name = "NIC PCIe address", value_parser = pci_address)]
    pub nic: String,
    /// DOCA GPUNetIO receive queue per flow
    #[arg(short = 'q', long = "queue", value_name = "GPU receive queues", value_parser = queue_count)]
    pub queue: u8,
    /// Enable GPU HTTP server mode
    #[arg(short = 's', long = "httpserver")]
    pub http_server: bool,
    /// Create this file once the kernels run and the threads are started (for scripts)
    #[arg(long = "ready-file", value_name = "PATH")]
    pub ready_file: Option<std::path::PathBuf>,
    /// DOCA's general flags.
    #[command(flatten)]
    pub general: General,
}

fn pci_address(s: &str) -> Result<String, String> {
    if s.len() > MAX_PCI_LEN {
        return Err(format!("PCI file name too long. Max {MAX_PCI_LEN}"));
    }
    if s.is_empty() {
        return Err("empty address".into());
    }
    Ok(s.to_string())
}

fn queue_count(s: &str) -> Result<u8, String> {
    let v: i64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number"))?;
    if !(1..=i64::from(MAX_QUEUES)).contains(&v) {
        return Err(format!(
            "GPU receive queue number is wrong 0 < {v} < {MAX_QUEUES}"
        ));
    }
    Ok(v as u8)
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Run with these arguments.
    Run(Args),
    /// Print this (help) and exit 0.
    Exit0(String),
    /// Print this (the error) and exit 1.
    Fail(String),
}

/// Parses `args` (the program name first), as `main` does.
pub fn parse<I, T>(args: I) -> Parsed
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    match general_cli::try_parse_from::<Args, _, _>(args) {
        Ok(a) => Parsed::Run(a),
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            Parsed::Exit0(e.render().to_string())
        }
        Err(e) => Parsed::Fail(e.render().to_string()),
    }
}
