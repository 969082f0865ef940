//! Every response decoder (`wire::decode_list_users`, `decode_deactivate_user`,
//! `decode_conversation_messages`, `decode_create_user`, `decode_chat_rooms`,
//! `decode_raw`) and `Operation::decode` of every operation, fed an arbitrary
//! status, headers and body (see `roomchat_fuzz::response_from_bytes` for the
//! framing). Checks: no panic; a success only for a 2xx; an error of a kind
//! that fits the status (a 2xx never gives `server_error`), with the status and
//! a message; `Operation::decode` agrees with the typed decoder; a decoded
//! value written back as JSON decodes to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let response = roomchat_fuzz::response_from_bytes(data);
    roomchat_fuzz::check_decoders(&response);
});
