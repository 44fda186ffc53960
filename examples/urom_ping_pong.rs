//! UROM ping-pong (port of the DOCA sample), two ranks under Open MPI: each rank starts a
//! worker (id = rank) with the `worker_sandbox` plugin, joins a domain whose out-of-band
//! allgather is MPI's, and the ranks exchange a message through their workers with UCX tag
//! send/recv: rank != 0 posts a PONG receive and sends PING to rank+1; rank 0 waits for
//! PING and answers PONG. Flags: `-d/--device` (default mlx5_0), `-m/--message` (default
//! "hello world", at most 99 characters). Needs `DOCA_UROM_SERVICE_FILE` and a daemon.
//!
//! MPI is loaded at run time (`libmpi.so.40`) so the facade has no link-time MPI
//! dependency. Run MPI on its own transports so this process keeps one UCX:
//! `mpirun -np 2 --mca pml ob1 --mca btl self,vader,tcp ...`.

use doca_urom::domain::Oob;
use doca_urom::{Device, DocaError, Domain, Service, Worker};
use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use worker_sandbox::host::Sandbox;

const PING_TAG: u64 = 0x1234;
const PONG_TAG: u64 = 0x5678;
const TAG_MASK: u64 = 0xffff;
const MAX_MSG: usize = 100;

type InitFn = unsafe extern "C" fn(*mut c_int, *mut *mut *mut i8) -> c_int;
type CommQueryFn = unsafe extern "C" fn(*mut c_void, *mut c_int) -> c_int;
type IallgatherFn = unsafe extern "C" fn(
    *const c_void,
    c_int,
    *mut c_void,
    *mut c_void,
    c_int,
    *mut c_void,
    *mut c_void,
    *mut *mut c_void,
) -> c_int;
type TestFn = unsafe extern "C" fn(*mut *mut c_void, *mut c_int, *mut c_void) -> c_int;
type CommFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type FinalizeFn = unsafe extern "C" fn() -> c_int;
type AbortFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

/// The few MPI calls the sample needs, resolved from Open MPI's library.
struct Mpi {
    _lib: libloading::os::unix::Library,
    comm_world: *mut c_void,
    byte: *mut c_void,
    rank: c_int,
    size: c_int,
    iallgather: IallgatherFn,
    test: TestFn,
    barrier: CommFn,
    finalize: FinalizeFn,
    abort: AbortFn,
}

// SAFETY: MPI is used from the main thread only (MPI_THREAD_SINGLE); the handles are
// process-global constants.
unsafe impl Send for Mpi {}
// SAFETY: as above.
unsafe impl Sync for Mpi {}

impl Mpi {
    fn init() -> Result<Mpi, String> {
        // SAFETY: loading Open MPI; RTLD_GLOBAL because its components expect its symbols.
        let lib = unsafe {
            libloading::os::unix::Library::open(
                Some("libmpi.so.40"),
                libc::RTLD_NOW | libc::RTLD_GLOBAL,
            )
        }
        .map_err(|e| format!("cannot load Open MPI: {e}"))?;
        // SAFETY: symbol types are the MPI C API's (Open MPI ABI); the handles are the
        // addresses of Open MPI's predefined objects.
        unsafe {
            let err = |e: libloading::Error| e.to_string();
            let init: InitFn = *lib.get(b"MPI_Init\0").map_err(err)?;
            let rank_f: CommQueryFn = *lib.get(b"MPI_Comm_rank\0").map_err(err)?;
            let size_f: CommQueryFn = *lib.get(b"MPI_Comm_size\0").map_err(err)?;
            let comm_world: *mut c_void = *lib.get(b"ompi_mpi_comm_world\0").map_err(err)?;
            let byte: *mut c_void = *lib.get(b"ompi_mpi_byte\0").map_err(err)?;
            let iallgather: IallgatherFn = *lib.get(b"MPI_Iallgather\0").map_err(err)?;
            let test: TestFn = *lib.get(b"MPI_Test\0").map_err(err)?;
            let barrier: CommFn = *lib.get(b"MPI_Barrier\0").map_err(err)?;
            let finalize: FinalizeFn = *lib.get(b"MPI_Finalize\0").map_err(err)?;
            let abort: AbortFn = *lib.get(b"MPI_Abort\0").map_err(err)?;
            let mut m = Mpi {
                comm_world,
                byte,
                rank: 0,
                size: 0,
                iallgather,
                test,
                barrier,
                finalize,
                abort,
                _lib: lib,
            };
            if init(std::ptr::null_mut(), std::ptr::null_mut()) != 0 {
                return Err("MPI_Init failed".into());
            }
            rank_f(m.comm_world, &mut m.rank);
            size_f(m.comm_world, &mut m.size);
            Ok(m)
        }
    }

    fn abort(&self, code: c_int) -> ! {
        // SAFETY: MPI is initialised.
        unsafe { (self.abort)(self.comm_world, code) };
        std::process::exit(code);
    }
}

/// The domain's OOB: MPI_Iallgather of bytes on MPI_COMM_WORLD, completed with MPI_Test.
impl Oob for Mpi {
    fn size(&self) -> u32 {
        self.size as u32
    }
    fn index(&self) -> u32 {
        self.rank as u32
    }
    fn allgather(&self, send: &[u8], recv: &mut [u8]) -> Result<(), DocaError> {
        let mut req: *mut c_void = std::ptr::null_mut();
        let n = send.len() as c_int;
        // SAFETY: buffers sized by the domain (recv = size * send.len()); MPI initialised.
        unsafe {
            let r = (self.iallgather)(
                send.as_ptr() as *const c_void,
                n,
                self.byte,
                recv.as_mut_ptr() as *mut c_void,
                n,
                self.byte,
                self.comm_world,
                &mut req,
            );
            if r != 0 {
                return Err(DocaError::UNEXPECTED);
            }
            let mut flag = 0;
            while flag == 0 {
                if (self.test)(&mut req, &mut flag, std::ptr::null_mut()) != 0 {
                    return Err(DocaError::UNEXPECTED);
                }
            }
        }
        Ok(())
    }
}

struct Args {
    device: String,
    message: String,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        device: "mlx5_0".into(),
        message: "hello world".into(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "-d" | "--device" => a.device = it.next().ok_or("-d needs a device name")?,
            "-m" | "--message" => a.message = it.next().ok_or("-m needs a message")?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if a.message.len() >= MAX_MSG {
        return Err(format!("message longer than {} characters", MAX_MSG - 1));
    }
    Ok(a)
}

type RecvSlot = Arc<Mutex<Option<Result<worker_sandbox::host::Received, DocaError>>>>;

fn wait_recv(w: &Worker, slot: &RecvSlot) -> Result<worker_sandbox::host::Received, String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(r) = slot.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return r.map_err(|e| format!("receive failed: {e}"));
        }
        if Instant::now() > deadline {
            return Err("receive timed out".into());
        }
        if !w.progress() {
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

fn ping_pong(mpi: &Arc<Mpi>, args: &Args) -> Result<(), String> {
    let (rank, size) = (mpi.rank as u64, mpi.size as u64);
    let dev = Device::open(&args.device).map_err(|e| format!("device {}: {e}", args.device))?;
    let svc = Service::builder(&dev)
        .max_workers(32)
        .start()
        .map_err(|e| e.to_string())?;
    let sandbox = Sandbox::find(&svc).map_err(|e| e.to_string())?;
    let cpus = svc.cpuset().map_err(|e| e.to_string())?;
    if !(0..8).all(|c| cpus.contains(c)) && rank == 0 {
        eprintln!("warning: the service CPU set lacks some of CPUs 0-7; running anyway");
    }
    let worker = Worker::builder(&svc)
        .id(rank)
        .max_inflight_tasks(16)
        .plugins(sandbox.plugin.id)
        .start()
        .map_err(|e| e.to_string())?;
    let pe = worker.pe().clone();
    let oob: Arc<dyn Oob> = mpi.clone();
    let domain = Domain::start(&pe, &[(rank, worker.clone())], oob, Vec::new())
        .map_err(|e| e.to_string())?;
    let dest = (rank + 1) % size;
    let msg = args.message.as_bytes();
    let slot: RecvSlot = Arc::new(Mutex::new(None));
    let s2 = slot.clone();
    if rank != 0 {
        sandbox
            .tag_recv_with(
                &worker,
                0xbeef,
                MAX_MSG as u64,
                PONG_TAG,
                TAG_MASK,
                move |r| *s2.lock().unwrap_or_else(|p| p.into_inner()) = Some(r),
            )
            .map_err(|e| e.to_string())?;
        let sent = sandbox
            .tag_send(&worker, 0, dest, msg, PING_TAG)
            .map_err(|e| e.to_string())?;
        if sent.ucs_status != 0 {
            return Err(format!("PING send status {}", sent.ucs_status));
        }
        let r = wait_recv(&worker, &slot)?;
        if r.context != 0xbeef || r.sender_tag != PONG_TAG || r.ucs_status != 0 || r.data != msg {
            return Err(format!("bad PONG: {r:?}"));
        }
        println!(
            "rank {rank}: received PONG \"{}\"",
            String::from_utf8_lossy(&r.data)
        );
    } else {
        sandbox
            .tag_recv_with(
                &worker,
                0xdead,
                MAX_MSG as u64,
                PING_TAG,
                TAG_MASK,
                move |r| *s2.lock().unwrap_or_else(|p| p.into_inner()) = Some(r),
            )
            .map_err(|e| e.to_string())?;
        let r = wait_recv(&worker, &slot)?;
        if r.context != 0xdead || r.sender_tag != PING_TAG || r.ucs_status != 0 || r.data != msg {
            return Err(format!("bad PING: {r:?}"));
        }
        println!(
            "rank {rank}: received PING \"{}\"",
            String::from_utf8_lossy(&r.data)
        );
        let sent = sandbox
            .tag_send(&worker, 0, dest, &r.data, PONG_TAG)
            .map_err(|e| e.to_string())?;
        if sent.ucs_status != 0 {
            return Err(format!("PONG send status {}", sent.ucs_status));
        }
    }
    // Both sides finished before workers go away (a worker's UCX may still flush).
    // SAFETY: MPI initialised.
    unsafe { (mpi.barrier)(mpi.comm_world) };
    drop(domain);
    worker.stop().map_err(|e| e.to_string())?;
    Ok(())
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let mpi = match Mpi::init() {
        Ok(m) => Arc::new(m),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    if mpi.size < 2 {
        eprintln!("urom_ping_pong needs at least 2 ranks");
        mpi.abort(1);
    }
    if let Err(e) = ping_pong(&mpi, &args) {
        eprintln!("rank {}: ping-pong failed: {e}", mpi.rank);
        mpi.abort(1);
    }
    // SAFETY: MPI initialised; last MPI calls.
    unsafe {
        (mpi.barrier)(mpi.comm_world);
        (mpi.finalize)();
    }
    println!("rank {}: ping-pong done", mpi.rank);
}
