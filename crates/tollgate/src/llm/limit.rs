//! A counting semaphore: at most N model calls in flight per client.

use std::sync::{Condvar, Mutex};

#[derive(Debug)]
pub(super) struct Semaphore {
    free: Mutex<usize>,
    released: Condvar,
}

/// Held while a call runs; dropping it frees the slot.
#[derive(Debug)]
pub(super) struct Permit<'a>(&'a Semaphore);

impl Semaphore {
    pub(super) fn new(permits: usize) -> Semaphore {
        Semaphore {
            free: Mutex::new(permits.max(1)),
            released: Condvar::new(),
        }
    }

    pub(super) fn acquire(&self) -> Permit<'_> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.released.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut free = self.0.free.lock().unwrap_or_else(|p| p.into_inner());
        *free += 1;
        self.0.released.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn never_more_than_the_limit_at_once() {
        let semaphore = Semaphore::new(2);
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    let _permit = semaphore.acquire();
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::yield_now();
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    running.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        assert!(peak.load(Ordering::SeqCst) <= 2);
        assert!(peak.load(Ordering::SeqCst) >= 1);
    }
}
