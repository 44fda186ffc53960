//! The daemon's command line (clap), and the values it parses: CPU lists and the worker
//! environment allowlist.

use super::env::EnvAllow;
use clap::Parser;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::PathBuf;
use std::time::Duration;

/// Default `--max-connections`.
pub(crate) const DEFAULT_MAX_CONNS: u64 = 512;

/// `doca_urom_daemon`: the UROM service of the doca-soft runtime.
///
/// Loads the plugins found in the `;`-separated directories of UROM_PLUGIN_PATH, listens
/// for hosts, and spawns one `doca_urom_worker` process per worker id on their request.
/// Prints `doca_urom_daemon listening on IP:PORT`, then one line per plugin and per file
/// it skipped, on stdout.
#[derive(Debug, Clone, Parser)]
#[command(name = "doca_urom_daemon", version, about, long_about)]
pub(crate) struct DaemonArgs {
    /// Log level of the daemon's own messages (10 disable ... 70 trace).
    #[arg(short = 'l', long = "log-level", default_value_t = 30, value_parser = clap::value_parser!(u32).range(10..=70))]
    pub log_level: u32,
    /// Log level of the runtime's (SDK) messages (10 disable ... 70 trace).
    #[arg(long = "sdk-log-level", default_value_t = 30, value_parser = clap::value_parser!(u32).range(10..=70))]
    pub sdk_log_level: u32,
    /// Largest UROM message in bytes (command or notification header + plugin payload);
    /// hosts must not ask for more.
    #[arg(short = 'm', long = "max-msg-size", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(64..=(1 << 24)))]
    pub max_msg: u64,
    /// Address to listen on, `IP` or `IP:PORT` (port 0: any free one). Workers listen on
    /// the same IP.
    #[arg(long, default_value = "127.0.0.1:0", value_parser = parse_listen)]
    pub listen: SocketAddrV4,
    /// The worker binary [default: $DOCA_UROM_WORKER_BIN, else doca_urom_worker next to
    /// this program].
    #[arg(long = "worker-bin")]
    pub worker_bin: Option<PathBuf>,
    /// The CPU set hosts are told the service has (`doca_urom_service_get_cpuset`), as a
    /// list like `0-7` or `0,2,4-6` [default: the CPUs this process may run on]. Programs
    /// that require CPUs 0-7 run on smaller machines with `--cpuset 0-7`; a worker's own
    /// CPU set must still name CPUs this machine has.
    #[arg(long, value_parser = parse_cpu_list)]
    pub cpuset: Option<CpuList>,
    /// Which variables a host may set in a worker's environment
    /// (`doca_urom_worker_set_env`): comma-separated names, `PREFIX*`, `*SUFFIX` or
    /// `PRE*SUF` patterns; `LD_*` is never allowed. A spawn asking for any other variable
    /// is refused (NOT_PERMITTED).
    #[arg(long = "worker-env-allow", default_value = super::env::DEFAULT_ALLOW, value_parser = EnvAllow::parse)]
    pub env_allow: EnvAllow,
    /// Most host connections at once (pending ones included); also bounded by the
    /// descriptor limit.
    #[arg(long = "max-connections", default_value_t = DEFAULT_MAX_CONNS, value_parser = clap::value_parser!(u64).range(4..=1_000_000))]
    pub max_conns: u64,
    /// How long a new connection may stay silent before it is closed, in milliseconds (it
    /// must send its greeting by then).
    #[arg(long = "hello-timeout-ms", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(10..=600_000))]
    pub hello_timeout_ms: u64,
    /// How long a worker may take to start (its plugins' `open()` included), in
    /// milliseconds; the host's start fails with TIME_OUT after that.
    #[arg(long = "spawn-timeout-ms", default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(10..=600_000))]
    pub spawn_timeout_ms: u64,
}

impl DaemonArgs {
    /// The worker binary to run.
    pub(crate) fn worker_bin(&self) -> PathBuf {
        if let Some(b) = &self.worker_bin {
            return b.clone();
        }
        std::env::var_os("DOCA_UROM_WORKER_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                std::env::current_exe()
                    .ok()
                    .and_then(|p| p.parent().map(|d| d.join("doca_urom_worker")))
                    .unwrap_or_else(|| PathBuf::from("doca_urom_worker"))
            })
    }

    /// `--hello-timeout-ms`.
    pub(crate) fn hello_timeout(&self) -> Duration {
        Duration::from_millis(self.hello_timeout_ms)
    }

    /// `--spawn-timeout-ms`.
    pub(crate) fn spawn_timeout(&self) -> Duration {
        Duration::from_millis(self.spawn_timeout_ms)
    }
}

fn parse_listen(v: &str) -> Result<SocketAddrV4, String> {
    if let Ok(s) = v.parse::<SocketAddrV4>() {
        return Ok(s);
    }
    v.parse::<Ipv4Addr>()
        .map(|ip| SocketAddrV4::new(ip, 0))
        .map_err(|_| format!("{v:?} is not an IPv4 address, or IPv4:PORT"))
}

/// A set of CPUs, as the 16 words of a `ucs_cpu_set_t` (CPUs 0 to 1023).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CpuList(pub [u64; 16]);

impl CpuList {
    /// The CPUs, in order.
    pub(crate) fn cpus(&self) -> Vec<usize> {
        (0..1024)
            .filter(|c| self.0[c / 64] & (1 << (c % 64)) != 0)
            .collect()
    }
}

/// Parses `0-7`, `0,2,4-6` (CPUs 0 to 1023).
pub(crate) fn parse_cpu_list(v: &str) -> Result<CpuList, String> {
    let mut words = [0u64; 16];
    let cpu = |s: &str| -> Result<usize, String> {
        let c: usize = s
            .trim()
            .parse()
            .map_err(|_| format!("{s:?} is not a CPU number"))?;
        if c >= 1024 {
            return Err(format!("CPU {c} is out of range (0-1023)"));
        }
        Ok(c)
    };
    for part in v.split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (cpu(a)?, cpu(b)?),
            None => {
                let c = cpu(part)?;
                (c, c)
            }
        };
        if a > b {
            return Err(format!("{part:?}: the range runs backwards"));
        }
        for c in a..=b {
            words[c / 64] |= 1 << (c % 64);
        }
    }
    Ok(CpuList(words))
}

/// Formats CPUs as a list (`0-3,8`).
pub(crate) fn format_cpus(cpus: &[usize]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(a: &[&str]) -> Result<DaemonArgs, clap::Error> {
        DaemonArgs::try_parse_from(std::iter::once("doca_urom_daemon").chain(a.iter().copied()))
    }

    #[test]
    fn flags_parse_and_bad_values_are_refused() {
        let a = parse(&[
            "-l",
            "60",
            "--sdk-log-level",
            "10",
            "-m",
            "8192",
            "--listen",
            "10.1.0.2:5000",
            "--cpuset",
            "0-7",
        ])
        .unwrap();
        assert_eq!((a.log_level, a.sdk_log_level, a.max_msg), (60, 10, 8192));
        assert_eq!(a.listen, "10.1.0.2:5000".parse().unwrap());
        assert_eq!(a.cpuset.unwrap().cpus(), (0..8).collect::<Vec<_>>());
        assert_eq!(parse(&["--listen", "10.0.0.1"]).unwrap().listen.port(), 0);
        for bad in [
            &["-l", "5"][..],
            &["--bogus"],
            &["-m", "1"],
            &["--cpuset", "3-1"],
            &["--cpuset", "2000"],
            &["--listen", "nowhere"],
            &["--worker-env-allow", "LD_*"],
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad:?}: {e}");
        }
        assert_eq!(parse(&["-h"]).unwrap_err().exit_code(), 0, "help exits 0");
    }

    #[test]
    fn cpu_lists_parse_and_format() {
        let l = parse_cpu_list("0,2,4-6,63-64,1023").unwrap();
        assert_eq!(l.cpus(), vec![0, 2, 4, 5, 6, 63, 64, 1023]);
        assert_eq!(format_cpus(&l.cpus()), "0,2,4-6,63-64,1023");
        assert!(parse_cpu_list("x").is_err());
        assert!(parse_cpu_list("").is_err());
    }
}
