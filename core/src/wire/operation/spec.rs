//! What an operation's declaration says (`api/operations.toml`), as data core
//! reads at run time: the generic JSON-params builder, the retry class of a
//! request and the operation a request is sent as all follow from it.

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::wire::models::RawAuth;
use crate::wire::{encode_path_segment, WireRequest};

/// An operation's declaration: everything that differs between operations.
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OperationSpec {
    /// The stable snake_case name.
    pub name: &'static str,
    /// One line: what the operation does.
    pub summary: &'static str,
    /// The family it belongs to (`Rooms`, `Users`, `Bots`, …): how the
    /// command line's help groups operations; empty when none is declared.
    pub family: &'static str,
    /// The HTTP method, upper case.
    pub method: &'static str,
    /// The exact path, casing as documented; `{name}` is a path parameter.
    pub path: &'static str,
    /// Which key authenticates it.
    pub auth: RawAuth,
    /// Whether it may be sent again after a 5xx, a timeout or a lost answer.
    pub retry: RetryClass,
    /// How its listing pages, if it does.
    pub pages: Paging,
    /// The name of core's model of the answer.
    pub result: &'static str,
    /// The wire names of the fields each item of its listing declares, in
    /// declaration order (the record of the page's one list): how the command
    /// line's CSV knows its columns before the first page comes. Empty when
    /// it does not page.
    pub item_fields: &'static [&'static str],
    /// The wire name of the page's one list of records (`data`, `messages`):
    /// where a page's items are. Empty when it does not page.
    pub items_field: &'static str,
    /// Its parameters, in the order they are sent.
    pub params: &'static [ParamSpec],
    /// Groups of parameters of which a call gives exactly one.
    pub exactly_one: &'static [&'static [&'static str]],
    /// Whether a caller may pass body fields the declaration does not type.
    pub extra: bool,
    /// The errors of the service a caller should know by kind, and when they come.
    pub errors: &'static [DeclaredError],
}

/// An error an operation's declaration names: its kind and when the service gives it.
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeclaredError {
    /// The error's kind.
    pub kind: ErrorKind,
    /// When it comes, in a few words.
    pub when: &'static str,
}

/// Whether an operation may be sent again once it may have reached the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryClass {
    /// Repeating it has the effect of sending it once: retried after a 5xx, a
    /// timeout or a lost answer, as a GET is.
    Repeatable,
    /// A repeat could create or post twice: sent again only when nothing can
    /// have reached the service, or when the client allows it
    /// (`retry_non_idempotent`).
    Never,
}

/// How an operation's listing pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Paging {
    /// It does not page.
    None,
    /// `limit`/`skip` in, `total`/`limit`/`skip`/`data` out.
    Total,
    /// `limit`/`skip` in, `totalRecords`/`count`/`limit`/`skip` out.
    TotalRecords,
}

/// One parameter of an operation.
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParamSpec {
    /// The wire name.
    pub name: &'static str,
    /// Where it goes.
    pub location: ParamLocation,
    /// Its type.
    pub kind: ParamKind,
    /// Whether a call must give it.
    pub required: bool,
    /// The least value of an integer.
    pub min: Option<u64>,
    /// The greatest value of an integer.
    pub max: Option<u64>,
    /// The most characters of a string.
    pub max_len: Option<usize>,
    /// The values a string may take (empty: any).
    pub choices: &'static [&'static str],
    /// The value the service (or, for a path parameter, the client) takes when it is not given.
    pub default: Option<&'static str>,
}

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamLocation {
    /// A segment of the path, percent-encoded.
    Path,
    /// A query parameter.
    Query,
    /// A field of the JSON body.
    Body,
}

/// A parameter's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamKind {
    /// Text.
    String,
    /// An identifier: text that must not be empty.
    Id,
    /// A whole number ≥ 0.
    Integer,
    /// `true` or `false`.
    Boolean,
    /// A setting the service takes as `"on"`/`"off"`: `true` or `false` for the
    /// caller, sent as `"on"` or `"off"`.
    Switch,
    /// Any JSON value, sent as given (an object of settings, an author, a
    /// list of buttons).
    Json,
}

impl OperationSpec {
    /// The parameter called `name`.
    pub fn param(&self, name: &str) -> Option<&'static ParamSpec> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Whether a request of `method` to `path` (under the base URL, without
    /// the query) is this operation: its method, and its path with any value
    /// in each parameter's segment (one of its choices, when it has some).
    pub fn is_sent_as(&self, method: &str, path: &str) -> bool {
        if method != self.method {
            return false;
        }
        let mut sent = path.split('/');
        for declared in self.path.split('/') {
            let Some(segment) = sent.next() else {
                return false;
            };
            match declared.strip_prefix('{').and_then(|d| d.strip_suffix('}')) {
                None => {
                    if segment != declared {
                        return false;
                    }
                }
                Some(name) => {
                    let choices = self.param(name).map_or(&[][..], |p| p.choices);
                    if segment.is_empty() || !(choices.is_empty() || choices.contains(&segment)) {
                        return false;
                    }
                }
            }
        }
        sent.next().is_none()
    }

    /// The request of an operation that takes no parameters: its method, path and key.
    pub(crate) fn request_without_params(&self) -> WireRequest {
        WireRequest {
            method: self.method.to_owned(),
            path: self.path.to_owned(),
            query: Vec::new(),
            body: None,
            auth: self.auth,
        }
    }

    /// The wire request for `params` (a JSON object with the wire names, or
    /// null for none), checked against the declaration: unknown parameters,
    /// wrong types, values out of their limits, a missing required one, or not
    /// exactly one of a group are validation errors, and nothing is sent.
    pub(crate) fn build(&self, params: &Value) -> Result<WireRequest> {
        let given = match params {
            Value::Null => None,
            Value::Object(fields) => Some(fields),
            _ => {
                return Err(Error::validation(format!(
                    "the params of {} must be an object",
                    self.name
                )))
            }
        };
        let get = |name: &str| given.and_then(|g| g.get(name)).filter(|v| !v.is_null());
        let invalid = |message: String| Error::validation(format!("{}: {message}", self.name));

        let mut body = Map::new();
        if let Some(unknown) = given
            .into_iter()
            .flat_map(|g| g.iter())
            .find(|(name, _)| self.param(name).is_none())
        {
            if !self.extra {
                let known: Vec<&str> = self.params.iter().map(|p| p.name).collect();
                return Err(invalid(format!(
                    "unknown parameter {:?} (takes {})",
                    unknown.0,
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                )));
            }
        }
        for group in self.exactly_one {
            // A flag is an author only when set: `systemMessage: false` is not one.
            let count = group
                .iter()
                .filter(|name| get(name).is_some_and(|v| *v != Value::Bool(false)))
                .count();
            if count != 1 {
                // "userId and uniqueUserIdentifier", "a, b and c".
                let names = match group.split_last() {
                    Some((last, [])) => (*last).to_owned(),
                    Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                    None => String::new(),
                };
                return Err(invalid(format!(
                    "give exactly one of {names}{}",
                    match (count, group.len()) {
                        (0 | 1, _) => "",
                        (_, 2) => ", not both",
                        _ => ", not more",
                    }
                )));
            }
        }

        let mut path = String::with_capacity(self.path.len() + 32);
        let mut query = Vec::new();
        for param in self.params {
            let value = match get(param.name) {
                Some(value) => Some(param.check(value).map_err(invalid)?),
                None if param.required => {
                    return Err(invalid(format!("{} is required", param.name)))
                }
                None => None,
            };
            match (param.location, value) {
                (ParamLocation::Body, Some(value)) => {
                    body.insert(param.name.to_owned(), value);
                }
                (ParamLocation::Query, Some(value)) => {
                    query.push((param.name.to_owned(), as_text(&value)));
                }
                _ => {}
            }
        }
        for declared in self.path.split('/').skip(1) {
            path.push('/');
            match declared.strip_prefix('{').and_then(|d| d.strip_suffix('}')) {
                None => path.push_str(declared),
                Some(name) => {
                    let value = match get(name).and_then(Value::as_str) {
                        Some(given) => given,
                        // A declared default is checked as a given value is: a
                        // default outside the param's choices is never sent.
                        None => match self.param(name) {
                            Some(
                                param @ ParamSpec {
                                    default: Some(default),
                                    ..
                                },
                            ) => {
                                param.check(&Value::from(*default)).map_err(|why| {
                                    invalid(format!("the declared default of {name}: {why}"))
                                })?;
                                default
                            }
                            _ => return Err(invalid(format!("{name} is required"))),
                        },
                    };
                    path.push_str(&encode_path_segment(value));
                }
            }
        }
        if self.extra {
            for (name, value) in given.into_iter().flatten() {
                if self.param(name).is_none() {
                    body.insert(name.clone(), value.clone());
                }
            }
        }
        let has_body = self.extra
            || self
                .params
                .iter()
                .any(|p| p.location == ParamLocation::Body);
        Ok(WireRequest {
            method: self.method.to_owned(),
            path,
            query,
            body: has_body.then(|| Value::Object(body).to_string()),
            auth: self.auth,
        })
    }
}

impl ParamSpec {
    /// `value` if it is of this parameter's type and within its limits.
    fn check(&self, value: &Value) -> std::result::Result<Value, String> {
        let name = self.name;
        match self.kind {
            ParamKind::String | ParamKind::Id => {
                let Some(text) = value.as_str() else {
                    return Err(format!("{name} must be a string"));
                };
                if self.kind == ParamKind::Id && text.is_empty() {
                    return Err(format!("{name} must not be empty"));
                }
                if let Some(max) = self.max_len {
                    if text.chars().count() > max {
                        return Err(format!("{name} must be at most {max} characters"));
                    }
                }
                if !self.choices.is_empty() && !self.choices.contains(&text) {
                    return Err(format!(
                        "{name} must be one of {}, not {text:?}",
                        self.choices.join(", ")
                    ));
                }
            }
            ParamKind::Integer => {
                let Some(n) = value.as_u64() else {
                    return Err(format!("{name} must be a whole number ≥ 0"));
                };
                let (min, max) = (self.min.unwrap_or(0), self.max.unwrap_or(u64::MAX));
                if !(min..=max).contains(&n) {
                    return Err(format!("{name} must be between {min} and {max}, not {n}"));
                }
            }
            ParamKind::Boolean => {
                if !value.is_boolean() {
                    return Err(format!("{name} must be true or false"));
                }
            }
            ParamKind::Switch => {
                return match value.as_bool() {
                    Some(on) => Ok(Value::from(if on { "on" } else { "off" })),
                    None => Err(format!("{name} must be true or false")),
                };
            }
            ParamKind::Json => {}
        }
        Ok(value.clone())
    }
}

/// A query value as text: strings as they are, numbers and booleans as JSON writes them.
fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path default outside its param's choices (the casing slip
    /// `default = "chatRoom"`) is refused, not sent (issue 37, item 11).
    #[test]
    fn a_path_default_is_checked_as_a_given_value() {
        const fn spec(default: &'static str) -> ParamSpec {
            ParamSpec {
                name: "pathForm",
                location: ParamLocation::Path,
                kind: ParamKind::String,
                required: false,
                min: None,
                max: None,
                max_len: None,
                choices: &["room", "chatroom"],
                default: Some(default),
            }
        }
        static GOOD: [ParamSpec; 1] = [spec("room")];
        static SLIP: [ParamSpec; 1] = [spec("chatRoom")];
        let op = |params: &'static [ParamSpec]| OperationSpec {
            name: "list_things",
            family: "",
            summary: "",
            method: "GET",
            path: "/v2/{pathForm}/things",
            auth: RawAuth::PrivateKey,
            retry: RetryClass::Repeatable,
            pages: Paging::None,
            result: "Thing",
            item_fields: &[],
            items_field: "",
            params,
            exactly_one: &[],
            extra: false,
            errors: &[],
        };
        assert_eq!(
            op(&GOOD).build(&Value::Null).unwrap().path,
            "/v2/room/things"
        );
        let refused = op(&SLIP).build(&Value::Null).unwrap_err();
        assert_eq!(refused.kind(), crate::ErrorKind::Validation);
        assert!(
            refused.message().contains("declared default of pathForm")
                && refused.message().contains("\"chatRoom\""),
            "{refused}"
        );
        // A given value still wins over the (bad) default.
        let given = serde_json::json!({"pathForm": "chatroom"});
        assert_eq!(op(&SLIP).build(&given).unwrap().path, "/v2/chatroom/things");
    }

    /// The item fields of `list_users`, whose page is the model `UserPage`,
    /// are the fields of its list's model (`[[model]]` `User`, in xtask's
    /// `item_fields`): they must be exactly the wire names of `User`'s typed
    /// fields, so that a listing's CSV gives every typed field a column of its own.
    #[test]
    fn a_hand_written_pages_item_fields_are_its_models() {
        use crate::wire::models::User;
        let every = User {
            id: Some(String::new()),
            user_id: Some(String::new()),
            username: Some(String::new()),
            profile_pic: Some(String::new()),
            email: Some(String::new()),
            unique_user_identifier: Some(String::new()),
            is_moderator: Some(false),
            chat_room: Some(String::new()),
            extra: serde_json::Map::new(),
        };
        let typed: Vec<String> = match serde_json::to_value(every) {
            Ok(Value::Object(fields)) => fields.keys().cloned().collect(),
            other => panic!("{other:?}"),
        };
        let spec = super::super::Operation::ListUsers.spec().unwrap();
        let mut declared: Vec<String> = spec.item_fields.iter().map(|f| (*f).to_owned()).collect();
        let mut sorted = typed.clone();
        sorted.sort();
        declared.sort();
        assert_eq!(declared, sorted);
    }
}
