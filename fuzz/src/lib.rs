//! Helpers shared by the fuzz targets: the framing of a response in the fuzz
//! input, JSON values from arbitrary bytes, and the invariants of decoded
//! results and errors.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use roomchat::wire::{self, Operation, WireResponse};
use roomchat::{Error, ErrorKind};
use serde_json::{Map, Number, Value};

/// The longest wait a parsed `Retry-After` or `X-RateLimit-Reset` may give:
/// callers add it to `Instant::now()`, which must not overflow.
pub const MAX_WAIT: Duration = Duration::from_secs(1_000_000_000);

/// A fixed "now" for decoders that take one: 2025-01-01T00:00:00Z.
pub fn fixed_now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_735_689_600)
}

/// A response from fuzz input framed like an HTTP answer without the version:
/// the first line is the status (decimal, taken modulo 65536; not a number
/// means 200), then `name: value` header lines up to an empty line, then the
/// body's bytes. Lines end in `\n` (a `\r` before it is dropped).
pub fn response_from_bytes(data: &[u8]) -> WireResponse {
    let mut rest = data;
    let mut line = || -> Option<String> {
        if rest.is_empty() {
            return None;
        }
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let mut text = &rest[..end];
        rest = rest.get(end + 1..).unwrap_or_default();
        if text.last() == Some(&b'\r') {
            text = &text[..text.len() - 1];
        }
        Some(String::from_utf8_lossy(text).into_owned())
    };
    let status = line()
        .and_then(|l| l.trim().parse::<u64>().ok())
        .map(|n| (n % 65_536) as u16)
        .unwrap_or(200);
    let mut headers = Vec::new();
    while let Some(l) = line() {
        if l.is_empty() {
            break;
        }
        let (name, value) = l.split_once(':').unwrap_or((l.as_str(), ""));
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    WireResponse::new(status, headers, rest.to_vec())
}

/// The kinds a decoder may give for a response of `status`.
pub fn expected_kinds(status: u16) -> &'static [ErrorKind] {
    use ErrorKind::*;
    match status {
        // A 2xx fails only when its body cannot be decoded, or says `"success": false`.
        200..=299 => &[Decode, InvalidRequest],
        400 => &[
            MissingAuth,
            InvalidAuth,
            PlanUpgradeRequired,
            UserNotFound,
            NotFound,
            InvalidRequest,
        ],
        // A 401 that names what does not exist (an unknown bot) is read by its body.
        401 => &[MissingAuth, InvalidAuth, UserNotFound, NotFound],
        403 => &[
            MissingAuth,
            InvalidAuth,
            PlanUpgradeRequired,
            UnexpectedStatus,
        ],
        // The room pages print their validation object under a 404 too.
        404 => &[UserNotFound, NotFound, InvalidRequest, UnexpectedStatus],
        422 => &[InvalidRequest],
        429 => &[RateLimited],
        500..=599 => &[ServerError],
        _ => &[UnexpectedStatus],
    }
}

/// The invariants of an error decoded from a response of `status`.
pub fn check_error(status: u16, error: &Error, what: &str) {
    assert!(
        expected_kinds(status).contains(&error.kind()),
        "{what}: HTTP {status} gave kind {:?}: {error}",
        error.kind()
    );
    assert_eq!(error.status(), Some(status), "{what}: status of {error}");
    assert!(!error.message().is_empty(), "{what}: empty message");
    if let Some(wait) = error.retry_after() {
        assert!(wait <= MAX_WAIT, "{what}: retry_after {wait:?} too long");
    }
    // Display and Debug never panic.
    let _ = (error.to_string(), format!("{error:?}"));
}

fn check_decoded<T>(
    response: &WireResponse,
    what: &str,
    decoded: &roomchat::Result<T>,
) -> Option<Value>
where
    T: serde::Serialize,
{
    match decoded {
        Ok(value) => {
            assert!(
                (200..300).contains(&response.status),
                "{what}: HTTP {} decoded as a success",
                response.status
            );
            Some(serde_json::to_value(value).expect("models serialize"))
        }
        Err(e) => {
            check_error(response.status, e, what);
            None
        }
    }
}

/// Runs every response decoder on `response` and checks that each gives a
/// success only for a 2xx, an error of a kind that fits the status otherwise,
/// that [`Operation::decode`] agrees with the typed decoder of its operation,
/// and that a decoded value, written back as JSON, decodes to itself.
pub fn check_decoders(response: &WireResponse) {
    /// Decodes the JSON text of a decoded value again, as a 200.
    fn again(value: &Value) -> WireResponse {
        WireResponse::new(200, vec![], serde_json::to_vec(value).expect("serializes"))
    }

    // Every operation's typed decoder: its checks, then its value written back
    // as JSON decodes to itself (but for a `"success": false` written back for
    // a flag that was absent: that reads as a failure, by design).
    macro_rules! typed_decoders {
        ($($op:ident => $decode:ident,)*) => {
            vec![$({
                let decoded = wire::$decode(response);
                let json = check_decoded(response, stringify!($decode), &decoded);
                if let (Ok(value), Some(json)) = (&decoded, &json) {
                    if json.get("success") != Some(&Value::Bool(false)) {
                        let back = wire::$decode(&again(json));
                        assert!(
                            back.as_ref() == Ok(value),
                            "{}: round trip of {json}",
                            stringify!($decode)
                        );
                    }
                }
                (Operation::$op, json, decoded.as_ref().err().map(Error::kind))
            },)*]
        };
    }
    let mut typed: Vec<(Operation, Option<Value>, Option<ErrorKind>)> = typed_decoders! {
        ListUsers => decode_list_users,
        DeactivateUser => decode_deactivate_user,
        ConversationMessages => decode_conversation_messages,
        CreateUser => decode_create_user,
        ListChatRooms => decode_list_chat_rooms,
        ReactivateUser => decode_reactivate_user,
        ValidateAccessToken => decode_validate_access_token,
        InvalidateAccessToken => decode_invalidate_access_token,
        EjectAllUsers => decode_eject_all_users,
        UpdateBot => decode_update_bot,
        CreateChatRoom => decode_create_chat_room,
        GetChatRoom => decode_get_chat_room,
        UpdateChatRoom => decode_update_chat_room,
        DeleteChatRoom => decode_delete_chat_room,
        TurnChatOn => decode_turn_chat_on,
        TurnChatOff => decode_turn_chat_off,
        SetChatOffMessage => decode_set_chat_off_message,
        RoomMessages => decode_room_messages,
        DeleteRoomMessages => decode_delete_room_messages,
        SendRoomMessage => decode_send_room_message,
        CreateChannel => decode_create_channel,
        UpdateChannel => decode_update_channel,
        SendChannelMessage => decode_send_channel_message,
        ChannelMessages => decode_channel_messages,
        DeleteChannelMessage => decode_delete_channel_message,
        ListConversations => decode_list_conversations,
        UpdateUser => decode_update_user,
        CreateUserV2 => decode_create_user_v2,
        GetUser => decode_get_user,
        UserRooms => decode_user_rooms,
        RemoveUser => decode_remove_user,
        ListMembers => decode_list_members,
        SetMember => decode_set_member,
        RemoveMember => decode_remove_member,
        CreateBot => decode_create_bot,
        ListBots => decode_list_bots,
        EnableBot => decode_enable_bot,
        DisableBot => decode_disable_bot,
        EnableBotInRoom => decode_enable_bot_in_room,
        DisableBotInRoom => decode_disable_bot_in_room,
        SendBotMessage => decode_send_bot_message,
    };

    // The untyped rooms listing of older releases.
    let rooms = wire::decode_chat_rooms(response);
    check_decoded(response, "decode_chat_rooms", &rooms);
    let raw = wire::decode_raw(response);
    if let Ok(raw) = &raw {
        assert_eq!(raw.status, response.status);
        assert_eq!(raw.headers.len(), response.headers.len());
        assert!(raw
            .headers
            .iter()
            .all(|(n, _)| !n.bytes().any(|b| b.is_ascii_uppercase())));
    }
    let raw_json = raw
        .as_ref()
        .map(|r| serde_json::json!({"status": r.status, "body": r.body}))
        .map_err(Clone::clone);
    let raw_json = check_decoded(response, "decode_raw", &raw_json);
    typed.push((
        Operation::Raw,
        raw_json,
        raw.as_ref().err().map(Error::kind),
    ));

    assert_eq!(typed.len(), Operation::ALL.len(), "a decoder per operation");
    for (op, value, kind) in typed {
        let decoded = op.decode(response);
        match &decoded {
            Ok(v) => assert_eq!(Some(v), value.as_ref(), "{op}: decode differs"),
            Err(e) => {
                check_error(response.status, e, op.name());
                assert_eq!(Some(e.kind()), kind, "{op}: error kind differs");
            }
        }
    }
}

/// Strings the decoders, builders and the emulator give meaning to.
pub const WORDS: &[&str] = &[
    "",
    " ",
    ".",
    "..",
    "%2e%2e",
    "/",
    "?",
    "#",
    "%",
    "%41",
    "a?b#c",
    "\u{0}",
    "\n",
    "é",
    "room",
    "chatroom",
    "regular",
    "moderator",
    "room_moderator",
    "private_key",
    "public_key",
    "none",
    "GET",
    "get",
    "POST",
    "PUT",
    "PATCH",
    "DELETE",
    "TRACE",
    "*",
    "/consumer/api/v2/users",
    "/consumer/api/v2/*",
    "/consumer/api/v1/user",
    "/consumer/api/v1/chatrooms",
    "/consumer/api/v2/user/deactivate",
    "/consumer/api/v2/room/r1/conversation/c1/messages",
    "/x",
    "//x",
    "/a/../b",
    "auth",
    "publicKey",
    "limit",
    "skip",
    "r1",
    "c1",
    "General",
    "jon",
    "crm-1",
    "respond",
    "delay",
    "close",
    "truncate",
    "not_json",
    "wrong_content_type",
    "large_body",
    "Retry-After",
    "text/html",
    "application/json",
    "{\"message\":\"boom\",\"eventId\":\"ev1\"}",
    "sk_test_emulator_private_key_0001",
    "pk_test_emulator_public_key_0001",
    "Please pass the auth token",
    "user not found",
    "upgrade",
];

/// Field names the operations, models and the emulator's API read.
pub const KEYS: &[&str] = &[
    "limit",
    "skip",
    "userId",
    "uniqueUserIdentifier",
    "roomId",
    "conversationId",
    "pathForm",
    "username",
    "role",
    "chatRoom",
    "extra",
    "method",
    "path",
    "query",
    "body",
    "auth",
    "isModerator",
    "email",
    "profilePic",
    "externalUserId",
    "meta",
    "messages",
    "user",
    "created",
    "name",
    "times",
    "action",
    "kind",
    "status",
    "headers",
    "content_type",
    "ms",
    "bytes",
    "count",
    "private_key",
    "public_key",
    "rate_limit",
    "requests",
    "window_ms",
    "rate_limit_headers",
    "journal_capacity",
    "success",
    "message",
    "error",
    "errorMessage",
    "details",
    "eventId",
    "accessToken",
    "_id",
    "total",
    "data",
];

/// Numbers at the edges of what is checked.
const NUMBERS: &[f64] = &[
    0.0,
    1.0,
    2.0,
    199.0,
    200.0,
    201.0,
    500.0,
    599.0,
    600.0,
    1_000_000.0,
    1_000_001.0,
    4_294_967_295.0,
    4_294_967_296.0,
    -1.0,
    1.5,
    1e300,
];

/// A string: one of [`WORDS`], or any text.
#[derive(Arbitrary, Debug, Clone)]
pub enum ArbStr {
    /// `WORDS[n % len]`.
    Word(u8),
    /// Any text.
    Text(String),
}

impl ArbStr {
    /// The string.
    pub fn get(&self) -> String {
        match self {
            ArbStr::Word(n) => WORDS[*n as usize % WORDS.len()].to_owned(),
            ArbStr::Text(t) => t.clone(),
        }
    }
}

/// A field name: one of [`KEYS`], or any text.
#[derive(Arbitrary, Debug, Clone)]
pub enum ArbKey {
    /// `KEYS[n % len]`.
    Known(u8),
    /// Any text.
    Text(String),
}

impl ArbKey {
    /// The name.
    pub fn get(&self) -> String {
        match self {
            ArbKey::Known(n) => KEYS[*n as usize % KEYS.len()].to_owned(),
            ArbKey::Text(t) => t.clone(),
        }
    }
}

/// A JSON value built from fuzz input, biased towards the names and values
/// the code under test gives meaning to.
#[derive(Arbitrary, Debug, Clone)]
pub enum ArbJson {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A small whole number.
    Small(u8),
    /// Any signed whole number.
    Int(i64),
    /// Any unsigned whole number.
    UInt(u64),
    /// A float (not finite gives `null`).
    Float(f64),
    /// One of the edge numbers.
    Edge(u8),
    /// A string.
    Str(ArbStr),
    /// An array.
    Array(Vec<ArbJson>),
    /// An object (a repeated name keeps the last value).
    Object(Vec<(ArbKey, ArbJson)>),
}

impl ArbJson {
    /// The JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            ArbJson::Null => Value::Null,
            ArbJson::Bool(b) => Value::Bool(*b),
            ArbJson::Small(n) => Value::from(*n),
            ArbJson::Int(n) => Value::from(*n),
            ArbJson::UInt(n) => Value::from(*n),
            ArbJson::Float(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
            ArbJson::Edge(n) => {
                let x = NUMBERS[*n as usize % NUMBERS.len()];
                if x.fract() == 0.0 && (0.0..1e19).contains(&x) {
                    Value::from(x as u64)
                } else if x.fract() == 0.0 && (-1e18..0.0).contains(&x) {
                    Value::from(x as i64)
                } else {
                    Number::from_f64(x).map_or(Value::Null, Value::Number)
                }
            }
            ArbJson::Str(s) => Value::String(s.get()),
            ArbJson::Array(items) => Value::Array(items.iter().map(ArbJson::to_value).collect()),
            ArbJson::Object(fields) => {
                let mut map = Map::new();
                for (k, v) in fields {
                    map.insert(k.get(), v.to_value());
                }
                Value::Object(map)
            }
        }
    }
}

/// `true` when `text` has only unreserved characters and `%XX` escapes
/// (upper-case hex digits).
pub fn only_unreserved_and_escapes(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            i += 1;
        } else if b == b'%'
            && bytes.len() > i + 2
            && bytes[i + 1..i + 3]
                .iter()
                .all(|h| h.is_ascii_digit() || (b'A'..=b'F').contains(h))
        {
            i += 3;
        } else {
            return false;
        }
    }
    true
}

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) of `secs` after the epoch.
pub fn http_date(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs / 86_400;
    let (h, m, s) = (secs % 86_400 / 3600, secs % 3600 / 60, secs % 60);
    // Civil from days (Howard Hinnant), days since 1970-01-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{}, {day:02} {} {year:04} {h:02}:{m:02}:{s:02} GMT",
        DAYS[(days % 7) as usize],
        MONTHS[(month - 1) as usize]
    )
}
