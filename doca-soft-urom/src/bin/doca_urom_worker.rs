//! `doca_urom_worker`: a UROM worker process (spawned by `doca_urom_daemon`).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(doca_soft_urom::worker_main(&args));
}
