//! GPU handle types: the device-side views of started queues and semaphores, passed to
//! CUDA kernels as arguments.
//!
//! Each handle is a `#[repr(transparent)]` wrapper of the raw device pointer DOCA hands out
//! (`struct doca_gpu_eth_rxq *`, ...), so it has exactly the kernel's parameter layout and
//! implements [`cudarc::driver::DeviceRepr`]. It borrows the object it came from: the
//! borrow checker keeps the queue (and so the device memory the pointer refers to) alive,
//! and started, for as long as a handle exists.

use cudarc::driver::DeviceRepr;
use doca_sys as sys;
use std::marker::PhantomData;
use std::ptr::NonNull;

macro_rules! gpu_handle {
    ($(#[$doc:meta])* $name:ident, $raw:ty) => {
        $(#[$doc])*
        ///
        /// `Copy`, `Send` and `Sync`: it is an address in device memory that the host never
        /// dereferences; the borrow ties it to its owner's lifetime.
        #[repr(transparent)]
        #[derive(Clone, Copy)]
        pub struct $name<'a> {
            raw: NonNull<$raw>,
            _owner: PhantomData<&'a ()>,
        }

        impl<'a> $name<'a> {
            /// Wraps a pointer DOCA returned for an object that lives for `'a`.
            pub(crate) fn new(raw: NonNull<$raw>) -> Self {
                $name { raw, _owner: PhantomData }
            }

            /// The raw device pointer (what a kernel receives).
            pub fn as_raw(&self) -> *mut $raw {
                self.raw.as_ptr()
            }
        }

        // SAFETY: the handle is a plain address; the host never dereferences it.
        unsafe impl Send for $name<'_> {}
        // SAFETY: as above.
        unsafe impl Sync for $name<'_> {}

        // SAFETY: `#[repr(transparent)]` over a pointer: the kernel parameter is a
        // `struct ... *`, one pointer-sized value, which is exactly these bytes.
        unsafe impl DeviceRepr for $name<'_> {}

        impl std::fmt::Debug for $name<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!(stringify!($name), "({:p})"), self.raw.as_ptr())
            }
        }
    };
}

gpu_handle!(
    /// Device handle of a started [`EthRxq`](crate::EthRxq) (`struct doca_gpu_eth_rxq *`),
    /// the first argument of `doca_gpu_dev_eth_rxq_recv` and friends.
    RxqHandle,
    sys::doca_gpu_eth_rxq
);

gpu_handle!(
    /// Device handle of a started [`EthTxq`](crate::EthTxq) (`struct doca_gpu_eth_txq *`),
    /// the first argument of `doca_gpu_dev_eth_txq_send` and friends.
    TxqHandle,
    sys::doca_gpu_eth_txq
);

gpu_handle!(
    /// Device handle of a started [`Semaphore`](crate::Semaphore)
    /// (`struct doca_gpu_semaphore_gpu *`), for `doca_gpu_dev_semaphore_*`.
    SemaphoreHandle,
    sys::doca_gpu_semaphore_gpu
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Compile-time check: each handle is accepted as a kernel argument by cudarc's launch
    /// builder (`PushKernelArg<&T>` for `T: DeviceRepr`).
    #[allow(dead_code)]
    fn handles_are_kernel_arguments<'a>(
        b: &mut cudarc::driver::LaunchArgs<'a>,
        rxq: &'a RxqHandle<'_>,
        txq: &'a TxqHandle<'_>,
        sem: &'a SemaphoreHandle<'_>,
    ) {
        use cudarc::driver::PushKernelArg;
        b.arg(rxq).arg(txq).arg(sem);
    }

    #[test]
    fn handles_are_one_pointer_with_the_raw_value() {
        assert_eq!(
            std::mem::size_of::<RxqHandle<'_>>(),
            std::mem::size_of::<*mut u8>()
        );
        assert_eq!(
            std::mem::size_of::<TxqHandle<'_>>(),
            std::mem::size_of::<*mut u8>()
        );
        assert_eq!(
            std::mem::size_of::<SemaphoreHandle<'_>>(),
            std::mem::size_of::<*mut u8>()
        );
        let addr = 0x7000_1000usize as *mut sys::doca_gpu_eth_rxq;
        let h = RxqHandle::new(NonNull::new(addr).unwrap());
        assert_eq!(h.as_raw(), addr);
        // The bytes a kernel launch copies are the pointer value itself.
        // SAFETY: the handle is repr(transparent) over a pointer, so it can be read as one.
        let as_ptr: usize = unsafe { std::mem::transmute::<RxqHandle<'_>, usize>(h) };
        assert_eq!(as_ptr, addr as usize);
        assert!(format!("{h:?}").starts_with("RxqHandle(0x"));
    }
}
