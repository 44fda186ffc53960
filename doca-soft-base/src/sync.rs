//! Locking shared by the runtime's objects.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Locks `m`, taking the data of a poisoned lock as it is: a panic in one caller (caught at
/// the C boundary) must not make the object unusable for every later call.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// How many objects use a resource (the queues on a device, the buffers of an mmap): the
/// resource's close or stop is IN_USE while the count is not zero.
#[derive(Debug, Default)]
pub struct UseCount(AtomicUsize);

impl UseCount {
    /// Records one use.
    pub fn add(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }

    /// Releases one use (never below zero: a release without a use is ignored).
    pub fn remove(&self) {
        let _ = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }

    /// The current number of uses.
    pub fn get(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }
}
