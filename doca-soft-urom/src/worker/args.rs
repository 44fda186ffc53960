//! The worker's command line (clap). The daemon starts workers; run by hand it serves for
//! debugging (`--probe` shows what the daemon would see of a plugin file).

use clap::Parser;
use std::net::Ipv4Addr;
use std::path::PathBuf;

/// `doca_urom_worker`: a UROM worker process of the doca-soft runtime (started by
/// `doca_urom_daemon`, one per worker id).
///
/// Loads the plugins named on its command line, listens on the daemon's address and
/// announces its port on `--port-fd`, then serves the hosts that attach with the token in
/// DOCA_UROM_WORKER_TOKEN (which the daemon sets).
#[derive(Debug, Clone, PartialEq, Eq, Parser)]
#[command(name = "doca_urom_worker", version, about, long_about)]
pub(crate) struct WorkerArgs {
    /// Worker id.
    #[arg(long, default_value_t = 0)]
    pub id: u64,
    /// Group id.
    #[arg(long, default_value_t = 0)]
    pub gid: u32,
    /// Address to listen on (port: any free one).
    #[arg(long, default_value = "127.0.0.1")]
    pub listen: Ipv4Addr,
    /// Largest UROM message in bytes.
    #[arg(long = "max-msg", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(64..=(1 << 24)))]
    pub max_msg: u64,
    /// Descriptor to announce the port on (`UROM_WORKER_PORT <port>`), then closed.
    #[arg(long = "port-fd", default_value_t = 1)]
    pub port_fd: i32,
    /// Only load this library and say whether it is a plugin (version and declared name)
    /// on `--port-fd`, then exit: how the daemon vets the files of UROM_PLUGIN_PATH.
    #[arg(long, value_name = "SO_PATH")]
    pub probe: Option<PathBuf>,
    /// Plugins to load, each `SO_PATH:ID` (the id the daemon gave it).
    #[arg(value_name = "SO_PATH:ID", value_parser = parse_plugin)]
    pub plugins: Vec<(PathBuf, u64)>,
}

fn parse_plugin(v: &str) -> Result<(PathBuf, u64), String> {
    let (path, id) = v
        .rsplit_once(':')
        .ok_or_else(|| format!("{v:?} is not SO_PATH:ID"))?;
    let id: u64 = id
        .parse()
        .map_err(|_| format!("{v:?}: {id:?} is not a plugin id"))?;
    if path.is_empty() {
        return Err(format!("{v:?}: no path"));
    }
    Ok((PathBuf::from(path), id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(a: &[&str]) -> Result<WorkerArgs, clap::Error> {
        WorkerArgs::try_parse_from(std::iter::once("doca_urom_worker").chain(a.iter().copied()))
    }

    #[test]
    fn args_parse_and_reject() {
        let w = parse(&[
            "--id",
            "7",
            "--gid",
            "1",
            "--",
            "/p/worker_graph.so:2",
            "/a:b/c.so:4",
        ])
        .unwrap();
        assert_eq!((w.id, w.gid), (7, 1));
        assert_eq!(
            w.plugins,
            vec![
                (PathBuf::from("/p/worker_graph.so"), 2),
                (PathBuf::from("/a:b/c.so"), 4)
            ]
        );
        for bad in [
            &["--id", "x"][..],
            &["nocolon"],
            &["/p.so:x"],
            &["--max-msg", "1"],
        ] {
            assert_eq!(parse(bad).unwrap_err().exit_code(), 2, "{bad:?}");
        }
        assert_eq!(parse(&["--help"]).unwrap_err().exit_code(), 0);
        assert_eq!(
            parse(&["--probe", "/x.so"]).unwrap().probe,
            Some(PathBuf::from("/x.so"))
        );
    }
}
