//! Locking shared by the runtime's objects.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, taking the data of a poisoned lock as it is: a panic in one caller (caught at
/// the C boundary) must not make the object unusable for every later call.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
