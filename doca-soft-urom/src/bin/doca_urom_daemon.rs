//! `doca_urom_daemon`: the UROM service (see `doca_soft_urom::daemon_main`).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(doca_soft_urom::daemon_main(&args));
}
