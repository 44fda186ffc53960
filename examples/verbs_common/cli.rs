//! The verbs samples' command line: DOCA's flags (`-c`, `-d`, `-g`, `-gid`, `-i`, `-n`,
//! `-t`, `-e`, `-x`, `-r`, multi-letter short names included, which clap cannot parse:
//! `-gid 0` would read as `-g id`) with their validation, DOCA's general flags (`-l`,
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

fn int<T: std::str::FromStr>(prog: &str, flag: &str, v: &str) -> T {
    v.parse()
        .unwrap_or_else(|_| bad(prog, &format!("invalid value {v:?} for {flag}")))
}

/// Parses the process arguments for a sample with `extras`; bad input prints a message
/// and exits with status 2.
pub fn parse(prog: &'static str, about: &str, extras: &[Extra]) -> Args {
    parse_from(prog, about, extras, std::env::args().skip(1))
}

/// Parses `argv` (without the program name).
pub fn parse_from(
    prog: &'static str,
    about: &str,
    extras: &[Extra],
    argv: impl IntoIterator<Item = String>,
) -> Args {
    let mut a = Args {
        client: None,
        device: String::new(),
        gpu: String::new(),
        gid_index: 0,
        iters: 2048,
        nic_handler: NicHandler::Auto,
        threads: 512,
        scope: VerbsScope::Thread,
        inline: false,
        send_dbr: false,
        oob_port: 2000,
        sizes: Vec::new(),
    };
    let mut it = argv.into_iter();
    while let Some(arg) = it.next() {
        if arg == "-h" || arg == "--help" {
            print!("{}", usage(prog, about, extras));
            std::process::exit(0);
        }
        if arg == "-v" || arg == "--version" {
            println!("{prog} {}", super::general::version());
            std::process::exit(0);
        }
        let (name, inline_val) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let flag = FLAGS.iter().find(|f| {
            (!f.short.is_empty()
                && name.strip_prefix('-') == Some(f.short)
                && !name.starts_with("--"))
                || name.strip_prefix("--").is_some_and(|l| f.long.contains(&l))
        });
        let Some(flag) = flag.filter(|f| f.extra.is_none_or(|e| extras.contains(&e))) else {
            bad(prog, &format!("unknown option {arg:?}"));
        };
        let v = match inline_val.or_else(|| it.next()) {
            Some(v) => v,
            None => bad(prog, &format!("{name} needs a value")),
        };
        match flag.long[0] {
            "client" => a.client = Some(v),
            "device" => {
                if v.len() > 63 {
                    bad(prog, "the device name is longer than 63 characters");
                }
                a.device = v;
            }
            "gpu" => {
                if v.len() >= 13 {
                    bad(prog, "the GPU PCIe address is 13 characters or longer");
                }
                a.gpu = v;
            }
            "gid-index" => {
                let g: i64 = int(prog, &name, &v);
                if !(0..=255).contains(&g) {
                    bad(prog, &format!("GID index {g} out of range"));
                }
                a.gid_index = g as u8;
            }
            "iters" => {
                let i: i64 = int(prog, &name, &v);
                if !(0..=u32::MAX as i64).contains(&i) {
                    bad(prog, &format!("iterations {i} out of range"));
                }
                a.iters = i as u32;
            }
            "nic handler" => {
                let n: u32 = int(prog, &name, &v);
                a.nic_handler = NicHandler::from_index(n)
                    .unwrap_or_else(|| bad(prog, &format!("unknown NIC handler {n}")));
            }
            "thread" => {
                let t: u32 = int(prog, &name, &v);
                if !t.is_multiple_of(2) || t < 64 {
                    bad(
                        prog,
                        &format!("CUDA threads must be even and >= 64, not {t}"),
                    );
                }
                a.threads = t;
            }
            "exec-shared" => {
                let e: u32 = int(prog, &name, &v);
                a.scope = VerbsScope::from_index(e)
                    .unwrap_or_else(|| bad(prog, &format!("exec-shared must be 0 or 1, not {e}")));
            }
            "inline" => a.inline = int::<i64>(prog, &name, &v) != 0,
            "send-dbr" => match int::<u32>(prog, &name, &v) {
                0 => a.send_dbr = false,
                1 => a.send_dbr = true,
                r => bad(prog, &format!("send DBR mode must be 0 or 1, not {r}")),
            },
            "log-level" | "sdk-log-level" => {
                let level = super::general::log_level(&v).unwrap_or_else(|e| bad(prog, &e));
                set_log_level(flag.long[0] == "sdk-log-level", level);
            }
            "oob-port" => a.oob_port = int(prog, &name, &v),
            "sizes" => {
                a.sizes = v.split(',').map(|s| int(prog, &name, s.trim())).collect();
                if a.sizes.contains(&0) {
                    bad(prog, "message sizes must be positive");
                }
            }
            _ => unreachable!("every flag is handled"),
        }
    }
    if a.device.is_empty() {
        bad(prog, "missing mandatory option -d/--device");
    }
    if a.gpu.is_empty() {
        bad(prog, "missing mandatory option -g/--gpu");
    }
    a
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
