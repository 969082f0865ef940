//! roomchat-emulator: a local emulator of the chat service.
