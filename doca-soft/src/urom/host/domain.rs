//! `doca_urom_domain`: joins workers of several host processes. Start (IN_PROGRESS) runs
//! an out-of-band exchange during this context's progress calls:
//!
//! 1. each process encodes its members (domain id + the worker's plugin addresses) and
//!    buffers as one blob (the wire `DomainInit` encoding);
//! 2. allgather of the blob lengths (8 bytes each), then allgather of the blobs padded to
//!    the longest (the OOB needs one message length for all);
//! 3. every local worker process receives the merged `DomainInit`; RUNNING is reached inside
//!    the progress call that sees the last acknowledgement.
//!
//! Stop is synchronous (SUCCESS), as clients expect.

use super::wake::WakeSet;
use super::worker::{UromWorker, WorkerShared};
use crate::ctx::notify::Wakeup;
use crate::ctx::{Ctx, CtxOps, Transition, STATE_IDLE, STATE_RUNNING};
use crate::error::{DocaError, DocaResult};
use crate::sync::lock;
use crate::urom::wire::{Decoder, DomainBuf, DomainPeer, Msg};
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// `doca_urom_domain_allgather_cb_t`.
pub type AllgatherCb = Option<
    unsafe extern "C" fn(*mut c_void, *mut c_void, usize, *mut c_void, *mut *mut c_void) -> u32,
>;
/// `doca_urom_domain_req_test_cb_t` / `req_free_cb_t`.
pub type ReqCb = Option<unsafe extern "C" fn(*mut c_void) -> u32>;

/// `struct doca_urom_domain_oob_coll`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct OobColl {
    /// Start an allgather.
    pub allgather: AllgatherCb,
    /// Test a request: SUCCESS when done, IN_PROGRESS otherwise.
    pub req_test: ReqCb,
    /// Release a request.
    pub req_free: ReqCb,
    /// Caller's collective handle.
    pub coll_info: *mut c_void,
    /// Number of participants.
    pub n_oob_indexes: u32,
    /// This participant's index.
    pub oob_index: u32,
}
const _: () = assert!(std::mem::size_of::<OobColl>() == 40);

// SAFETY: the OOB struct is the application's; it promises the callbacks work from the
// thread that progresses the domain.
unsafe impl Send for OobColl {}

enum Phase {
    Idle,
    Lengths {
        sbuf: Box<[u8]>,
        rbuf: Box<[u8]>,
        req: usize,
        blob: Vec<u8>,
    },
    Blobs {
        sbuf: Box<[u8]>,
        rbuf: Box<[u8]>,
        req: usize,
        lens: Vec<usize>,
    },
    Acks(Vec<(Arc<WorkerShared>, u64)>),
    Running,
}

struct St {
    oob: Option<OobColl>,
    members: Vec<(u64, Arc<WorkerShared>)>,
    buf_count: Option<usize>,
    bufs: Vec<(u64, u64, Vec<u8>, Vec<u8>)>,
    phase: Phase,
}

/// Shared domain state (the context's operations).
pub(crate) struct DomainShared {
    st: Mutex<St>,
    // What the engine sleeps on for this context (see `arm_wakeup`).
    wake: WakeSet,
}

const DOMAIN_REQ: u64 = 0xd0;

fn start_allgather(
    oob: &OobColl,
    sbuf: &mut [u8],
    rbuf: &mut [u8],
    msglen: usize,
) -> DocaResult<usize> {
    let f = oob.allgather.ok_or(DocaError::INVALID_VALUE)?;
    let mut req: *mut c_void = std::ptr::null_mut();
    // SAFETY: buffers are valid for msglen / n*msglen bytes and outlive the request (kept
    // in the phase until the test reports completion).
    let r = unsafe {
        f(
            sbuf.as_mut_ptr() as *mut c_void,
            rbuf.as_mut_ptr() as *mut c_void,
            msglen,
            oob.coll_info,
            &mut req,
        )
    };
    if r != 0 {
        return Err(DocaError(r));
    }
    Ok(req as usize)
}

/// `Ok(true)` once the request completed (and was freed).
fn test_req(oob: &OobColl, req: usize) -> DocaResult<bool> {
    let t = oob.req_test.ok_or(DocaError::INVALID_VALUE)?;
    // SAFETY: req came from this OOB's allgather and is not freed yet.
    match unsafe { t(req as *mut c_void) } {
        0 => {
            if let Some(f) = oob.req_free {
                // SAFETY: completed request, freed once.
                unsafe { f(req as *mut c_void) };
            }
            Ok(true)
        }
        r if r == DocaError::IN_PROGRESS.0 => Ok(false),
        r => Err(DocaError(r)),
    }
}

impl DomainShared {
    fn local_blob(st: &St) -> Vec<u8> {
        let ids: Vec<u64> = st.members.iter().map(|(id, _)| *id).collect();
        let peers = st
            .members
            .iter()
            .map(|(id, w)| DomainPeer {
                domain_id: *id,
                addrs: w.addrs(),
            })
            .collect();
        let mut bufs = Vec::new();
        for (va, len, memh, mkey) in &st.bufs {
            for id in &ids {
                bufs.push(DomainBuf {
                    domain_id: *id,
                    va: *va,
                    len: *len,
                    memh: memh.clone(),
                    mkey: mkey.clone(),
                });
            }
        }
        Msg::DomainInit {
            req: DOMAIN_REQ,
            peers,
            bufs,
        }
        .encode()
    }

    fn step(&self) -> DocaResult<bool> {
        let mut st = lock(&self.st);
        let oob = st.oob.ok_or(DocaError::BAD_STATE)?;
        let n = oob.n_oob_indexes as usize;
        match std::mem::replace(&mut st.phase, Phase::Idle) {
            Phase::Lengths {
                sbuf,
                rbuf,
                req,
                blob,
            } => {
                if !test_req(&oob, req)? {
                    st.phase = Phase::Lengths {
                        sbuf,
                        rbuf,
                        req,
                        blob,
                    };
                    return Ok(false);
                }
                let lens: Vec<usize> = rbuf
                    .chunks(8)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")) as usize)
                    .collect();
                let max = *lens.iter().max().unwrap_or(&0);
                if max > (64 << 20) {
                    return Err(DocaError::TOO_BIG);
                }
                let mut sbuf = vec![0u8; max].into_boxed_slice();
                sbuf[..blob.len()].copy_from_slice(&blob);
                let mut rbuf = vec![0u8; max * n].into_boxed_slice();
                let req = start_allgather(&oob, &mut sbuf, &mut rbuf, max)?;
                st.phase = Phase::Blobs {
                    sbuf,
                    rbuf,
                    req,
                    lens,
                };
                Ok(false)
            }
            Phase::Blobs {
                sbuf,
                rbuf,
                req,
                lens,
            } => {
                if !test_req(&oob, req)? {
                    st.phase = Phase::Blobs {
                        sbuf,
                        rbuf,
                        req,
                        lens,
                    };
                    return Ok(false);
                }
                let max = sbuf.len();
                let (mut peers, mut bufs) = (Vec::new(), Vec::new());
                for (i, len) in lens.iter().enumerate() {
                    let mut d = Decoder::new(64 << 20);
                    d.push(&rbuf[i * max..i * max + len]);
                    match d.next_msg() {
                        Ok(Some(Msg::DomainInit {
                            peers: p, bufs: b, ..
                        })) => {
                            peers.extend(p);
                            bufs.extend(b);
                        }
                        _ => return Err(DocaError::UNEXPECTED),
                    }
                }
                let init = Msg::DomainInit {
                    req: DOMAIN_REQ,
                    peers,
                    bufs,
                };
                let mut acks = Vec::new();
                for (_, w) in &st.members {
                    w.send_domain(&init)?;
                    acks.push((w.clone(), DOMAIN_REQ));
                }
                st.phase = Phase::Acks(acks);
                Ok(false)
            }
            Phase::Acks(mut acks) => {
                for (w, _) in &acks {
                    if let Some(e) = w.link_failed() {
                        return Err(e);
                    }
                }
                acks.retain(|(w, req)| !w.take_domain_ack(*req));
                if acks.is_empty() {
                    st.phase = Phase::Running;
                    return Ok(true);
                }
                st.phase = Phase::Acks(acks);
                Ok(false)
            }
            other => {
                st.phase = other;
                Ok(false)
            }
        }
    }
}

impl CtxOps for DomainShared {
    fn kind(&self) -> &'static str {
        "urom_domain"
    }

    fn needs_pe(&self) -> bool {
        true
    }

    fn start(&self, _ctx: &Ctx) -> DocaResult<Transition> {
        let mut st = lock(&self.st);
        let oob = st.oob.ok_or(DocaError::BAD_STATE)?;
        if st.members.is_empty() || oob.n_oob_indexes == 0 || oob.oob_index >= oob.n_oob_indexes {
            return Err(DocaError::BAD_STATE);
        }
        if st.members.iter().any(|(_, w)| !w.is_running()) {
            return Err(DocaError::BAD_STATE);
        }
        if let Some(c) = st.buf_count {
            if st.bufs.len() != c {
                return Err(DocaError::BAD_STATE);
            }
        }
        let blob = Self::local_blob(&st);
        let mut sbuf = (blob.len() as u64)
            .to_le_bytes()
            .to_vec()
            .into_boxed_slice();
        let mut rbuf = vec![0u8; 8 * oob.n_oob_indexes as usize].into_boxed_slice();
        let req = start_allgather(&oob, &mut sbuf, &mut rbuf, 8)?;
        st.phase = Phase::Lengths {
            sbuf,
            rbuf,
            req,
            blob,
        };
        Ok(Transition::Pending)
    }

    /// Only a start has work: the out-of-band collective is the application's (tested, it
    /// has no descriptor) and the workers' acknowledgements arrive through their own
    /// contexts, so a starting domain looks again shortly; otherwise it is quiet.
    fn arm_wakeup(&self, ctx: &Ctx) -> Wakeup {
        if ctx.state() == crate::ctx::STATE_STARTING {
            self.wake.recheck()
        } else {
            Wakeup::Quiet
        }
    }

    fn stop(&self, _ctx: &Ctx) -> DocaResult<Transition> {
        lock(&self.st).phase = Phase::Idle;
        Ok(Transition::Done)
    }

    fn progress(&self, ctx: &Ctx) -> u32 {
        if !matches!(ctx.state(), crate::ctx::STATE_STARTING) {
            return 0;
        }
        match self.step() {
            Ok(true) => {
                ctx.set_state(STATE_RUNNING);
                1
            }
            Ok(false) => 0,
            Err(e) => {
                sdk_err!("urom_domain", "domain start failed: {e:?}");
                lock(&self.st).phase = Phase::Idle;
                ctx.set_state(STATE_IDLE);
                1
            }
        }
    }
}

/// The C `struct doca_urom_domain`.
pub struct UromDomain {
    ctx: Box<Ctx>,
    shared: Arc<DomainShared>,
}

impl UromDomain {
    /// A new domain (IDLE, no members).
    pub(crate) fn new() -> UromDomain {
        let shared = Arc::new(DomainShared {
            st: Mutex::new(St {
                oob: None,
                members: Vec::new(),
                buf_count: None,
                bufs: Vec::new(),
                phase: Phase::Idle,
            }),
            wake: WakeSet::default(),
        });
        UromDomain {
            ctx: Ctx::new(shared.clone()),
            shared,
        }
    }

    /// The domain's context, as the C API hands it out.
    pub(crate) fn ctx_ptr(&self) -> *mut Ctx {
        self.ctx.handle()
    }

    /// Whether it may be destroyed now: NOT_PERMITTED unless IDLE. When it may, it leaves
    /// its progress engine.
    pub(crate) fn prepare_destroy(&self) -> DocaResult<()> {
        self.ctx.idle_or(DocaError::NOT_PERMITTED)?;
        self.ctx.detach_from_pe();
        Ok(())
    }

    /// Changes the setup (IDLE only).
    fn configure(&self, f: impl FnOnce(&mut St) -> DocaResult<()>) -> DocaResult<()> {
        self.ctx.require_idle()?;
        f(&mut lock(&self.shared.st))
    }

    /// How many buffers will be added (drops those added before).
    pub(crate) fn set_buffers_count(&self, n: usize) -> DocaResult<()> {
        self.configure(|st| {
            st.buf_count = Some(n);
            st.bufs.clear();
            Ok(())
        })
    }

    /// Adds a buffer with its packed memory handle and remote key: BAD_STATE before
    /// [`UromDomain::set_buffers_count`], FULL once that many were added.
    pub(crate) fn add_buffer(
        &self,
        va: u64,
        len: u64,
        memh: Vec<u8>,
        mkey: Vec<u8>,
    ) -> DocaResult<()> {
        self.configure(|st| {
            let count = st.buf_count.ok_or(DocaError::BAD_STATE)?;
            if va == 0 || len == 0 || va.checked_add(len).is_none() {
                return Err(DocaError::INVALID_VALUE);
            }
            if st.bufs.len() >= count {
                return Err(DocaError::FULL);
            }
            st.bufs.push((va, len, memh, mkey));
            Ok(())
        })
    }

    /// The out-of-band collective (allgather and test mandatory; a valid index).
    pub(crate) fn set_oob(&self, oob: OobColl) -> DocaResult<()> {
        self.configure(|st| {
            if oob.allgather.is_none()
                || oob.req_test.is_none()
                || oob.n_oob_indexes == 0
                || oob.oob_index >= oob.n_oob_indexes
            {
                return Err(DocaError::INVALID_VALUE);
            }
            st.oob = Some(oob);
            Ok(())
        })
    }

    /// The local members: (domain id, worker context).
    pub(crate) fn set_workers(&self, members: Vec<(u64, &UromWorker)>) -> DocaResult<()> {
        let members = members
            .into_iter()
            .map(|(id, w)| (id, w.shared.clone()))
            .collect();
        self.configure(|st| {
            st.members = members;
            Ok(())
        })
    }
}
