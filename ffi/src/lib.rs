//! C ABI over the roomchat client.
