//! roomchat: a synchronous client for the chat service's REST API.
#![deny(missing_docs)]
