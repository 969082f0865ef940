//! Fork safety: after `fork()` the child's clients work at once, and never
//! touch the parent's connections.
//!
//! A process that forks while other threads are in the middle of calls (a
//! prefork server, Python `multiprocessing`, gunicorn) hands its child a copy
//! of every lock as it was, held by threads that do not exist in the child,
//! and a copy of every pooled socket. Two mechanisms, installed with
//! `pthread_atfork` when the first client is built:
//!
//! * **Our locks are taken around the fork.** The `prepare` handler takes the
//!   rate-limit registry, every key's budget and the socket list (always in
//!   that order, as everywhere else); `parent` and `child` release them. So the
//!   child starts with every one of them free and consistent, and inherits the
//!   budget's counts (it shares the parent's key). These locks are only ever
//!   held for a few instructions, never across I/O, a sleep or a callback.
//! * **What we cannot lock is replaced.** The connection pool lives inside
//!   ureq, behind locks of its own. The `child` handler bumps a fork
//!   [`generation`]; a client that sees a new generation builds a fresh agent
//!   (pool, resolver cache) and leaks the stale one, which may hold a lock
//!   forever and must never be used or dropped. The child handler also points
//!   every socket the parent's clients had open at `/dev/null` (`dup2`), so the
//!   child holds no reference to the parent's connections, while the numbers
//!   stay taken by something harmless.
//!
//! The parent is unaffected: it only waits, while forking, for the few
//! instructions a lock is held.

use std::marker::PhantomData;

/// Locks of the layers above this one, held across a fork (see `install`):
/// released when dropped.
#[cfg(unix)]
pub(crate) type Held = Box<dyn std::any::Any>;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// The number of forks this process descends from, since roomchat was loaded (0 in the original process).
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

static GENERATION: AtomicU64 = AtomicU64::new(0);

/// A value of this process: used in a forked child, it is made anew (by the
/// `make` given to [`ForkLocal::get`]), and the parent's is leaked — it may
/// hold locks of threads that do not exist in the child, or the parent's
/// sockets, so it must never be used or dropped there.
pub(crate) struct ForkLocal<T> {
    /// Never null. Slots replaced after a fork are leaked, never freed, so a
    /// reference handed out stays valid for as long as `self`.
    current: AtomicPtr<Slot<T>>,
    /// Owns the live slot (for drop checking).
    _owns: PhantomData<Box<Slot<T>>>,
}

struct Slot<T> {
    generation: u64,
    value: T,
}

impl<T> ForkLocal<T> {
    pub(crate) fn new(value: T) -> ForkLocal<T> {
        let slot = Box::new(Slot {
            generation: generation(),
            value,
        });
        ForkLocal {
            current: AtomicPtr::new(Box::into_raw(slot)),
            _owns: PhantomData,
        }
    }

    /// This process's value; in a forked child, a new one from `make` (made once).
    pub(crate) fn get(&self, make: impl FnOnce() -> T) -> &T {
        let now = generation();
        // SAFETY: `current` always points at a live slot, and no slot is freed while `self` lives.
        let slot = unsafe { &*self.current.load(Ordering::Acquire) };
        if slot.generation == now {
            return &slot.value;
        }
        self.renew(now, make)
    }

    #[cold]
    fn renew(&self, now: u64, make: impl FnOnce() -> T) -> &T {
        let fresh = Box::into_raw(Box::new(Slot {
            generation: now,
            value: make(),
        }));
        let mut seen = self.current.load(Ordering::Acquire);
        loop {
            // SAFETY: as in `get`.
            let seen_slot = unsafe { &*seen };
            if seen_slot.generation == now {
                // Another thread of this process renewed it first; ours was never used.
                // SAFETY: `fresh` came from `Box::into_raw` above and was never shared.
                drop(unsafe { Box::from_raw(fresh) });
                return &seen_slot.value;
            }
            match self
                .current
                .compare_exchange(seen, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                // The stale slot is leaked on purpose (see `current`).
                // SAFETY: `fresh` is now the live slot.
                Ok(_) => return unsafe { &(*fresh).value },
                Err(now_seen) => seen = now_seen,
            }
        }
    }
}

impl<T> Drop for ForkLocal<T> {
    fn drop(&mut self) {
        // SAFETY: the live slot, owned by this cell alone now.
        let slot = unsafe { Box::from_raw(*self.current.get_mut()) };
        if slot.generation != generation() {
            // The parent's value, in a child: it may hold locks of dead threads.
            std::mem::forget(slot);
        }
    }
}

// SAFETY: shared across threads exactly as the value itself would be.
unsafe impl<T: Send + Sync> Send for ForkLocal<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for ForkLocal<T> {}

#[cfg(unix)]
pub(crate) use unix::{install, SocketTicket};

/// On platforms without `fork`, nothing to track.
#[cfg(not(unix))]
pub(crate) struct SocketTicket;

#[cfg(not(unix))]
impl SocketTicket {
    pub(crate) fn new<T>(_socket: &T) -> SocketTicket {
        SocketTicket
    }

    pub(crate) fn close_with(self, close: impl FnOnce()) {
        close();
    }
}

#[cfg(unix)]
mod unix {
    use std::cell::RefCell;
    use std::os::fd::RawFd;
    use std::sync::{Mutex, MutexGuard, Once};

    use super::{generation, Held, Ordering, GENERATION};

    /// The sockets this process's clients have open.
    static SOCKETS: Mutex<Vec<RawFd>> = Mutex::new(Vec::new());

    fn sockets() -> MutexGuard<'static, Vec<RawFd>> {
        SOCKETS.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a client socket for the life of the ticket (drop the ticket before the socket).
    pub(crate) struct SocketTicket {
        fd: RawFd,
        generation: u64,
    }

    impl SocketTicket {
        /// Makes a socket with `make` and registers it in one step, under the
        /// lock the fork handlers take: no fork can come between the two, so a
        /// child never holds a socket of the parent's that it does not know of.
        /// `make` returns a new descriptor, or a negative number on failure.
        pub(crate) fn make(make: impl FnOnce() -> RawFd) -> Option<(RawFd, SocketTicket)> {
            let mut list = sockets();
            let fd = make();
            if fd < 0 {
                return None;
            }
            list.push(fd);
            Some((
                fd,
                SocketTicket {
                    fd,
                    generation: generation(),
                },
            ))
        }
    }

    impl SocketTicket {
        /// Unregisters the socket and closes it (`close` drops it) in one step,
        /// under the fork handlers' lock: a fork between the two would leave
        /// the child holding a socket it does not know of.
        pub(crate) fn close_with(self, close: impl FnOnce()) {
            let list = self.unregister();
            close();
            drop(list);
            std::mem::forget(self);
        }

        fn unregister(&self) -> MutexGuard<'static, Vec<RawFd>> {
            let mut list = sockets();
            // A socket of an older generation was already let go by the fork handler,
            // and its number may be registered again by a socket of this process.
            if self.generation == generation() {
                if let Some(i) = list.iter().position(|&fd| fd == self.fd) {
                    list.swap_remove(i);
                }
            }
            list
        }
    }

    impl Drop for SocketTicket {
        fn drop(&mut self) {
            drop(self.unregister());
        }
    }

    /// What the forking thread holds between `prepare` and `parent`/`child`.
    struct Holding {
        _above: Option<Held>,
        sockets: MutexGuard<'static, Vec<RawFd>>,
    }

    thread_local! {
        static HELD: RefCell<Option<Holding>> = const { RefCell::new(None) };
    }

    /// What the layer above takes around a fork, before the socket list.
    static HOLD: std::sync::OnceLock<fn() -> Held> = std::sync::OnceLock::new();

    /// Installs the fork handlers, once per process. `hold` takes the locks of
    /// the layer above (the rate budgets) for a fork, in that layer's order;
    /// the first call's is kept.
    pub(crate) fn install(hold: fn() -> Held) {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            let _ = HOLD.set(hold);
            // SAFETY: the handlers are `extern "C"` functions that never unwind.
            let _ = unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
        });
    }

    extern "C" fn prepare() {
        let held = Holding {
            _above: HOLD.get().map(|hold| hold()),
            sockets: sockets(),
        };
        let _ = HELD.try_with(|slot| *slot.borrow_mut() = Some(held));
    }

    extern "C" fn parent() {
        let _ = HELD.try_with(|slot| slot.borrow_mut().take());
    }

    extern "C" fn child() {
        GENERATION.fetch_add(1, Ordering::AcqRel);
        let _ = HELD.try_with(|slot| {
            if let Some(mut held) = slot.borrow_mut().take() {
                let fds = std::mem::take(&mut *held.sockets);
                release(&fds);
            }
        });
    }

    /// Lets go of the parent's sockets in the child: each number is pointed at `/dev/null`.
    fn release(fds: &[RawFd]) {
        if fds.is_empty() {
            return;
        }
        // SAFETY: plain syscalls on numbers the parent's clients owned; the objects
        // holding them in the child are leaked, never used or closed again.
        unsafe {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
            for &fd in fds {
                if null >= 0 && libc::dup2(null, fd) >= 0 {
                    libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
                } else {
                    libc::close(fd);
                }
            }
            if null >= 0 {
                libc::close(null);
            }
        }
    }
}
