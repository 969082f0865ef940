//! The operations `operations.md` documents beyond the contract's section 4:
//! rooms, room and channel messages, the conversations listing, users v2,
//! members and bots; and the admin API that seeds them.

use super::*;

mod shapes;
pub(crate) use shapes::ListingShape;

/// The room settings the create and update pages take as `"on"`/`"off"`
/// (room records answer them as booleans).
const ON_OFF_FIELDS: &[&str] = &[
    "passwordProtected",
    "preModeratedChatRoom",
    "enableOneToOneChat",
    "moderatorOnlyOneToOneChat",
    "enableChannels",
    "defaultNotificationEnabled",
    "showNotificationForAllChannels",
    "enableLikeMessage",
    "hideInviteButton",
];

/// The roles of a room's members.
const ROLES: &[&str] = &["admin", "moderator", "guest", "user"];

/// The most characters of a room's or channel's `metadata`.
const MAX_METADATA: usize = 1000;

/// A room's messages, channels and members.
pub(crate) struct RoomData {
    /// The `_id` of the author of the room's system messages.
    system_id: String,
    messages: MessageLog,
    channels: Vec<Channel>,
    members: Vec<Member>,
}

struct Channel {
    /// `{"_id","channelName","enabled","notifyAllUsers","metadata","roomId"}`
    record: Value,
    messages: MessageLog,
}

struct Member {
    /// Index into `State::users`.
    user: usize,
    role: String,
    created: SystemTime,
}

/// Messages oldest first, each serialized once as it is added, so that a page
/// is a slice of the log copied out as text (whatever its size or `skip`).
#[derive(Default)]
struct MessageLog {
    items: Vec<StoredMessage>,
    /// Positions in `items` of the messages carrying a file, ascending.
    with_file: Vec<usize>,
    /// How its pages are served (admin `PUT /_emulator/listing`): as the service does by default.
    shape: ListingShape,
}

struct StoredMessage {
    /// The message's `_id`; for a record stored verbatim without a string `_id`, a handle of
    /// the emulator's that the record does not show (admin deletions name it).
    id: String,
    json: String,
}

impl MessageLog {
    fn push(&mut self, id: String, json: String, has_file: bool) {
        if has_file {
            self.with_file.push(self.items.len());
        }
        self.items.push(StoredMessage { id, json });
    }

    fn remove(&mut self, id: &str) -> bool {
        let Some(at) = self.items.iter().position(|m| m.id == id) else {
            return false;
        };
        self.items.remove(at);
        self.with_file.retain(|&i| i != at);
        for i in &mut self.with_file {
            if *i > at {
                *i -= 1;
            }
        }
        true
    }

    fn clear(&mut self) {
        self.items.clear();
        self.with_file.clear();
    }

    /// The listing page `{"limit","skip","totalRecords","count","messages"}` as JSON text
    /// (`limit` lowered to the shape's cap, the text pretty-printed when the shape says so).
    fn page(&self, limit: u64, skip: u64, only_files: bool) -> String {
        let limit = self.shape.limit_cap.map_or(limit, |cap| limit.min(cap));
        let total = if only_files {
            self.with_file.len()
        } else {
            self.items.len()
        };
        let start = usize::try_from(skip).unwrap_or(usize::MAX).min(total);
        let end = start
            .saturating_add(usize::try_from(limit).unwrap_or(usize::MAX))
            .min(total);
        let pick = |n: usize| {
            if only_files {
                &self.items[self.with_file[n]]
            } else {
                &self.items[n]
            }
        };
        let bytes: usize = (start..end).map(|n| pick(n).json.len() + 1).sum();
        let mut out = String::with_capacity(bytes + 96);
        // Writing to a String cannot fail.
        let _ = write!(
            out,
            r#"{{"limit":{limit},"skip":{skip},"totalRecords":{total},"count":{},"messages":["#,
            end - start
        );
        for n in start..end {
            if n > start {
                out.push(',');
            }
            out.push_str(&pick(n).json);
        }
        out.push_str("]}");
        if self.shape.pretty {
            shapes::pretty_json(&out)
        } else {
            out
        }
    }
}

/// Who a message is from, as its `user` shows it.
struct Author {
    id: String,
    unique_user_identifier: Option<String>,
    username: String,
    is_moderator: bool,
}

/// A message about to be stored.
struct NewMessage<'a> {
    /// `"chatRoom"` or `"channel"`, and that room's or channel's id.
    container: (&'static str, &'a str),
    text: &'a str,
    author: &'a Author,
    action_buttons: Option<&'a Value>,
    file: Option<&'a Value>,
    created: &'a str,
}

/// A message record as room_messages shows it, as compact JSON text.
fn message_json(id: &str, message: &NewMessage, customer: &str) -> String {
    let mut out = String::with_capacity(320 + message.text.len());
    out.push_str(r#"{"_id":"#);
    push_json_string(&mut out, id);
    out.push_str(r#","created":"#);
    push_json_string(&mut out, message.created);
    out.push(',');
    push_json_string(&mut out, message.container.0);
    out.push(':');
    push_json_string(&mut out, message.container.1);
    out.push_str(r#","message":"#);
    push_json_string(&mut out, message.text);
    out.push_str(r#","user":{"_id":"#);
    push_json_string(&mut out, &message.author.id);
    out.push_str(r#","uniqueUserIdentifier":"#);
    match &message.author.unique_user_identifier {
        Some(uid) => push_json_string(&mut out, uid),
        None => out.push_str("null"),
    }
    out.push_str(r#","username":"#);
    push_json_string(&mut out, &message.author.username);
    out.push_str(r#","isModerator":"#);
    out.push_str(if message.author.is_moderator {
        "true"
    } else {
        "false"
    });
    out.push_str(r#","parentCustomerAccount":"#);
    push_json_string(&mut out, customer);
    out.push_str(r#"},"likes":[],"actionButtons":"#);
    match message.action_buttons {
        Some(buttons) => out.push_str(&buttons.to_string()),
        None => out.push_str("[]"),
    }
    out.push_str(r#","file":"#);
    match message.file {
        Some(file) => out.push_str(&file.to_string()),
        None => out.push_str("null"),
    }
    out.push_str(r#","customer":"#);
    push_json_string(&mut out, customer);
    out.push_str(r#","__v":0}"#);
    out
}

/// A room record with every documented setting at its default.
pub(super) fn room_defaults(room_id: &str) -> Value {
    json!({
        "roomId": room_id,
        "name": "",
        "description": "",
        "metadata": "",
        "roomPassword": null,
        "passwordProtected": false,
        "enableOneToOneChat": false,
        "moderatorOnlyOneToOneChat": false,
        "enableChannels": false,
        "showNotificationForAllChannels": false,
        "enableLikeMessage": false,
        "defaultNotificationEnabled": false,
        "preModeratedChatRoom": false,
        "fileSharingMode": "",
        "chatRoomPermissionLevel": "public",
        "chatOff": false,
        "chatOffMessage": "",
    })
}

// ---- the service's validation objects (the pages print Joi's) -----------------

/// 400 `{"error": {"_original": body, "details": [one detail about `key`]}}`.
fn joi(original: &Value, key: &str, message: String, kind: &str, extra: Value) -> Answer {
    let mut context = Map::new();
    context.insert("label".into(), json!(key));
    context.insert("key".into(), json!(key));
    if let Value::Object(extra) = extra {
        context.extend(extra);
    }
    let path: Vec<&str> = key.split('.').collect();
    (
        400,
        json!({"error": {"_original": original, "details": [
            {"message": message, "path": path, "type": kind, "context": context}
        ]}}),
    )
}

fn joi_required(original: &Value, key: &str) -> Answer {
    joi(
        original,
        key,
        format!("\"{key}\" is required"),
        "any.required",
        json!({}),
    )
}

fn joi_string(original: &Value, key: &str) -> Answer {
    joi(
        original,
        key,
        format!("\"{key}\" must be a string"),
        "string.base",
        json!({}),
    )
}

fn joi_boolean(original: &Value, key: &str) -> Answer {
    joi(
        original,
        key,
        format!("\"{key}\" must be a boolean"),
        "boolean.base",
        json!({}),
    )
}

fn joi_object(original: &Value, key: &str) -> Answer {
    joi(
        original,
        key,
        format!("\"{key}\" must be of type object"),
        "object.base",
        json!({}),
    )
}

fn joi_unknown(original: &Value, key: &str) -> Answer {
    joi(
        original,
        key,
        format!("\"{key}\" is not allowed"),
        "object.unknown",
        json!({}),
    )
}

fn joi_max(original: &Value, key: &str, limit: usize) -> Answer {
    joi(
        original,
        key,
        format!("\"{key}\" length must be less than or equal to {limit} characters long"),
        "string.max",
        json!({"limit": limit}),
    )
}

/// `"key" must be one of [on, off]` (`valids` printed as Joi prints them).
fn joi_one_of(original: &Value, key: &str, valids: &[Value], given: &Value) -> Answer {
    let listed: Vec<String> = valids
        .iter()
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| v.to_string())
        })
        .collect();
    joi(
        original,
        key,
        format!("\"{key}\" must be one of [{}]", listed.join(", ")),
        "any.only",
        json!({"valids": valids, "value": given}),
    )
}

/// A body that must be a JSON object (absent: an empty one).
fn body_fields(body: &Value) -> Result<Map<String, Value>, Answer> {
    match body {
        Value::Null => Ok(Map::new()),
        Value::Object(fields) => Ok(fields.clone()),
        _ => Err(joi_object(body, "value")),
    }
}

/// A text of at most `max` characters; `Err` is the validation answer.
fn bounded_text(original: &Value, key: &str, value: &Value, max: usize) -> Result<(), Answer> {
    match value.as_str() {
        Some(text) if text.chars().count() <= max => Ok(()),
        Some(_) => Err(joi_max(original, key, max)),
        None => Err(joi_string(original, key)),
    }
}

fn invalid_room() -> Answer {
    (404, json!({"message": "invalid chatroom id"}))
}

fn user_not_found() -> Answer {
    (400, json!({"message": "user not found"}))
}

fn is_https_url(text: &str) -> bool {
    text.strip_prefix("https://")
        .is_some_and(|rest| !rest.is_empty() && !rest.chars().any(char::is_whitespace))
}

impl State {
    /// The account's id (`customer`, `parentCustomerAccount`).
    fn account_id(&self) -> String {
        format!("{:08x}{:016x}", self.id_prefix, 0)
    }

    fn room_index(&self, room_id: &str) -> Option<usize> {
        self.rooms.iter().position(|r| r["roomId"] == room_id)
    }

    /// Stores a room record (its `roomId` set and new) with empty data.
    pub(super) fn insert_room(&mut self, room: Value) {
        let room_id = room["roomId"].as_str().unwrap_or_default().to_owned();
        let system_id = self.new_id();
        self.room_data.insert(
            room_id,
            RoomData {
                system_id,
                messages: MessageLog::default(),
                channels: Vec::new(),
                members: Vec::new(),
            },
        );
        self.rooms.push(room);
    }

    /// A new room id: 9 characters of `[A-Za-z0-9_-]`, as the service's.
    fn new_room_id(&self) -> String {
        const ALPHABET: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
        loop {
            let bytes: [u8; 9] = random_bytes();
            let id: String = bytes
                .iter()
                .map(|b| ALPHABET[usize::from(b & 63)] as char)
                .collect();
            if self.room_index(&id).is_none() {
                return id;
            }
        }
    }

    fn room_url(&self, room_id: &str) -> String {
        format!("{}/{room_id}", self.chat_url)
    }

    // ---- rooms ----------------------------------------------------------------

    /// POST /consumer/api/v1/chatroom
    pub fn create_chat_room(&mut self, body: &Value) -> Answer {
        let fields = match body_fields(body) {
            Ok(fields) => fields,
            Err(answer) => return answer,
        };
        let mut room = room_defaults("");
        for (key, value) in &fields {
            // The page's table spells it so; room records spell it `enableChannels`.
            let target = if key == "enableChnnels" {
                "enableChannels"
            } else {
                key.as_str()
            };
            match target {
                k if ON_OFF_FIELDS.contains(&k) => match value.as_str() {
                    Some("on") => room[k] = json!(true),
                    Some("off") => room[k] = json!(false),
                    _ => return joi_one_of(body, key, &[json!("on"), json!("off")], value),
                },
                "name" | "description" | "customCSS" | "mainColor" | "roomPassword" => {
                    if !value.is_string() {
                        return joi_string(body, key);
                    }
                    room[target] = value.clone();
                }
                "metadata" => {
                    if let Err(answer) = bounded_text(body, key, value, MAX_METADATA) {
                        return answer;
                    }
                    room[target] = value.clone();
                }
                "fileSharingMode" | "chatRoomPermissionLevel" => {
                    let valids: &[&str] = if target == "fileSharingMode" {
                        &["", "imageSharing", "fileAndImageSharing"]
                    } else {
                        &["public", "provisioned_users", "members"]
                    };
                    if !value.as_str().is_some_and(|v| valids.contains(&v)) {
                        let valids: Vec<Value> = valids.iter().map(|v| json!(v)).collect();
                        return joi_one_of(body, key, &valids, value);
                    }
                    room[target] = value.clone();
                }
                "customization" => {
                    if !value.is_object() {
                        return joi_object(body, key);
                    }
                    room[target] = value.clone();
                }
                // The service sets these itself.
                "roomId" | "chatOff" | "chatOffMessage" => return joi_unknown(body, key),
                // A field the emulator does not know: kept and echoed, as given.
                _ => room[target] = value.clone(),
            }
        }
        if room["passwordProtected"] == true
            && room["roomPassword"].as_str().is_none_or(str::is_empty)
        {
            return joi_required(body, "roomPassword");
        }
        let room_id = self.new_room_id();
        room["roomId"] = json!(room_id);
        self.insert_room(room);
        (
            200,
            json!({"success": true, "roomId": room_id, "url": self.room_url(&room_id)}),
        )
    }

    /// GET /consumer/api/v1/chatroom/:roomId: unknown is 404 `{}`.
    pub fn get_chat_room(&self, room_id: &str) -> Answer {
        match self.room_index(room_id) {
            Some(i) => (200, self.rooms[i].clone()),
            None => (404, json!({})),
        }
    }

    /// PUT /consumer/api/v1/chatroom/:roomId
    pub fn update_chat_room(&mut self, room_id: &str, body: &Value) -> Answer {
        let Some(index) = self.room_index(room_id) else {
            return invalid_room();
        };
        let fields = match body_fields(body) {
            Ok(fields) => fields,
            Err(answer) => return answer,
        };
        let mut room = self.rooms[index].clone();
        for (key, value) in &fields {
            match key.as_str() {
                "name" | "description" | "roomPassword" => {
                    if !value.is_string() {
                        return joi_string(body, key);
                    }
                    room[key] = value.clone();
                }
                "metadata" => {
                    if let Err(answer) = bounded_text(body, key, value, MAX_METADATA) {
                        return answer;
                    }
                    room[key] = value.clone();
                }
                "passwordProtected" => match value {
                    Value::String(s) if s == "on" => room[key] = json!(true),
                    Value::String(s) if s == "off" => room[key] = json!(false),
                    Value::Bool(false) => room[key] = json!(false),
                    _ => {
                        return joi_one_of(
                            body,
                            key,
                            &[json!("on"), json!("off"), json!(false)],
                            value,
                        )
                    }
                },
                _ => return joi_unknown(body, key),
            }
        }
        if room["passwordProtected"] == true
            && room["roomPassword"].as_str().is_none_or(str::is_empty)
        {
            return joi_required(body, "roomPassword");
        }
        self.rooms[index] = room;
        (
            200,
            json!({"success": true, "roomId": room_id, "url": self.room_url(room_id)}),
        )
    }

    /// DELETE /consumer/api/v1/chatroom/:roomId: the room and everything in it
    /// (messages, channels and theirs, conversations, memberships, bot enablements).
    pub fn delete_chat_room(&mut self, room_id: &str) -> Answer {
        let Some(index) = self.room_index(room_id) else {
            return invalid_room();
        };
        self.rooms.remove(index);
        self.room_data.remove(room_id);
        self.conversations.retain(|(room, _), _| room != room_id);
        self.conversation_members
            .retain(|(room, _, _, _)| room != room_id);
        self.bot_rooms.retain(|(_, room)| room != room_id);
        self.ejections.remove(room_id);
        (200, json!({"success": true, "roomId": room_id}))
    }

    /// POST /consumer/api/v1/chatRoom/:roomId/on and …/off
    pub fn turn_chat(&mut self, room_id: &str, on: bool) -> Answer {
        let Some(index) = self.room_index(room_id) else {
            return invalid_room();
        };
        self.rooms[index]["chatOff"] = json!(!on);
        (200, json!({"success": true}))
    }

    /// POST /consumer/api/v1/chatroom/:roomId/chatoffmessage
    pub fn set_chat_off_message(&mut self, room_id: &str, body: &Value) -> Answer {
        let Some(index) = self.room_index(room_id) else {
            return invalid_room();
        };
        let fields = match body_fields(body) {
            Ok(fields) => fields,
            Err(answer) => return answer,
        };
        if let Some(key) = fields.keys().find(|k| *k != "message") {
            return joi_unknown(body, key);
        }
        match fields.get("message") {
            None => joi_required(body, "message"),
            Some(Value::String(text)) => {
                self.rooms[index]["chatOffMessage"] = json!(text);
                (200, json!({"success": true}))
            }
            Some(_) => joi_string(body, "message"),
        }
    }

    // ---- room and channel messages --------------------------------------------

    /// The message log of a room, or of one of its channels.
    fn log_mut(&mut self, room_id: &str, channel_id: Option<&str>) -> Option<&mut MessageLog> {
        let data = self.room_data.get_mut(room_id)?;
        match channel_id {
            None => Some(&mut data.messages),
            Some(c) => data
                .channels
                .iter_mut()
                .find(|ch| ch.record["_id"] == c)
                .map(|ch| &mut ch.messages),
        }
    }

    /// Checks that the room (404) and channel (400) exist.
    fn check_container(&self, room_id: &str, channel_id: Option<&str>) -> Result<(), Answer> {
        let data = self.room_data.get(room_id).ok_or_else(invalid_room)?;
        if let Some(c) = channel_id {
            if !data.channels.iter().any(|ch| ch.record["_id"] == c) {
                return Err((400, json!({"message": "channel not found"})));
            }
        }
        Ok(())
    }

    /// Stores a message in an existing room or channel; returns its id.
    fn push_message(
        &mut self,
        room_id: &str,
        channel_id: Option<&str>,
        message: NewMessage,
    ) -> String {
        let id = self.new_id();
        let json = message_json(&id, &message, &self.account_id());
        let has_file = message.file.is_some_and(|f| !f.is_null());
        if let Some(log) = self.log_mut(room_id, channel_id) {
            log.push(id.clone(), json, has_file);
        }
        id
    }

    /// GET /consumer/api/v1/chatRoom/:roomId/messages and
    /// GET /consumer/api/v1/chatRoom/:roomId/channel/:channelId/messages: oldest
    /// first, so that paging by `skip` is stable while messages are added.
    pub fn room_messages(
        &self,
        room_id: &str,
        channel_id: Option<&str>,
        query: &HashMap<String, String>,
    ) -> Result<String, Answer> {
        self.check_container(room_id, channel_id)?;
        let limit = match parse_count(query, "limit", DEFAULT_LIMIT) {
            Ok(n) => n,
            Err(_) => return Err(not_a_count("limit")),
        };
        let skip = match parse_count(query, "skip", 0) {
            Ok(n) => n,
            Err(_) => return Err(not_a_count("skip")),
        };
        let only_files = match query.get("onlyAttachments").map(String::as_str) {
            None | Some("false") => false,
            Some("true") => true,
            Some(_) => {
                return Err((
                    400,
                    json!({"error": true, "message": "onlyAttachments should be true or false"}),
                ))
            }
        };
        let data = &self.room_data[room_id];
        let log = match channel_id {
            None => &data.messages,
            Some(c) => {
                &data
                    .channels
                    .iter()
                    .find(|ch| ch.record["_id"] == c)
                    .expect("checked above")
                    .messages
            }
        };
        Ok(log.page(limit, skip, only_files))
    }

    /// DELETE /consumer/api/v1/chatroom/:roomId/messages
    pub fn delete_room_messages(
        &mut self,
        room_id: &str,
        query: &HashMap<String, String>,
    ) -> Answer {
        // Booleans in the query: `true` or `false`, anything else refused as the
        // service's validation refuses it.
        let given: Map<String, Value> = query
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let mut flags = [false; 2];
        for (flag, name) in flags
            .iter_mut()
            .zip(["doNotDeletePrivateMessages", "doNotDeleteChannelMessages"])
        {
            match query.get(name).map(String::as_str) {
                None | Some("false") => {}
                Some("true") => *flag = true,
                Some(_) => return joi_boolean(&Value::Object(given), name),
            }
        }
        let [keep_private, keep_channels] = flags;
        let Some(data) = self.room_data.get_mut(room_id) else {
            return invalid_room();
        };
        data.messages.clear();
        if !keep_channels {
            for channel in &mut data.channels {
                channel.messages.clear();
            }
        }
        if !keep_private {
            for ((room, _), messages) in &mut self.conversations {
                if room == room_id {
                    messages.clear();
                }
            }
        }
        (200, json!({"success": true, "roomId": room_id}))
    }

    /// POST /consumer/api/v1/chatroom/:roomId/message and
    /// POST /consumer/api/v1/chatroom/:roomId/channel/:channelId/message
    pub fn send_message(
        &mut self,
        room_id: &str,
        channel_id: Option<&str>,
        body: &Value,
    ) -> Answer {
        if let Err(answer) = self.check_container(room_id, channel_id) {
            return answer;
        }
        let fields = match body_fields(body) {
            Ok(fields) => fields,
            Err(answer) => return answer,
        };
        const AUTHORS: [&str; 3] = ["userAccessToken", "systemMessage", "user"];
        if let Some(key) = fields
            .keys()
            .find(|k| *k != "message" && !AUTHORS.contains(&k.as_str()))
        {
            return joi_unknown(body, key);
        }
        let text = match fields.get("message") {
            None => return joi_required(body, "message"),
            Some(Value::String(text)) => text.clone(),
            Some(_) => return joi_string(body, "message"),
        };
        match fields.get("systemMessage") {
            None | Some(Value::Bool(_)) => {}
            Some(_) => return joi_boolean(body, "systemMessage"),
        }
        // Only the flag may be given as false; the other authors are a token and an object.
        match fields.get("userAccessToken") {
            None | Some(Value::String(_)) => {}
            Some(_) => return joi_string(body, "userAccessToken"),
        }
        match fields.get("user") {
            None | Some(Value::Object(_)) => {}
            Some(_) => return joi_object(body, "user"),
        }
        let given: Vec<&str> = AUTHORS
            .into_iter()
            .filter(|k| match fields.get(*k) {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => true,
            })
            .collect();
        let peers = json!(AUTHORS);
        if given.is_empty() {
            return joi(
                body,
                "value",
                "\"value\" must contain at least one of [userAccessToken, systemMessage, user]"
                    .into(),
                "object.missing",
                json!({"peers": peers}),
            );
        }
        if given.len() > 1 {
            return joi(
                body,
                "value",
                format!(
                    "\"value\" contains a conflict between exclusive peers [{}]",
                    given.join(", ")
                ),
                "object.xor",
                json!({"peers": given}),
            );
        }
        let author = match given[0] {
            "userAccessToken" => {
                let Some(token) = fields["userAccessToken"].as_str() else {
                    return joi_string(body, "userAccessToken");
                };
                let Ok((_, index)) = self.token_user(Some(token)) else {
                    return invalid_access_token();
                };
                let record = &self.users[index].record;
                Author {
                    id: record.id.clone(),
                    unique_user_identifier: record.unique_user_identifier.clone(),
                    username: record.username.clone(),
                    is_moderator: record.is_moderator,
                }
            }
            "systemMessage" => self.system_author(room_id),
            _ => {
                let Some(user) = fields["user"].as_object() else {
                    return joi_object(body, "user");
                };
                if let Some(key) = user
                    .keys()
                    .find(|k| *k != "username" && *k != "externalProfilePic")
                {
                    return joi_unknown(body, &format!("user.{key}"));
                }
                match user.get("externalProfilePic") {
                    None | Some(Value::String(_)) => {}
                    Some(_) => return joi_string(body, "user.externalProfilePic"),
                }
                match user.get("username") {
                    Some(Value::String(name)) if !name.trim().is_empty() => Author {
                        id: self.new_id(),
                        unique_user_identifier: None,
                        username: name.clone(),
                        is_moderator: false,
                    },
                    Some(Value::String(_)) => {
                        return joi(
                            body,
                            "user.username",
                            "\"user.username\" is not allowed to be empty".into(),
                            "string.empty",
                            json!({}),
                        )
                    }
                    Some(_) => return joi_string(body, "user.username"),
                    None => return joi_required(body, "user.username"),
                }
            }
        };
        let room = &self.rooms[self.room_index(room_id).expect("checked above")];
        if given[0] != "systemMessage" && room["chatOff"] == true {
            return (
                400,
                json!({"success": false, "message": "chat is turned off in this chat room"}),
            );
        }
        let created = iso8601(SystemTime::now());
        self.push_message(
            room_id,
            channel_id,
            NewMessage {
                container: container(room_id, channel_id),
                text: &text,
                author: &author,
                action_buttons: None,
                file: None,
                created: &created,
            },
        );
        (200, json!({"success": true}))
    }

    /// The author of `room_id`'s system messages.
    fn system_author(&self, room_id: &str) -> Author {
        Author {
            id: self
                .room_data
                .get(room_id)
                .map(|d| d.system_id.clone())
                .unwrap_or_default(),
            unique_user_identifier: None,
            username: "system".into(),
            is_moderator: true,
        }
    }

    // ---- channels -------------------------------------------------------------

    /// Checks channel fields (of create, or of update: `partial`) and applies them to `record`.
    fn apply_channel_fields(
        body: &Value,
        fields: &Map<String, Value>,
        record: &mut Value,
        partial: bool,
    ) -> Result<(), Answer> {
        if !partial && !fields.contains_key("channelName") {
            return Err(joi_required(body, "channelName"));
        }
        for (key, value) in fields {
            match key.as_str() {
                "channelName" => match value.as_str() {
                    Some(name) if !name.trim().is_empty() => {}
                    Some(_) => {
                        return Err(joi(
                            body,
                            key,
                            "\"channelName\" is not allowed to be empty".into(),
                            "string.empty",
                            json!({}),
                        ))
                    }
                    None => return Err(joi_string(body, key)),
                },
                "enabled" | "notifyAllUsers" => {
                    if !value.is_boolean() {
                        return Err(joi_boolean(body, key));
                    }
                }
                "metadata" => bounded_text(body, key, value, MAX_METADATA)?,
                _ => return Err(joi_unknown(body, key)),
            }
            record[key] = value.clone();
        }
        Ok(())
    }

    /// POST /consumer/api/v1/chatroom/:roomId/channel
    pub fn create_channel(&mut self, room_id: &str, body: &Value) -> Answer {
        if self.room_index(room_id).is_none() {
            return invalid_room();
        }
        let fields = match body_fields(body) {
            Ok(fields) => fields,
            Err(answer) => return answer,
        };
        let mut record = json!({
            "_id": "",
            "channelName": "",
            "enabled": true,
            "notifyAllUsers": false,
            "metadata": "",
            "roomId": room_id,
        });
        if let Err(answer) = State::apply_channel_fields(body, &fields, &mut record, false) {
            return answer;
        }
        record["_id"] = json!(self.new_id());
        if let Some(data) = self.room_data.get_mut(room_id) {
            data.channels.push(Channel {
                record: record.clone(),
                messages: MessageLog::default(),
            });
        }
        (200, record)
    }

    /// PUT /consumer/api/v1/chatroom/:roomId/channel/:channelId
    pub fn update_channel(&mut self, room_id: &str, channel_id: &str, body: &Value) -> Answer {
        if let Err(answer) = self.check_container(room_id, Some(channel_id)) {
            return answer;
        }
        let fields = match body_fields(body) {
            Ok(fields) => fields,
            Err(answer) => return answer,
        };
        let data = self.room_data.get_mut(room_id).expect("checked above");
        let channel = data
            .channels
            .iter_mut()
            .find(|ch| ch.record["_id"] == channel_id)
            .expect("checked above");
        let mut record = channel.record.clone();
        if let Err(answer) = State::apply_channel_fields(body, &fields, &mut record, true) {
            return answer;
        }
        channel.record = record.clone();
        (200, record)
    }

    /// DELETE /consumer/api/v2/chatroom/:roomId/channel/:channelId/message/:messageId
    pub fn delete_channel_message(
        &mut self,
        room_id: &str,
        channel_id: &str,
        message_id: &str,
    ) -> Answer {
        let refused = |message: &str| (400, json!({"success": false, "message": message}));
        let Some(data) = self.room_data.get_mut(room_id) else {
            return refused("chatroom not found");
        };
        let Some(channel) = data
            .channels
            .iter_mut()
            .find(|ch| ch.record["_id"] == channel_id)
        else {
            return refused("channel not found");
        };
        if !channel.messages.remove(message_id) {
            return refused("channel message not found");
        }
        (
            200,
            json!({"success": true, "message": "channel message deleted"}),
        )
    }

    // ---- conversations --------------------------------------------------------

    /// GET /consumer/api/v2/{room|chatroom}/:roomId/conversations
    pub fn list_conversations(&self, room_id: &str) -> Answer {
        if self.room_index(room_id).is_none() {
            return (
                400,
                json!({"success": false, "message": "chatroom not found"}),
            );
        }
        let list: Vec<Value> = self
            .conversation_members
            .iter()
            .filter(|(room, _, _, _)| room == room_id)
            .map(|(room, id, one, two)| {
                json!({"conversationId": id, "roomId": room, "memberOne": one, "memberTwo": two})
            })
            .collect();
        (200, Value::Array(list))
    }

    /// A user as a conversation's member shows it.
    fn member_summary(&self, index: usize) -> Value {
        let user = &self.users[index].record;
        let mut out = json!({"_id": user.id, "username": user.username});
        for key in ["email", "firstName", "lastName", "profilePic"] {
            if let Some(value) = user.extra.get(key) {
                out[key] = value.clone();
            }
        }
        if let Some(uid) = &user.unique_user_identifier {
            out["uniqueUserIdentifier"] = json!(uid);
        }
        out
    }

    /// The user a `{"userId"}` or `{"uniqueUserIdentifier"}` spec names (admin API).
    fn spec_user(&self, spec: &Value) -> Result<Option<usize>, String> {
        if let Some(id) = spec.get("userId") {
            let id = id.as_str().ok_or("userId should be a string")?;
            return self
                .by_id
                .get(id)
                .copied()
                .map(Some)
                .ok_or(format!("no user with userId {id}"));
        }
        if let Some(uid) = spec.get("uniqueUserIdentifier") {
            let uid = uid
                .as_str()
                .ok_or("uniqueUserIdentifier should be a string")?;
            return self
                .by_unique_identifier
                .get(uid)
                .copied()
                .map(Some)
                .ok_or(format!("no user with uniqueUserIdentifier {uid}"));
        }
        Ok(None)
    }

    /// The two members of a conversation the admin API adds: `memberOne` and
    /// `memberTwo` of `spec` (an existing user by `userId` or
    /// `uniqueUserIdentifier`, or an object with a `username`), else the first
    /// two distinct authors of its messages.
    pub(super) fn conversation_pair(
        &mut self,
        spec: &Value,
        records: &[Value],
    ) -> Result<(Value, Value), String> {
        // Only the first two distinct authors are wanted: stop there (a seeded
        // conversation may hold 100,000 messages, each of its own author).
        let mut authors: Vec<Value> = Vec::new();
        for record in records {
            if authors.len() == 2 {
                break;
            }
            let user = &record["user"];
            if !authors.iter().any(|a| a["_id"] == user["_id"]) {
                authors.push(user.clone());
            }
        }
        let mut pair = Vec::new();
        for (n, key) in ["memberOne", "memberTwo"].into_iter().enumerate() {
            let member = match &spec[key] {
                Value::Null => match authors.get(n) {
                    Some(author) => author.clone(),
                    None => json!({"_id": self.new_id(), "username": format!("member-{}", n + 1)}),
                },
                Value::Object(given) => match self.spec_user(&spec[key])? {
                    Some(index) => self.member_summary(index),
                    None => {
                        if !given.get("username").is_some_and(Value::is_string) {
                            return Err(format!(
                                "{key} needs a userId, a uniqueUserIdentifier or a username"
                            ));
                        }
                        let mut member = given.clone();
                        if !member.contains_key("_id") {
                            member.insert("_id".into(), json!(self.new_id()));
                        }
                        Value::Object(member)
                    }
                },
                _ => return Err(format!("{key} should be an object")),
            };
            pair.push(member);
        }
        let two = pair.pop().unwrap_or_default();
        let one = pair.pop().unwrap_or_default();
        Ok((one, two))
    }

    // ---- users ----------------------------------------------------------------

    /// A fresh access token for the user at `index`.
    fn issue_token(&self, index: usize) -> String {
        let record = &self.users[index].record;
        let claims = TokenClaims {
            user_id: record.id.clone(),
            username: record.username.clone(),
            is_moderator: record.is_moderator,
            chat_room: record.chat_room.clone(),
            issued_at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs(),
        };
        jwt::sign(&self.jwt_secret, &claims)
    }

    /// PUT /consumer/api/v1/user: the user by `userId` or
    /// `uniqueUserIdentifier`; answers as create user does (a fresh token).
    pub fn update_user(&mut self, body: &Value) -> Answer {
        let index = match self.named_user(body) {
            Ok(Some(index)) => index,
            Ok(None) => return user_not_found(),
            Err(answer) => return answer,
        };
        let validation = |message: String| (400, json!({"error": message}));
        let fields = body.as_object().expect("named_user checked it");
        for (key, value) in fields {
            let ok = match key.as_str() {
                "userId" | "uniqueUserIdentifier" | "meta" => true,
                "username" => value
                    .as_str()
                    .is_some_and(|s| !s.trim().is_empty() && !s.chars().any(char::is_control)),
                "email" | "profilePic" | "chatRoom" => value.is_string(),
                "isModerator" => value.is_boolean(),
                "externalUserId" => value.is_string() || value.is_number(),
                _ => return validation(format!("\"{key}\" is not allowed")),
            };
            if !ok {
                return validation(format!("\"{key}\" is not valid"));
            }
        }
        let user = &mut self.users[index];
        for (key, value) in fields {
            let record = &mut user.record;
            match key.as_str() {
                "username" => record.username = value.as_str().unwrap_or_default().to_owned(),
                "isModerator" => record.is_moderator = value.as_bool().unwrap_or_default(),
                "chatRoom" => {
                    record.chat_room = value.as_str().filter(|s| !s.is_empty()).map(str::to_owned)
                }
                "email" | "profilePic" | "externalUserId" | "meta" => {
                    record.extra.insert(key.clone(), value.clone());
                }
                _ => {}
            }
        }
        user.updated = SystemTime::now();
        user.listing_json = user.record.listing_json(&iso8601(user.created));
        let record = &user.record;
        let mut out = json!({
            "username": record.username,
            "userId": record.id,
            "isModerator": record.is_moderator,
        });
        if let Some(room) = &record.chat_room {
            out["chatRoom"] = json!(room);
        }
        out["accessToken"] = json!(self.issue_token(index));
        (200, out)
    }

    /// POST /consumer/api/v2/user: a user, made a member of a room with a role.
    pub fn create_user_v2(&mut self, body: &Value) -> Answer {
        let fields = match body_fields(body) {
            Ok(fields) => fields,
            Err(answer) => return answer,
        };
        for key in ["uniqueUserIdentifier", "username"] {
            if !fields.contains_key(key) {
                return joi_required(body, key);
            }
        }
        let mut membership = None;
        for (key, value) in &fields {
            match key.as_str() {
                "uniqueUserIdentifier" | "username" | "firstName" | "lastName" | "email" => {
                    if !value.is_string() {
                        return joi_string(body, key);
                    }
                }
                "meta" => {}
                "externalProfilePicURL" => match value.as_str() {
                    Some(url) if is_https_url(url) => {}
                    Some(_) => {
                        return joi(
                            body,
                            key,
                            format!("\"{key}\" must be a valid uri with a scheme matching the https pattern"),
                            "string.uriCustomScheme",
                            json!({"scheme": "https", "value": value}),
                        )
                    }
                    None => return joi_string(body, key),
                },
                "membershipDetails" => {
                    let Some(details) = value.as_object() else {
                        return joi_object(body, key);
                    };
                    let role = match details.get("roleName") {
                        None => return joi_required(body, "membershipDetails.roleName"),
                        Some(role) => role,
                    };
                    if !role.as_str().is_some_and(|r| ROLES.contains(&r)) {
                        let valids: Vec<Value> = ROLES.iter().map(|r| json!(r)).collect();
                        return joi_one_of(body, "membershipDetails.roleName", &valids, role);
                    }
                    let room = match details.get("roomId") {
                        None => return joi_required(body, "membershipDetails.roomId"),
                        Some(Value::String(room)) => room.clone(),
                        Some(_) => return joi_string(body, "membershipDetails.roomId"),
                    };
                    if let Some(other) = details.keys().find(|k| *k != "roleName" && *k != "roomId")
                    {
                        return joi_unknown(body, &format!("membershipDetails.{other}"));
                    }
                    membership = Some((room, role.as_str().unwrap_or_default().to_owned()));
                }
                _ => return joi_unknown(body, key),
            }
        }
        if let Some((room, _)) = &membership {
            if self.room_index(room).is_none() {
                return (400, json!({"message": "chatRoom not found"}));
            }
        }
        let mut v1 = Map::new();
        for key in ["uniqueUserIdentifier", "username", "email", "meta"] {
            if let Some(value) = fields.get(key) {
                v1.insert(key.into(), value.clone());
            }
        }
        if let Some(url) = fields.get("externalProfilePicURL") {
            v1.insert("profilePic".into(), url.clone());
        }
        let (status, created) = self.create_user(&Value::Object(v1));
        if status != 200 {
            return (status, created);
        }
        let index = self.by_id[created["userId"].as_str().unwrap_or_default()];
        for key in ["firstName", "lastName"] {
            if let Some(value) = fields.get(key) {
                self.users[index]
                    .record
                    .extra
                    .insert(key.into(), value.clone());
            }
        }
        if let Some((room, role)) = membership {
            self.upsert_member(&room, index, &role);
        }
        let mut user: Value =
            serde_json::from_str(&self.users[index].listing_json).unwrap_or_else(|_| json!({}));
        for key in ["firstName", "lastName"] {
            if let Some(value) = fields.get(key) {
                user[key] = value.clone();
            }
        }
        (
            200,
            json!({"success": true, "accessToken": created["accessToken"], "user": user}),
        )
    }

    /// GET /consumer/api/v2/user/:uniqueUserIdentifier: the profile record.
    pub fn get_user(&self, unique_user_identifier: &str) -> Answer {
        let Some(&index) = self.by_unique_identifier.get(unique_user_identifier) else {
            return user_not_found();
        };
        let user = &self.users[index];
        let extra = |key: &str| user.record.extra.get(key).cloned().unwrap_or(Value::Null);
        (
            200,
            json!({
                "_id": user.record.id,
                "uniqueUserIdentifier": unique_user_identifier,
                "username": user.record.username,
                "profilePic": user.record.extra.get("profilePic").cloned().unwrap_or(json!("")),
                "profilePicKey": null,
                "firstName": extra("firstName"),
                "lastName": extra("lastName"),
                "meta": extra("meta"),
                "created": iso8601(user.created),
                "updated": iso8601(user.updated),
                "lastSeen": null,
                "lastChatRoomId": user.record.chat_room,
                "provisioned": true,
            }),
        )
    }

    /// GET /consumer/api/v2/user/:uniqueUserIdentifier/rooms
    pub fn user_rooms(&self, unique_user_identifier: &str) -> Answer {
        let Some(&index) = self.by_unique_identifier.get(unique_user_identifier) else {
            return user_not_found();
        };
        let rooms: Vec<Value> = self
            .rooms
            .iter()
            .filter(|room| {
                room["roomId"].as_str().is_some_and(|id| {
                    self.room_data
                        .get(id)
                        .is_some_and(|d| d.members.iter().any(|m| m.user == index))
                })
            })
            .map(|room| json!({"roomId": room["roomId"], "name": room["name"]}))
            .collect();
        (200, Value::Array(rooms))
    }

    /// DELETE /consumer/api/v2/user: the user is gone for good (its tokens no
    /// longer validate, its memberships are erased, its identifier is free).
    pub fn remove_user(&mut self, body: &Value) -> Answer {
        let index = match self.named_user(body) {
            Ok(Some(index)) => index,
            Ok(None) => return user_not_found(),
            Err(answer) => return answer,
        };
        let user = &mut self.users[index];
        user.removed = true;
        user.active = false;
        self.by_id.remove(&user.record.id);
        if let Some(uid) = &user.record.unique_user_identifier {
            self.by_unique_identifier.remove(uid);
        }
        if let Ok(at) = self.active_indices.binary_search(&index) {
            self.active_indices.remove(at);
        }
        for data in self.room_data.values_mut() {
            data.members.retain(|m| m.user != index);
        }
        (200, json!({"success": true, "message": "user removed"}))
    }

    // ---- members --------------------------------------------------------------

    fn member_json(&self, room_id: &str, member: &Member) -> Value {
        let room_name = self
            .room_index(room_id)
            .map(|i| self.rooms[i]["name"].clone())
            .unwrap_or(Value::Null);
        let record = &self.users[member.user].record;
        let mut user = json!({
            "_id": record.id,
            "username": record.username,
            "profilePic": record.extra.get("profilePic").cloned().unwrap_or(json!("")),
        });
        if let Some(uid) = &record.unique_user_identifier {
            user["uniqueUserIdentifier"] = json!(uid);
        }
        json!({
            "chatRoom": {"name": room_name, "roomId": room_id},
            "user": user,
            "roleName": member.role,
            "lastSeen": null,
            "created": iso8601(member.created),
        })
    }

    /// Makes the user at `index` a member of `room_id` with `role` (or changes
    /// its role); returns the member record.
    fn upsert_member(&mut self, room_id: &str, index: usize, role: &str) -> Value {
        let Some(data) = self.room_data.get_mut(room_id) else {
            return Value::Null;
        };
        let at = match data.members.iter().position(|m| m.user == index) {
            Some(at) => {
                data.members[at].role = role.to_owned();
                at
            }
            None => {
                data.members.push(Member {
                    user: index,
                    role: role.to_owned(),
                    created: SystemTime::now(),
                });
                data.members.len() - 1
            }
        };
        let data = &self.room_data[room_id];
        self.member_json(room_id, &data.members[at])
    }

    /// GET /consumer/api/v2/room/:roomId/members
    pub fn list_members(&self, room_id: &str, query: &HashMap<String, String>) -> Answer {
        let Some(data) = self.room_data.get(room_id) else {
            return (
                400,
                json!({"message": "chatroom of the specified roomId not found"}),
            );
        };
        let limit = match parse_count(query, "limit", DEFAULT_LIMIT) {
            Ok(n) if n <= MAX_LIMIT => n,
            Ok(_) | Err(CountError::TooLarge) => {
                return (
                    400,
                    json!({"error": true, "errorMessage": "limit should be less than 200"}),
                )
            }
            Err(CountError::NotACount) => return not_a_count("limit"),
        };
        let skip = match parse_count(query, "skip", 0) {
            Ok(n) => n,
            Err(_) => return not_a_count("skip"),
        };
        let page: Vec<Value> = data
            .members
            .iter()
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
            .take(limit as usize)
            .map(|m| self.member_json(room_id, m))
            .collect();
        (
            200,
            json!({"total": data.members.len(), "limit": limit, "skip": skip, "data": page}),
        )
    }

    /// The `uniqueUserIdentifier` of a member body (and its `roleName`, when `with_role`).
    fn member_body(body: &Value, with_role: bool) -> Result<(String, Option<String>), Answer> {
        let fields = body_fields(body)?;
        if let Some(key) = fields
            .keys()
            .find(|k| *k != "uniqueUserIdentifier" && !(with_role && *k == "roleName"))
        {
            return Err(joi_unknown(body, key));
        }
        let uid = match fields.get("uniqueUserIdentifier") {
            None => return Err(joi_required(body, "uniqueUserIdentifier")),
            Some(Value::String(uid)) => uid.clone(),
            Some(_) => return Err(joi_string(body, "uniqueUserIdentifier")),
        };
        if !with_role {
            return Ok((uid, None));
        }
        match fields.get("roleName") {
            None => Err(joi_required(body, "roleName")),
            Some(Value::String(role)) if ROLES.contains(&role.as_str()) => {
                Ok((uid, Some(role.clone())))
            }
            Some(other) => {
                let valids: Vec<Value> = ["user", "guest", "admin", "moderator"]
                    .iter()
                    .map(|r| json!(r))
                    .collect();
                Err(joi_one_of(body, "roleName", &valids, other))
            }
        }
    }

    /// POST /consumer/api/v2/room/:roomId/member: adds or changes a member.
    pub fn set_member(&mut self, room_id: &str, body: &Value) -> Answer {
        let (uid, role) = match State::member_body(body, true) {
            Ok(parsed) => parsed,
            Err(answer) => return answer,
        };
        if self.room_index(room_id).is_none() {
            return (400, json!({"message": "chatRoom not found"}));
        }
        let Some(&index) = self.by_unique_identifier.get(&uid) else {
            return user_not_found();
        };
        (
            200,
            self.upsert_member(room_id, index, &role.unwrap_or_default()),
        )
    }

    /// DELETE /consumer/api/v2/room/:roomId/member
    pub fn remove_member(&mut self, room_id: &str, body: &Value) -> Answer {
        let (uid, _) = match State::member_body(body, false) {
            Ok(parsed) => parsed,
            Err(answer) => return answer,
        };
        if self.room_index(room_id).is_none() {
            return (400, json!({"message": "chatRoom not found"}));
        }
        let Some(&index) = self.by_unique_identifier.get(&uid) else {
            return user_not_found();
        };
        let data = self.room_data.get_mut(room_id).expect("the room exists");
        let before = data.members.len();
        data.members.retain(|m| m.user != index);
        if data.members.len() == before {
            return (
                400,
                json!({"success": false, "message": "user is not a member of the chat room"}),
            );
        }
        (
            200,
            json!({"success": true, "message": "user removed as member"}),
        )
    }

    // ---- bots -----------------------------------------------------------------

    /// POST /consumer/api/v2/bot
    pub fn create_bot(&mut self, body: &Value) -> Answer {
        let Some(fields) = body.as_object() else {
            return invalid_bot_request("the body should be a JSON object".into());
        };
        for required in ["name", "webhookURL"] {
            if !fields.contains_key(required) {
                return invalid_bot_request(format!("\"{required}\" is required"));
            }
        }
        if let Err(answer) = bot_fields_check(fields, &Map::new()) {
            return answer;
        }
        let name = &fields["name"];
        if self.bots.iter().any(|b| b["name"] == *name) {
            return (
                400,
                json!({"success": false, "message": format!("a bot named {name} already exists")}),
            );
        }
        match self.add_bot(body) {
            Ok(bot) => (200, json!({"success": true, "bot": bot})),
            Err(details) => invalid_bot_request(details),
        }
    }

    /// GET /consumer/api/v2/bots
    pub fn list_bots(&self) -> Answer {
        (200, json!({"success": true, "bots": self.bots}))
    }

    /// POST /consumer/api/v2/bot/:botId/enable and …/disable
    pub fn set_bot_enabled(&mut self, bot_id: &str, enabled: bool) -> Answer {
        let Some(bot) = self.bots.iter_mut().find(|b| b["_id"] == bot_id) else {
            return bot_not_found();
        };
        bot["enabled"] = json!(enabled);
        (200, json!({"success": true, "bot": bot}))
    }

    /// The 401 of an unknown bot or room, in that order.
    fn check_bot_and_room(&self, bot_id: &str, room_id: &str) -> Result<usize, Answer> {
        let Some(index) = self.bots.iter().position(|b| b["_id"] == bot_id) else {
            return Err(bot_not_found());
        };
        if self.room_index(room_id).is_none() {
            return Err((
                401,
                json!({"success": false, "message": "chatroom not found"}),
            ));
        }
        Ok(index)
    }

    /// POST /consumer/api/v2/bot/:botId/chatroom/:roomId/enable and …/disable
    pub fn set_bot_in_room(&mut self, bot_id: &str, room_id: &str, enabled: bool) -> Answer {
        if let Err(answer) = self.check_bot_and_room(bot_id, room_id) {
            return answer;
        }
        let key = (bot_id.to_owned(), room_id.to_owned());
        if enabled {
            self.bot_rooms.insert(key);
            (
                200,
                json!({"success": true, "botStatus": {"status": "ENABLED"}}),
            )
        } else {
            self.bot_rooms.remove(&key);
            (
                200,
                json!({"success": true, "message": "Bot successfully disabled in the chat room"}),
            )
        }
    }

    /// POST /consumer/api/v2/bot/:botId/chatroom/:roomId/message
    pub fn send_bot_message(&mut self, bot_id: &str, room_id: &str, body: &Value) -> Answer {
        let index = match self.check_bot_and_room(bot_id, room_id) {
            Ok(index) => index,
            Err(answer) => return answer,
        };
        let Some(fields) = body.as_object() else {
            return invalid_bot_request("the body should be a JSON object".into());
        };
        if let Err(details) = bot_message_check(fields) {
            return invalid_bot_request(details);
        }
        let bot = &self.bots[index];
        let allowed = bot["enabled"] == true
            && (bot["isAllowedInAllChatRooms"] == true
                || self
                    .bot_rooms
                    .contains(&(bot_id.to_owned(), room_id.to_owned())));
        if !allowed {
            return (
                400,
                json!({"success": false, "message": "bot is not enabled in this chat room"}),
            );
        }
        let author = Author {
            id: bot_id.to_owned(),
            unique_user_identifier: None,
            username: bot["name"].as_str().unwrap_or_default().to_owned(),
            is_moderator: false,
        };
        let created = iso8601(SystemTime::now());
        self.push_message(
            room_id,
            None,
            NewMessage {
                container: ("chatRoom", room_id),
                text: fields["message"].as_str().unwrap_or_default(),
                author: &author,
                action_buttons: fields.get("actionButtons"),
                file: None,
                created: &created,
            },
        );
        (200, json!({"success": true, "message": "message sent"}))
    }

    // ---- admin ----------------------------------------------------------------

    /// The author of admin-seeded messages: `"system": true`, an existing user
    /// (`userId` or `uniqueUserIdentifier`), a bot (`botId`), a throw-away
    /// `user: {"username"}`, or else a throw-away user named `seed-author`.
    fn admin_author(&mut self, spec: &Value, room_id: &str) -> Result<Author, String> {
        if spec["system"] == true {
            return Ok(self.system_author(room_id));
        }
        if let Some(index) = self.spec_user(spec)? {
            let record = &self.users[index].record;
            return Ok(Author {
                id: record.id.clone(),
                unique_user_identifier: record.unique_user_identifier.clone(),
                username: record.username.clone(),
                is_moderator: record.is_moderator,
            });
        }
        if let Some(bot_id) = spec.get("botId") {
            let bot = self
                .bots
                .iter()
                .find(|b| b["_id"] == *bot_id)
                .ok_or(format!("no bot {bot_id}"))?;
            return Ok(Author {
                id: bot["_id"].as_str().unwrap_or_default().to_owned(),
                unique_user_identifier: None,
                username: bot["name"].as_str().unwrap_or_default().to_owned(),
                is_moderator: false,
            });
        }
        let username = match &spec["user"] {
            Value::Null => "seed-author".to_owned(),
            user => user["username"]
                .as_str()
                .ok_or("user needs a username (string)")?
                .to_owned(),
        };
        Ok(Author {
            id: self.new_id(),
            unique_user_identifier: None,
            username,
            is_moderator: false,
        })
    }

    /// POST /_emulator/messages: `{"roomId", "channelId"?, "count": N, "text"?,
    /// "attachmentEvery"?, author…}` or `{"roomId", "channelId"?, "messages": [{"message",
    /// "file"?, "actionButtons"?, "created"?, author…}]}`. Oldest first, after
    /// what the room or channel holds.
    pub fn add_messages(&mut self, spec: &Value) -> Result<Value, String> {
        let room_id = spec["roomId"]
            .as_str()
            .ok_or("roomId (string) is required")?
            .to_owned();
        let channel_id = match &spec["channelId"] {
            Value::Null => None,
            Value::String(c) => Some(c.clone()),
            _ => return Err("channelId should be a string".into()),
        };
        let channel = channel_id.as_deref();
        if self.check_container(&room_id, channel).is_err() {
            return Err(match channel {
                None => format!("no room {room_id}; create it first"),
                Some(c) => format!("no channel {c} in room {room_id}"),
            });
        }
        if !spec["records"].is_null() {
            if !spec["count"].is_null() || !spec["messages"].is_null() {
                return Err("give one of count, messages or records".into());
            }
            let ids = self.push_records(&room_id, channel, &spec["records"])?;
            let total = self.log_mut(&room_id, channel).map_or(0, |l| l.items.len());
            return Ok(json!({"added": ids.len(), "total": total, "ids": ids}));
        }
        let container = container(&room_id, channel);
        let mut ids = Vec::new();
        let added = match (&spec["count"], &spec["messages"]) {
            (Value::Null, Value::Array(items)) => {
                for item in items {
                    let text = item["message"]
                        .as_str()
                        .ok_or("each message needs \"message\" (its text)")?;
                    let author = self.admin_author(item, &room_id)?;
                    let created = match &item["created"] {
                        Value::String(s) => s.clone(),
                        Value::Null => iso8601(SystemTime::now()),
                        _ => return Err("created should be an ISO 8601 string".into()),
                    };
                    let file = item.get("file").filter(|f| !f.is_null());
                    if file.is_some_and(|f| !f.is_object()) {
                        return Err("file should be an object".into());
                    }
                    let buttons = item.get("actionButtons").filter(|b| !b.is_null());
                    if buttons.is_some_and(|b| !b.is_array()) {
                        return Err("actionButtons should be an array".into());
                    }
                    ids.push(self.push_message(
                        &room_id,
                        channel,
                        NewMessage {
                            container,
                            text,
                            author: &author,
                            action_buttons: buttons,
                            file,
                            created: &created,
                        },
                    ));
                }
                items.len()
            }
            (count, Value::Null) => {
                let count = count.as_u64().filter(|n| *n <= 10_000_000).ok_or(
                    "count (a whole number up to 10000000) or messages (array) is required",
                )? as usize;
                let text = spec["text"].as_str().unwrap_or("message");
                let every = match &spec["attachmentEvery"] {
                    Value::Null => None,
                    v => Some(
                        v.as_u64()
                            .filter(|n| *n >= 1)
                            .ok_or("attachmentEvery should be a whole number from 1")?,
                    ),
                };
                let author = self.admin_author(spec, &room_id)?;
                let created = iso8601(SystemTime::now());
                let customer = self.account_id();
                let base = self.log_mut(&room_id, channel).map_or(0, |l| l.items.len());
                let mut batch = Vec::with_capacity(count);
                for n in 1..=count {
                    let position = base + n;
                    let id = self.new_id();
                    let file = every.filter(|k| (position as u64).is_multiple_of(*k)).map(|_| {
                        json!({"_id": id, "url": format!("https://files.emulator.invalid/{id}.png"),
                            "fileName": format!("file-{position}.png"), "size": 1024,
                            "contentType": "image/png", "fileType": "image",
                            "imageHeight": 32, "imageWidth": 32})
                    });
                    let text = format!("{text} {position}");
                    let json = message_json(
                        &id,
                        &NewMessage {
                            container,
                            text: &text,
                            author: &author,
                            action_buttons: None,
                            file: file.as_ref(),
                            created: &created,
                        },
                        &customer,
                    );
                    batch.push((id, json, file.is_some()));
                }
                let log = self.log_mut(&room_id, channel).expect("checked above");
                log.items.reserve(count);
                for (id, json, has_file) in batch {
                    log.push(id, json, has_file);
                }
                count
            }
            _ => return Err("give either count or messages, not both".into()),
        };
        let total = self.log_mut(&room_id, channel).map_or(0, |l| l.items.len());
        let mut out = json!({"added": added, "total": total});
        if spec["count"].is_null() {
            out["ids"] = json!(ids);
        }
        Ok(out)
    }

    /// POST /_emulator/channels: `{"roomId", …create channel's body}` → the channel.
    pub fn add_channel(&mut self, spec: &Value) -> Result<Value, String> {
        let room_id = spec["roomId"]
            .as_str()
            .ok_or("roomId (string) is required")?
            .to_owned();
        let mut body = spec.as_object().cloned().unwrap_or_default();
        body.remove("roomId");
        match self.create_channel(&room_id, &Value::Object(body)) {
            (200, channel) => Ok(channel),
            (_, answer) => Err(format!("create channel refused it: {answer}")),
        }
    }

    /// POST /_emulator/members: `{"roomId", "userId" | "uniqueUserIdentifier", "roleName"?}`
    /// (role `user` by default) → the member record.
    pub fn add_member(&mut self, spec: &Value) -> Result<Value, String> {
        let room_id = spec["roomId"]
            .as_str()
            .ok_or("roomId (string) is required")?
            .to_owned();
        if self.room_index(&room_id).is_none() {
            return Err(format!("no room {room_id}; create it first"));
        }
        let index = self
            .spec_user(spec)?
            .ok_or("userId or uniqueUserIdentifier is required")?;
        let role = match &spec["roleName"] {
            Value::Null => "user",
            Value::String(r) if ROLES.contains(&r.as_str()) => r.as_str(),
            _ => return Err("roleName should be one of admin, moderator, guest, user".into()),
        }
        .to_owned();
        Ok(self.upsert_member(&room_id, index, &role))
    }
}

/// Where a message goes, as its record names it.
fn container<'a>(room_id: &'a str, channel_id: Option<&'a str>) -> (&'static str, &'a str) {
    match channel_id {
        None => ("chatRoom", room_id),
        Some(c) => ("channel", c),
    }
}

/// Checks a bot message body (send bot message); `Err` is the details.
fn bot_message_check(fields: &Map<String, Value>) -> Result<(), String> {
    let text = |value: &Value, max: usize| value.as_str().is_some_and(|s| s.chars().count() <= max);
    match fields.get("message") {
        None => return Err("\"message\" is required".into()),
        Some(m) if !text(m, 1000) => {
            return Err("\"message\" must be a string of at most 1000 characters".into())
        }
        Some(_) => {}
    }
    if fields.contains_key("userId") && fields.contains_key("uniqueUserIdentifier") {
        return Err("\"userId\" and \"uniqueUserIdentifier\": give one, not both".into());
    }
    for (key, value) in fields {
        match key.as_str() {
            "message" => {}
            "userId" | "uniqueUserIdentifier" | "messageId" => {
                if !value.is_string() {
                    return Err(format!("\"{key}\" must be a string"));
                }
            }
            "actionButtons" => {
                let buttons = value
                    .as_array()
                    .ok_or("\"actionButtons\" must be an array")?;
                for (n, button) in buttons.iter().enumerate() {
                    let name = |field: &str| format!("\"actionButtons[{n}].{field}\"");
                    let button = button
                        .as_object()
                        .ok_or(format!("\"actionButtons[{n}]\" must be an object"))?;
                    let kind = button.get("type").and_then(Value::as_str);
                    if !matches!(kind, Some("link" | "action")) {
                        return Err(format!("{} must be one of [link, action]", name("type")));
                    }
                    if !button.get("displayText").is_some_and(|v| text(v, 100)) {
                        return Err(format!(
                            "{} is required, a string of at most 100 characters",
                            name("displayText")
                        ));
                    }
                    if kind == Some("link") && !button.contains_key("url") {
                        return Err(format!("{} is required", name("url")));
                    }
                    for (field, value) in button {
                        let ok = match field.as_str() {
                            "type" | "displayText" => true,
                            "id" => text(value, 100),
                            "payload" => text(value, 1000),
                            "url" => value.is_string(),
                            "imageURL" | "iconURL" => value.as_str().is_some_and(is_https_url),
                            _ => return Err(format!("{} is not allowed", name(field))),
                        };
                        if !ok {
                            return Err(format!("{} is not valid", name(field)));
                        }
                    }
                }
            }
            _ => return Err(format!("\"{key}\" is not allowed")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_a_slice_of_the_log_whatever_its_size() {
        let mut state = State::new("sk".into(), "pk".into(), RateLimit::default(), false, 0);
        state.create_room(&json!({"roomId": "r"})).unwrap();
        let seeding = std::time::Instant::now();
        state
            .add_messages(&json!({"roomId": "r", "count": 100_000}))
            .unwrap();
        let seeded = seeding.elapsed();
        let query = HashMap::from([
            ("limit".to_owned(), "200".to_owned()),
            ("skip".to_owned(), "99800".to_owned()),
        ]);
        let paging = std::time::Instant::now();
        let page = state.room_messages("r", None, &query).unwrap();
        let one_page = paging.elapsed();
        let page: Value = serde_json::from_str(&page).unwrap();
        assert_eq!(page["count"], 200);
        assert_eq!(page["messages"][0]["message"], "message 99801");
        println!("100,000 messages seeded in {seeded:?}; the page of 200 at skip 99,800 built in {one_page:?}");
    }
}
