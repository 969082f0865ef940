//! The client's own TCP transport and name resolver for ureq: the same
//! guarantees as ureq's defaults, without their per-call costs.
//!
//! ureq's defaults cost, on every call of a pooled connection: a thread (the
//! default resolver resolves before the pool is consulted, and spawns a thread
//! to bound the lookup whenever a timeout is set — even for an IP literal),
//! two `setsockopt` (the timeouts are set again because the deadline moved),
//! and two liveness probes of two `ioctl` and a `recvfrom` each. Here:
//!
//! * [`CachingResolver`] answers IP literals inline and keeps host lookups for
//!   [`RESOLVE_TTL`]; a real lookup still runs on a thread bounded by the timeout.
//! * [`TcpTransport`] sets a socket timeout only when it must shrink: a read
//!   blocked for a whole socket timeout wakes, looks at the call's deadline,
//!   and goes on; so the timeouts hold to the millisecond, and a steady stream
//!   of calls sets them once per connection.
//! * A connection is probed once per use, when it leaves the pool, with one
//!   `recv(MSG_PEEK | MSG_DONTWAIT)`: a connection the server closed while
//!   idle is still found and replaced before anything is sent on it. The probe
//!   ureq makes when a connection goes back to the pool is answered without a
//!   syscall (the next probe, at checkout, sees the same thing).
//! * A call made with a [`CancelToken`](crate::CancelToken) reads in slices of
//!   [`CANCEL_CHECK_INTERVAL`] and gives up when cancelled.
//! * Once a connection has read, its writes wait for the next read (up to
//!   [`HELD_WRITES_MAX`]) and leave together: the TLS handshake's last flight
//!   (rustls writes its ChangeCipherSpec, its Finished and then ureq the
//!   request, three writes) goes out as one segment with the first request, and
//!   the server's session tickets and answer then come back as one. Three
//!   segments fewer per new connection; a lossy link (the test network holds
//!   1% of them a retransmission timeout) meets each new connection's
//!   handshake that much less often (issue 44, item 24).

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::mem::ManuallyDrop;
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{
    Buffers, ConnectProxyConnector, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout,
    RustlsConnector, Transport,
};
use ureq::{Error, Timeout};

use crate::cancel::{self, CANCEL_CHECK_INTERVAL};
use crate::time::instant_after;
use crate::transport::fork::SocketTicket;

/// How long a host lookup is reused.
pub const RESOLVE_TTL: Duration = Duration::from_secs(30);

/// The shortest socket timeout set: below it, a deadline counts as reached.
const MIN_SOCKET_TIMEOUT: Duration = Duration::from_millis(1);

/// The most bytes written after a read that wait for the next read; more go at once.
pub(crate) const HELD_WRITES_MAX: usize = 16 * 1024;

// ---- resolver ---------------------------------------------------------------------------

/// Resolves IP literals inline and caches host lookups for [`RESOLVE_TTL`].
#[derive(Default)]
pub(crate) struct CachingResolver {
    cache: Mutex<HashMap<HostPort, Lookup>>,
    /// The first IP-literal scheme and authority (`http`, `127.0.0.1:8080`) resolved,
    /// and its address: every call of a client goes to its base URL, so later
    /// calls compare it instead of parsing it.
    first_literal: OnceLock<(String, String, SocketAddr)>,
}

/// A host (lower case) and port.
type HostPort = (String, u16);
/// When a lookup was made, and what it found.
type Lookup = (Instant, Vec<SocketAddr>);

impl fmt::Debug for CachingResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachingResolver").finish_non_exhaustive()
    }
}

impl Resolver for CachingResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, Error> {
        let bad = |what: &str| Error::BadUri(format!("{what}: {uri}"));
        let authority = uri.authority().ok_or_else(|| bad("no host"))?;
        let mut out = self.empty();
        if let Some((scheme, text, addr)) = self.first_literal.get() {
            if text == authority.as_str() && uri.scheme_str() == Some(scheme) {
                out.push(*addr);
                return Ok(out);
            }
        }
        let port = match (authority.port_u16(), uri.scheme_str()) {
            (Some(port), _) => port,
            (None, Some("http")) => 80,
            (None, Some("https")) => 443,
            _ => return Err(bad("unknown scheme or port")),
        };
        let host = authority.host();
        let literal = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = literal.parse::<IpAddr>() {
            let addr = SocketAddr::new(ip, port);
            if let Some(scheme) = uri.scheme_str() {
                let _ = self.first_literal.set((
                    scheme.to_owned(),
                    authority.as_str().to_owned(),
                    addr,
                ));
            }
            out.push(addr);
            return Ok(out);
        }
        let key = (host.to_ascii_lowercase(), port);
        let cached = {
            let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            cache
                .get(&key)
                .filter(|(at, _)| at.elapsed() < RESOLVE_TTL)
                .map(|(_, addrs)| addrs.clone())
        };
        let addrs = match cached {
            Some(addrs) => addrs,
            None => {
                let found = lookup(&key.0, port, timeout)?;
                let wanted: Vec<SocketAddr> =
                    config.ip_family().keep_wanted(found.into_iter()).collect();
                if wanted.is_empty() {
                    return Err(Error::HostNotFound);
                }
                let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
                cache.retain(|_, (at, _)| at.elapsed() < RESOLVE_TTL);
                cache.insert(key, (Instant::now(), wanted.clone()));
                wanted
            }
        };
        // ureq keeps at most 16 addresses.
        for addr in addrs.into_iter().take(16) {
            out.push(addr);
        }
        Ok(out)
    }
}

/// A real lookup, bounded by `timeout` (on a thread of its own when a timeout applies, as ureq does).
///
/// The answer comes back through a mutex and a condition variable, not a channel: a
/// channel's blocking receive makes std keep a handle of the calling thread for the rest
/// of its life, which a thread that Rust did not start (a C program's main thread) never
/// frees, and valgrind's defaults count it as "possibly lost".
fn lookup(host: &str, port: u16, timeout: NextTimeout) -> Result<Vec<SocketAddr>, Error> {
    let target = (host.to_owned(), port);
    if timeout.after.is_not_happening() {
        return Ok(target.to_socket_addrs()?.collect());
    }
    type Answer = (Mutex<Option<io::Result<Vec<SocketAddr>>>>, Condvar);
    let answer: Arc<Answer> = Arc::new((Mutex::new(None), Condvar::new()));
    let theirs = Arc::clone(&answer);
    std::thread::Builder::new()
        .name("roomchat-resolve".into())
        .spawn(move || {
            let found = target.to_socket_addrs().map(Vec::from_iter);
            *theirs.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(found);
            theirs.1.notify_one();
        })?;
    let deadline = instant_after(Instant::now(), *timeout.after);
    let cancellable = cancel::in_flight_is_cancellable();
    loop {
        if cancellable && cancel::in_flight_is_cancelled() {
            // The lookup thread finishes on its own; its answer is dropped.
            return Err(cancelled_error());
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(wait) = slice(Some(left), cancellable) else {
            return Err(Error::Timeout(timeout.reason));
        };
        let found = answer.0.lock().unwrap_or_else(|e| e.into_inner());
        let (mut found, _) = answer
            .1
            .wait_timeout_while(found, wait, |found| found.is_none())
            .unwrap_or_else(|e| e.into_inner());
        if let Some(found) = found.take() {
            return Ok(found?);
        }
        if left <= wait {
            return Err(Error::Timeout(timeout.reason));
        }
    }
}

// ---- connector ----------------------------------------------------------------------------

/// Opens plain TCP connections as [`TcpTransport`]s.
#[derive(Debug, Default)]
pub(crate) struct TcpConnector;

impl<In: Transport> Connector<In> for TcpConnector {
    type Out = Either<In, TcpTransport>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, Error> {
        if let Some(transport) = chained {
            // A proxy connection made earlier in the chain.
            return Ok(Some(Either::A(transport)));
        }
        let (stream, ticket) = connect(&details.addrs, details.timeout)?;
        if details.config.no_delay() {
            stream.set_nodelay(true)?;
        }
        let config = details.config;
        Ok(Some(Either::B(TcpTransport {
            ticket: ManuallyDrop::new(ticket),
            stream: ManuallyDrop::new(stream),
            buffers: LazyBuffers::new(config.input_buffer_size(), config.output_buffer_size()),
            read_timeout: None,
            write_timeout: None,
            used_since_probe: true,
            has_read: false,
            held: Vec::new(),
        })))
    }
}

/// Tries each address in turn, sharing the connect timeout between them
/// (halving: the first gets half, the next a quarter, …; the last what is left).
fn connect(addrs: &[SocketAddr], timeout: NextTimeout) -> Result<(TcpStream, SocketTicket), Error> {
    let deadline = deadline_of(&timeout);
    let mut last_error = None;
    for (i, addr) in addrs.iter().enumerate() {
        let share = match deadline {
            None => None,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left < MIN_SOCKET_TIMEOUT {
                    return Err(Error::Timeout(Timeout::Connect));
                }
                let share = if i + 1 == addrs.len() { left } else { left / 2 };
                Some(share.max(MIN_SOCKET_TIMEOUT * 10))
            }
        };
        match connect_one(addr, share) {
            Ok(connected) => return Ok(connected),
            Err(e) if is_cancelled_io(&e) => return Err(cancelled_error()),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                ) =>
            {
                last_error = Some(Error::Timeout(Timeout::Connect));
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionRefused
                        | io::ErrorKind::HostUnreachable
                        | io::ErrorKind::NetworkUnreachable
                        | io::ErrorKind::AddrNotAvailable
                ) =>
            {
                last_error = Some(Error::Io(e));
            }
            Err(e) => return Err(Error::Io(e)),
        }
    }
    Err(last_error.unwrap_or(Error::ConnectionFailed))
}

/// One connection attempt, within `timeout` (`None`: the system's own).
///
/// The socket is made and registered for the fork handlers in one step,
/// before it connects; the connect waits in slices of
/// [`CANCEL_CHECK_INTERVAL`] when the call can be cancelled, and gives up
/// with [`cancelled_io`] when it is. A socket that fails to connect is
/// closed as its ticket is given back (never closed first: its number,
/// reused at once by another thread, would be let go in a forked child).
#[cfg(unix)]
pub(crate) fn connect_one(
    addr: &SocketAddr,
    timeout: Option<Duration>,
) -> io::Result<(TcpStream, SocketTicket)> {
    use std::os::fd::{AsRawFd, FromRawFd};

    let (storage, length) = socket_address(addr);
    let family = match addr {
        SocketAddr::V4(_) => libc::AF_INET,
        SocketAddr::V6(_) => libc::AF_INET6,
    };
    let (fd, ticket) = SocketTicket::make(|| {
        // SAFETY: a plain syscall; the descriptor is owned by the stream below.
        unsafe { libc::socket(family, libc::SOCK_STREAM, 0) }
    })
    .ok_or_else(io::Error::last_os_error)?;
    // SAFETY: `fd` is a new socket that nothing else owns.
    let stream = unsafe { TcpStream::from_raw_fd(fd) };
    let connected = (|| {
        set_cloexec(&stream)?;
        stream.set_nonblocking(true)?;
        // SAFETY: `storage` holds a valid address of `length` bytes.
        let started = unsafe {
            libc::connect(
                stream.as_raw_fd(),
                (&storage as *const libc::sockaddr_storage).cast(),
                length,
            )
        };
        if started != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINPROGRESS) {
                return Err(e);
            }
            wait_connected(&stream, timeout)?;
        }
        stream.set_nonblocking(false)
    })();
    match connected {
        Ok(()) => Ok((stream, ticket)),
        Err(e) => {
            ticket.close_with(|| drop(stream));
            Err(e)
        }
    }
}

/// Waits for a non-blocking connect to finish, within `timeout`, seeing a cancel.
#[cfg(unix)]
fn wait_connected(stream: &TcpStream, timeout: Option<Duration>) -> io::Result<()> {
    use std::os::fd::AsRawFd;

    let deadline = timeout.map(|t| instant_after(Instant::now(), t));
    let cancellable = cancel::in_flight_is_cancellable();
    loop {
        if cancellable && cancel::in_flight_is_cancelled() {
            return Err(cancelled_io());
        }
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left.is_some_and(|l| l.is_zero()) {
            return Err(io::ErrorKind::TimedOut.into());
        }
        let slice = match (left, cancellable) {
            (Some(left), true) => left.min(CANCEL_CHECK_INTERVAL),
            (None, true) => CANCEL_CHECK_INTERVAL,
            (Some(left), false) => left,
            (None, false) => Duration::from_secs(3600),
        };
        let mut poll = libc::pollfd {
            fd: stream.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        let millis = slice.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, millis) };
        if ready < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if ready > 0 {
            return match stream.take_error()? {
                Some(e) => Err(e),
                None => Ok(()),
            };
        }
    }
}

#[cfg(unix)]
pub(crate) fn set_cloexec(socket: &impl std::os::fd::AsRawFd) -> io::Result<()> {
    // SAFETY: plain fcntl calls on a descriptor the socket owns.
    unsafe {
        let flags = libc::fcntl(socket.as_raw_fd(), libc::F_GETFD);
        if flags < 0 || libc::fcntl(socket.as_raw_fd(), libc::F_SETFD, flags | libc::FD_CLOEXEC) < 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// `addr` as a C socket address and its length.
#[cfg(unix)]
fn socket_address(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: all-zero is a valid sockaddr_storage.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let length = match addr {
        SocketAddr::V4(v4) => {
            // SAFETY: sockaddr_storage is large and aligned enough for any address.
            let sin = unsafe {
                &mut *(&mut storage as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in>()
            };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = v4.port().to_be();
            sin.sin_addr = libc::in_addr {
                s_addr: u32::from_ne_bytes(v4.ip().octets()),
            };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(v6) => {
            // SAFETY: as above.
            let sin6 = unsafe {
                &mut *(&mut storage as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in6>()
            };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = v6.port().to_be();
            sin6.sin6_addr = libc::in6_addr {
                s6_addr: v6.ip().octets(),
            };
            sin6.sin6_flowinfo = v6.flowinfo();
            sin6.sin6_scope_id = v6.scope_id();
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, length as libc::socklen_t)
}

/// Elsewhere: std's connect (no fork to guard against; a cancel is seen once it returns).
#[cfg(not(unix))]
pub(crate) fn connect_one(
    addr: &SocketAddr,
    timeout: Option<Duration>,
) -> io::Result<(TcpStream, SocketTicket)> {
    let stream = match timeout {
        Some(timeout) => TcpStream::connect_timeout(addr, timeout)?,
        None => TcpStream::connect(addr)?,
    };
    let ticket = SocketTicket::new(&stream);
    Ok((stream, ticket))
}

// ---- transport ------------------------------------------------------------------------------

/// One TCP connection.
pub(crate) struct TcpTransport {
    /// Both dropped in `Drop`: the socket is closed as its ticket is given back.
    ticket: ManuallyDrop<SocketTicket>,
    stream: ManuallyDrop<TcpStream>,
    buffers: LazyBuffers,
    /// The socket's current `SO_RCVTIMEO` / `SO_SNDTIMEO` (`None`: never set, blocking).
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
    /// Set by any I/O; the probe after a use (ureq's, on return to the pool) is skipped.
    used_since_probe: bool,
    /// Whether anything was read yet: the first writes (a ClientHello, a plain
    /// request) leave at once, since an answer is awaited before anything is read.
    has_read: bool,
    /// Written since the last read, not sent yet: sent with the first write past
    /// [`HELD_WRITES_MAX`], or before the next read. HTTP/1 and TLS always read
    /// after they write, so nothing is held for long (a dropped connection drops it).
    held: Vec<u8>,
}

impl Drop for TcpTransport {
    fn drop(&mut self) {
        // SAFETY: each is taken once, here, and never used again.
        let (ticket, stream) = unsafe {
            (
                ManuallyDrop::take(&mut self.ticket),
                ManuallyDrop::take(&mut self.stream),
            )
        };
        ticket.close_with(|| drop(stream));
    }
}

impl fmt::Debug for TcpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpTransport")
            .field("peer", &self.stream.peer_addr().ok())
            .finish()
    }
}

/// When an operation must end: `None` when no timeout applies.
fn deadline_of(timeout: &NextTimeout) -> Option<Instant> {
    (!timeout.after.is_not_happening()).then(|| instant_after(Instant::now(), *timeout.after))
}

/// Makes sure one blocking socket operation returns within `cap` (`None`: may block for good).
///
/// A timeout already set at or below `cap` is kept: an operation that times
/// out early is simply retried by the caller, which rechecks its deadline. A
/// larger one is lowered to 7/8 of `cap`, so that the next calls, whose caps
/// vary by microseconds, find it already low enough.
fn bound_blocking(
    current: &mut Option<Duration>,
    cap: Option<Duration>,
    set: impl FnOnce(Option<Duration>) -> io::Result<()>,
) -> io::Result<()> {
    let wanted = match (cap, *current) {
        (None, None) => return Ok(()),
        (None, Some(_)) => None,
        (Some(cap), Some(now)) if now <= cap => return Ok(()),
        (Some(cap), _) => Some((cap - cap / 8).max(MIN_SOCKET_TIMEOUT)),
    };
    set(wanted)?;
    *current = wanted;
    Ok(())
}

/// How long one blocking step may take: what is `left` of the deadline, and at
/// most [`CANCEL_CHECK_INTERVAL`] when the call can be cancelled.
fn slice(left: Option<Duration>, cancellable: bool) -> Option<Duration> {
    match (left, cancellable) {
        (Some(left), true) => Some(left.min(CANCEL_CHECK_INTERVAL)),
        (None, true) => Some(CANCEL_CHECK_INTERVAL),
        (left, false) => left,
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// The I/O error of a step given up because its call was cancelled. Not
/// `Interrupted`: readers (`read_to_end`, the body reader) retry that kind,
/// and would go on until the call's timeout.
fn cancelled_io() -> io::Error {
    io::Error::other(CancelledIo)
}

fn is_cancelled_io(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<CancelledIo>())
}

#[derive(Debug)]
struct CancelledIo;

impl fmt::Display for CancelledIo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the call was cancelled")
    }
}

impl std::error::Error for CancelledIo {}

fn cancelled_error() -> Error {
    Error::Io(cancelled_io())
}

impl Transport for TcpTransport {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), Error> {
        self.used_since_probe = true;
        let TcpTransport {
            stream,
            buffers,
            write_timeout,
            has_read,
            held,
            ..
        } = self;
        let output = &buffers.output()[..amount];
        if *has_read && held.len() + output.len() <= HELD_WRITES_MAX {
            held.extend_from_slice(output);
            return Ok(());
        }
        if held.is_empty() {
            return send(stream, write_timeout, output, timeout);
        }
        held.extend_from_slice(output);
        let sent = send(stream, write_timeout, held, timeout);
        held.clear();
        sent
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, Error> {
        self.used_since_probe = true;
        if !self.held.is_empty() {
            let sent = send(&self.stream, &mut self.write_timeout, &self.held, timeout);
            self.held.clear();
            sent?;
        }
        let timeout = timeout.for_read();
        let deadline = deadline_of(&timeout);
        let cancellable = cancel::in_flight_is_cancellable();
        loop {
            if cancellable && cancel::in_flight_is_cancelled() {
                return Err(cancelled_error());
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left.is_some_and(|l| l < MIN_SOCKET_TIMEOUT) {
                return Err(Error::Timeout(timeout.reason));
            }
            let stream = &self.stream;
            bound_blocking(&mut self.read_timeout, slice(left, cancellable), |t| {
                stream.set_read_timeout(t)
            })?;
            let input = self.buffers.input_append_buf();
            match (&*self.stream).read(input) {
                Ok(n) => {
                    self.buffers.input_appended(n);
                    self.has_read |= n > 0;
                    return Ok(n > 0);
                }
                Err(e) if is_timeout(&e) => continue,
                Err(e) => return Err(Error::Io(e)),
            }
        }
    }

    fn is_open(&mut self) -> bool {
        if std::mem::take(&mut self.used_since_probe) {
            // ureq asks right after a use, as the connection goes back to the
            // pool; the probe when it is taken out again answers the same question.
            return true;
        }
        probe_open(&self.stream)
    }
}

/// Writes all of `output` within `timeout` (a write's), seeing a cancel.
fn send(
    stream: &TcpStream,
    write_timeout: &mut Option<Duration>,
    output: &[u8],
    timeout: NextTimeout,
) -> Result<(), Error> {
    let timeout = timeout.for_write();
    let deadline = deadline_of(&timeout);
    let cancellable = cancel::in_flight_is_cancellable();
    let mut written = 0;
    while written < output.len() {
        if cancellable && cancel::in_flight_is_cancelled() {
            return Err(cancelled_error());
        }
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left.is_some_and(|l| l < MIN_SOCKET_TIMEOUT) {
            return Err(Error::Timeout(timeout.reason));
        }
        bound_blocking(write_timeout, slice(left, cancellable), |t| {
            stream.set_write_timeout(t)
        })?;
        match (&*stream).write(&output[written..]) {
            Ok(0) => return Err(Error::Io(io::ErrorKind::WriteZero.into())),
            Ok(n) => written += n,
            Err(e) if is_timeout(&e) => continue,
            Err(e) => return Err(Error::Io(e)),
        }
    }
    Ok(())
}

/// Whether an idle connection is still open: no byte waiting (the server sent
/// nothing unasked) and no end of stream (it did not close). One syscall.
#[cfg(unix)]
fn probe_open(stream: &TcpStream) -> bool {
    use std::os::fd::AsRawFd;
    let mut byte = 0u8;
    // SAFETY: a valid socket and a one-byte buffer that outlives the call.
    let n = unsafe {
        libc::recv(
            stream.as_raw_fd(),
            (&mut byte as *mut u8).cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock
}

#[cfg(not(unix))]
fn probe_open(stream: &TcpStream) -> bool {
    let mut byte = [0u8];
    if stream.set_nonblocking(true).is_err() {
        return false;
    }
    let open = matches!(stream.peek(&mut byte), Err(e) if e.kind() == io::ErrorKind::WouldBlock);
    stream.set_nonblocking(false).is_ok() && open
}

/// The agent's connector: an HTTP CONNECT proxy when one is configured, TCP,
/// then TLS for `https` through `tls`, the process's connector for the
/// client's roots (see [`crate::transport::tls::SharedTls`]).
pub(crate) fn connector(tls: Arc<RustlsConnector>) -> impl Connector {
    ().chain(ConnectProxyConnector::default())
        .chain(TcpConnector)
        .chain(SharedRustls(tls))
}

/// A rustls connector shared by several agents.
#[derive(Debug)]
struct SharedRustls(Arc<RustlsConnector>);

impl<In: Transport> Connector<In> for SharedRustls {
    type Out = Box<dyn Transport>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, Error> {
        Ok(self.0.connect(details, chained)?.map(Transport::boxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_timeouts_only_shrink() {
        let mut current = None;
        let mut sets = Vec::new();
        let mut bound = |current: &mut Option<Duration>, cap: Option<Duration>| {
            bound_blocking(current, cap, |t| {
                sets.push(t);
                Ok(())
            })
            .unwrap()
        };
        bound(&mut current, Some(Duration::from_secs(30)));
        assert_eq!(current, Some(Duration::from_millis(26_250)));
        // The next call's cap is a little smaller or larger: nothing is set.
        bound(&mut current, Some(Duration::from_millis(29_999)));
        bound(&mut current, Some(Duration::from_millis(30_001)));
        // Near the deadline it shrinks.
        bound(&mut current, Some(Duration::from_millis(80)));
        assert_eq!(current, Some(Duration::from_millis(70)));
        // No deadline at all: blocking again.
        bound(&mut current, None);
        assert_eq!(current, None);
        assert_eq!(sets.len(), 3);
    }
}
