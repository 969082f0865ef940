//! A connection to Redis whose socket this library makes itself.
//!
//! The redis crate's own connection opens its socket out of sight, and the
//! fork handlers must know the number of every socket a client holds (a
//! forked child lets go of them) and of nothing else (the application's own
//! descriptors are not ours to touch). So the socket is made here, and
//! registered in the same step ([`SocketTicket::make`]); the crate is used
//! for what a URL says ([`redis::ConnectionInfo`]), its protocol parser,
//! its commands and its scripts, which run on any [`ConnectionLike`].

use std::cell::{Cell, RefCell};
use std::io::{self, Read, Write};
use std::mem::ManuallyDrop;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::{ConnectionAddr, ConnectionInfo, ConnectionLike, RedisError, RedisResult, Value};

use crate::time::instant_after;
use crate::transport::fork::SocketTicket;

thread_local! {
    /// When the I/O of the round trip this thread is making must be over (see [`until`]).
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Runs `f`, whose every connect, read and write on this thread ends by
/// `deadline` at the latest (later ones fail at once with a timeout): so a
/// round trip waits on Redis no longer than its timeouts, however many
/// sentinels it asks or cluster redirects it follows.
pub(super) fn until<T>(deadline: Instant, f: impl FnOnce() -> T) -> T {
    struct Reset(Option<Instant>);
    impl Drop for Reset {
        fn drop(&mut self) {
            DEADLINE.with(|d| d.set(self.0));
        }
    }
    let _reset = Reset(DEADLINE.with(|d| d.replace(Some(deadline))));
    f()
}

thread_local! {
    /// What a cluster node connection made on this thread now needs beyond its
    /// address: the redis crate's `Connect::connect` is given the address alone.
    static NODE_SETTINGS: RefCell<Option<NodeSettings>> = const { RefCell::new(None) };
}

/// A cluster link's TLS configuration, connect and I/O timeouts.
type NodeSettings = (Option<Arc<rustls::ClientConfig>>, Duration, Duration);

/// Runs `f`, whose cluster node connections made on this thread (by the redis
/// crate, through `Connect::connect`) use `settings`: a cluster link
/// (`ClusterNodes::within`, in deployment.rs) runs its commands through it.
pub(super) fn with_node_settings<T>(settings: NodeSettings, f: impl FnOnce() -> T) -> T {
    struct Reset(Option<NodeSettings>);
    impl Drop for Reset {
        fn drop(&mut self) {
            let previous = self.0.take();
            NODE_SETTINGS.with(|settings| *settings.borrow_mut() = previous);
        }
    }
    let _reset = Reset(NODE_SETTINGS.with(|s| s.borrow_mut().replace(settings)));
    f()
}

/// The TLS configuration, connect and I/O timeouts of the cluster link this
/// thread is using, if any.
fn node_settings() -> Option<NodeSettings> {
    NODE_SETTINGS.with(|settings| settings.borrow().clone())
}

/// `timeout`, shortened to what is left before this thread's deadline;
/// a timeout error when nothing is.
fn within_deadline(timeout: Duration) -> io::Result<Duration> {
    match DEADLINE.with(Cell::get) {
        Some(deadline) => Ok(timeout.min(time_left(deadline)?)),
        None => Ok(timeout),
    }
}

/// One Redis server as a URL names it, and the TLS of a `rediss://` one.
pub(super) struct Target {
    info: ConnectionInfo,
    tls: Option<Arc<rustls::ClientConfig>>,
}

/// The TLS configuration for the servers of `info`'s kind: `None` without TLS,
/// one trusting the DER certificates `roots` for `rediss://`. `Err` says why
/// the server cannot be reached (a sentence).
pub(super) fn tls_for(
    addr: &ConnectionAddr,
    roots: &[&[u8]],
) -> Result<Option<Arc<rustls::ClientConfig>>, String> {
    match addr {
        ConnectionAddr::TcpTls { insecure: true, .. } => Err(
            "asks for TLS without certificate checks (#insecure), which the client does not do"
                .into(),
        ),
        ConnectionAddr::TcpTls { .. } => {
            let mut store = rustls::RootCertStore::empty();
            store.add_parsable_certificates(
                roots
                    .iter()
                    .map(|der| rustls::pki_types::CertificateDer::from(*der)),
            );
            let config = rustls::ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("has no usable TLS configuration: {e}"))?
            .with_root_certificates(store)
            .with_no_client_auth();
            Ok(Some(Arc::new(config)))
        }
        _ => Ok(None),
    }
}

impl Target {
    /// The server `info` names; a TLS one trusts the DER certificates `roots`.
    /// `Err` says why it cannot be reached (a sentence).
    pub(super) fn new(info: ConnectionInfo, roots: &[&[u8]]) -> Result<Target, String> {
        let tls = tls_for(info.addr(), roots)?;
        Ok(Target { info, tls })
    }

    /// The server `info` names, over `tls` when it is a TLS address.
    pub(super) fn with_tls(info: ConnectionInfo, tls: Option<Arc<rustls::ClientConfig>>) -> Target {
        Target { info, tls }
    }

    /// A new connection, ready for commands (authenticated, on its database),
    /// within `connect_timeout`; each later read and write waits `io_timeout` at most.
    pub(super) fn connect(
        &self,
        connect_timeout: Duration,
        io_timeout: Duration,
    ) -> RedisResult<Connection> {
        let deadline = instant_after(Instant::now(), within_deadline(connect_timeout)?);
        let (stream, ticket) = match self.info.addr() {
            ConnectionAddr::Tcp(host, port) => {
                let (tcp, ticket) = connect_tcp(host, *port, deadline)?;
                (Stream::Tcp(tcp), ticket)
            }
            ConnectionAddr::TcpTls { host, port, .. } => {
                let config = self.tls.clone().ok_or_else(|| {
                    RedisError::from((
                        redis::ErrorKind::InvalidClientConfig,
                        "no TLS configuration",
                    ))
                })?;
                let name = rustls::pki_types::ServerName::try_from(host.clone())?;
                let tls = rustls::ClientConnection::new(config, name)?;
                let (tcp, ticket) = connect_tcp(host, *port, deadline)?;
                (
                    Stream::Tls(Box::new(rustls::StreamOwned::new(tls, tcp))),
                    ticket,
                )
            }
            #[cfg(unix)]
            ConnectionAddr::Unix(path) => {
                let (unix, ticket) = connect_unix(path, deadline)?;
                (Stream::Unix(unix), ticket)
            }
            _ => {
                return Err(RedisError::from((
                    redis::ErrorKind::InvalidClientConfig,
                    "this kind of Redis address cannot be reached on this platform",
                )))
            }
        };
        // From here on, dropping the connection closes the socket as its ticket is given back.
        let mut connection = Connection {
            ticket: ManuallyDrop::new(ticket),
            stream: ManuallyDrop::new(stream),
            parser: redis::Parser::new(),
            db: self.info.redis_settings().db(),
            io_timeout,
            timeout_set: io_timeout,
            open: true,
        };
        connection.stream.set_timeouts(time_left(deadline)?)?;
        if let Stream::Tls(tls) = &mut *connection.stream {
            // The handshake within the connect timeout, and its failure named now.
            while tls.conn.is_handshaking() {
                tls.conn.complete_io(&mut tls.sock)?;
            }
        }
        connection.set_up(self.info.redis_settings())?;
        connection.stream.set_timeouts(io_timeout)?;
        connection.timeout_set = io_timeout;
        Ok(connection)
    }
}

/// The time left until `deadline`, or a timeout error when none is.
fn time_left(deadline: Instant) -> io::Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left < Duration::from_millis(1) {
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the connect timeout passed",
        ));
    }
    Ok(left)
}

/// A TCP connection to `host`, trying each of its addresses until `deadline`.
fn connect_tcp(host: &str, port: u16, deadline: Instant) -> RedisResult<(TcpStream, SocketTicket)> {
    let mut last_error = None;
    for addr in (host, port).to_socket_addrs()? {
        match crate::transport::connect::connect_one(&addr, Some(time_left(deadline)?)) {
            Ok((tcp, ticket)) => {
                // Each command is one small write that waits for its reply.
                let _ = tcp.set_nodelay(true);
                return Ok((tcp, ticket));
            }
            Err(e) => last_error = Some(e),
        }
    }
    Err(match last_error {
        Some(e) => e.into(),
        None => RedisError::from((
            redis::ErrorKind::InvalidClientConfig,
            "the Redis host resolves to no address",
        )),
    })
}

/// A connection to the unix socket at `path`, made and registered as one
/// step like the TCP ones; waiting for a full backlog ends at `deadline`.
#[cfg(unix)]
fn connect_unix(
    path: &std::path::Path,
    deadline: Instant,
) -> io::Result<(std::os::unix::net::UnixStream, SocketTicket)> {
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::net::UnixStream;

    let bytes = path.as_os_str().as_bytes();
    // SAFETY: all-zero is a valid sockaddr_un.
    let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if bytes.len() >= address.sun_path.len() || bytes.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the unix socket's path is too long or holds a NUL",
        ));
    }
    address.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (slot, &byte) in address.sun_path.iter_mut().zip(bytes) {
        *slot = byte as libc::c_char;
    }
    let (fd, ticket) = SocketTicket::make(|| {
        // SAFETY: a plain syscall; the descriptor is owned by the stream below.
        unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0) }
    })
    .ok_or_else(io::Error::last_os_error)?;
    // SAFETY: `fd` is a new socket that nothing else owns.
    let stream = unsafe { UnixStream::from_raw_fd(fd) };
    let connected = (|| {
        crate::transport::connect::set_cloexec(&stream)?;
        // A connect to a listener whose backlog is full waits at most the send timeout.
        stream.set_write_timeout(Some(time_left(deadline)?))?;
        loop {
            // SAFETY: `address` is a valid sockaddr_un of the length given.
            let done = unsafe {
                libc::connect(
                    stream.as_raw_fd(),
                    (&address as *const libc::sockaddr_un).cast(),
                    std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t,
                )
            };
            if done == 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    })();
    match connected {
        Ok(()) => Ok((stream, ticket)),
        Err(e) => {
            ticket.close_with(|| drop(stream));
            Err(e)
        }
    }
}

enum Stream {
    Tcp(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
    #[cfg(unix)]
    Unix(std::os::unix::net::UnixStream),
}

impl Stream {
    fn set_timeouts(&self, timeout: Duration) -> io::Result<()> {
        self.set_read_timeout(timeout)?;
        self.set_write_timeout(timeout)
    }

    fn set_read_timeout(&self, timeout: Duration) -> io::Result<()> {
        let timeout = Some(timeout.max(Duration::from_millis(1)));
        match self {
            Stream::Tcp(tcp) => tcp.set_read_timeout(timeout),
            Stream::Tls(tls) => tls.sock.set_read_timeout(timeout),
            #[cfg(unix)]
            Stream::Unix(unix) => unix.set_read_timeout(timeout),
        }
    }

    fn set_write_timeout(&self, timeout: Duration) -> io::Result<()> {
        let timeout = Some(timeout.max(Duration::from_millis(1)));
        match self {
            Stream::Tcp(tcp) => tcp.set_write_timeout(timeout),
            Stream::Tls(tls) => tls.sock.set_write_timeout(timeout),
            #[cfg(unix)]
            Stream::Unix(unix) => unix.set_write_timeout(timeout),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(tcp) => tcp.read(buf),
            Stream::Tls(tls) => tls.read(buf),
            #[cfg(unix)]
            Stream::Unix(unix) => unix.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(tcp) => tcp.write(buf),
            Stream::Tls(tls) => tls.write(buf),
            #[cfg(unix)]
            Stream::Unix(unix) => unix.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(tcp) => tcp.flush(),
            Stream::Tls(tls) => tls.flush(),
            #[cfg(unix)]
            Stream::Unix(unix) => unix.flush(),
        }
    }
}

/// One connection to Redis, registered for the fork handlers for its whole life.
pub(super) struct Connection {
    /// Both dropped in `Drop`: the socket is closed as its ticket is given back.
    ticket: ManuallyDrop<SocketTicket>,
    stream: ManuallyDrop<Stream>,
    parser: redis::Parser,
    db: i64,
    /// Every read and write waits this long at most (also when the redis
    /// crate's cluster code asks for no timeout).
    io_timeout: Duration,
    /// The read and write timeout the socket has now (shorter than
    /// `io_timeout` near the deadline of a round trip).
    timeout_set: Duration,
    /// False after a failed read or write: the stream may hold half a reply.
    open: bool,
}

impl Connection {
    /// Authenticates (`HELLO 3` for RESP3) and selects the database, as the
    /// URL asks; else a `PING`: a connection is pooled only once Redis has
    /// answered on it, within the connect timeout (a server that accepts and
    /// never answers fails the connect, and the callers waiting for it).
    fn set_up(&mut self, settings: &redis::RedisConnectionInfo) -> RedisResult<()> {
        if !settings.protocol().supports_resp3()
            && settings.password().is_none()
            && settings.db() == 0
        {
            return redis::cmd("PING").query::<()>(self);
        }
        if settings.protocol().supports_resp3() {
            let mut hello = redis::cmd("HELLO");
            hello.arg(3);
            if let Some(password) = settings.password() {
                hello
                    .arg("AUTH")
                    .arg(settings.username().unwrap_or("default"))
                    .arg(password);
            }
            hello.query::<()>(self)?;
        } else if let Some(password) = settings.password() {
            let mut auth = redis::cmd("AUTH");
            if let Some(user) = settings.username() {
                auth.arg(user);
            }
            auth.arg(password).query::<()>(self)?;
        }
        if settings.db() != 0 {
            redis::cmd("SELECT").arg(settings.db()).query::<()>(self)?;
        }
        Ok(())
    }

    fn send(&mut self, command: &[u8]) -> RedisResult<()> {
        if !self.open {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "the connection failed before",
            )
            .into());
        }
        // Near the round trip's deadline, the read and write wait only what is left.
        let timeout = within_deadline(self.io_timeout)?;
        if timeout != self.timeout_set {
            self.stream.set_timeouts(timeout)?;
            self.timeout_set = timeout;
        }
        let stream = &mut *self.stream;
        if let Err(e) = stream.write_all(command).and_then(|()| stream.flush()) {
            self.open = false;
            return Err(e.into());
        }
        Ok(())
    }

    /// The next reply (RESP3 pushes, which are no replies, skipped).
    fn receive(&mut self) -> RedisResult<Value> {
        loop {
            match self.parser.parse_value(&mut *self.stream) {
                Ok(Value::Push { .. }) => continue,
                Ok(value) => return Ok(value),
                Err(e) => {
                    self.open = false;
                    return Err(e);
                }
            }
        }
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command(&mut self, command: &[u8]) -> RedisResult<Value> {
        self.send(command)?;
        self.receive()
    }

    fn req_packed_commands(
        &mut self,
        commands: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.send(commands)?;
        let mut replies = Vec::with_capacity(count);
        for i in 0..offset + count {
            let reply = self.receive()?;
            if i >= offset {
                replies.push(reply);
            }
        }
        Ok(replies)
    }

    fn get_db(&self) -> i64 {
        self.db
    }

    fn check_connection(&mut self) -> bool {
        redis::cmd("PING").query::<String>(self).is_ok()
    }

    fn is_open(&self) -> bool {
        self.open
    }
}

// The redis crate's cluster code makes its node connections through this
// trait, so a cluster's sockets are made (and registered) here as well. Its
// `connect` is given only the node's address and settings: the TLS
// configuration and I/O timeout come from the cluster link making it, which
// sets them for the calling thread ([`with_node_settings`]).
impl redis::cluster::Connect for Connection {
    fn connect<T>(info: T, timeout: Option<Duration>) -> RedisResult<Self>
    where
        T: redis::IntoConnectionInfo,
    {
        let info = info.into_connection_info()?;
        let (tls, connect_timeout, io_timeout) = node_settings().ok_or_else(|| {
            RedisError::from((
                redis::ErrorKind::InvalidClientConfig,
                "a cluster node connection made outside its cluster link",
            ))
        })?;
        Target::with_tls(info, tls).connect(timeout.unwrap_or(connect_timeout), io_timeout)
    }

    fn send_packed_command(&mut self, cmd: &[u8]) -> RedisResult<()> {
        self.send(cmd)
    }

    fn set_write_timeout(&self, dur: Option<Duration>) -> RedisResult<()> {
        Ok(self
            .stream
            .set_write_timeout(within_deadline(dur.unwrap_or(self.io_timeout))?)?)
    }

    fn set_read_timeout(&self, dur: Option<Duration>) -> RedisResult<()> {
        Ok(self
            .stream
            .set_read_timeout(within_deadline(dur.unwrap_or(self.io_timeout))?)?)
    }

    fn recv_response(&mut self) -> RedisResult<Value> {
        self.receive()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // SAFETY: both are taken once, here, and never used again.
        let (ticket, stream) = unsafe {
            (
                ManuallyDrop::take(&mut self.ticket),
                ManuallyDrop::take(&mut self.stream),
            )
        };
        ticket.close_with(|| drop(stream));
    }
}
