//! The emulated account: users, rooms, conversations, and the service's rules.
//! No I/O here; `server.rs` turns HTTP into calls on [`State`] and back.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Write as _;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use crate::journal::Journal;
use crate::jwt::{self, TokenClaims};
use crate::{Fault, RateLimit};

mod service;
pub(crate) use service::RoomData;

/// The largest `limit` the users listing accepts (section 4.1).
pub const MAX_LIMIT: u64 = 200;
/// The `limit` the users listing applies when none is given.
pub const DEFAULT_LIMIT: u64 = 50;

/// A JSON answer: status and body.
pub type Answer = (u16, Value);

/// What a user was created with. It never changes after creation, which is
/// what lets [`StoredUser`] keep its listing text serialized once.
pub(crate) struct UserRecord {
    id: String,
    username: String,
    is_moderator: bool,
    chat_room: Option<String>,
    unique_user_identifier: Option<String>,
    /// `email`, `profilePic`, `externalUserId`, `meta`, as given.
    extra: Map<String, Value>,
}

/// A user as the account holds it: its record, whether it is active, and its
/// listing JSON, serialized once at creation so that a page of the users
/// listing is built by copying text rather than by serializing values.
struct StoredUser {
    record: UserRecord,
    /// `record.to_json()` as compact JSON text. The record's fields are private
    /// to this module and set only at creation, so this text cannot go stale.
    listing_json: String,
    active: bool,
    /// When it was created (the listing's `created`).
    created: SystemTime,
    /// When it was created, deactivated or reactivated last (validate access token's `updated`).
    updated: SystemTime,
    /// Removed for good (remove user): out of every index, kept only so that
    /// the indices of the others stay put.
    removed: bool,
}

impl UserRecord {
    /// The record as the users listing shows it, as compact JSON text, written
    /// field by field: it is built for every created or seeded user, and a
    /// `Value` tree would cost several times more. Keys come in byte order, as
    /// serde_json's sorted map writes them, so the text is the one the listing
    /// always sent. `created` is the ISO 8601 creation time. (The tests hold it
    /// to [`UserRecord::to_json`], byte for byte.)
    fn listing_json(&self, created: &str) -> String {
        let mut out = String::with_capacity(
            112 + 2 * self.id.len() + self.username.len() + 16 * self.extra.len(),
        );
        let extra = |out: &mut String, key: &str| {
            if let Some(value) = self.extra.get(key) {
                out.push(',');
                push_json_string(out, key);
                out.push(':');
                out.push_str(&value.to_string());
            }
        };
        out.push_str(r#"{"_id":"#);
        push_json_string(&mut out, &self.id);
        if let Some(room) = &self.chat_room {
            out.push_str(r#","chatRoom":"#);
            push_json_string(&mut out, room);
        }
        out.push_str(r#","created":"#);
        push_json_string(&mut out, created);
        extra(&mut out, "email");
        extra(&mut out, "externalUserId");
        out.push_str(r#","isModerator":"#);
        out.push_str(if self.is_moderator { "true" } else { "false" });
        extra(&mut out, "meta");
        out.push_str(r#","profilePic":"#);
        match self.extra.get("profilePic") {
            Some(given) => out.push_str(&given.to_string()),
            None => out.push_str(r#""""#),
        }
        if let Some(uid) = &self.unique_user_identifier {
            out.push_str(r#","uniqueUserIdentifier":"#);
            push_json_string(&mut out, uid);
        }
        out.push_str(r#","userId":"#);
        push_json_string(&mut out, &self.id);
        out.push_str(r#","username":"#);
        push_json_string(&mut out, &self.username);
        out.push('}');
        out
    }

    /// The listing record as a JSON value, the plain way: the reference the
    /// tests hold [`UserRecord::listing_json`] to.
    #[cfg(test)]
    fn to_json(&self, created: &str) -> Value {
        let mut out = Map::new();
        out.insert("_id".into(), json!(self.id));
        out.insert("userId".into(), json!(self.id));
        out.insert("username".into(), json!(self.username));
        out.insert("profilePic".into(), json!(""));
        out.insert("isModerator".into(), json!(self.is_moderator));
        for (k, v) in &self.extra {
            out.insert(k.clone(), v.clone());
        }
        if let Some(room) = &self.chat_room {
            out.insert("chatRoom".into(), json!(room));
        }
        if let Some(uid) = &self.unique_user_identifier {
            out.insert("uniqueUserIdentifier".into(), json!(uid));
        }
        out.insert("created".into(), json!(created));
        Value::Object(out)
    }
}

/// Appends `text` as a JSON string literal, escaped as serde_json escapes it.
fn push_json_string(out: &mut String, text: &str) {
    out.push('"');
    if !text.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        out.push_str(text);
    } else {
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 => {
                    // Writing to a String cannot fail.
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c => out.push(c),
            }
        }
    }
    out.push('"');
}

/// A live fault rule.
pub(crate) struct FaultRule {
    pub fault: Fault,
    pub remaining: u32,
}

/// Everything the emulator knows, behind one mutex.
pub(crate) struct State {
    pub private_key: String,
    pub public_key: String,
    pub rate_limit: RateLimit,
    pub rate_limit_headers: bool,
    jwt_secret: [u8; 32],
    id_prefix: u32,
    next_id: u64,
    users: Vec<StoredUser>,
    by_id: HashMap<String, usize>,
    by_unique_identifier: HashMap<String, usize>,
    /// Indices into `users` of the active users, ascending (creation order):
    /// a page of the listing is a slice of it, whatever `skip` is.
    active_indices: Vec<usize>,
    rooms: Vec<Value>,
    /// Each room's messages, channels and members, by room id.
    room_data: HashMap<String, RoomData>,
    conversations: HashMap<(String, String), Vec<Value>>,
    /// (room id, conversation id, memberOne, memberTwo), in creation order.
    conversation_members: Vec<(String, String, Value, Value)>,
    /// (bot id, room id) pairs where the bot was enabled.
    bot_rooms: HashSet<(String, String)>,
    /// `{chat_url}` of the room addresses create and update chat room answer.
    pub chat_url: String,
    /// Bots, in creation order.
    bots: Vec<Value>,
    /// How many times each room's users were all signed out (eject-all).
    ejections: HashMap<String, u64>,
    pub faults: Vec<FaultRule>,
    next_fault_id: u64,
    pub journal: Journal,
    /// Gated (method, path pattern) pairs: answered as outside the plan.
    pub gated: Vec<(String, String)>,
    /// Accepted arrivals per private key, oldest first.
    arrivals: HashMap<String, VecDeque<Instant>>,
    /// The signatures of the access tokens invalidated (unique per token).
    invalidated_tokens: HashSet<String>,
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    // The OS random source is always there on the machines this runs on; a
    // fixed fallback only weakens test tokens, it breaks nothing.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (nanos >> ((i % 16) * 8)) as u8 ^ i as u8;
        }
    }
    bytes
}

impl State {
    pub fn new(
        private_key: String,
        public_key: String,
        rate_limit: RateLimit,
        headers: bool,
        journal_capacity: usize,
    ) -> Self {
        State {
            private_key,
            public_key,
            rate_limit,
            rate_limit_headers: headers,
            jwt_secret: random_bytes(),
            id_prefix: u32::from_le_bytes(random_bytes()),
            next_id: 1,
            users: Vec::new(),
            by_id: HashMap::new(),
            by_unique_identifier: HashMap::new(),
            active_indices: Vec::new(),
            rooms: Vec::new(),
            room_data: HashMap::new(),
            conversations: HashMap::new(),
            conversation_members: Vec::new(),
            bot_rooms: HashSet::new(),
            chat_url: "http://127.0.0.1/chat".into(),
            bots: Vec::new(),
            ejections: HashMap::new(),
            faults: Vec::new(),
            next_fault_id: 1,
            journal: Journal::new(journal_capacity),
            gated: Vec::new(),
            arrivals: HashMap::new(),
            invalidated_tokens: HashSet::new(),
        }
    }

    /// Clears the account's data, faults, journal, gates and counters; keeps keys and limits.
    pub fn reset(&mut self) {
        let fresh = State::new(
            std::mem::take(&mut self.private_key),
            std::mem::take(&mut self.public_key),
            self.rate_limit,
            self.rate_limit_headers,
            self.journal.capacity(),
        );
        *self = State {
            jwt_secret: self.jwt_secret,
            chat_url: std::mem::take(&mut self.chat_url),
            ..fresh
        };
    }

    fn new_id(&mut self) -> String {
        let id = format!("{:08x}{:016x}", self.id_prefix, self.next_id);
        self.next_id += 1;
        id
    }

    // ---- journal and faults -------------------------------------------------

    pub fn add_fault(&mut self, fault: Fault) -> u64 {
        let id = self.next_fault_id;
        self.next_fault_id += 1;
        let remaining = fault.times;
        // A rule for no request is spent already: kept, it would never be removed.
        if remaining > 0 {
            self.faults.push(FaultRule { fault, remaining });
        }
        id
    }

    /// Takes one firing of the first live rule matching the request.
    pub fn take_fault(&mut self, method: &str, path: &str) -> Option<Fault> {
        let rule = self.faults.iter_mut().find(|r| {
            r.remaining > 0
                && r.fault
                    .method
                    .as_deref()
                    .is_none_or(|m| m.eq_ignore_ascii_case(method))
                && path_matches(&r.fault.path, path)
        })?;
        rule.remaining -= 1;
        let fired = rule.fault.clone();
        self.faults.retain(|r| r.remaining > 0);
        Some(fired)
    }

    pub fn is_gated(&self, method: &str, path: &str) -> bool {
        self.gated
            .iter()
            .any(|(m, p)| (m == "*" || m.eq_ignore_ascii_case(method)) && path_matches(p, path))
    }

    // ---- auth and rate limit ------------------------------------------------

    /// Section 5: the private key in `auth`, exactly.
    pub fn check_auth(&self, auth: Option<&str>) -> Result<(), Answer> {
        match auth {
            None | Some("") => Err((401, json!({"message": "Please pass the auth token"}))),
            Some(key) if key == self.private_key => Ok(()),
            Some(_) => Err((401, json!({"message": "invalid auth token"}))),
        }
    }

    /// The public key in `publicKey` (Validate Access Token, section 5.3).
    pub fn check_public_key(&self, key: Option<&str>) -> Result<(), Answer> {
        match key {
            None | Some("") => Err((401, json!({"message": "Please pass the publicKey"}))),
            Some(key) if key == self.public_key => Ok(()),
            Some(_) => Err((401, json!({"message": "invalid publicKey"}))),
        }
    }

    /// Counts an arrival for the account's private key. `Err(wait)` when over
    /// the limit: the time until the oldest counted arrival leaves the window.
    pub fn admit(&mut self, now: Instant) -> Result<RateStatus, Duration> {
        let RateLimit { requests, window } = self.rate_limit;
        let arrivals = self.arrivals.entry(self.private_key.clone()).or_default();
        while arrivals
            .front()
            .is_some_and(|t| now.duration_since(*t) >= window)
        {
            arrivals.pop_front();
        }
        let wait = |arrivals: &VecDeque<Instant>| {
            arrivals
                .front()
                .map(|t| (*t + window).saturating_duration_since(now))
                .unwrap_or_default()
        };
        if arrivals.len() >= requests as usize {
            return Err(wait(arrivals));
        }
        arrivals.push_back(now);
        Ok(RateStatus {
            limit: requests,
            remaining: requests.saturating_sub(arrivals.len() as u32),
            reset: wait(arrivals),
        })
    }

    // ---- the REST endpoints -------------------------------------------------

    /// The number of active users (the listing's `total`).
    pub fn active_user_count(&self) -> usize {
        self.active_indices.len()
    }

    /// GET /consumer/api/v2/users: the page's JSON text, or the error answer.
    ///
    /// The page is written straight into one buffer from the users' cached
    /// listing texts, so that its cost is a copy of the bytes it sends.
    pub fn list_users(&self, query: &HashMap<String, String>) -> Result<String, Answer> {
        let over_limit = || {
            (
                400,
                json!({"error": true, "message": "limit should be less than 200"}),
            )
        };
        let limit = match parse_count(query, "limit", DEFAULT_LIMIT) {
            Ok(n) if n <= MAX_LIMIT => n as usize,
            Ok(_) | Err(CountError::TooLarge) => return Err(over_limit()),
            Err(CountError::NotACount) => return Err(not_a_count("limit")),
        };
        let skip = match parse_count(query, "skip", 0) {
            Ok(n) => n,
            Err(CountError::TooLarge) => {
                return Err((
                    400,
                    json!({"error": true, "message": format!("skip should be at most {}", u64::MAX)}),
                ))
            }
            Err(CountError::NotACount) => return Err(not_a_count("skip")),
        };
        let start = usize::try_from(skip)
            .unwrap_or(usize::MAX)
            .min(self.active_indices.len());
        let end = start.saturating_add(limit).min(self.active_indices.len());
        let page = &self.active_indices[start..end];
        let text_bytes: usize = page
            .iter()
            .map(|&i| self.users[i].listing_json.len() + 1)
            .sum();
        let mut out = String::with_capacity(text_bytes + 80);
        // Writing to a String cannot fail.
        let _ = write!(
            out,
            r#"{{"total":{},"limit":{limit},"skip":{skip},"data":["#,
            self.active_indices.len()
        );
        for (n, &i) in page.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            out.push_str(&self.users[i].listing_json);
        }
        out.push_str("]}");
        Ok(out)
    }

    /// POST /consumer/api/v1/user
    pub fn create_user(&mut self, body: &Value) -> Answer {
        let invalid = |message: String| (400, json!({"error": true, "message": message}));
        let Some(fields) = body.as_object() else {
            return invalid("request body should be a JSON object".into());
        };
        let username = match fields.get("username") {
            // A display name shows something, and nothing that moves the cursor or rings a bell.
            Some(Value::String(s)) if s.trim().is_empty() => {
                return invalid("username should not be empty".into())
            }
            Some(Value::String(s)) if s.chars().any(char::is_control) => {
                return invalid("username should not contain control characters".into())
            }
            Some(Value::String(s)) => s.clone(),
            None => return invalid("username is required".into()),
            Some(_) => return invalid("username should be a string".into()),
        };
        // A field that is present must have its type: null is not "absent".
        let is_moderator = match fields.get("isModerator") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return invalid("isModerator should be a boolean".into()),
        };
        let optional_text = |key: &str| match fields.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(invalid(format!("{key} should be a string"))),
        };
        // Identifiers name something: an empty one would later match nothing or,
        // worse, be looked up as if it were real.
        let optional_identifier = |key: &str| match optional_text(key)? {
            Some(s) if s.is_empty() => Err(invalid(format!("{key} should not be empty"))),
            other => Ok(other),
        };
        let chat_room = match optional_identifier("chatRoom") {
            Ok(v) => v,
            Err(a) => return a,
        };
        let unique_user_identifier = match optional_identifier("uniqueUserIdentifier") {
            Ok(v) => v,
            Err(a) => return a,
        };
        let mut extra = Map::new();
        // Only these extras are kept (`listing_json` writes exactly these, and `meta`).
        for key in ["email", "profilePic"] {
            match optional_text(key) {
                Ok(Some(v)) => {
                    extra.insert(key.into(), json!(v));
                }
                Ok(None) => {}
                Err(a) => return a,
            }
        }
        // "a number or a string", as the create user page says (and update user takes).
        match fields.get("externalUserId") {
            None => {}
            Some(v @ (Value::String(_) | Value::Number(_))) => {
                extra.insert("externalUserId".into(), v.clone());
            }
            Some(_) => return invalid("externalUserId should be a number or a string".into()),
        }
        if let Some(meta) = fields.get("meta").filter(|m| !m.is_null()) {
            extra.insert("meta".into(), meta.clone());
        }
        if let Some(uid) = &unique_user_identifier {
            if self.by_unique_identifier.contains_key(uid) {
                return invalid("uniqueUserIdentifier is already in use".into());
            }
        }
        let id = self.new_id();
        let now = SystemTime::now();
        let claims = TokenClaims {
            user_id: id.clone(),
            username: username.clone(),
            is_moderator,
            chat_room: chat_room.clone(),
            issued_at: now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs(),
        };
        let token = jwt::sign(&self.jwt_secret, &claims);
        self.insert_user(
            UserRecord {
                id: id.clone(),
                username: username.clone(),
                is_moderator,
                chat_room: chat_room.clone(),
                unique_user_identifier,
                extra,
            },
            now,
            &iso8601(now),
        );
        let mut out = json!({
            "accessToken": token,
            "username": username,
            "userId": id,
            "isModerator": is_moderator,
        });
        if let Some(room) = chat_room {
            out["chatRoom"] = json!(room);
        }
        (200, out)
    }

    /// Adds an active user created at `at` (`created`: `at` in ISO 8601, formatted once per batch).
    fn insert_user(&mut self, record: UserRecord, at: SystemTime, created: &str) {
        let index = self.users.len();
        self.by_id.insert(record.id.clone(), index);
        if let Some(uid) = &record.unique_user_identifier {
            self.by_unique_identifier.insert(uid.clone(), index);
        }
        self.active_indices.push(index);
        self.users.push(StoredUser {
            listing_json: record.listing_json(created),
            record,
            active: true,
            created: at,
            updated: at,
            removed: false,
        });
    }

    /// The user named by a deactivate or reactivate body: exactly one of
    /// `userId` and `uniqueUserIdentifier`, a non-empty string. `Ok(None)` when
    /// no user has it; `Err` is the validation answer.
    fn named_user(&self, body: &Value) -> Result<Option<usize>, Answer> {
        let validation = |message: &str| Err((400, json!({"error": message})));
        let Some(fields) = body.as_object() else {
            return validation("request body should be a JSON object");
        };
        let present = |key: &str| fields.get(key);
        let index = match (present("userId"), present("uniqueUserIdentifier")) {
            (Some(_), Some(_)) => return validation(
                "\"userId\" and \"uniqueUserIdentifier\" are mutually exclusive: give exactly one",
            ),
            (None, None) => {
                return validation("\"userId\" or \"uniqueUserIdentifier\" is required")
            }
            // An empty identifier names nobody: refused, never looked up.
            (Some(Value::String(id)), None) if id.is_empty() => {
                return validation("\"userId\" must not be empty")
            }
            (None, Some(Value::String(uid))) if uid.is_empty() => {
                return validation("\"uniqueUserIdentifier\" must not be empty")
            }
            (Some(Value::String(id)), None) => self.by_id.get(id),
            (None, Some(Value::String(uid))) => self.by_unique_identifier.get(uid),
            (Some(_), None) => return validation("\"userId\" must be a string"),
            (None, Some(_)) => return validation("\"uniqueUserIdentifier\" must be a string"),
        };
        Ok(index.copied())
    }

    /// DELETE /consumer/api/v2/user/deactivate
    pub fn deactivate_user(&mut self, body: &Value) -> Answer {
        let index = match self.named_user(body) {
            Ok(index) => index,
            Err(answer) => return answer,
        };
        match index.filter(|&i| self.users[i].active) {
            Some(i) => {
                self.users[i].active = false;
                self.users[i].updated = SystemTime::now();
                if let Ok(at) = self.active_indices.binary_search(&i) {
                    self.active_indices.remove(at);
                }
                (200, json!({"success": true, "message": "user deactivated"}))
            }
            None => (400, json!({"message": "user not found"})),
        }
    }

    /// POST /consumer/api/v2/user/reactivate: the inverse of deactivate. A user
    /// that is not deactivated, like one that does not exist, is "user not
    /// found" (as deactivating a deactivated user is).
    pub fn reactivate_user(&mut self, body: &Value) -> Answer {
        let index = match self.named_user(body) {
            Ok(index) => index,
            Err(answer) => return answer,
        };
        match index.filter(|&i| !self.users[i].active) {
            Some(i) => {
                self.users[i].active = true;
                self.users[i].updated = SystemTime::now();
                // Back at its place in creation order.
                if let Err(at) = self.active_indices.binary_search(&i) {
                    self.active_indices.insert(at, i);
                }
                (200, json!({"success": true, "message": "user reactivated"}))
            }
            None => (400, json!({"message": "user not found"})),
        }
    }

    /// GET /consumer/api/v2/{room|chatroom}/:roomId/conversation/:conversationId/messages
    pub fn conversation_messages(&self, room_id: &str, conversation_id: &str) -> Answer {
        if !self.rooms.iter().any(|r| r["roomId"] == room_id) {
            return (
                400,
                json!({"success": false, "message": "chat room not found"}),
            );
        }
        match self
            .conversations
            .get(&(room_id.to_owned(), conversation_id.to_owned()))
        {
            Some(messages) => (200, Value::Array(messages.clone())),
            None => (
                400,
                json!({"success": false, "message": "conversation not found"}),
            ),
        }
    }

    /// GET /consumer/api/v1/chatrooms
    pub fn list_chat_rooms(&self) -> Answer {
        (200, Value::Array(self.rooms.clone()))
    }

    /// GET /consumer/api/v1/validate (emulator-defined shape, section 4.7)
    pub fn validate_token(&self, token: Option<&str>) -> Answer {
        match self.token_user(token) {
            Ok((claims, _)) => {
                let mut out = json!({
                    "valid": true,
                    "userId": claims.user_id,
                    "username": claims.username,
                    "isModerator": claims.is_moderator,
                });
                if let Some(room) = claims.chat_room {
                    out["chatRoom"] = json!(room);
                }
                (200, out)
            }
            Err(message) => (400, json!({"valid": false, "message": message})),
        }
    }

    /// The `accessToken` of a validate or invalidate body; `Err` is the validation answer.
    fn body_token(body: &Value) -> Result<&str, Answer> {
        let validation = |message: &str| Err((400, json!({"error": message})));
        let Some(fields) = body.as_object() else {
            return validation("request body should be a JSON object");
        };
        match fields.get("accessToken") {
            None => validation("\"accessToken\" is required"),
            Some(Value::String(t)) if t.is_empty() => {
                validation("\"accessToken\" must not be empty")
            }
            Some(Value::String(t)) => Ok(t),
            Some(_) => validation("\"accessToken\" must be a string"),
        }
    }

    /// POST /consumer/api/v1/user/accessToken/validate: the user's record as
    /// the service stores it, with the token's `iat`. A token that is not valid
    /// (malformed, forged, invalidated, its user gone or deactivated) is 400
    /// `{"message": "invalid accessToken"}`.
    pub fn validate_access_token(&self, body: &Value) -> Answer {
        let token = match State::body_token(body) {
            Ok(token) => token,
            Err(answer) => return answer,
        };
        let Ok((claims, index)) = self.token_user(Some(token)) else {
            return invalid_access_token();
        };
        let user = &self.users[index];
        let record = &user.record;
        let account = format!("{:08x}{:016x}", self.id_prefix, 0);
        let mut out = json!({
            "_id": record.id,
            "username": record.username,
            "isModerator": record.is_moderator,
            "parentCustomerAccount": account,
            "customer": account,
            "createdUsingApi": true,
            "created": iso8601(user.created),
            "updated": iso8601(user.updated),
            "__v": 0,
            "iat": claims.issued_at,
        });
        if let Some(room) = &record.chat_room {
            out["chatRoom"] = json!(room);
        }
        if let Some(external) = record.extra.get("externalUserId") {
            out["externalUserId"] = external.clone();
        }
        (200, out)
    }

    /// POST /consumer/api/v1/user/accesstoken/invalidate: the token no longer
    /// validates nor signs anyone in. Any token the emulator issued to a user it
    /// still has can be invalidated, a deactivated user's too (so that
    /// reactivation does not bring it back); one that is not (malformed, forged,
    /// invalidated already) is 400 `{"message": "invalid accessToken"}`.
    pub fn invalidate_access_token(&mut self, body: &Value) -> Answer {
        let token = match State::body_token(body) {
            Ok(token) => token,
            Err(answer) => return answer,
        };
        let Ok(claims) = jwt::verify(&self.jwt_secret, token) else {
            return invalid_access_token();
        };
        let signature = token.rsplit('.').next().unwrap_or_default();
        if !self.by_id.contains_key(&claims.user_id)
            || !self.invalidated_tokens.insert(signature.to_owned())
        {
            return invalid_access_token();
        }
        (200, json!({"success": true}))
    }

    /// The signed-in user behind an access token, and its index: the token
    /// is the emulator's, not invalidated, and its user exists and is active.
    fn token_user(&self, token: Option<&str>) -> Result<(TokenClaims, usize), &'static str> {
        let token = token
            .filter(|t| !t.is_empty())
            .ok_or("accessToken is required")?;
        let claims = jwt::verify(&self.jwt_secret, token)?;
        if self
            .invalidated_tokens
            .contains(token.rsplit('.').next().unwrap_or_default())
        {
            return Err("the token was invalidated");
        }
        let index = *self
            .by_id
            .get(&claims.user_id)
            .ok_or("the token's user does not exist")?;
        if !self.users[index].active {
            return Err("the token's user is deactivated");
        }
        Ok((claims, index))
    }

    /// Section 4.6: who a token signs in to `room_id`, and whether as moderator.
    pub fn sign_in(&self, room_id: &str, token: Option<&str>) -> Result<SignIn, (u16, String)> {
        if !self.rooms.iter().any(|r| r["roomId"] == room_id) {
            return Err((404, format!("There is no chat room \"{room_id}\".")));
        }
        let (claims, _) = self.token_user(token).map_err(|m| (401, m.to_owned()))?;
        // Section 3: a room-scoped moderator is a regular user in any other room.
        let moderator = claims.is_moderator
            && claims
                .chat_room
                .as_deref()
                .is_none_or(|scoped| scoped == room_id);
        let room_name = self
            .rooms
            .iter()
            .find(|r| r["roomId"] == room_id)
            .and_then(|r| r["name"].as_str())
            .unwrap_or(room_id)
            .to_owned();
        Ok(SignIn {
            username: claims.username,
            room_name,
            moderator,
        })
    }

    // ---- admin --------------------------------------------------------------

    /// Adds `count` users quickly (no token is signed for them).
    pub fn seed_users(&mut self, count: usize) -> usize {
        self.users.reserve(count);
        self.by_id.reserve(count);
        self.active_indices.reserve(count);
        // One creation time for the batch, formatted once.
        let now = SystemTime::now();
        let created = iso8601(now);
        for _ in 0..count {
            let id = self.new_id();
            let n = self.users.len() + 1;
            self.insert_user(
                UserRecord {
                    id,
                    username: format!("seed-user-{n}"),
                    is_moderator: false,
                    chat_room: None,
                    unique_user_identifier: None,
                    extra: Map::new(),
                },
                now,
                &created,
            );
        }
        self.active_user_count()
    }

    pub fn create_room(&mut self, spec: &Value) -> Result<Value, String> {
        let Some(fields) = spec.as_object() else {
            return Err("a room should be a JSON object".into());
        };
        let mut room = service::room_defaults("");
        for (k, v) in fields {
            room[k] = v.clone();
        }
        match &room["roomId"] {
            Value::String(s) if s.is_empty() => {
                let id = self.new_id();
                room["roomId"] = json!(format!("r{}", &id[id.len() - 9..]));
            }
            Value::String(s) if self.rooms.iter().any(|r| r["roomId"] == *s) => {
                return Err(format!("room {s} already exists"))
            }
            Value::String(_) => {}
            _ => return Err("roomId should be a string".into()),
        }
        if !room["name"].is_string() {
            return Err("name should be a string".into());
        }
        self.insert_room(room.clone());
        Ok(room)
    }

    pub fn add_conversation(&mut self, spec: &Value) -> Result<Value, String> {
        let room_id = spec["roomId"]
            .as_str()
            .ok_or("roomId (string) is required")?;
        if !self.rooms.iter().any(|r| r["roomId"] == room_id) {
            return Err(format!("no room {room_id}; create it first"));
        }
        let conversation_id = match &spec["conversationId"] {
            Value::String(s) => s.clone(),
            Value::Null => self.new_id(),
            _ => return Err("conversationId should be a string".into()),
        };
        let items = spec["messages"]
            .as_array()
            .ok_or("messages (array) is required")?;
        let mut records = Vec::with_capacity(items.len());
        for item in items {
            let text = item["messages"]
                .as_str()
                .ok_or("each message needs \"messages\" (its text)")?;
            let mut author = match &item["user"] {
                Value::Object(o) => o.clone(),
                Value::Null => Map::new(),
                _ => return Err("user should be an object".into()),
            };
            if !author.contains_key("_id") {
                author.insert("_id".into(), json!(self.new_id()));
            }
            if !author.get("username").is_some_and(Value::is_string) {
                return Err("each message's user needs a username".into());
            }
            let created = match &item["created"] {
                Value::String(s) => s.clone(),
                _ => iso8601(SystemTime::now()),
            };
            records.push(json!({
                "_id": self.new_id(),
                "conversation": conversation_id,
                "messages": text,
                "created": created,
                "user": author,
            }));
        }
        let known = self
            .conversation_members
            .iter()
            .any(|(r, c, _, _)| r == room_id && *c == conversation_id);
        if !known {
            let (one, two) = self.conversation_pair(spec, &records)?;
            self.conversation_members
                .push((room_id.to_owned(), conversation_id.clone(), one, two));
        }
        self.conversations
            .entry((room_id.to_owned(), conversation_id.clone()))
            .or_default()
            .extend(records);
        let all = self.conversations[&(room_id.to_owned(), conversation_id.clone())].clone();
        Ok(json!({"conversationId": conversation_id, "messages": all}))
    }

    // ---- rooms: eject all ---------------------------------------------------

    /// POST /api/v1/chatRoom/:roomId/eject-all: signs every user out of the room
    /// (the emulator counts it: `ejections` in the room record of the admin API).
    pub fn eject_all_users(&mut self, room_id: &str) -> Answer {
        if !self.rooms.iter().any(|r| r["roomId"] == room_id) {
            return (404, json!({"message": "invalid chatroom id"}));
        }
        *self.ejections.entry(room_id.to_owned()).or_default() += 1;
        (200, json!({"success": true}))
    }

    /// How many times `room_id`'s users were all signed out.
    pub fn ejections(&self, room_id: &str) -> u64 {
        self.ejections.get(room_id).copied().unwrap_or(0)
    }

    // ---- bots ------------------------------------------------------------------

    /// A bot made from `spec` (admin API): the fields create bot takes, checked
    /// as the service checks them; `_id`, `customer` and `created` added.
    pub fn add_bot(&mut self, spec: &Value) -> Result<Value, String> {
        let Some(fields) = spec.as_object() else {
            return Err("a bot should be a JSON object".into());
        };
        for required in ["name", "webhookURL"] {
            if !fields.get(required).is_some_and(Value::is_string) {
                return Err(format!("{required} (string) is required"));
            }
        }
        let id = match fields.get("_id") {
            None => self.new_id(),
            Some(Value::String(id))
                if !id.is_empty() && !self.bots.iter().any(|b| b["_id"] == *id) =>
            {
                id.clone()
            }
            Some(_) => return Err("_id should be a new, non-empty string".into()),
        };
        let fields = &fields
            .iter()
            .filter(|(k, _)| *k != "_id")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Map<String, Value>>();
        let mut bot = json!({
            "_id": id,
            "description": "",
            "trigger": "mention",
            "messageVisibility": "public",
            "isAllowedInAllChatRooms": false,
            "messageHistoryLimit": 0,
            "metadata": "",
            "enabled": true,
            "customer": "emulated-customer",
            "created": iso8601(SystemTime::now()),
        });
        let record = bot.as_object_mut().expect("an object");
        if let Err((_, answer)) = bot_fields_check(fields, record) {
            return Err(answer["message"]
                .as_str()
                .unwrap_or("invalid bot")
                .to_owned());
        }
        let name = &fields["name"];
        if self.bots.iter().any(|b| b["name"] == *name) {
            return Err(format!("a bot named {name} exists"));
        }
        for (k, v) in fields {
            record.insert(k.clone(), v.clone());
        }
        self.bots.push(bot.clone());
        Ok(bot)
    }

    /// PUT /consumer/api/v2/bot/:botId: any of create bot's fields; the same
    /// trigger/visibility rule; names unique in the account.
    pub fn update_bot(&mut self, bot_id: &str, body: &Value) -> Answer {
        let Some(index) = self.bots.iter().position(|b| b["_id"] == bot_id) else {
            return bot_not_found();
        };
        let Some(fields) = body.as_object() else {
            return invalid_bot_request("the body should be a JSON object".into());
        };
        let mut updated = self.bots[index].clone();
        let record = updated.as_object_mut().expect("an object");
        if let Err(answer) = bot_fields_check(fields, record) {
            return answer;
        }
        if let Some(name) = fields.get("name") {
            if self
                .bots
                .iter()
                .enumerate()
                .any(|(i, b)| i != index && b["name"] == *name)
            {
                return (
                    400,
                    json!({"success": false, "message": format!("a bot named {name} already exists")}),
                );
            }
        }
        for (k, v) in fields {
            record.insert(k.clone(), v.clone());
        }
        self.bots[index] = updated.clone();
        (200, json!({"success": true, "bot": updated}))
    }

    /// Every user, deactivated ones too, in creation order: the listing record
    /// plus `"active"` (GET /_emulator/users).
    pub fn all_users(&self) -> Vec<Value> {
        self.users
            .iter()
            .filter(|user| !user.removed)
            .map(|user| {
                let mut record: Value =
                    serde_json::from_str(&user.listing_json).unwrap_or_else(|_| json!({}));
                record["active"] = json!(user.active);
                record
            })
            .collect()
    }
}

/// Where the account stands against its rate limit after an admitted arrival.
/// An unknown bot: a 401 that is not an authentication failure (the service's own answer).
fn bot_not_found() -> Answer {
    (
        401,
        json!({"success": false, "message": "bot not found, or customer does not have permission to modify the bot"}),
    )
}

fn invalid_bot_request(details: String) -> Answer {
    (
        400,
        json!({"success": false, "message": "invalid request", "error": details}),
    )
}

/// Checks bot `fields` (of create or update) against the service's rules, the
/// result of applying them to `current` included (the trigger/visibility rule).
fn bot_fields_check(
    fields: &Map<String, Value>,
    current: &Map<String, Value>,
) -> Result<(), Answer> {
    for (name, value) in fields {
        let ok = match name.as_str() {
            "name" => value
                .as_str()
                .is_some_and(|s| !s.is_empty() && s.chars().count() <= 100),
            "webhookURL" => value.as_str().is_some_and(|s| {
                let rest = s
                    .strip_prefix("https://")
                    .or_else(|| s.strip_prefix("http://"));
                rest.is_some_and(|r| !r.is_empty() && !r.chars().any(char::is_whitespace))
            }),
            "description" => value.as_str().is_some_and(|s| s.chars().count() <= 1000),
            "trigger" => matches!(value.as_str(), Some("message" | "mention")),
            "messageVisibility" => matches!(value.as_str(), Some("public" | "private")),
            "isAllowedInAllChatRooms" | "enabled" => value.is_boolean(),
            "messageHistoryLimit" => value.as_u64().is_some_and(|n| n <= 100),
            "metadata" => value.as_str().is_some_and(|s| s.chars().count() <= 10_000),
            _ => return Err(invalid_bot_request(format!("\"{name}\" is not allowed"))),
        };
        if !ok {
            return Err(invalid_bot_request(format!("\"{name}\" is not valid")));
        }
    }
    let effective = |name: &str| {
        fields
            .get(name)
            .or_else(|| current.get(name))
            .and_then(Value::as_str)
    };
    if effective("trigger") == Some("message") && effective("messageVisibility") == Some("private")
    {
        return Err((
            400,
            json!({"success": false, "message": "Error: Bots cannot be configured to trigger on every message when message visibility is set to private. Please change the trigger to mention or the message visibility to public."}),
        ));
    }
    Ok(())
}

pub struct RateStatus {
    pub limit: u32,
    pub remaining: u32,
    pub reset: Duration,
}

/// The outcome of a browser sign-in.
pub struct SignIn {
    pub username: String,
    pub room_name: String,
    pub moderator: bool,
}

/// 400 `{"message": "invalid accessToken"}` (field notes).
fn invalid_access_token() -> Answer {
    (400, json!({"message": "invalid accessToken"}))
}

/// `pattern` is an exact path, or a prefix when it ends in `*`.
pub fn path_matches(pattern: &str, path: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => pattern == path,
    }
}

/// Why a query parameter is not a count.
#[derive(Debug, PartialEq)]
enum CountError {
    /// Not a non-negative integer at all.
    NotACount,
    /// A non-negative integer, but past `u64::MAX`.
    TooLarge,
}

/// Parses a non-negative integer query parameter (`default` when absent).
fn parse_count(
    query: &HashMap<String, String>,
    name: &str,
    default: u64,
) -> Result<u64, CountError> {
    let Some(text) = query.get(name) else {
        return Ok(default);
    };
    let digits = text.strip_prefix('+').unwrap_or(text);
    match text.parse::<u64>() {
        Ok(n) => Ok(n),
        Err(_) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            Err(CountError::TooLarge)
        }
        Err(_) => Err(CountError::NotACount),
    }
}

fn not_a_count(name: &str) -> Answer {
    (
        400,
        json!({"error": true, "message": format!("{name} should be a non-negative integer")}),
    )
}

/// `2024-01-15T15:21:44.293Z`
pub fn iso8601(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_pages_are_the_records_json_over_the_active_users() {
        let mut state = State::new("sk".into(), "pk".into(), RateLimit::default(), false, 0);
        state.seed_users(5);
        let (status, bob) = state.create_user(&json!({
            "username": "bob \"b\" \u{e9}", "isModerator": true, "chatRoom": "r1",
            "uniqueUserIdentifier": "crm-1", "email": "bob@example.com",
            "profilePic": "https://p/b.png", "externalUserId": "ext-9", "meta": {"a": [1, null]}
        }));
        assert_eq!(status, 200);
        let (status, _) = state.create_user(&json!({
            "username": "back\\slash \u{2028}", "email": "q\"b\\c\u{1}\u{1f}\t\n\r\u{7f}\u{8}\u{c}",
            "externalUserId": "", "uniqueUserIdentifier": "id \"2\" \\ \u{1}\u{8}\u{c}\t\n\r\u{1f}\u{7f}", "meta": null
        }));
        assert_eq!(status, 200);
        state.seed_users(3);
        for body in [
            json!({"userId": state.users[1].record.id}),
            json!({"uniqueUserIdentifier": "crm-1"}),
        ] {
            assert_eq!(state.deactivate_user(&body).0, 200);
        }
        let active: Vec<Value> = state
            .users
            .iter()
            .filter(|u| u.active)
            .map(|u| {
                let listed: Value = serde_json::from_str(&u.listing_json).unwrap();
                let created = listed["created"].as_str().unwrap();
                assert!(humantime::parse_rfc3339(created).is_ok(), "{created}");
                let reference = u.record.to_json(created);
                // Byte for byte what serializing the value with sorted keys gives.
                let sorted: std::collections::BTreeMap<&String, &Value> =
                    reference.as_object().unwrap().iter().collect();
                assert_eq!(u.listing_json, serde_json::to_string(&sorted).unwrap());
                reference
            })
            .collect();
        assert_eq!(active.len(), 8);
        assert!(!active.iter().any(|u| u["userId"] == bob["userId"]));
        for (limit, skip) in [
            (50, 0),
            (2, 0),
            (2, 3),
            (200, 6),
            (5, 7),
            (0, 0),
            (1, u64::MAX),
        ] {
            let query = HashMap::from([
                ("limit".to_owned(), limit.to_string()),
                ("skip".to_owned(), skip.to_string()),
            ]);
            let page: Value = serde_json::from_str(&state.list_users(&query).unwrap()).unwrap();
            let from = usize::try_from(skip)
                .unwrap_or(usize::MAX)
                .min(active.len());
            let to = from.saturating_add(limit).min(active.len());
            assert_eq!(
                page,
                json!({"total": 8, "limit": limit, "skip": skip, "data": active[from..to]}),
                "limit {limit} skip {skip}"
            );
        }
    }

    #[test]
    fn matches_paths() {
        assert!(path_matches("/a/*", "/a/b"));
        assert!(path_matches("/a", "/a"));
        assert!(!path_matches("/a", "/a/b"));
    }
}
