//! `roomchat export --dry-run`.

use roomchat::wire::Operation;

use crate::error::CliError;

/// `--dry-run`: the first request of each target (the rooms' listing with `--all-rooms`),
/// printed as the operation commands print theirs; nothing is sent.
pub(super) fn dry_run(
    matches: &clap::ArgMatches,
    pairs: &[(String, Option<String>, Option<String>)],
    all_rooms: bool,
) -> Result<(), CliError> {
    let base_url = crate::config::dry_run_base_url(matches)?;
    let limit = *matches
        .get_one::<u64>("export-page-size")
        .expect("defaulted");
    let mut requests = Vec::new();
    if all_rooms {
        requests.push(Operation::ListChatRooms.build(&serde_json::json!({}))?);
    }
    for (room, channel, _) in pairs {
        let mut params = serde_json::json!({"roomId": room, "limit": limit, "skip": 0});
        let operation = match channel {
            Some(channel) => {
                params["channelId"] = channel.as_str().into();
                Operation::ChannelMessages
            }
            None => Operation::RoomMessages,
        };
        requests.push(operation.build(&params)?);
    }
    for request in &requests {
        crate::output::print_dry_run(request, &base_url, false)?;
    }
    Ok(())
}
