//! The ported GPU RDMA and DMA samples end to end, as separate processes:
//! - gpunetio_rdma_client_server_write, server and client processes on one GPU over `lo`,
//!   out of band and through RDMA-CM (two connections): the server's buffer array A is
//!   `1111 | 1111` before and `2222 | 3333` after (sent buffers: the two halves in arrival
//!   order), every byte checked in GPU memory by the server, every receive with its
//!   immediate, the client's 4 commits;
//! - the same between two network namespaces joined by a veth pair (UCX over TCP, as
//!   between two hosts: `UCX_TLS=tcp,cuda_copy`, see `support::netns_ucx_tls`); needs root,
//!   not the `ip` command (`doca_test_support::netns` makes the pair with system calls);
//! - a client that goes away after connecting (this test plays it, without a kernel): the
//!   server kernel's flag write fails, its receives are flushed, and the server reports the
//!   error completion and exits 1 well before its own timeout;
//! - gpunetio_dma_memcpy: the CPU-datapath text seen by the kernel in GPU memory, the
//!   GPU-datapath text received by the CPU, both checked byte for byte;
//! - bad flags: a clear message and exit status 2 (no GPU needed).
//!
//! Example binaries come from `DOCA_RS_EXAMPLES` or `target/<profile>/examples`. GPU tests
//! skip with a printed reason without a CUDA driver or the binaries.

mod support;

use doca_test_support::require_cuda;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use support::{example, veth_pair_or_skip, Finished, Proc};

const RDMA: &str = "gpunetio_rdma_client_server_write";
const DMA: &str = "gpunetio_dma_memcpy";

/// The RDMA runs share their ports: one at a time.
static PORTS: Mutex<()> = Mutex::new(());

fn ports_lock() -> std::sync::MutexGuard<'static, ()> {
    PORTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// An out-of-band and an RDMA-CM port of this process (away from the samples' 2000).
fn ports() -> (String, String) {
    let base = 20_000 + 2 * (std::process::id() % 10_000);
    (base.to_string(), (base + 1).to_string())
}

fn gpu_example(name: &str) -> Option<PathBuf> {
    if !require_cuda(&format!("GPU sample {name}")) {
        return None;
    }
    example(name)
}

/// The server's `Buffer i -> ...` lines after `header`.
fn buffer_lines<'a>(out: &'a str, header: &str) -> Vec<&'a str> {
    let mut lines = out.lines().skip_while(|l| !l.contains(header));
    assert!(lines.next().is_some(), "no {header:?} in:\n{out}");
    lines
        .take_while(|l| l.contains("Buffer "))
        .map(|l| &l[l.find("Buffer ").unwrap()..])
        .collect()
}

fn check_server(out: &Finished, after: &str) {
    assert_eq!(out.code, Some(0), "server:\n{out}");
    let before = buffer_lines(
        &out.stdout,
        "Before launching CUDA kernel, buffer array A is:",
    );
    let want: Vec<String> = (0..4)
        .map(|i| format!("Buffer {i} -> offset 0: 1111 | offset 128: 1111"))
        .collect();
    assert_eq!(before, want, "A before:\n{out}");
    let got = buffer_lines(&out.stdout, after);
    assert_eq!(got.len(), 4, "A after:\n{out}");
    for (i, l) in got.iter().enumerate() {
        let written = format!("Buffer {i} -> offset 0: 2222 | offset 128: 3333");
        let swapped = format!("Buffer {i} -> offset 0: 3333 | offset 128: 2222");
        assert!(
            *l == written || (i % 2 == 1 && *l == swapped),
            "buffer {i}: {l}\n{out}"
        );
    }
    let recvs = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("RDMA Recv 2 ops completed with immediate values"))
        .count();
    assert!(recvs >= 4, "receive lines:\n{out}");
    assert!(
        out.stdout
            .contains("Validation successful: every byte of buffer array A"),
        "{out}"
    );
    assert!(out.stdout.contains("Sample finished successfully"), "{out}");
}

fn check_client(out: &Finished, conns: usize) {
    assert_eq!(out.code, Some(0), "client:\n{out}");
    let done = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("Client posted and completed 4 RDMA commits on connection"))
        .count();
    assert_eq!(done, conns, "{out}");
    for t in 0..2 {
        for (i, kind) in ["write", "send", "write", "send"].iter().enumerate() {
            let line = format!("Thread {t} post rdma {kind} imm {}", i + t);
            assert!(out.stdout.contains(&line), "no {line:?}:\n{out}");
        }
    }
    assert!(out.stdout.contains("Sample finished successfully"), "{out}");
}

fn run_pair(server_cmd: &[&str], client_cmd: &[&str], exe: &Path) -> (Finished, Finished) {
    let server = Proc::spawn(exe, server_cmd);
    // The client retries its out-of-band connect while the server starts.
    let client = Proc::spawn(exe, client_cmd);
    let c = client.wait(120);
    let s = server.wait(60);
    (s, c)
}

#[test]
fn rdma_client_server_write_out_of_band_two_processes() {
    let Some(exe) = gpu_example(RDMA) else { return };
    let _p = ports_lock();
    let (oob, _) = ports();
    let (s, c) = run_pair(
        &["-d", "lo", "-gpu", "0", "-o", &oob],
        &["-d", "lo", "-gpu", "0", "-c", "127.0.0.1", "-o", &oob],
        &exe,
    );
    check_client(&c, 1);
    check_server(&s, "After launching CUDA kernel, buffer array A is:");
}

#[test]
fn rdma_client_server_write_rdma_cm_two_connections() {
    let Some(exe) = gpu_example(RDMA) else { return };
    let _p = ports_lock();
    let (oob, cm) = ports();
    let (s, c) = run_pair(
        &["-d", "lo", "-gpu", "0", "-cm", "-p", &cm, "-o", &oob],
        &[
            "-d",
            "lo",
            "-gpu",
            "0",
            "-cm",
            "-p",
            &cm,
            "-c",
            "127.0.0.1",
            "-sa",
            "127.0.0.1",
            "-sat",
            "IPv4",
            "-o",
            &oob,
        ],
        &exe,
    );
    check_client(&c, 2);
    check_server(&s, "After launching CUDA kernel, buffer array A is:");
    check_server(
        &s,
        "After launching CUDA kernel for connection 2, buffer array A is:",
    );
}

#[test]
fn rdma_client_server_write_between_two_namespaces_over_veth() {
    let Some(exe) = gpu_example(RDMA) else { return };
    let Some(n) = veth_pair_or_skip("the RDMA sample") else {
        return;
    };
    let (oob, _) = ports();
    let server_addr = n.addr[0].to_string();
    let server = Proc::spawn_in(&exe, &["-d", &n.dev[0], "-gpu", "0", "-o", &oob], &n.ns[0]);
    let client = Proc::spawn_in(
        &exe,
        &["-d", &n.dev[1], "-gpu", "0", "-c", &server_addr, "-o", &oob],
        &n.ns[1],
    );
    let c = client.wait(120);
    let s = server.wait(60);
    check_client(&c, 1);
    check_server(&s, "After launching CUDA kernel, buffer array A is:");
}

/// ucx_perftest (env `UCX_PERFTEST`, else on PATH), or None with the reason printed.
fn ucx_perftest() -> Option<PathBuf> {
    let exe = std::env::var_os("UCX_PERFTEST")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .or_else(|| {
            std::env::var_os("PATH").and_then(|p| {
                std::env::split_paths(&p)
                    .map(|d| d.join("ucx_perftest"))
                    .find(|f| f.is_file())
            })
        });
    if exe.is_none() {
        doca_test_support::skip("no ucx_perftest (set UCX_PERFTEST or put it on PATH)");
    }
    exe
}

/// The set-up of the two-namespace sample runs without a GPU: UCX in one namespace
/// reaches UCX in the other over TCP on the veth pair (its interface list comes from the
/// namespace's own sysfs), 64 KiB puts from host memory, and reports a result.
#[test]
fn ucx_over_tcp_between_two_namespaces() {
    let Some(perftest) = ucx_perftest() else {
        return;
    };
    let Some(n) = veth_pair_or_skip("ucx_perftest") else {
        return;
    };
    let port = (21_000 + std::process::id() % 10_000).to_string();
    let tcp = |ns| move |c: &mut std::process::Command| enter_with_tcp(c, ns);
    let server = Proc::spawn_with(&perftest, &["-p", &port], tcp(&n.ns[0]));
    let addr = n.addr[0].to_string();
    let args = [
        addr.as_str(),
        "-p",
        &port,
        "-t",
        "ucp_put_bw",
        "-s",
        "65536",
        "-n",
        "200",
    ];
    // The client retries until the server listens (it gives up at once when refused).
    let mut client = None;
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let c = Proc::spawn_with(&perftest, &args, tcp(&n.ns[1])).wait(60);
        if c.stdout.contains("Final:") || c.code == Some(0) {
            client = Some(c);
            break;
        }
        client = Some(c);
    }
    let client = client.expect("at least one client run");
    let server = server.wait(30);
    assert_eq!(client.code, Some(0), "client:\n{client}\nserver:\n{server}");
    let last = client
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("Final:"))
        .unwrap_or_else(|| panic!("no Final line:\n{client}"));
    let iters: u64 = last.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_eq!(iters, 200, "{last}");
    assert_eq!(server.code, Some(0), "server:\n{server}");
}

/// Enters `ns` with `UCX_TLS=tcp` (no GPU here: TCP alone).
fn enter_with_tcp(c: &mut std::process::Command, ns: &doca_test_support::netns::NetNs) {
    ns.enter(c)
        .env("UCX_TLS", "tcp")
        .env("UCX_WARN_UNUSED_ENV_VARS", "n");
}

/// Connects to the sample's server as its client would, hands it a flag buffer, then
/// destroys the buffer and the context without ever writing.
fn vanishing_client(oob_port: u16) {
    use doca::gpunetio::rdma::{self, oob::OobStream, Rdma, RemoteMmap};
    use doca::gpunetio::{AccessFlags, Device, Gpu, GpuBuffer, MemType, Mmap};
    let dev = Device::open("lo").unwrap();
    let gpu = Gpu::by_ordinal(0).unwrap();
    let perms = AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_WRITE;
    let ctx = Rdma::builder(&dev)
        .permissions(perms)
        .send_queue_size(64)
        .recv_queue_size(64)
        .gpu_datapath(&gpu)
        .start()
        .unwrap();
    let t0 = std::time::Instant::now();
    let mut oob = loop {
        match OobStream::connect("127.0.0.1", oob_port) {
            Ok(s) => break s,
            Err(e) if t0.elapsed().as_secs() > 30 => panic!("server never listened: {e}"),
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(100)),
        }
    };
    let theirs = oob.recv_blob().unwrap();
    let (ours, conn) = ctx.export().unwrap();
    oob.send_blob(ours.as_bytes()).unwrap();
    ctx.connect(&conn, &theirs).unwrap();
    let a = RemoteMmap::from_export(&dev, &oob.recv_blob().unwrap()).unwrap();
    let f = GpuBuffer::<u8>::with_alignment(&gpu, 4, 4096, MemType::Gpu).unwrap();
    let f_map = Mmap::from_gpu_buffer(&f, &[&dev], perms).unwrap();
    oob.send_blob(rdma::export_mmap(&f_map, &dev).unwrap().as_bytes())
        .unwrap();
    // Gone: the flag's key is revoked, the connection's queue pair destroyed.
    drop((f_map, f, a, conn, ctx));
}

#[test]
fn rdma_server_reports_a_client_that_vanished_without_hanging() {
    let Some(exe) = gpu_example(RDMA) else { return };
    let _p = ports_lock();
    let (oob, _) = ports();
    let server = Proc::spawn(&exe, &["-d", "lo", "-gpu", "0", "-o", &oob]);
    vanishing_client(oob.parse().unwrap());
    // Below the server's own 60 s wait for its kernel: the error ended it, not a timeout.
    let out = server.wait(50);
    assert_eq!(out.code, Some(1), "{out}");
    assert!(
        out.stderr.contains("a device call failed with DOCA error"),
        "the kernel saw an error completion:\n{out}"
    );
    assert!(out.stdout.contains("Sample finished with errors"), "{out}");
}

#[test]
fn dma_memcpy_sample_both_directions() {
    let Some(exe) = gpu_example(DMA) else { return };
    let out = Proc::spawn(&exe, &["-g", "0", "-n", "lo"]).wait(60);
    assert_eq!(out.code, Some(0), "{out}");
    for line in [
        "Success, DMA memcpy job done successfully",
        "CUDA KERNEL INFO: The GPU destination buffer value after the memcpy: This is a sample piece of text from CPU",
        "CPU received message from GPU: This is a sample piece of text from GPU",
        "Validation successful: both copies match their sources byte for byte",
        "Sample finished successfully",
    ] {
        assert!(out.stdout.contains(line), "no {line:?}:\n{out}");
    }
}

#[test]
fn bad_flags_get_a_message_and_status_2() {
    let (Some(rdma), Some(dma)) = (example(RDMA), example(DMA)) else {
        return;
    };
    let cases: &[(&PathBuf, &[&str], &str)] = &[
        (&rdma, &["-gpu", "0"], "--device"),
        (&rdma, &["-d", "lo"], "--gpu"),
        (
            &rdma,
            &["-d", "lo", "-gpu", "0", "-sa", "1.2.3.4"],
            "--server-addr needs --use-rdma-cm",
        ),
        (
            &rdma,
            &["-d", "lo", "-gpu", "0", "-cm", "-sa", "1.2.3.4"],
            "RDMA-CM client only",
        ),
        (
            &rdma,
            &["-d", "lo", "-gpu", "0", "-cm", "-c", "127.0.0.1"],
            "needs --server-addr",
        ),
        (
            &rdma,
            &["-d", "lo", "-gpu", "0", "-sat", "ip5"],
            "--server-addr-type",
        ),
        (
            &rdma,
            &["-d", "lo", "-gpu", "0", "-gid", "-1"],
            "--gid-index",
        ),
        (
            &rdma,
            &["-d", "lo", "-gpu", "0", "-x"],
            "unexpected argument",
        ),
        (&dma, &["-g", "0"], "--nic"),
        (
            &dma,
            &["-g", "0000:17:00.0.0", "-n", "lo"],
            "at most 12 characters",
        ),
    ];
    for (exe, args, msg) in cases {
        let out = Proc::spawn(exe, args).wait(30);
        assert_eq!(out.code, Some(2), "{args:?}:\n{out}");
        assert!(out.stderr.contains(msg), "{args:?}: no {msg:?}:\n{out}");
    }
}
