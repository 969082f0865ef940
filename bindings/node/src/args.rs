//! Arguments from JavaScript, as the JSON text the JS layer made with
//! `JSON.stringify` (cheap for the small objects calls take, and it turns lone
//! surrogates into escapes that are refused here instead of silently replaced).
//!
//! Messages name the argument that is wrong and never quote a value: a value
//! could be the private key.

use std::time::Duration;

use roomchat::{Error, ErrorKind, MAX_DURATION};
use serde_json::{Map, Value};

/// The largest whole number a JS number holds exactly (`Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// A validation error (nothing was sent).
pub fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Validation, message)
}

/// Parses the JSON text of an argument.
pub fn parse(what: &str, json: &str) -> Result<Value, Error> {
    serde_json::from_str(json).map_err(|e| {
        let why = if e.to_string().contains("surrogate") {
            "contains a lone surrogate (not valid Unicode)"
        } else {
            "is not representable as JSON"
        };
        invalid(format!("{what}: an argument {why}"))
    })
}

/// An object argument, read field by field.
pub struct Args<'a> {
    what: &'a str,
    fields: Option<&'a Map<String, Value>>,
}

impl<'a> Args<'a> {
    /// `value` must be an object, or null/absent for none.
    pub fn new(what: &'a str, value: &'a Value) -> Result<Args<'a>, Error> {
        match value {
            Value::Null => Ok(Args { what, fields: None }),
            Value::Object(fields) => Ok(Args {
                what,
                fields: Some(fields),
            }),
            _ => Err(invalid(format!("{what}: the argument must be an object"))),
        }
    }

    /// An error about argument `name`.
    pub fn bad(&self, name: &str, must: &str) -> Error {
        invalid(format!("{}: {name} must be {must}", self.what))
    }

    /// Refuses fields not in `known` (a typo would otherwise be ignored).
    pub fn only(&self, known: &[&str]) -> Result<(), Error> {
        let Some(fields) = self.fields else {
            return Ok(());
        };
        if let Some(unknown) = fields.keys().find(|k| !known.contains(&k.as_str())) {
            let name: String = unknown.chars().take(64).collect();
            return Err(invalid(format!(
                "{}: unknown option {name:?} (known: {})",
                self.what,
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            )));
        }
        Ok(())
    }

    /// The field, unless absent or null.
    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.fields
            .and_then(|f| f.get(name))
            .filter(|v| !v.is_null())
    }

    /// The field as given, null included (`None`: absent).
    pub fn raw(&self, name: &str) -> Option<&'a Value> {
        self.fields.and_then(|f| f.get(name))
    }

    /// Whether the field is given (not absent, not null).
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn string(&self, name: &str) -> Result<Option<String>, Error> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.bad(name, "a string")),
        }
    }

    pub fn required_string(&self, name: &str) -> Result<String, Error> {
        self.string(name)?
            .ok_or_else(|| self.bad(name, "given (a string)"))
    }

    pub fn boolean(&self, name: &str) -> Result<Option<bool>, Error> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.bad(name, "a boolean")),
        }
    }

    /// A whole number in `min..=max`.
    pub fn whole(&self, name: &str, min: u64, max: u64) -> Result<Option<u64>, Error> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        let n = match value {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= MAX_SAFE_INTEGER as f64)
                    .map(|f| f as u64)
            }),
            _ => None,
        };
        match n {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(self.bad(name, &format!("a whole number from {min} to {max}"))),
        }
    }

    /// A duration given in milliseconds (a finite number ≥ 0; fractions allowed),
    /// at most core's [`MAX_DURATION`]: a longer one is the configuration error
    /// core would give, but naming the option as the caller wrote it.
    pub fn millis(&self, name: &str) -> Result<Option<Duration>, Error> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        let ms = value
            .as_f64()
            .filter(|ms| ms.is_finite() && *ms >= 0.0)
            .ok_or_else(|| self.bad(name, "a number of milliseconds ≥ 0"))?;
        match Duration::try_from_secs_f64(ms / 1000.0) {
            Ok(duration) if duration <= MAX_DURATION => Ok(Some(duration)),
            _ => Err(Error::new(
                ErrorKind::Configuration,
                format!(
                    "{}: {name} must be at most {} ms (10^9 s)",
                    self.what,
                    MAX_DURATION.as_millis()
                ),
            )),
        }
    }
}

/// How a params object whose Node shape predates the declarations becomes
/// core's JSON params: generated from the operation's `[operation.node]` table
/// (records.rs, `params_of`).
pub struct ParamsShape {
    /// The declared params, by their wire names.
    pub params: &'static [&'static str],
    /// Typed fields beyond the declared params, sent through `extra`.
    pub fields: &'static [(&'static str, ExtraKind)],
    /// The fields the declaration does not type come as one `extra` object
    /// (the JSON param of core's hand-written builder).
    pub extra_object: bool,
    /// The declared boolean that stands for the hand-written builder's `role`.
    pub role_flag: Option<&'static str>,
    /// The fields the declaration does not type come as one `extra` object,
    /// sent beside the typed ones (core takes them at the params' top level).
    pub flatten_extra: bool,
}

/// The type of a [`ParamsShape`] field.
pub enum ExtraKind {
    String,
    Json,
}

/// `params` (the JSON of a params object in its Node shape) as core's JSON
/// params of operation `what`, by `shape`. What is not the shape's to check is
/// left to core's builder (a missing or unknown param, the role's rules).
pub fn core_params(what: &str, params: Value, shape: &ParamsShape) -> Result<Value, Error> {
    let Value::Object(mut fields) = params else {
        return Ok(params);
    };
    // Refused here, naming this shape's fields: core would name its own JSON params.
    let taken = |name: &str| {
        shape.params.contains(&name)
            || shape.fields.iter().any(|(field, _)| *field == name)
            || ((shape.extra_object || shape.flatten_extra) && name == "extra")
    };
    if let Some(unknown) = fields.keys().find(|name| !taken(name)) {
        let name: String = unknown.chars().take(64).collect();
        let mut known: Vec<&str> = shape.params.to_vec();
        known.extend(shape.fields.iter().map(|(field, _)| *field));
        if shape.extra_object || shape.flatten_extra {
            known.push("extra");
        }
        return Err(invalid(format!(
            "{what}: unknown parameter {name:?} (takes {})",
            known.join(", ")
        )));
    }
    if let Some(flag) = shape.role_flag {
        let in_one_room = fields.get("chatRoom").is_some_and(|v| !v.is_null());
        match fields.remove(flag) {
            // Core's message would name `role`, which this shape does not have.
            None | Some(Value::Null | Value::Bool(false)) if in_one_room => {
                return Err(invalid(format!(
                    "{what}: chatRoom limits a moderator to one room: give it with {flag}: true"
                )));
            }
            None | Some(Value::Null | Value::Bool(false)) => {}
            Some(Value::Bool(true)) => {
                let role = if in_one_room {
                    "room_moderator"
                } else {
                    "moderator"
                };
                fields.insert("role".into(), role.into());
            }
            Some(_) => return Err(invalid(format!("{what}: {flag} must be true or false"))),
        }
    }
    if shape.extra_object {
        let mut extra = match fields.remove("extra") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(extra)) => extra,
            Some(_) => return Err(invalid(format!("{what}: extra must be an object"))),
        };
        for (name, kind) in shape.fields {
            let Some(value) = fields.remove(*name).filter(|v| !v.is_null()) else {
                continue;
            };
            if matches!(kind, ExtraKind::String) && !value.is_string() {
                return Err(invalid(format!("{what}: {name} must be a string")));
            }
            if extra.contains_key(*name) {
                return Err(invalid(format!(
                    "{what}: {name} is given both as a field and in extra"
                )));
            }
            extra.insert((*name).to_owned(), value);
        }
        if !extra.is_empty() {
            fields.insert("extra".into(), Value::Object(extra));
        }
    }
    if shape.flatten_extra {
        match fields.remove("extra") {
            None | Some(Value::Null) => {}
            Some(Value::Object(extra)) => {
                for (name, value) in extra {
                    // A typed field is given as itself, where its type is checked.
                    if shape.params.contains(&name.as_str()) || fields.contains_key(&name) {
                        let name: String = name.chars().take(64).collect();
                        return Err(invalid(format!(
                            "{what}: {name} is a parameter of its own: give it as one, not in extra"
                        )));
                    }
                    fields.insert(name, value);
                }
            }
            Some(_) => return Err(invalid(format!("{what}: extra must be an object"))),
        }
    }
    Ok(Value::Object(fields))
}

/// A positional list of string arguments (sync helpers).
pub fn strings(what: &str, json: &str, count: usize) -> Result<Vec<String>, Error> {
    let value = parse(what, json)?;
    let items = value.as_array().filter(|a| a.len() <= count);
    let Some(items) = items else {
        return Err(invalid(format!("{what}: expected {count} arguments")));
    };
    let mut out = Vec::with_capacity(count);
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::String(s) => out.push(s.clone()),
            _ => {
                return Err(invalid(format!(
                    "{what}: argument {} must be a string",
                    i + 1
                )))
            }
        }
    }
    if out.len() < count {
        return Err(invalid(format!(
            "{what}: argument {} must be a string",
            out.len() + 1
        )));
    }
    Ok(out)
}
