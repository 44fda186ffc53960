//! The worker runtime (`doca_urom_worker`): one process per worker id, spawned by the
//! daemon. It loads the plugins named on its command line (`so_path:id`), listens on the
//! daemon's address, writes `UROM_WORKER_PORT <port>` to the file descriptor given by `--port-fd`
//! (stdout by default; the daemon passes a private pipe so plugin/UCX logs on stdout cannot
//! interfere), and serves any number of
//! host connections (each one is a `dest_id`): `Attach`, `Cmd` -> plugin `worker_cmd`,
//! plugin `progress` -> `notif_pack` -> `Notify` to the command's `dest_id`, `DomainInit`.
//!
//! Memory: command descs are allocated with libc `malloc` (plugins free them), notification
//! descs come from the plugins' `malloc` and are freed here with `free`, as the ABI says.

pub mod domain;
pub mod plugin;

use crate::error::{DocaError, DocaResult};
use crate::ucx::{ConnId, Event, Node};
use crate::urom::abi::{
    self, ListLink, WorkerCmd, WorkerCmdDesc, WorkerNotify, CMD_HEADER_LEN, NOTIFY_HEADER_LEN,
};
use crate::urom::stop::{install_stop_signals, stop_requested};
use crate::urom::wire::{Decoder, Msg, OVERHEAD};
use plugin::LoadedPlugin;
use std::collections::HashMap;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::PathBuf;

/// Worker command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerArgs {
    /// Worker id.
    pub id: u64,
    /// Group id.
    pub gid: u32,
    /// Address to listen on.
    pub listen: Ipv4Addr,
    /// Message size limit (UROM messages).
    pub max_msg: usize,
    /// Plugins: (path, id).
    pub plugins: Vec<(PathBuf, u64)>,
    /// Where to announce the port (default 1 = stdout).
    pub port_fd: i32,
}

impl WorkerArgs {
    /// Parses `--id N --gid G --listen IP --max-msg N so_path:id...`.
    pub fn parse(args: &[String]) -> DocaResult<WorkerArgs> {
        let mut w = WorkerArgs {
            id: 0,
            gid: 0,
            listen: Ipv4Addr::LOCALHOST,
            max_msg: 4096,
            plugins: Vec::new(),
            port_fd: 1,
        };
        let mut it = args.iter();
        let bad = || DocaError::INVALID_VALUE;
        while let Some(a) = it.next() {
            match a.as_str() {
                "--id" => w.id = it.next().ok_or_else(bad)?.parse().map_err(|_| bad())?,
                "--gid" => w.gid = it.next().ok_or_else(bad)?.parse().map_err(|_| bad())?,
                "--listen" => w.listen = it.next().ok_or_else(bad)?.parse().map_err(|_| bad())?,
                "--max-msg" => w.max_msg = it.next().ok_or_else(bad)?.parse().map_err(|_| bad())?,
                "--port-fd" => w.port_fd = it.next().ok_or_else(bad)?.parse().map_err(|_| bad())?,
                p => {
                    let (path, id) = p.rsplit_once(':').ok_or_else(bad)?;
                    w.plugins
                        .push((PathBuf::from(path), id.parse().map_err(|_| bad())?));
                }
            }
        }
        Ok(w)
    }
}

fn notify_header(type_: u64, urom_context: u64, status: DocaError) -> Vec<u8> {
    let h = WorkerNotify {
        type_,
        urom_context,
        len: 0,
        status: status.0,
        reserved: 0,
    };
    let mut v = Vec::with_capacity(NOTIFY_HEADER_LEN);
    v.extend_from_slice(&h.type_.to_le_bytes());
    v.extend_from_slice(&h.urom_context.to_le_bytes());
    v.extend_from_slice(&h.len.to_le_bytes());
    v.extend_from_slice(&h.status.to_le_bytes());
    v.extend_from_slice(&h.reserved.to_le_bytes());
    v
}

struct Worker {
    args: WorkerArgs,
    node: Node,
    plugins: Vec<LoadedPlugin>,
    conns: HashMap<ConnId, Decoder>,
}

impl Worker {
    fn send(&mut self, conn: ConnId, m: &Msg) {
        if self.node.send(conn, m.encode()).is_err() {
            self.conns.remove(&conn);
        }
    }

    fn on_cmd(&mut self, conn: ConnId, bytes: Vec<u8>) {
        if bytes.len() < CMD_HEADER_LEN {
            self.send(
                conn,
                &Msg::Notify(notify_header(0, 0, DocaError::INVALID_VALUE)),
            );
            return;
        }
        let u = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        let hdr = WorkerCmd {
            type_: u(0),
            urom_context: u(8),
            len: u(16),
        };
        let body = &bytes[CMD_HEADER_LEN..];
        if hdr.len != body.len() as u64 {
            self.send(
                conn,
                &Msg::Notify(notify_header(
                    hdr.type_,
                    hdr.urom_context,
                    DocaError::INVALID_VALUE,
                )),
            );
            return;
        }
        let Some(p) = self.plugins.iter_mut().find(|p| p.id == hdr.type_) else {
            self.send(
                conn,
                &Msg::Notify(notify_header(
                    hdr.type_,
                    hdr.urom_context,
                    DocaError::NOT_FOUND,
                )),
            );
            return;
        };
        let size = std::mem::size_of::<WorkerCmdDesc>() + body.len();
        // SAFETY: plain allocation; the plugin frees it with free() as the ABI requires.
        let desc = unsafe { libc::malloc(size) } as *mut WorkerCmdDesc;
        if desc.is_null() {
            self.send(
                conn,
                &Msg::Notify(notify_header(
                    hdr.type_,
                    hdr.urom_context,
                    DocaError::NO_MEMORY,
                )),
            );
            return;
        }
        let mut head = ListLink {
            prev: std::ptr::null_mut(),
            next: std::ptr::null_mut(),
        };
        // SAFETY: desc has room for the header and body; head is a local list head.
        unsafe {
            std::ptr::addr_of_mut!((*desc).dest_id).write(conn);
            std::ptr::addr_of_mut!((*desc).worker_cmd).write(hdr);
            let payload = (desc as *mut u8).add(std::mem::size_of::<WorkerCmdDesc>());
            std::ptr::copy_nonoverlapping(body.as_ptr(), payload, body.len());
            abi::list_init(&mut head);
            abi::list_add_tail(&mut head, desc as *mut ListLink);
        }
        // SAFETY: head lists the desc malloc'd above.
        let r = unsafe { p.worker_cmd(&mut head) };
        // A plugin that failed may have left the desc on the list: reclaim it.
        // SAFETY: whatever is still on the list is ours (malloc'd above).
        unsafe {
            loop {
                let n = abi::list_pop_head(&mut head);
                if n.is_null() {
                    break;
                }
                libc::free(n as *mut libc::c_void);
            }
        }
        if let Err(e) = r {
            self.send(
                conn,
                &Msg::Notify(notify_header(hdr.type_, hdr.urom_context, e)),
            );
        }
    }

    fn on_msg(&mut self, conn: ConnId, m: Msg) -> DocaResult<()> {
        match m {
            Msg::Attach { worker_id } => {
                if worker_id != self.args.id {
                    return Err(DocaError::INVALID_VALUE);
                }
                let addrs = self
                    .plugins
                    .iter()
                    .map(|p| (p.id, p.addr.clone()))
                    .collect();
                self.send(
                    conn,
                    &Msg::Attached {
                        dest_id: conn,
                        addrs,
                    },
                );
            }
            Msg::Cmd(b) => self.on_cmd(conn, b),
            Msg::DomainInit { req, peers, bufs } => {
                domain::install(peers, bufs);
                self.send(conn, &Msg::DomainOk { req });
            }
            _ => return Err(DocaError::NOT_SUPPORTED),
        }
        Ok(())
    }

    fn on_data(&mut self, conn: ConnId, bytes: &[u8]) {
        let mut msgs = Vec::new();
        let mut failed = None;
        if let Some(d) = self.conns.get_mut(&conn) {
            d.push(bytes);
            loop {
                match d.next_msg() {
                    Ok(Some(m)) => msgs.push(m),
                    Ok(None) => break,
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
        }
        for m in msgs {
            if let Err(e) = self.on_msg(conn, m) {
                failed = Some(e);
                break;
            }
        }
        if let Some(e) = failed {
            sdk_warn!(
                "urom_worker",
                "connection {conn}: protocol error {e:?}, dropping it"
            );
            self.send(conn, &Msg::Error { req: 0, code: e.0 });
            self.node.close_flushed(conn);
            self.conns.remove(&conn);
        }
    }

    fn progress_plugins(&mut self) -> bool {
        let cap = self.args.max_msg;
        let mut out: Vec<(ConnId, Vec<u8>)> = Vec::new();
        for p in self.plugins.iter_mut() {
            for d in p.progress() {
                // SAFETY: d is a live desc from the plugin.
                let dest = unsafe { (*d).dest_id };
                // SAFETY: d came from this plugin's progress and is not freed yet.
                match unsafe { p.notif_pack(d, cap) } {
                    Ok(b) => out.push((dest, b)),
                    Err(e) => {
                        // SAFETY: as above.
                        let (t, c) =
                            unsafe { ((*d).worker_notif.type_, (*d).worker_notif.urom_context) };
                        out.push((dest, notify_header(t, c, e)));
                    }
                }
                // SAFETY: the plugin malloc'd the desc; the runtime frees it.
                unsafe { libc::free(d as *mut libc::c_void) };
            }
        }
        let busy = !out.is_empty();
        for (dest, b) in out {
            if self.conns.contains_key(&dest) {
                self.send(dest, &Msg::Notify(b));
            }
        }
        busy
    }

    fn run(&mut self) {
        while !stop_requested() {
            let events = self.node.poll();
            let mut busy = !events.is_empty();
            for e in events {
                match e {
                    Event::Accepted(c) => {
                        self.conns
                            .insert(c, Decoder::new(self.args.max_msg + OVERHEAD));
                    }
                    Event::Data(c, b) => self.on_data(c, &b),
                    Event::Closed(c) => {
                        self.conns.remove(&c);
                        self.node.close(c);
                    }
                }
            }
            busy |= self.progress_plugins();
            if !busy {
                self.node.wait(2);
            }
        }
    }
}

fn announce_port(fd: i32, port: u16) {
    let line = format!("UROM_WORKER_PORT {port}\n");
    if fd == 1 {
        let mut out = std::io::stdout();
        let _ = out.write_all(line.as_bytes());
        let _ = out.flush();
        return;
    }
    // SAFETY: writing a small buffer to the descriptor the daemon passed; closed after.
    unsafe {
        libc::write(fd, line.as_ptr() as *const libc::c_void, line.len());
        libc::close(fd);
    }
}

/// Entry point of `doca_urom_worker`; returns the process exit code.
pub fn main_with_args(args: &[String]) -> i32 {
    install_stop_signals();
    let args = match WorkerArgs::parse(args) {
        Ok(a) => a,
        Err(_) => {
            eprintln!("usage: doca_urom_worker --id N [--gid G] [--listen IP] [--max-msg N] so_path:id...");
            return 2;
        }
    };
    let mut plugins = Vec::new();
    for (path, id) in &args.plugins {
        match LoadedPlugin::load(path, *id) {
            Ok(p) => plugins.push(p),
            Err(e) => {
                eprintln!("doca_urom_worker: plugin {}: {e:?}", path.display());
                return 3;
            }
        }
    }
    let mut node = match Node::new() {
        Ok(n) => n,
        Err(_) => return 4,
    };
    let port = match node.listen(SocketAddrV4::new(args.listen, 0)) {
        Ok(p) => p,
        Err(_) => return 5,
    };
    announce_port(args.port_fd, port);
    let mut w = Worker {
        args,
        node,
        plugins,
        conns: HashMap::new(),
    };
    w.run();
    // Plugins close before the node goes (they may hold UCX resources of their own).
    w.plugins.clear();
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_parse_and_reject() {
        let a: Vec<String> = ["--id", "7", "--gid", "1", "/p/worker_graph.so:2"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let w = WorkerArgs::parse(&a).unwrap();
        assert_eq!((w.id, w.gid), (7, 1));
        assert_eq!(w.plugins, vec![(PathBuf::from("/p/worker_graph.so"), 2)]);
        let bad: Vec<String> = ["--id", "x"].iter().map(|s| s.to_string()).collect();
        assert!(WorkerArgs::parse(&bad).is_err());
        let bad: Vec<String> = ["nocolon"].iter().map(|s| s.to_string()).collect();
        assert!(WorkerArgs::parse(&bad).is_err());
    }
}
