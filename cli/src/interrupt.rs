//! Ctrl-C (SIGINT) while a long command runs (`--all`, `export`, `import`):
//! caught for the command's duration only, so that it can stop cleanly (cancel
//! the calls in flight, commit what is done, say how to resume) and exit 130.
//!
//! [`Interrupts::catch`] returns a guard. The first guard alive installs the
//! handler and keeps the disposition it replaced; when the last one is
//! dropped, that disposition is put back. So a program that embeds the
//! command line (the Python package's `roomchat._cli:main`, the npm package's
//! `cliMain`) keeps its own Ctrl-C behaviour after the command returns, and
//! calling the command line twice installs nothing twice.
//!
//! A second Ctrl-C while a command is stopping does what Ctrl-C did before
//! the command began (the disposition is put back and the signal raised
//! again): the default ends the process, as a user pressing it twice expects.
//!
//! On Unix the handler only writes a byte to a pipe (all a signal handler may
//! safely do); a thread of this module reads it and cancels the commands'
//! calls. The pipe and the thread live while a guard does. On Windows, a
//! console control handler is added and removed (`SetConsoleCtrlHandler`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use roomchat::CancelToken;

/// SIGINT caught while it lives: the first one sets [`requested`](Self::requested)
/// and cancels [`cancel_token`](Self::cancel_token) (a call in flight ends with
/// `cancelled`). Dropping the last one gives SIGINT back to what it was.
pub struct Interrupts {
    requested: Arc<AtomicBool>,
    cancel: CancelToken,
}

/// The commands catching SIGINT now, and the handler installed for them.
struct Catching {
    commands: Vec<(Arc<AtomicBool>, CancelToken)>,
    /// How many SIGINTs came since the handler was installed.
    received: u32,
    handler: Option<platform::Installed>,
}

static CATCHING: Mutex<Catching> = Mutex::new(Catching {
    commands: Vec::new(),
    received: 0,
    handler: None,
});

fn catching() -> MutexGuard<'static, Catching> {
    CATCHING.lock().unwrap_or_else(|e| e.into_inner())
}

impl Interrupts {
    /// Starts catching SIGINT for the command that holds the value. When the
    /// handler cannot be installed (no pipe, no thread), SIGINT keeps its
    /// disposition and the command is simply not told.
    pub fn catch() -> Interrupts {
        let requested = Arc::new(AtomicBool::new(false));
        let cancel = CancelToken::new();
        let mut state = catching();
        if state.handler.is_none() {
            state.received = 0;
            state.handler = platform::install();
        }
        state.commands.push((requested.clone(), cancel.clone()));
        Interrupts { requested, cancel }
    }

    /// Whether SIGINT came since [`catch`](Self::catch).
    pub fn requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }

    /// The token SIGINT cancels: give it to the client (`Client::with_cancel`).
    pub fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }
}

impl Drop for Interrupts {
    fn drop(&mut self) {
        let handler = {
            let mut state = catching();
            state
                .commands
                .retain(|(r, _)| !Arc::ptr_eq(r, &self.requested));
            if state.commands.is_empty() {
                state.handler.take()
            } else {
                None
            }
        };
        // Outside the lock: the reader thread takes it to deliver a signal.
        if let Some(handler) = handler {
            platform::uninstall(handler);
        }
    }
}

/// A SIGINT came: the first tells every command catching it; a second one puts
/// the previous disposition back and raises the signal again.
fn deliver() {
    let mut state = catching();
    state.received += 1;
    if state.received == 1 {
        for (requested, cancel) in &state.commands {
            requested.store(true, Ordering::SeqCst);
            cancel.cancel();
        }
        return;
    }
    if let Some(handler) = state.handler.take() {
        drop(state);
        platform::uninstall(handler);
        platform::raise_again();
    }
}

#[cfg(unix)]
mod platform {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
    use std::thread::JoinHandle;

    /// The pipe's write end, for the handler; -1 when none is installed.
    static WRITE_END: AtomicI32 = AtomicI32::new(-1);
    /// Handlers running now: uninstalling waits for them before closing the pipe.
    static IN_HANDLER: AtomicUsize = AtomicUsize::new(0);

    pub struct Installed {
        previous: libc::sigaction,
        write_end: OwnedFd,
        reader: JoinHandle<()>,
    }

    extern "C" fn on_sigint(_signal: libc::c_int) {
        IN_HANDLER.fetch_add(1, Ordering::SeqCst);
        let fd = WRITE_END.load(Ordering::SeqCst);
        if fd >= 0 {
            let saved = errno();
            let byte = 1u8;
            // SAFETY: write(2) is async-signal-safe; the fd stays open while IN_HANDLER > 0.
            // A full pipe (EAGAIN: many signals unread) loses nothing that matters.
            unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) };
            set_errno(saved);
        }
        IN_HANDLER.fetch_sub(1, Ordering::SeqCst);
    }

    pub fn install() -> Option<Installed> {
        let (read_end, write_end) = pipe()?;
        let reader = std::thread::Builder::new()
            .name("roomchat-sigint".into())
            .spawn(move || read_signals(read_end))
            .ok()?;
        WRITE_END.store(write_end.as_raw_fd(), Ordering::SeqCst);
        // SAFETY: zeroed sigaction structs are valid; the handler is an extern "C" fn
        // that only touches atomics and write(2).
        let previous = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGINT, &action, &mut previous) != 0 {
                WRITE_END.store(-1, Ordering::SeqCst);
                drop(write_end);
                let _ = reader.join();
                return None;
            }
            previous
        };
        Some(Installed {
            previous,
            write_end,
            reader,
        })
    }

    /// A pipe closed on exec whose write end never blocks (the handler must not).
    fn pipe() -> Option<(OwnedFd, OwnedFd)> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: fds has room for the two descriptors pipe(2) writes.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return None;
        }
        // SAFETY: pipe succeeded: both descriptors are new and ours.
        let (read_end, write_end) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        for fd in [&read_end, &write_end] {
            // SAFETY: a descriptor of ours; only its close-on-exec flag changes.
            unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
        }
        // SAFETY: a descriptor of ours; only its status flags change.
        unsafe { libc::fcntl(write_end.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
        Some((read_end, write_end))
    }

    pub fn uninstall(installed: Installed) {
        // SAFETY: puts back the action sigaction gave us.
        unsafe { libc::sigaction(libc::SIGINT, &installed.previous, std::ptr::null_mut()) };
        WRITE_END.store(-1, Ordering::SeqCst);
        // A handler that read the fd before it was cleared finishes its write first.
        while IN_HANDLER.load(Ordering::SeqCst) != 0 {
            std::thread::yield_now();
        }
        drop(installed.write_end);
        if installed.reader.thread().id() != std::thread::current().id() {
            let _ = installed.reader.join();
        }
    }

    pub fn raise_again() {
        // SAFETY: raise(2) with a valid signal number.
        unsafe { libc::raise(libc::SIGINT) };
    }

    fn read_signals(read_end: OwnedFd) {
        let mut buffer = [0u8; 16];
        loop {
            // SAFETY: reads into a buffer of ours from a descriptor of ours.
            let n = unsafe {
                libc::read(
                    read_end.as_raw_fd(),
                    buffer.as_mut_ptr().cast(),
                    buffer.len(),
                )
            };
            if n > 0 {
                for _ in 0..n {
                    super::deliver();
                }
            } else if n == 0
                || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                return; // the write end closed: uninstalled
            }
        }
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn errno_location() -> *mut libc::c_int {
        // SAFETY: returns this thread's errno; always valid.
        unsafe { libc::__errno_location() }
    }

    #[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
    fn errno_location() -> *mut libc::c_int {
        // SAFETY: returns this thread's errno; always valid.
        unsafe { libc::__error() }
    }

    fn errno() -> libc::c_int {
        // SAFETY: this thread's errno.
        unsafe { *errno_location() }
    }

    fn set_errno(value: libc::c_int) {
        // SAFETY: this thread's errno.
        unsafe { *errno_location() = value };
    }
}

#[cfg(windows)]
mod platform {
    use windows_sys::core::BOOL;
    use windows_sys::Win32::System::Console::{
        SetConsoleCtrlHandler, CTRL_BREAK_EVENT, CTRL_C_EVENT,
    };

    const TRUE: BOOL = 1;
    const FALSE: BOOL = 0;

    pub struct Installed;

    unsafe extern "system" fn on_ctrl(kind: u32) -> BOOL {
        if kind != CTRL_C_EVENT && kind != CTRL_BREAK_EVENT {
            return FALSE;
        }
        // Windows runs this on a thread of its own: it may take locks. A second Ctrl-C
        // uninstalls this handler: FALSE lets the next one (the default) run.
        super::deliver();
        if super::catching().handler.is_some() {
            TRUE
        } else {
            FALSE
        }
    }

    pub fn install() -> Option<Installed> {
        // SAFETY: registers a handler with the signature Windows expects.
        (unsafe { SetConsoleCtrlHandler(Some(on_ctrl), TRUE) } != 0).then_some(Installed)
    }

    pub fn uninstall(_installed: Installed) {
        // SAFETY: removes the handler install added.
        unsafe { SetConsoleCtrlHandler(Some(on_ctrl), FALSE) };
    }

    /// The handler returns FALSE for the second Ctrl-C: the default handler follows it.
    pub fn raise_again() {}
}
