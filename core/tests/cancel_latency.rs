//! A cancel is seen within `CANCEL_CHECK_INTERVAL` at every blocking step of a
//! call, not only while reading the answer (hardening round 2, defect 9): while
//! connecting to a host that does not answer the handshake, and while sending
//! a body the server does not read. Each test prints how long the cancel took.
#![cfg(target_os = "linux")]

mod common;

use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use roomchat::{CancelToken, Client, ErrorKind, ListUsers, RawRequest};
use roomchat_emulator::FaultAction;

/// The bound a cancel's latency is held to: a cancel not seen at a step waits for
/// the call's 20 s timeout, one that is seen takes about `CANCEL_CHECK_INTERVAL`
/// (the printed figure). The bound leaves room for a loaded machine, where a
/// thread may wait hundreds of milliseconds for a core: a latency is a figure to
/// print, not one to assert to the millisecond.
const SEEN_PROMPTLY: Duration = Duration::from_secs(3);

/// Cancels `token` after `after`, from another thread.
fn cancel_later(token: &CancelToken, after: Duration) -> thread::JoinHandle<()> {
    let token = token.clone();
    thread::spawn(move || {
        thread::sleep(after);
        token.cancel();
    })
}

/// How long a call cancelled `after` it started took to return past the cancel.
fn cancel_after(
    after: Duration,
    client: &Client,
    call: impl FnOnce(&Client) -> roomchat::Error,
) -> Duration {
    let token = CancelToken::new();
    let canceller = cancel_later(&token, after);
    let started = Instant::now();
    let error = call(&client.with_cancel(token));
    let took = started.elapsed();
    canceller.join().unwrap();
    assert_eq!(error.kind(), ErrorKind::Cancelled, "{error}");
    took.saturating_sub(after)
}

/// A listener whose accept queue is full: a further connect's handshake gets no
/// answer (the kernel drops its SYN), so connecting hangs until its timeout.
fn unanswered_listener() -> (TcpListener, Vec<TcpStream>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    // SAFETY: listen(2) on a socket this test owns, to shrink the backlog.
    assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), 0) }, 0);
    let addr = listener.local_addr().unwrap();
    let mut queued = Vec::new();
    // Fill the queue (a backlog of 0 holds one); connects past it time out.
    for _ in 0..4 {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            Ok(stream) => queued.push(stream),
            Err(_) => break,
        }
    }
    (listener, queued)
}

#[test]
fn a_cancel_is_seen_while_connecting() {
    let (listener, _queued) = unanswered_listener();
    let client = Client::builder("sk_live_cancel_connect")
        .base_url(format!("http://{}", listener.local_addr().unwrap()))
        .connect_timeout(Duration::from_secs(20))
        .max_retries(0)
        .build()
        .unwrap();
    let late = cancel_after(Duration::from_millis(200), &client, |c| {
        c.list_users(&ListUsers::default()).unwrap_err()
    });
    println!(
        "cancel latency: {} ms while connecting (connect timeout 20 s; was the whole timeout)",
        late.as_millis()
    );
    assert!(late < SEEN_PROMPTLY, "{late:?}");
}

#[test]
fn a_cancel_is_seen_while_sending_a_body() {
    // A server that accepts and never reads: the body fills the socket buffers.
    // It cancels the call 500 ms after the connection came (the upload has
    // stalled by then: 32 MiB is far more than the socket buffers hold), then
    // holds the connection until the call has returned (at most 30 s): a call
    // that did not see the cancel would wait for its 20 s timeout, not for the
    // server to let go. Timed from the server's side, the cancel lands in the
    // upload however long the 32 MiB body takes to build on a busy machine.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let token = CancelToken::new();
    let (returned, call_returned) = std::sync::mpsc::channel::<()>();
    let holder = {
        let token = token.clone();
        thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            thread::sleep(Duration::from_millis(500));
            token.cancel();
            let cancelled = Instant::now();
            let _ = call_returned.recv_timeout(Duration::from_secs(30));
            let late = cancelled.elapsed();
            drop(stream);
            late
        })
    };
    let client = Client::builder("sk_live_cancel_upload")
        .base_url(url)
        .timeout(Duration::from_secs(20))
        .max_retries(0)
        .build()
        .unwrap();
    let body = serde_json::json!({ "blob": "x".repeat(32 * 1024 * 1024) });
    let error = client
        .with_cancel(token)
        .raw_request(&RawRequest::new("POST", "/consumer/api/v1/upload").body(body))
        .unwrap_err();
    returned.send(()).unwrap();
    let late = holder.join().unwrap();
    assert_eq!(error.kind(), ErrorKind::Cancelled, "{error}");
    println!(
        "cancel latency: {} ms while sending a 32 MiB body to a server that does not read (was 2.26 s)",
        late.as_millis()
    );
    assert!(late < SEEN_PROMPTLY, "{late:?}");
}

#[test]
fn a_connect_that_is_not_cancelled_still_times_out_at_its_timeout() {
    let (listener, _queued) = unanswered_listener();
    let emu = emulator("cancel-connect-timeout");
    let client = builder(&emu)
        .base_url(format!("http://{}", listener.local_addr().unwrap()))
        .connect_timeout(Duration::from_millis(300))
        .max_retries(0)
        .build()
        .unwrap();
    let started = Instant::now();
    let error = client
        .with_cancel(CancelToken::new())
        .list_users(&ListUsers::default())
        .unwrap_err();
    let took = started.elapsed();
    assert_eq!(error.kind(), ErrorKind::Timeout, "{error}");
    assert!(
        took >= Duration::from_millis(290) && took < Duration::from_secs(2),
        "{took:?}"
    );
}

#[test]
fn a_cancel_is_seen_while_a_body_trickles_in() {
    // Headers at once, then one byte of the body every 100 ms: a cancelled read
    // used to be retried (as an interrupted one) until the call's timeout.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = [0u8; 4096];
        let _ = stream.read(&mut request);
        let _ = stream.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
        );
        for _ in 0..40 {
            thread::sleep(Duration::from_millis(100));
            if stream.write_all(b" ").is_err() {
                return;
            }
        }
    });
    let client = Client::builder("sk_live_cancel_trickle")
        .base_url(url)
        .timeout(Duration::from_secs(20))
        .max_retries(0)
        .build()
        .unwrap();
    let started = Instant::now();
    let late = cancel_after(Duration::from_millis(300), &client, |c| {
        c.list_users(&ListUsers::default()).unwrap_err()
    });
    println!(
        "cancel latency: {} ms while a body trickled in (was the call's whole timeout, spinning)",
        late.as_millis()
    );
    assert!(late < SEEN_PROMPTLY, "{late:?}");
    assert!(started.elapsed() < Duration::from_millis(300) + SEEN_PROMPTLY);
    server.join().unwrap();
}

/// `client`'s listing of users, cancelled once the emulator's journal shows `arrived` GETs
/// of it.
fn cancelled_once_arrived(
    emu: &roomchat_emulator::Emulator,
    client: &Client,
    arrived: usize,
) -> roomchat::Error {
    let token = CancelToken::new();
    thread::scope(|scope| {
        scope.spawn(|| {
            while arrivals(emu, "GET", "/consumer/api/v2/users") < arrived {
                thread::sleep(Duration::from_millis(5));
            }
            token.cancel();
        });
        client
            .with_cancel(token.clone())
            .list_users(&ListUsers::default())
            .unwrap_err()
    })
}

/// Issue 51, item 10: a cancelled call says whether a request of it may have reached the
/// service (`Error::never_sent`): not while it waited for the rate budget, nor before it
/// began; yes once its request arrived (its answer held), and in the wait before a retry of
/// an answered attempt.
#[test]
fn a_cancelled_call_says_whether_it_sent_anything() {
    let emu = emulator("never_sent");
    let users = "/consumer/api/v2/users";
    let client = builder(&emu)
        .rate_limit(roomchat::RateLimitConfig::new(1, Duration::from_secs(60)))
        .build()
        .unwrap();
    client.list_users(&ListUsers::default()).unwrap(); // the budget's one request
                                                       // Cancelled while it waits for the budget (up to 60 s): whenever the cancel comes, the
                                                       // call cannot have sent anything.
    let token = CancelToken::new();
    let canceller = cancel_later(&token, Duration::from_millis(200));
    let error = client
        .with_cancel(token.clone())
        .list_users(&ListUsers::default())
        .unwrap_err();
    canceller.join().unwrap();
    assert_eq!(error.kind(), ErrorKind::Cancelled, "{error}");
    assert!(error.never_sent(), "{error:?}");
    // Cancelled before it began.
    let error = client
        .with_cancel(token)
        .list_users(&ListUsers::default())
        .unwrap_err();
    assert!(error.never_sent(), "{error:?}");
    assert_eq!(arrivals(&emu, "GET", users), 1);

    // In flight: its answer held 10 s; cancelled once the emulator's journal shows it.
    let client = builder(&emu).max_retries(0).build().unwrap();
    emu.add_fault(once(
        "GET",
        users,
        FaultAction::Delay(Duration::from_secs(10)),
    ));
    let error = cancelled_once_arrived(&emu, &client, 2);
    assert_eq!(error.kind(), ErrorKind::Cancelled, "{error}");
    assert!(!error.never_sent(), "{error:?}");

    // Answered 503, then cancelled in the wait before its retry (backoff 30 s).
    let client = builder(&emu)
        .base_backoff(Duration::from_secs(30))
        .max_retry_wait(Duration::from_secs(60))
        .build()
        .unwrap();
    emu.add_fault(once("GET", users, respond(503, "{}", &[])));
    let error = cancelled_once_arrived(&emu, &client, 3);
    assert_eq!(error.kind(), ErrorKind::Cancelled, "{error}");
    assert!(!error.never_sent(), "{error:?}");
    assert_eq!(arrivals(&emu, "GET", users), 3);
}
