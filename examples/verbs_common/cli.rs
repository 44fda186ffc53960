//! The verbs samples' command line, parsed by clap: DOCA's flags (`-c`, `-d`, `-g`, `-gid`,
//! `-i`, `-n`, `-t`, `-e`, `-x`, `-r`; the multi-letter `-gid` and the long name
//! `--nic handler`, which clap cannot declare, are rewritten to `--gid-index` and
//! `--nic-handler` first) with their validation, DOCA's general flags (`-l`,
//! `--sdk-log-level`, `-v`; values and version text from `examples/common/cli.rs`), and
//! two of ours (`--oob-port`, `--sizes`) so tests can run samples side by side and shorter.

use cuda_kernels::VerbsScope;

/// Run-time failures end as in every sample (`examples/common/cli.rs`; the shared GPU
/// helpers of `examples/common/gpu.rs` call it through this module).
pub use super::general::fail;
use doca::gpunetio::verbs::NicHandler;

/// Optional flags a sample has besides the common ones.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Extra {
    /// `-n`: NIC handler.
    Nic,
    /// `-t`: CUDA threads.
    Threads,
    /// `-e`: per-thread or per-warp.
    Exec,
    /// `-x`: inline receives.
    Inline,
    /// `-r`: send DBR mode.
    SendDbr,
}

/// The parsed command line.
#[derive(Clone, Debug)]
pub struct Args {
    /// `-c`: the server's address (client role); None: server.
    pub client: Option<String>,
    /// `-d`: NIC device name.
    pub device: String,
    /// `-g`: GPU PCIe address (or ordinal).
    pub gpu: String,
    /// `-gid`.
    pub gid_index: u8,
    /// `-i`.
    pub iters: u32,
    /// `-n`.
    pub nic_handler: NicHandler,
    /// `-t`.
    pub threads: u32,
    /// `-e`.
    pub scope: VerbsScope,
    /// `-x`.
    pub inline: bool,
    /// `-r`.
    pub send_dbr: bool,
    /// `--oob-port` (ours; DOCA's samples use 2000).
    pub oob_port: u16,
    /// `--sizes` (ours): the message sizes to run, default the samples' ten.
    pub sizes: Vec<u32>,
}

impl Args {
    /// Whether this process is the server.
    pub fn is_server(&self) -> bool {
        self.client.is_none()
    }

    /// The message sizes to run: `--sizes`, else the samples' ten.
    pub fn sizes(&self) -> Vec<u32> {
        if self.sizes.is_empty() {
            super::SIZES.to_vec()
        } else {
            self.sizes.clone()
        }
    }

    /// The NIC handler of this side: `-n` for the client, AUTO for the server (as the
    /// samples' servers do).
    pub fn handler(&self) -> NicHandler {
        if self.is_server() {
            NicHandler::Auto
        } else {
            self.nic_handler
        }
    }

    /// The ping-pong role of this side.
    pub fn role(&self) -> cuda_kernels::Role {
        if self.is_server() {
            cuda_kernels::Role::Server
        } else {
            cuda_kernels::Role::Client
        }
    }
}

struct Flag {
    short: &'static str,
    long: &'static [&'static str],
    extra: Option<Extra>,
    help: &'static str,
}

const FLAGS: &[Flag] = &[
    Flag {
        short: "c",
        long: &["client"],
        extra: None,
        help: "<server OOB IP>: run as client",
    },
    Flag {
        short: "d",
        long: &["device"],
        extra: None,
        help: "<NIC device name>, mandatory",
    },
    Flag {
        short: "g",
        long: &["gpu"],
        extra: None,
        help: "<GPU PCIe address>, mandatory",
    },
    Flag {
        short: "gid",
        long: &["gid-index"],
        extra: None,
        help: "GID index (default 0)",
    },
    Flag {
        short: "i",
        long: &["iters"],
        extra: None,
        help: "iterations per launch (default 2048)",
    },
    Flag {
        short: "n",
        long: &["nic handler", "nic-handler", "nic"],
        extra: Some(Extra::Nic),
        help: "NIC handler type (0: AUTO, 1: CPU Proxy 2: GPU DB)",
    },
    Flag {
        short: "t",
        long: &["thread"],
        extra: Some(Extra::Threads),
        help: "CUDA threads, even and >= 64 (default 512)",
    },
    Flag {
        short: "e",
        long: &["exec-shared"],
        extra: Some(Extra::Exec),
        help: "0: per thread, 1: per warp (default 0)",
    },
    Flag {
        short: "x",
        long: &["inline"],
        extra: Some(Extra::Inline),
        help: "non-zero: receives inline in the CQE",
    },
    Flag {
        short: "r",
        long: &["send-dbr"],
        extra: Some(Extra::SendDbr),
        help: "1: send DBR mode NO_DBR_EXT",
    },
    Flag {
        short: "l",
        long: &["log-level"],
        extra: None,
        help: "lowest level DOCA logs for this program (10..70 or a name)",
    },
    Flag {
        short: "",
        long: &["sdk-log-level"],
        extra: None,
        help: "lowest level the DOCA libraries log (same values)",
    },
    Flag {
        short: "",
        long: &["oob-port"],
        extra: None,
        help: "out-of-band TCP port (default 2000)",
    },
    Flag {
        short: "",
        long: &["sizes"],
        extra: None,
        help: "comma-separated message sizes (default the samples' ten)",
    },
];

fn usage(prog: &str, about: &str, extras: &[Extra]) -> String {
    let mut u = format!("{about}\n\nusage: {prog} [options]\n");
    for f in FLAGS
        .iter()
        .filter(|f| f.extra.is_none_or(|e| extras.contains(&e)))
    {
        let s = if f.short.is_empty() {
            String::new()
        } else {
            format!("-{}, ", f.short)
        };
        u.push_str(&format!("  {s}--{}\n        {}\n", f.long[0], f.help));
    }
    u.push_str(
        "  -h, --help\n        this text\n  -v, --version\n        print the version and exit\n",
    );
    u
}

fn bad(prog: &str, msg: &str) -> ! {
    eprintln!("{prog}: {msg} (see {prog} --help)");
    std::process::exit(2);
}

/// The command line as clap parses it, every flag optional: which ones a sample takes
/// ([`Extra`]) and the mandatory ones are checked afterwards, so that the messages stay the
/// samples' own.
#[derive(clap::Parser, Debug)]
#[command(
    no_binary_name = true,
    disable_help_flag = true,
    disable_version_flag = true,
    args_override_self = true,
    allow_negative_numbers = true
)]
struct Raw {
    #[arg(short = 'c', long = "client")]
    client: Option<String>,
    #[arg(short = 'd', long = "device", value_parser = device_name)]
    device: Option<String>,
    #[arg(short = 'g', long = "gpu", value_parser = gpu_address)]
    gpu: Option<String>,
    /// DOCA's `-gid` (a multi-letter short name) arrives here as `--gid-index`.
    #[arg(long = "gid-index", value_parser = gid_index)]
    gid_index: Option<u8>,
    #[arg(short = 'i', long = "iters", value_parser = iters)]
    iters: Option<u32>,
    /// DOCA's long name is `nic handler`; `--nic handler` arrives here as `--nic-handler`.
    #[arg(short = 'n', long = "nic-handler", alias = "nic", value_parser = nic_handler)]
    nic_handler: Option<NicHandler>,
    #[arg(short = 't', long = "thread", value_parser = threads)]
    threads: Option<u32>,
    #[arg(short = 'e', long = "exec-shared", value_parser = exec_scope)]
    scope: Option<VerbsScope>,
    #[arg(short = 'x', long = "inline", value_parser = clap::value_parser!(i64))]
    inline: Option<i64>,
    #[arg(short = 'r', long = "send-dbr", value_parser = send_dbr)]
    send_dbr: Option<bool>,
    #[arg(short = 'l', long = "log-level", value_parser = super::general::log_level)]
    log_level: Option<u32>,
    #[arg(long = "sdk-log-level", value_parser = super::general::log_level)]
    sdk_log_level: Option<u32>,
    #[arg(long = "oob-port")]
    oob_port: Option<u16>,
    #[arg(long = "sizes", value_delimiter = ',', value_parser = message_size)]
    sizes: Vec<u32>,
}

fn device_name(v: &str) -> Result<String, String> {
    if v.len() > 63 {
        return Err("the device name is longer than 63 characters".into());
    }
    Ok(v.to_string())
}

fn gpu_address(v: &str) -> Result<String, String> {
    if v.len() >= 13 {
        return Err("the GPU PCIe address is 13 characters or longer".into());
    }
    Ok(v.to_string())
}

fn number<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.trim()
        .parse()
        .map_err(|_| format!("{v:?} is not a number"))
}

fn gid_index(v: &str) -> Result<u8, String> {
    let g: i64 = number(v)?;
    u8::try_from(g).map_err(|_| format!("GID index {g} out of range"))
}

fn iters(v: &str) -> Result<u32, String> {
    let i: i64 = number(v)?;
    u32::try_from(i).map_err(|_| format!("iterations {i} out of range"))
}

fn nic_handler(v: &str) -> Result<NicHandler, String> {
    let n: u32 = number(v)?;
    NicHandler::from_index(n).ok_or_else(|| format!("unknown NIC handler {n}"))
}

fn threads(v: &str) -> Result<u32, String> {
    let t: u32 = number(v)?;
    if !t.is_multiple_of(2) || t < 64 {
        return Err(format!("CUDA threads must be even and >= 64, not {t}"));
    }
    Ok(t)
}

fn exec_scope(v: &str) -> Result<VerbsScope, String> {
    let e: u32 = number(v)?;
    VerbsScope::from_index(e).ok_or_else(|| format!("exec-shared must be 0 or 1, not {e}"))
}

fn send_dbr(v: &str) -> Result<bool, String> {
    match number::<u32>(v)? {
        0 => Ok(false),
        1 => Ok(true),
        r => Err(format!("send DBR mode must be 0 or 1, not {r}")),
    }
}

fn message_size(v: &str) -> Result<u32, String> {
    match number::<u32>(v)? {
        0 => Err("message sizes must be positive".into()),
        s => Ok(s),
    }
}

/// Parses the process arguments for a sample with `extras`; bad input prints a message
/// and exits with status 2.
pub fn parse(prog: &'static str, about: &str, extras: &[Extra]) -> Args {
    parse_from(prog, about, extras, std::env::args().skip(1))
}

/// DOCA's spellings clap cannot declare, as the long names [`Raw`] has: the multi-letter
/// short `-gid` and the long name with a space, `--nic handler`.
fn doca_spelling(arg: String) -> String {
    match arg.as_str() {
        "-gid" => "--gid-index".to_string(),
        "--nic handler" => "--nic-handler".to_string(),
        _ => match arg.strip_prefix("--nic handler=") {
            Some(v) => format!("--nic-handler={v}"),
            None => arg,
        },
    }
}

/// The message of a clap error, in the samples' words.
fn clap_message(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    use std::error::Error as _;
    let ctx = |k| match e.get(k) {
        Some(ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    match e.kind() {
        ErrorKind::UnknownArgument => format!("unknown option {:?}", ctx(ContextKind::InvalidArg)),
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
            let mut m = format!(
                "invalid value {:?} for {}",
                ctx(ContextKind::InvalidValue),
                ctx(ContextKind::InvalidArg)
            );
            if let Some(why) = e.source() {
                m += &format!(": {why}");
            }
            m
        }
        _ => e.kind().to_string(),
    }
}

/// The clap id of an [`Extra`]'s flag in [`Raw`].
fn arg_id(extra: Extra) -> &'static str {
    match extra {
        Extra::Nic => "nic_handler",
        Extra::Threads => "threads",
        Extra::Exec => "scope",
        Extra::Inline => "inline",
        Extra::SendDbr => "send_dbr",
    }
}

/// Parses `argv` (without the program name).
pub fn parse_from(
    prog: &'static str,
    about: &str,
    extras: &[Extra],
    argv: impl IntoIterator<Item = String>,
) -> Args {
    use clap::{CommandFactory, FromArgMatches};
    let argv: Vec<String> = argv.into_iter().map(doca_spelling).collect();
    if argv.iter().any(|a| a == "-h" || a == "--help") {
        print!("{}", usage(prog, about, extras));
        std::process::exit(0);
    }
    if argv.iter().any(|a| a == "-v" || a == "--version") {
        println!("{prog} {}", super::general::version());
        std::process::exit(0);
    }
    let matches = Raw::command()
        .try_get_matches_from(&argv)
        .unwrap_or_else(|e| bad(prog, &clap_message(&e)));
    // Flags of other samples are unknown to this one.
    for f in FLAGS.iter() {
        let Some(extra) = f.extra.filter(|e| !extras.contains(e)) else {
            continue;
        };
        if matches.value_source(arg_id(extra)) == Some(clap::parser::ValueSource::CommandLine) {
            bad(
                prog,
                &format!("unknown option -{}/--{}", f.short, f.long[0]),
            );
        }
    }
    let raw = Raw::from_arg_matches(&matches).unwrap_or_else(|e| bad(prog, &clap_message(&e)));
    for (sdk, level) in [(false, raw.log_level), (true, raw.sdk_log_level)] {
        if let Some(level) = level {
            set_log_level(sdk, level);
        }
    }
    let Some(device) = raw.device else {
        bad(prog, "missing mandatory option -d/--device");
    };
    let Some(gpu) = raw.gpu else {
        bad(prog, "missing mandatory option -g/--gpu");
    };
    Args {
        client: raw.client,
        device,
        gpu,
        gid_index: raw.gid_index.unwrap_or(0),
        iters: raw.iters.unwrap_or(2048),
        nic_handler: raw.nic_handler.unwrap_or(NicHandler::Auto),
        threads: raw.threads.unwrap_or(512),
        scope: raw.scope.unwrap_or(VerbsScope::Thread),
        inline: raw.inline.is_some_and(|x| x != 0),
        send_dbr: raw.send_dbr.unwrap_or(false),
        oob_port: raw.oob_port.unwrap_or(2000),
        sizes: raw.sizes,
    }
}

/// Applies `-l` (`sdk` false) or `--sdk-log-level` (DOCA's global log limits).
fn set_log_level(sdk: bool, level: u32) {
    // SAFETY: plain setters taking a level by value; they refuse bad levels with a code.
    let r = unsafe {
        if sdk {
            doca::sys::doca_log_level_set_global_sdk_limit(level)
        } else {
            doca::sys::doca_log_level_set_global_lower_limit(level)
        }
    };
    if let Err(e) = doca::common::DocaError::result(r) {
        eprintln!("warning: DOCA refused log level {level}: {e}");
    }
}
