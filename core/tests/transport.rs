//! The transport's guarantees that a well-behaved emulator never tests: a
//! pooled connection the server closed while it sat idle is found before
//! anything is sent on it, and replaced, with no error and no request twice.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use roomchat::{Client, CreateUser, ListUsers};

/// Requests as they arrived (`"GET /path?query"`, `"POST /path {body}"`), and connections accepted.
#[derive(Default)]
struct Seen {
    requests: Vec<String>,
    connections: usize,
}

/// A server that answers one request per connection and then closes it
/// without saying `Connection: close`, so the client pools a connection that
/// is dead by the time it is used again. Returns its address.
fn closing_server(seen: Arc<Mutex<Seen>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            seen.lock().unwrap().connections += 1;
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                continue;
            }
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" {
                    break;
                }
                if let Some((name, value)) = line.split_once(':') {
                    if name.eq_ignore_ascii_case("content-length") {
                        length = value.trim().parse().unwrap();
                    }
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let mut parts = request_line.split_whitespace();
            let (method, target) = (parts.next().unwrap(), parts.next().unwrap());
            seen.lock().unwrap().requests.push(format!(
                "{method} {target} {}",
                String::from_utf8_lossy(&body)
            ));
            let answer = if method == "POST" {
                r#"{"accessToken":"t","username":"x","userId":"6141fd87c3b6750317d04f64","isModerator":false}"#
            } else {
                r#"{"total":0,"limit":50,"skip":0,"data":[]}"#
            };
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
                answer.len()
            );
            // Dropped: closed after the answer, while the client keeps the connection for later.
        }
    });
    addr
}

#[test]
fn a_connection_closed_while_idle_is_replaced_without_an_error() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let addr = closing_server(seen.clone());
    // No retries: any failure on a dead connection would reach the caller.
    let client = Client::builder("sk_test_transport_idle_close_0001")
        .base_url(format!("http://{addr}"))
        .max_retries(0)
        .build()
        .unwrap();
    for i in 0..5 {
        client.list_users(&ListUsers::default()).unwrap();
        // Time for the server's FIN to arrive: the connection is dead, not closing.
        thread::sleep(Duration::from_millis(30));
        client
            .create_user(&CreateUser::regular(format!("user-{i}")))
            .unwrap();
        thread::sleep(Duration::from_millis(30));
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.requests.len(), 10, "{:#?}", seen.requests);
    for i in 0..5 {
        let posts = seen
            .requests
            .iter()
            .filter(|r| r.starts_with("POST ") && r.contains(&format!("\"user-{i}\"")))
            .count();
        assert_eq!(posts, 1, "user-{i} was created {posts} times");
    }
    assert_eq!(
        seen.connections, 10,
        "each call found the last connection dead and made a new one"
    );
}

/// A server that keeps each request's head (request line and header lines,
/// lowercased) and answers `{"success": true}`, one request per connection.
fn head_server(heads: Arc<Mutex<Vec<Vec<String>>>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = Vec::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push(line.trim_end().to_ascii_lowercase());
            }
            heads.lock().unwrap().push(head);
            let answer = r#"{"success":true}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    addr
}

/// A POST without a body (eject all, chat on/off, bot enable/disable…) goes out
/// with `Content-Length: 0`, as curl, requests and fetch send it, not as an
/// empty chunked body, which some servers and proxies refuse (issue 37, item 14).
/// A GET says nothing of a body.
#[test]
fn a_post_without_a_body_says_content_length_0() {
    let heads = Arc::new(Mutex::new(Vec::new()));
    let addr = head_server(heads.clone());
    let client = Client::builder("sk_test_transport_empty_post_0001")
        .base_url(format!("http://{addr}"))
        .max_retries(0)
        .build()
        .unwrap();
    client.eject_all_users("room-1").unwrap();
    client.turn_chat_off("room-1").unwrap();
    client.turn_chat_on("room-1").unwrap();
    let heads = heads.lock().unwrap();
    assert_eq!(heads.len(), 3, "{heads:#?}");
    for head in heads.iter() {
        assert!(head[0].starts_with("post "), "{head:#?}");
        assert!(head.iter().any(|l| l == "content-length: 0"), "{head:#?}");
        assert!(
            !head.iter().any(|l| l.starts_with("transfer-encoding")),
            "{head:#?}"
        );
    }
}
