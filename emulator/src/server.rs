//! HTTP glue: hyper connections, routing, faults, the journal, and the admin API.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, UNIX_EPOCH};

use bytes::Bytes;
use http_body::Frame;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{
    HeaderName, HeaderValue, ACCEPT_ENCODING, ALLOW, CONNECTION, CONTENT_ENCODING, CONTENT_LENGTH,
    CONTENT_TYPE, RETRY_AFTER, VARY,
};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls::HandshakeKind;
use tokio_rustls::TlsAcceptor;

use crate::journal;
use crate::state::{Answer, State};
use crate::{Fault, FaultAction, RateLimit, Shared};

type Body = http_body_util::combinators::BoxBody<Bytes, io::Error>;

/// The most bytes of request line and headers a request may have (hyper's read
/// buffer); more is answered 431 and the connection closed.
pub(crate) const MAX_HEAD_BYTES: usize = 64 * 1024;

/// `Keep-Alive` (the http crate names no constant for it).
const KEEP_ALIVE: HeaderName = HeaderName::from_static("keep-alive");

/// Why a request's body could not be had.
enum BodyError {
    /// Over `max_body_bytes`.
    TooLarge,
    /// The connection failed while it was read.
    Unreadable,
    /// It did not arrive whole within `read_timeout`.
    TimedOut,
}

/// Serves plain HTTP on `listener`.
pub(crate) async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let stream = accept(&listener, &shared).await;
        tokio::spawn(serve_connection(stream, shared.clone()));
    }
}

/// Serves HTTPS on `listener`: each connection's handshake, then the same HTTP
/// as [`serve`]. A handshake that fails (the client rejects the certificate) or
/// takes longer than `read_timeout` only ends that connection, counted.
pub(crate) async fn serve_tls(listener: TcpListener, shared: Arc<Shared>, acceptor: TlsAcceptor) {
    loop {
        let stream = accept(&listener, &shared).await;
        let shared = shared.clone();
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let read_timeout = shared.read_timeout;
            let counters = &shared.connections;
            match tokio::time::timeout(read_timeout, acceptor.accept(stream)).await {
                Ok(Ok(stream)) => {
                    let resumed =
                        stream.get_ref().1.handshake_kind() == Some(HandshakeKind::Resumed);
                    counters.handshake_done(resumed);
                    serve_connection(stream, shared).await;
                }
                Ok(Err(e)) => counters.handshake_failed(e.to_string()),
                Err(_elapsed) => counters.handshake_failed(format!(
                    "the handshake did not finish within {} ms",
                    read_timeout.as_millis()
                )),
            }
        });
    }
}

/// The next connection, counted.
async fn accept(listener: &TcpListener, shared: &Shared) -> TcpStream {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                shared.connections.accepted();
                let _ = stream.set_nodelay(true);
                return stream;
            }
            // Out of file descriptors and the like: wait a moment and go on serving.
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// HTTP/1.1 on one connection, plain or TLS, until it ends.
async fn serve_connection<S>(stream: S, shared: Arc<Shared>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let idle_timeout = shared.idle_timeout;
    let idle_hint = keep_alive_hint(idle_timeout);
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let last = last_request(&req);
        let answer = handle(req, shared.clone());
        let idle_hint = idle_hint.clone();
        async move {
            let mut response = answer.await?;
            if !last && !connection_has(response.headers(), "close") {
                response.headers_mut().insert(KEEP_ALIVE, idle_hint);
            }
            Ok::<_, io::Error>(response)
        }
    });
    // A connection that ends in an error (a closed-connection fault, a client
    // hanging up) only ends that connection.
    // A client idle for `idle_timeout` (`read_timeout` unless set) before a
    // request has sent its headers is disconnected: hyper's one timer covers the
    // wait and the headers. It starts once an answer is flushed whole, so a slow
    // reader of a large answer is never cut off. Headers past MAX_HEAD_BYTES are
    // answered 431 by hyper, which then closes the connection.
    let _ = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .timer(TokioTimer::new())
        .header_read_timeout(idle_timeout)
        .max_buf_size(MAX_HEAD_BYTES)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// `Keep-Alive: timeout=N`: the whole seconds an idle connection is kept (`idle_timeout`,
/// rounded down). A client that keeps idle connections longer than the server and sends
/// on one just as the server closes it gets a reset ("other side closed", "socket hang
/// up") for a request that never arrived: a busy process (a large answer parsed on a
/// loaded CPU) does not see the close in time. Node's `http.Agent` and undici (fetch)
/// read this hint and stop reusing a connection a margin (1 s, 2 s) before it; with a
/// hint below their margin, they do not reuse the connection at all.
fn keep_alive_hint(idle_timeout: Duration) -> HeaderValue {
    HeaderValue::from_str(&format!("timeout={}", idle_timeout.as_secs()))
        .unwrap_or_else(|_| HeaderValue::from_static("timeout=0"))
}

/// Whether the connection ends after this request: `Connection: close`, or HTTP/1.0
/// without `Connection: keep-alive`.
fn last_request<B>(req: &Request<B>) -> bool {
    connection_has(req.headers(), "close")
        || (req.version() == hyper::Version::HTTP_10
            && !connection_has(req.headers(), "keep-alive"))
}

/// Whether the `Connection` header lists `token`.
fn connection_has(headers: &hyper::HeaderMap, token: &str) -> bool {
    headers.get_all(CONNECTION).iter().any(|v| {
        v.to_str()
            .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    })
}

/// One request. `Err` makes hyper drop the connection without an answer.
///
/// Generic over the request body so that [`crate::offline`] can run the very
/// same code without a socket; the server always passes hyper's `Incoming`.
pub(crate) async fn handle<B>(
    req: Request<B>,
    shared: Arc<Shared>,
) -> Result<Response<Body>, io::Error>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let raw_query = req.uri().query().unwrap_or("").to_owned();
    let user_agent = req
        .headers()
        .get(hyper::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    // For the journal (a copy of the map shares the values' bytes).
    let headers = req.headers().clone();
    let gzip_min_bytes = shared.gzip_min_bytes.filter(|_| {
        req.headers()
            .get_all(ACCEPT_ENCODING)
            .iter()
            .any(|v| v.to_str().is_ok_and(accepts_gzip))
    });
    let collect = Limited::new(req.into_body(), shared.max_body_bytes).collect();
    let body = match tokio::time::timeout(shared.read_timeout, collect).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(BodyError::TooLarge),
        Ok(Err(_)) => Err(BodyError::Unreadable),
        Err(_elapsed) => Err(BodyError::TimedOut),
    };

    if let Some(admin_path) = path.strip_prefix("/_emulator") {
        if let Some(allow) = admin_allow(admin_path) {
            if !allow.split(", ").any(|m| m == method.as_str()) {
                return Ok(method_not_allowed(allow));
            }
        }
        return Ok(match &body {
            Ok(bytes) => json_response(admin(&shared, &method, admin_path, bytes)),
            Err(e) => body_error_response(e, shared.read_timeout),
        });
    }

    let (seq, fault, ticket) = {
        let mut state = shared.state();
        let seq = state.journal.record(
            method.as_str(),
            &path,
            &raw_query,
            body.as_deref().unwrap_or_default(),
            user_agent.as_deref(),
            &headers,
        );
        let fault = state.take_fault(method.as_str(), &path);
        // A hold's place among the releases is taken with its fault, under the lock.
        let ticket = fault
            .as_ref()
            .is_some_and(|f| matches!(f.action, FaultAction::Hold))
            .then(|| shared.holds.ticket());
        (seq, fault, ticket)
    };
    let finish = |status: u16| shared.state().journal.set_status(seq, status);

    let mut delay = None;
    let mut relabel_html = false;
    let mut cut_short = false;
    match fault.map(|f: Fault| f.action) {
        Some(FaultAction::CloseConnection) => {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "fault: close",
            ));
        }
        Some(FaultAction::Respond {
            status,
            headers,
            body,
            content_type,
        }) => {
            finish(status);
            let mut response = raw_response(
                status,
                content_type.as_deref().unwrap_or("application/json"),
                Bytes::from(body),
            );
            // Before the fault's own headers, which may replace it.
            stamp_request_id(&mut response, seq);
            for (name, value) in headers {
                if let (Ok(name), Ok(value)) = (
                    hyper::header::HeaderName::from_bytes(name.as_bytes()),
                    HeaderValue::from_str(&value),
                ) {
                    response.headers_mut().insert(name, value);
                }
            }
            return Ok(response);
        }
        Some(FaultAction::TruncatedBody) => {
            finish(200);
            let mut response = truncated_response();
            stamp_request_id(&mut response, seq);
            return Ok(response);
        }
        Some(FaultAction::NotJson) => {
            finish(200);
            let html =
                "<html><body><h1>502 Bad Gateway</h1><p>upstream sent garbage</p></body></html>";
            let mut response =
                raw_response(200, "application/json", Bytes::from_static(html.as_bytes()));
            stamp_request_id(&mut response, seq);
            return Ok(response);
        }
        Some(FaultAction::LargeBody { bytes }) => {
            finish(200);
            let mut response = raw_response(200, "application/json", large_json(bytes));
            stamp_request_id(&mut response, seq);
            return Ok(response);
        }
        Some(FaultAction::Delay(d)) => delay = Some(d),
        Some(FaultAction::Hold) => {}
        Some(FaultAction::WrongContentType) => relabel_html = true,
        Some(FaultAction::TruncatedAfterEffect) => cut_short = true,
        None => {}
    }

    let mut response = match &body {
        Err(e) => body_error_response(e, shared.read_timeout),
        Ok(bytes) => route(&shared, &method, &path, &raw_query, bytes),
    };
    stamp_request_id(&mut response, seq);
    if relabel_html {
        response.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
    }
    if shared.gzip_min_bytes.is_some() {
        response
            .headers_mut()
            .insert(VARY, HeaderValue::from_static("accept-encoding"));
    }
    if let Some(min_bytes) = gzip_min_bytes.filter(|_| !cut_short) {
        response = gzip(response, min_bytes).await;
    }
    finish(response.status().as_u16());
    if cut_short {
        response = cut_off(response).await;
    }
    if let Some(d) = delay {
        tokio::time::sleep(d).await;
    }
    if let Some(ticket) = ticket {
        shared.holds.hold(ticket).await;
    }
    Ok(response)
}

/// The id of the request the journal numbered `seq`, as the service's answers carry it.
fn request_id(seq: u64) -> String {
    format!("req_{seq}")
}

/// Adds `X-Request-Id: req_<seq>` to an answer of the REST API or a sign-in page.
fn stamp_request_id(response: &mut Response<Body>, seq: u64) {
    if let Ok(value) = HeaderValue::from_str(&request_id(seq)) {
        response.headers_mut().insert("x-request-id", value);
    }
}

/// Whether an `Accept-Encoding` value accepts gzip: `gzip` (or `*`) listed
/// without `q=0`.
fn accepts_gzip(value: &str) -> bool {
    let mut star = false;
    for item in value.split(',') {
        let mut parts = item.split(';');
        let coding = parts.next().unwrap_or("").trim();
        let refused = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
            return !refused;
        }
        if coding == "*" {
            star = !refused;
        }
    }
    star
}

/// `response` with its body gzipped, when that body has at least `min_bytes`.
/// Only for bodies the emulator built whole (never a fault's).
async fn gzip(response: Response<Body>, min_bytes: usize) -> Response<Body> {
    use std::io::Write;
    let (mut parts, body) = response.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        // A whole body cannot fail; if one did, there is nothing to answer with.
        Err(_) => Bytes::new(),
    };
    if bytes.len() < min_bytes || parts.headers.contains_key(CONTENT_ENCODING) {
        return Response::from_parts(parts, full(bytes));
    }
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(bytes.len() / 4 + 64),
        flate2::Compression::default(),
    );
    let compressed = match encoder.write_all(&bytes).and_then(|()| encoder.finish()) {
        Ok(compressed) => compressed,
        Err(_) => return Response::from_parts(parts, full(bytes)),
    };
    parts
        .headers
        .insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    parts.headers.remove(CONTENT_LENGTH);
    Response::from_parts(parts, full(Bytes::from(compressed)))
}

fn body_error_response(error: &BodyError, read_timeout: Duration) -> Response<Body> {
    let answer = match error {
        BodyError::TooLarge => (
            413,
            json!({"error": true, "message": "request body too large"}),
        ),
        BodyError::Unreadable => (
            400,
            json!({"error": true, "message": "could not read the request body"}),
        ),
        BodyError::TimedOut => (
            408,
            json!({"error": true, "message": format!(
                "the request body did not arrive within {} ms", read_timeout.as_millis()
            )}),
        ),
    };
    let mut response = json_response(answer);
    // What is left of that body is not worth reading: the connection ends here.
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The service's endpoints, the sign-in pages, 404 and 405.
fn route(
    shared: &Shared,
    method: &Method,
    path: &str,
    raw_query: &str,
    body: &[u8],
) -> Response<Body> {
    let query: HashMap<String, String> = form_urlencoded::parse(raw_query.as_bytes())
        .into_owned()
        .collect();
    let segments: Vec<String> = path
        .trim_start_matches('/')
        .split('/')
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect();
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();

    if let ["chat", room_id] = segs.as_slice() {
        if method != Method::GET {
            return method_not_allowed("GET");
        }
        return sign_in_page(
            &shared.state(),
            room_id,
            query.get("accessToken").map(String::as_str),
        );
    }

    // Every documented path in its documented casing only; `{}` is one path parameter.
    let Some((op, params)) = (match resolve(method.as_str(), &segs) {
        Resolved::Found(op, params) => Some((op, params)),
        Resolved::WrongMethod(allow) => return method_not_allowed(&allow),
        Resolved::NotFound => None,
    }) else {
        return json_response((404, json!({"error": true, "message": "not found"})));
    };
    let param = |n: usize| params.get(n).copied().unwrap_or_default();

    let mut state = shared.state();
    let auth = match op {
        Op::Validate | Op::ValidateAccessToken => {
            state.check_public_key(query.get("publicKey").map(String::as_str))
        }
        _ => state.check_auth(query.get("auth").map(String::as_str)),
    };
    if let Err(answer) = auth {
        return json_response(answer);
    }
    let rate = match state.admit(Instant::now()) {
        Ok(rate) => rate,
        Err(wait) => {
            let mut response = json_response((429, json!({"message": "Too many requests"})));
            if state.rate_limit_headers {
                let headers = response.headers_mut();
                headers.insert(RETRY_AFTER, HeaderValue::from(ceil_secs(wait)));
                headers.insert(
                    "x-ratelimit-limit",
                    HeaderValue::from(state.rate_limit.requests),
                );
                headers.insert("x-ratelimit-remaining", HeaderValue::from(0u32));
                headers.insert("x-ratelimit-reset", HeaderValue::from(ceil_secs(wait)));
            }
            return response;
        }
    };
    // `Ok` is a 200 answer already serialized; `Err` is a JSON value still to serialize.
    let answer: Result<String, Answer> = if state.is_gated(method.as_str(), path) {
        Err((
            400,
            json!({"message": "This endpoint is not available on your current plan. Please upgrade your plan to use it."}),
        ))
    } else {
        let json_body = || -> Result<Value, Answer> {
            if body.iter().all(u8::is_ascii_whitespace) {
                return Ok(Value::Null);
            }
            // Strict, as the service's JSON parser is: an object or an array, never a
            // bare `null` (which would read as no body at all).
            match serde_json::from_slice(body) {
                Ok(Value::Null) => Err((
                    400,
                    json!({"error": true, "message": "request body is not valid JSON: a body is an object or an array, not null"}),
                )),
                Ok(value) => Ok(value),
                Err(e) => Err((
                    400,
                    json!({"error": true, "message": format!("request body is not valid JSON: {e}")}),
                )),
            }
        };
        // The operations that take a JSON body: parsed first, a bad one answered 400.
        let with_body = |state: &mut State, run: &dyn Fn(&mut State, &Value) -> Answer| {
            Err(match json_body() {
                Ok(v) => run(state, &v),
                Err(a) => a,
            })
        };
        let state = &mut *state;
        match op {
            // Already JSON text: sent as is, never parsed again.
            Op::ListUsers => state.list_users(&query),
            Op::Deactivate => with_body(state, &|s, v| s.deactivate_user(v)),
            Op::ConversationMessages => Err(state.conversation_messages(param(0), param(1))),
            Op::CreateUser => with_body(state, &|s, v| s.create_user(v)),
            Op::ChatRooms => Err(state.list_chat_rooms()),
            Op::Validate => Err(state.validate_token(query.get("accessToken").map(String::as_str))),
            Op::Reactivate => with_body(state, &|s, v| s.reactivate_user(v)),
            Op::ValidateAccessToken => with_body(state, &|s, v| s.validate_access_token(v)),
            Op::InvalidateAccessToken => with_body(state, &|s, v| s.invalidate_access_token(v)),
            Op::EjectAllUsers => Err(state.eject_all_users(param(0))),
            Op::UpdateBot => with_body(state, &|s, v| s.update_bot(param(0), v)),
            Op::CreateChatRoom => with_body(state, &|s, v| s.create_chat_room(v)),
            Op::GetChatRoom => Err(state.get_chat_room(param(0))),
            Op::UpdateChatRoom => with_body(state, &|s, v| s.update_chat_room(param(0), v)),
            Op::DeleteChatRoom => Err(state.delete_chat_room(param(0))),
            Op::TurnChatOn => Err(state.turn_chat(param(0), true)),
            Op::TurnChatOff => Err(state.turn_chat(param(0), false)),
            Op::SetChatOffMessage => with_body(state, &|s, v| s.set_chat_off_message(param(0), v)),
            Op::RoomMessages => state.room_messages(param(0), None, &query),
            Op::DeleteRoomMessages => Err(state.delete_room_messages(param(0), &query)),
            Op::SendRoomMessage => with_body(state, &|s, v| s.send_message(param(0), None, v)),
            Op::CreateChannel => with_body(state, &|s, v| s.create_channel(param(0), v)),
            Op::UpdateChannel => with_body(state, &|s, v| s.update_channel(param(0), param(1), v)),
            Op::SendChannelMessage => {
                with_body(state, &|s, v| s.send_message(param(0), Some(param(1)), v))
            }
            Op::ChannelMessages => state.room_messages(param(0), Some(param(1)), &query),
            Op::DeleteChannelMessage => {
                Err(state.delete_channel_message(param(0), param(1), param(2)))
            }
            Op::ListConversations => Err(state.list_conversations(param(0))),
            Op::UpdateUser => with_body(state, &|s, v| s.update_user(v)),
            Op::CreateUserV2 => with_body(state, &|s, v| s.create_user_v2(v)),
            Op::GetUser => Err(state.get_user(param(0))),
            Op::UserRooms => Err(state.user_rooms(param(0))),
            Op::RemoveUser => with_body(state, &|s, v| s.remove_user(v)),
            Op::ListMembers => Err(state.list_members(param(0), &query)),
            Op::SetMember => with_body(state, &|s, v| s.set_member(param(0), v)),
            Op::RemoveMember => with_body(state, &|s, v| s.remove_member(param(0), v)),
            Op::CreateBot => with_body(state, &|s, v| s.create_bot(v)),
            Op::ListBots => Err(state.list_bots()),
            Op::EnableBot => Err(state.set_bot_enabled(param(0), true)),
            Op::DisableBot => Err(state.set_bot_enabled(param(0), false)),
            Op::EnableBotInRoom => Err(state.set_bot_in_room(param(0), param(1), true)),
            Op::DisableBotInRoom => Err(state.set_bot_in_room(param(0), param(1), false)),
            Op::SendBotMessage => {
                with_body(state, &|s, v| s.send_bot_message(param(0), param(1), v))
            }
        }
    };
    let mut response = match answer {
        Ok(text) => raw_response(200, JSON_CONTENT_TYPE, Bytes::from(text)),
        Err(answer) => json_response(answer),
    };
    if state.rate_limit_headers {
        let headers = response.headers_mut();
        headers.insert("x-ratelimit-limit", HeaderValue::from(rate.limit));
        headers.insert("x-ratelimit-remaining", HeaderValue::from(rate.remaining));
        headers.insert(
            "x-ratelimit-reset",
            HeaderValue::from(ceil_secs(rate.reset)),
        );
    }
    response
}

/// 405, with the `Allow` header RFC 9110 requires (`allow`: the path's methods, `", "`-separated).
fn method_not_allowed(allow: &str) -> Response<Body> {
    let mut response =
        json_response((405, json!({"error": true, "message": "method not allowed"})));
    if let Ok(value) = HeaderValue::from_str(allow) {
        response.headers_mut().insert(ALLOW, value);
    }
    response
}

/// The service's operations (the `{}` of their paths are handed over in order).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    ListUsers,
    Deactivate,
    ConversationMessages,
    CreateUser,
    ChatRooms,
    Validate,
    Reactivate,
    ValidateAccessToken,
    InvalidateAccessToken,
    EjectAllUsers,
    UpdateBot,
    CreateChatRoom,
    GetChatRoom,
    UpdateChatRoom,
    DeleteChatRoom,
    TurnChatOn,
    TurnChatOff,
    SetChatOffMessage,
    RoomMessages,
    DeleteRoomMessages,
    SendRoomMessage,
    CreateChannel,
    UpdateChannel,
    SendChannelMessage,
    ChannelMessages,
    DeleteChannelMessage,
    ListConversations,
    UpdateUser,
    CreateUserV2,
    GetUser,
    UserRooms,
    RemoveUser,
    ListMembers,
    SetMember,
    RemoveMember,
    CreateBot,
    ListBots,
    EnableBot,
    DisableBot,
    EnableBotInRoom,
    DisableBotInRoom,
    SendBotMessage,
}

/// Every path the emulator serves, exactly as the service's pages print it
/// (`docs/`: `chatroom` and `chatRoom` differ on purpose). `{}` is a parameter.
const ROUTES: &[(&str, &str, Op)] = &[
    ("GET", "/consumer/api/v2/users", Op::ListUsers),
    ("DELETE", "/consumer/api/v2/user/deactivate", Op::Deactivate),
    ("POST", "/consumer/api/v2/user/reactivate", Op::Reactivate),
    (
        "GET",
        "/consumer/api/v2/room/{}/conversation/{}/messages",
        Op::ConversationMessages,
    ),
    (
        "GET",
        "/consumer/api/v2/chatroom/{}/conversation/{}/messages",
        Op::ConversationMessages,
    ),
    ("POST", "/consumer/api/v1/user", Op::CreateUser),
    ("PUT", "/consumer/api/v1/user", Op::UpdateUser),
    ("GET", "/consumer/api/v1/chatrooms", Op::ChatRooms),
    ("GET", "/consumer/api/v1/validate", Op::Validate),
    (
        "POST",
        "/consumer/api/v1/user/accessToken/validate",
        Op::ValidateAccessToken,
    ),
    (
        "POST",
        "/consumer/api/v1/user/accesstoken/invalidate",
        Op::InvalidateAccessToken,
    ),
    // Without the `/consumer` prefix, as the reference page prints it.
    ("POST", "/api/v1/chatRoom/{}/eject-all", Op::EjectAllUsers),
    ("POST", "/consumer/api/v1/chatroom", Op::CreateChatRoom),
    ("GET", "/consumer/api/v1/chatroom/{}", Op::GetChatRoom),
    ("PUT", "/consumer/api/v1/chatroom/{}", Op::UpdateChatRoom),
    ("DELETE", "/consumer/api/v1/chatroom/{}", Op::DeleteChatRoom),
    ("POST", "/consumer/api/v1/chatRoom/{}/on", Op::TurnChatOn),
    ("POST", "/consumer/api/v1/chatRoom/{}/off", Op::TurnChatOff),
    (
        "POST",
        "/consumer/api/v1/chatroom/{}/chatoffmessage",
        Op::SetChatOffMessage,
    ),
    (
        "GET",
        "/consumer/api/v1/chatRoom/{}/messages",
        Op::RoomMessages,
    ),
    (
        "DELETE",
        "/consumer/api/v1/chatroom/{}/messages",
        Op::DeleteRoomMessages,
    ),
    (
        "POST",
        "/consumer/api/v1/chatroom/{}/message",
        Op::SendRoomMessage,
    ),
    (
        "POST",
        "/consumer/api/v1/chatroom/{}/channel",
        Op::CreateChannel,
    ),
    (
        "PUT",
        "/consumer/api/v1/chatroom/{}/channel/{}",
        Op::UpdateChannel,
    ),
    (
        "POST",
        "/consumer/api/v1/chatroom/{}/channel/{}/message",
        Op::SendChannelMessage,
    ),
    (
        "GET",
        "/consumer/api/v1/chatRoom/{}/channel/{}/messages",
        Op::ChannelMessages,
    ),
    (
        "DELETE",
        "/consumer/api/v2/chatroom/{}/channel/{}/message/{}",
        Op::DeleteChannelMessage,
    ),
    (
        "GET",
        "/consumer/api/v2/room/{}/conversations",
        Op::ListConversations,
    ),
    (
        "GET",
        "/consumer/api/v2/chatroom/{}/conversations",
        Op::ListConversations,
    ),
    ("POST", "/consumer/api/v2/user", Op::CreateUserV2),
    ("DELETE", "/consumer/api/v2/user", Op::RemoveUser),
    ("GET", "/consumer/api/v2/user/{}", Op::GetUser),
    ("GET", "/consumer/api/v2/user/{}/rooms", Op::UserRooms),
    ("GET", "/consumer/api/v2/room/{}/members", Op::ListMembers),
    ("POST", "/consumer/api/v2/room/{}/member", Op::SetMember),
    (
        "DELETE",
        "/consumer/api/v2/room/{}/member",
        Op::RemoveMember,
    ),
    ("POST", "/consumer/api/v2/bot", Op::CreateBot),
    ("GET", "/consumer/api/v2/bots", Op::ListBots),
    ("PUT", "/consumer/api/v2/bot/{}", Op::UpdateBot),
    ("POST", "/consumer/api/v2/bot/{}/enable", Op::EnableBot),
    ("POST", "/consumer/api/v2/bot/{}/disable", Op::DisableBot),
    (
        "POST",
        "/consumer/api/v2/bot/{}/chatroom/{}/enable",
        Op::EnableBotInRoom,
    ),
    (
        "POST",
        "/consumer/api/v2/bot/{}/chatroom/{}/disable",
        Op::DisableBotInRoom,
    ),
    (
        "POST",
        "/consumer/api/v2/bot/{}/chatroom/{}/message",
        Op::SendBotMessage,
    ),
];

enum Resolved<'a> {
    Found(Op, Vec<&'a str>),
    /// The path is served, for other methods (the `Allow` list).
    WrongMethod(String),
    NotFound,
}

/// The path parameters of `segs` under `pattern`, if it matches (`exact`:
/// the literal segments in the same case; otherwise in any case).
fn match_pattern<'a>(pattern: &str, segs: &[&'a str], exact: bool) -> Option<Vec<&'a str>> {
    let parts: Vec<&str> = pattern.trim_start_matches('/').split('/').collect();
    if parts.len() != segs.len() {
        return None;
    }
    let mut params = Vec::new();
    for (part, seg) in parts.iter().zip(segs) {
        if *part == "{}" {
            params.push(*seg);
        } else if !(if exact {
            part == seg
        } else {
            part.eq_ignore_ascii_case(seg)
        }) {
            return None;
        }
    }
    Some(params)
}

/// The operation a request names. Among the patterns a path matches, those
/// with the fewest parameters win (`/user/deactivate` is not get user
/// `/user/{}`). A known path asked with another method is a 405, unless that
/// method has the path in another casing: then it is not found, as any
/// wrongly cased path is.
fn resolve<'a>(method: &str, segs: &[&'a str]) -> Resolved<'a> {
    let matching: Vec<(&str, Op, Vec<&'a str>)> = ROUTES
        .iter()
        .filter_map(|(m, pattern, op)| match_pattern(pattern, segs, true).map(|p| (*m, *op, p)))
        .collect();
    let Some(fewest) = matching.iter().map(|(_, _, p)| p.len()).min() else {
        return Resolved::NotFound;
    };
    let best: Vec<_> = matching
        .into_iter()
        .filter(|(_, _, p)| p.len() == fewest)
        .collect();
    let mut allow = Vec::new();
    for (m, op, params) in best {
        if m == method {
            return Resolved::Found(op, params);
        }
        allow.push(m);
    }
    let other_casing = ROUTES.iter().any(|(m, pattern, _)| {
        *m == method
            && match_pattern(pattern, segs, false).is_some()
            && match_pattern(pattern, segs, true).is_none()
    });
    if other_casing {
        return Resolved::NotFound;
    }
    Resolved::WrongMethod(allow.join(", "))
}

/// The methods of each admin endpoint, as the `Allow` header lists them.
fn admin_allow(path: &str) -> Option<&'static str> {
    Some(match path {
        "/reset" | "/users/seed" | "/rooms" | "/conversations" | "/bots" | "/channels"
        | "/members" => "POST",
        "/messages" => "POST, DELETE",
        "/listing" => "PUT",
        "/users" => "GET",
        "/config" => "GET, PUT",
        "/gate" | "/faults" => "POST, DELETE",
        "/journal" | "/connections" | "/held" => "GET, DELETE",
        _ => return None,
    })
}

fn ceil_secs(d: Duration) -> u64 {
    d.as_millis().div_ceil(1000) as u64
}

/// The admin API under `/_emulator`.
pub(crate) fn admin(shared: &Shared, method: &Method, path: &str, body: &[u8]) -> Answer {
    let spec: Value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(e) => {
                return (
                    400,
                    json!({"error": true, "message": format!("body is not valid JSON: {e}")}),
                )
            }
        }
    };
    let bad = |message: String| (400, json!({"error": true, "message": message}));
    let ok = || (200, json!({"ok": true}));
    let mut state = shared.state();
    match (method.as_str(), path) {
        ("POST", "/reset") => {
            state.reset();
            shared.connections.reset();
            shared.holds.release();
            ok()
        }
        ("GET", "/connections") => {
            let stats = shared.connections.snapshot();
            (
                200,
                json!({
                    "accepted": stats.accepted,
                    "tls_handshakes": stats.tls_handshakes,
                    "tls_resumed": stats.tls_resumed,
                    "tls_failed": stats.tls_failed,
                    "tls_last_failure": stats.tls_last_failure,
                }),
            )
        }
        ("DELETE", "/connections") => {
            shared.connections.reset();
            ok()
        }
        ("GET", "/config") => (200, config_json(&state)),
        ("PUT", "/config") => match apply_config(&mut state, &spec) {
            Ok(()) => (200, config_json(&state)),
            Err(e) => bad(e),
        },
        ("POST", "/gate") => match spec["path"].as_str() {
            Some(p) => {
                let m = spec["method"].as_str().unwrap_or("*").to_owned();
                state.gated.push((m, p.to_owned()));
                ok()
            }
            None => bad("path (string) is required".into()),
        },
        ("DELETE", "/gate") => {
            state.gated.clear();
            ok()
        }
        ("GET", "/users") => (200, json!({"users": state.all_users()})),
        ("POST", "/users/seed") => match spec["count"].as_u64() {
            Some(n) if n <= 10_000_000 => {
                let before = state.active_user_count();
                let total = state.seed_users(n as usize);
                (200, json!({"created": total - before, "total": total}))
            }
            _ => bad("count (a whole number up to 10000000) is required".into()),
        },
        ("POST", "/rooms") => match state.create_room(&spec) {
            Ok(room) => (200, room),
            Err(e) => bad(e),
        },
        ("POST", "/bots") => match state.add_bot(&spec) {
            Ok(bot) => (200, bot),
            Err(e) => bad(e),
        },
        ("POST", "/messages") => match state.add_messages(&spec) {
            Ok(out) => (200, out),
            Err(e) => bad(e),
        },
        ("DELETE", "/messages") => match state.delete_messages(&spec) {
            Ok(out) => (200, out),
            Err(e) => bad(e),
        },
        ("PUT", "/listing") => match state.set_listing(&spec) {
            Ok(out) => (200, out),
            Err(e) => bad(e),
        },
        ("POST", "/channels") => match state.add_channel(&spec) {
            Ok(out) => (200, out),
            Err(e) => bad(e),
        },
        ("POST", "/members") => match state.add_member(&spec) {
            Ok(out) => (200, out),
            Err(e) => bad(e),
        },
        ("POST", "/conversations") => match state.add_conversation(&spec) {
            Ok(out) => (200, out),
            Err(e) => bad(e),
        },
        ("POST", "/faults") => match parse_fault(&spec) {
            Ok(fault) => (200, json!({"id": state.add_fault(fault)})),
            Err(e) => bad(e),
        },
        ("DELETE", "/faults") => {
            state.faults.clear();
            shared.holds.release();
            ok()
        }
        ("GET", "/held") => (200, json!({"held": shared.holds.held()})),
        ("DELETE", "/held") => (200, json!({"released": shared.holds.release()})),
        ("GET", "/journal") => {
            let entries: Vec<Value> = state
                .journal
                .entries()
                .map(|e| {
                    json!({
                        "seq": e.seq,
                        "method": e.method,
                        "path": e.path,
                        "query": e.query,
                        "body": e.body,
                        "received_at_ms": e.received_at.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64() * 1000.0,
                        "status": e.status,
                        "user_agent": e.user_agent,
                        "headers": e.headers,
                        "truncated": e.truncated,
                    })
                })
                .collect();
            (
                200,
                json!({"entries": entries, "dropped": state.journal.dropped(), "capacity": state.journal.capacity()}),
            )
        }
        ("DELETE", "/journal") => {
            state.journal.clear();
            ok()
        }
        _ => (
            404,
            json!({"error": true, "message": "no such admin endpoint"}),
        ),
    }
}

fn config_json(state: &State) -> Value {
    let gated: Vec<Value> = state
        .gated
        .iter()
        .map(|(m, p)| json!({"method": m, "path": p}))
        .collect();
    json!({
        "private_key": state.private_key,
        "public_key": state.public_key,
        "rate_limit": {"requests": state.rate_limit.requests, "window_ms": state.rate_limit.window.as_millis() as u64},
        "rate_limit_headers": state.rate_limit_headers,
        "journal_capacity": state.journal.capacity(),
        "gated": gated,
    })
}

fn apply_config(state: &mut State, spec: &Value) -> Result<(), String> {
    let fields = spec.as_object().ok_or("config should be a JSON object")?;
    // Check everything first, so that a bad field changes nothing.
    let text = |key: &str| -> Result<Option<String>, String> {
        match fields.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
            Some(_) => Err(format!("{key} should be a non-empty string")),
        }
    };
    let private_key = text("private_key")?;
    let public_key = text("public_key")?;
    let rate_limit = match fields.get("rate_limit") {
        None => None,
        Some(r) => match (r["requests"].as_u64(), r["window_ms"].as_u64()) {
            (Some(n @ 1..=1_000_000_000), Some(ms @ 1..)) => Some(RateLimit {
                requests: n as u32,
                window: Duration::from_millis(ms),
            }),
            _ => {
                return Err(
                    "rate_limit should be {\"requests\": N >= 1, \"window_ms\": M >= 1}".into(),
                )
            }
        },
    };
    let headers = match fields.get("rate_limit_headers") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return Err("rate_limit_headers should be a boolean".into()),
    };
    let journal_capacity = match fields.get("journal_capacity") {
        None => None,
        Some(v) => match v.as_u64() {
            Some(n) if n <= journal::MAX_CAPACITY as u64 => Some(n as usize),
            _ => {
                return Err(format!(
                    "journal_capacity should be a whole number from 0 to {}",
                    journal::MAX_CAPACITY
                ))
            }
        },
    };
    if let Some(k) = private_key {
        state.private_key = k;
    }
    if let Some(k) = public_key {
        state.public_key = k;
    }
    if let Some(r) = rate_limit {
        state.rate_limit = r;
    }
    if let Some(h) = headers {
        state.rate_limit_headers = h;
    }
    if let Some(n) = journal_capacity {
        state.journal.set_capacity(n);
    }
    Ok(())
}

fn parse_fault(spec: &Value) -> Result<Fault, String> {
    let path = spec["path"]
        .as_str()
        .ok_or("path (string) is required")?
        .to_owned();
    let method = match &spec["method"] {
        Value::Null => None,
        Value::String(m) if m == "*" => None,
        Value::String(m) => Some(m.to_ascii_uppercase()),
        _ => return Err("method should be a string".into()),
    };
    let times = match &spec["times"] {
        Value::Null => 1,
        v => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or("times should be a whole number")?,
    };
    let action = &spec["action"];
    let action = match action["kind"].as_str() {
        Some("respond") => {
            let status = action["status"]
                .as_u64()
                .filter(|s| (100..=599).contains(s))
                .ok_or("respond needs a status between 100 and 599")? as u16;
            let body = match &action["body"] {
                Value::Null => String::new(),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let headers = match &action["headers"] {
                Value::Null => Vec::new(),
                Value::Object(h) => h
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string())))
                    .collect(),
                _ => return Err("headers should be an object".into()),
            };
            let content_type = action["content_type"].as_str().map(str::to_owned);
            FaultAction::Respond { status, headers, body, content_type }
        }
        Some("delay") => FaultAction::Delay(Duration::from_millis(
            action["ms"].as_u64().ok_or("delay needs ms")?,
        )),
        Some("hold") => FaultAction::Hold,
        Some("close") => FaultAction::CloseConnection,
        Some("truncate") => FaultAction::TruncatedBody,
        Some("truncate_after_effect") => FaultAction::TruncatedAfterEffect,
        Some("not_json") => FaultAction::NotJson,
        Some("wrong_content_type") => FaultAction::WrongContentType,
        Some("large_body") => FaultAction::LargeBody {
            bytes: action["bytes"]
                .as_u64()
                .filter(|b| *b <= 512 * 1024 * 1024)
                .ok_or("large_body needs bytes (up to 512 MiB)")? as usize,
        },
        _ => {
            return Err(
                "action.kind should be one of respond, delay, hold, close, truncate, truncate_after_effect, not_json, wrong_content_type, large_body"
                    .into(),
            )
        }
    };
    Ok(Fault {
        method,
        path,
        times,
        action,
    })
}

// ---- responses --------------------------------------------------------------

fn full(bytes: Bytes) -> Body {
    Full::new(bytes)
        .map_err(|never: Infallible| match never {})
        .boxed()
}

fn raw_response(status: u16, content_type: &str, body: Bytes) -> Response<Body> {
    let mut response = Response::new(full(body));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(value) = HeaderValue::from_str(content_type) {
        response.headers_mut().insert(CONTENT_TYPE, value);
    }
    response
}

/// The content type of every JSON answer the emulator builds itself.
const JSON_CONTENT_TYPE: &str = "application/json; charset=utf-8";

fn json_response((status, body): Answer) -> Response<Body> {
    raw_response(status, JSON_CONTENT_TYPE, Bytes::from(body.to_string()))
}

fn large_json(bytes: usize) -> Bytes {
    let overhead = r#"{"data":""}"#.len();
    let mut out = Vec::with_capacity(bytes.max(overhead));
    out.extend_from_slice(br#"{"data":""#);
    out.resize(bytes.saturating_sub(2).max(9), b'x');
    out.extend_from_slice(b"\"}");
    Bytes::from(out)
}

/// A body that sends one chunk, waits so that the chunk is flushed, then fails:
/// hyper then closes the connection short of the announced `Content-Length`.
struct TruncatedBody {
    chunk: Option<Bytes>,
    pause: Pin<Box<tokio::time::Sleep>>,
}

impl http_body::Body for TruncatedBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        if let Some(chunk) = self.chunk.take() {
            return Poll::Ready(Some(Ok(Frame::data(chunk))));
        }
        match self.pause.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(()) => Poll::Ready(Some(Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "fault: truncate",
            )))),
        }
    }
}

fn truncated_response() -> Response<Body> {
    let partial = Bytes::from_static(
        br#"{"total": 3, "limit": 50, "skip": 0, "data": [{"_id": "6141fd87c3b6"#,
    );
    let body = TruncatedBody {
        chunk: Some(partial.clone()),
        pause: Box::pin(tokio::time::sleep(Duration::from_millis(50))),
    };
    let mut response = Response::new(body.boxed());
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
        .headers_mut()
        .insert(CONTENT_LENGTH, HeaderValue::from(partial.len() as u64 * 2));
    response
}

/// `response` with only the first half of its body sent, short of its `Content-Length`
/// (the whole body's), then the connection closed: an answer cut off after it took effect.
async fn cut_off(response: Response<Body>) -> Response<Body> {
    let (mut parts, body) = response.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let whole = bytes.len().max(1) as u64;
    let half = bytes.slice(..bytes.len() / 2);
    let body = TruncatedBody {
        chunk: (!half.is_empty()).then_some(half),
        pause: Box::pin(tokio::time::sleep(Duration::from_millis(50))),
    };
    parts
        .headers
        .insert(CONTENT_LENGTH, HeaderValue::from(whole));
    Response::from_parts(parts, body.boxed())
}

// ---- the browser sign-in page (section 4.6) ----------------------------------

fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title></head>\n<body>{}</body></html>\n",
        html_escape(title),
        body
    )
}

fn sign_in_page(state: &State, room_id: &str, token: Option<&str>) -> Response<Body> {
    let (status, html) = match state.sign_in(room_id, token) {
        Ok(s) => {
            let role = if s.moderator {
                "moderator"
            } else {
                "regular user"
            };
            let body = format!(
                "<h1>{room}</h1>\n<p id=\"signed-in\" data-username=\"{user}\" data-moderator=\"{moderator}\">Signed in as <b>{user}</b> ({role}), {functions}.</p>",
                room = html_escape(&s.room_name),
                user = html_escape(&s.username),
                moderator = s.moderator,
                functions = if s.moderator { "with moderator functions" } else { "without moderator functions" },
            );
            (200, page(&s.room_name, &body))
        }
        Err((status, message)) => (
            status,
            page(
                "Cannot sign in",
                &format!(
                    "<h1>Cannot sign in</h1>\n<p id=\"error\">{}</p>",
                    html_escape(&message)
                ),
            ),
        ),
    };
    raw_response(status, "text/html; charset=utf-8", Bytes::from(html))
}
