//! Lists the network devices and GPUs DOCA sees, the way `doca_caps --list-devs` and
//! `nvidia-smi -L` would.
//!
//! ```sh
//! cargo run --example devices
//! ```

#[path = "common/cli.rs"]
mod cli;

use clap::Parser;
use doca::gpunetio::{cuda_available, gpu_pci_bus_ids, Device};

/// The command line: DOCA's general flags only.
#[derive(Parser, Debug)]
#[command(
    name = "devices",
    about = "List the network devices and GPUs DOCA sees"
)]
struct Args {
    #[command(flatten)]
    general: cli::General,
}

fn main() {
    let _args: Args = cli::parse(|a: &Args| &a.general);
    if let Err(e) = run() {
        eprintln!("devices: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), doca::gpunetio::Error> {
    let devs = Device::list()?;
    println!("{} network device(s):", devs.len());
    println!(
        "  {:<12} {:<16} {:<20} {:<17} ipv4",
        "pci", "iface", "ibdev", "mac"
    );
    for d in &devs {
        let mac = d.mac().map_or("-".to_string(), |m| {
            m.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(":")
        });
        let ip = d.ipv4().map_or("-".to_string(), |a| {
            format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
        });
        println!(
            "  {:<12} {:<16} {:<20} {:<17} {ip}",
            d.pci_addr(),
            d.iface_name(),
            d.ibdev_name(),
            mac
        );
    }
    if cuda_available() {
        let gpus = gpu_pci_bus_ids()?;
        println!("{} GPU(s): {}", gpus.len(), gpus.join(", "));
    } else {
        println!("no CUDA driver on this machine: GPU data paths are unavailable here");
    }
    Ok(())
}
