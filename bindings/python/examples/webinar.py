import asyncio
import io
import json
from typing import TextIO

import roomchat


def export_history(client: roomchat.Client, room_id: str, out: TextIO, skip: int = 0) -> int:
    """Writes a room's messages from `skip` on as JSON lines, one page in memory at a time;
    returns how many messages the room had, which is where a later export resumes."""
    messages = client.iter_room_messages(room_id, page_size=200, skip=skip)
    failures = 0
    while True:
        try:
            for message in messages:
                out.write(json.dumps(message.to_dict()) + "\n")
            return messages.next_skip
        except (roomchat.ServerError, roomchat.TimeoutError, roomchat.ConnectionError):
            failures += 1  # the iteration goes on: its next step fetches the failed page again
            if failures == 5:
                raise


def webinar(client: roomchat.Client) -> None:
    # A room for the webinar, and its host a moderator of it.
    room_id = client.create_chat_room(name="Q3 launch webinar", enable_channels=True).room_id
    assert room_id is not None
    host = client.create_user_v2("host-7", "Hana", email="hana@example.com")
    client.set_member(room_id, "host-7", "moderator")

    # Post as the room's system and as the host.
    client.send_room_message(room_id, "The webinar starts in 5 minutes.", system_message=True)
    client.send_room_message(room_id, "Welcome, everyone!", user_access_token=host.access_token)

    # Read the history page by page ...
    for page in client.room_messages_pages(room_id, page_size=50):
        for message in page.messages or []:
            author = message.user.username if message.user else None
            print(f"{author}: {message.message}")

    # ... export it afterwards, then delete the room (its messages and channels with it).
    transcript = io.StringIO()
    print("exported", export_history(client, room_id, transcript), "messages")
    client.delete_chat_room(room_id)
    try:
        client.get_chat_room(room_id)
    except roomchat.NotFoundError as error:
        print("deleted:", error.kind)


async def webinar_async(client: roomchat.AsyncClient) -> None:
    made = await client.create_chat_room(name="Q4 webinar")
    assert made.room_id is not None
    await client.send_room_message(made.room_id, "Slides are up.", system_message=True)
    async for message in client.iter_room_messages(made.room_id):
        print("async:", message.message)
    await client.delete_chat_room(made.room_id)


async def main() -> None:
    async with roomchat.AsyncClient.from_env() as client:
        await webinar_async(client)


if __name__ == "__main__":
    with roomchat.Client.from_env() as client:
        webinar(client)
    asyncio.run(main())
