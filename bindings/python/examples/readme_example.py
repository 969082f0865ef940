import asyncio

import roomchat

# Reads ROOMCHAT_PRIVATE_KEY and ROOMCHAT_BASE_URL (and ROOMCHAT_CHAT_URL for sign-in links).
with roomchat.Client.from_env(timeout=10.0) as client:
    ann = client.create_user("ann", is_moderator=True, chat_room="bbNiVFoXm")
    print("sign Ann in at", client.sign_in_url("bbNiVFoXm", ann.access_token))

    for user in client.users():  # lazily, 200 a page
        print(user.username, user.is_moderator)

    try:
        client.deactivate_user(user_id="0" * 24)
    except roomchat.UserNotFoundError as error:
        print("no such user:", error.status, error.message)


async def main() -> None:
    async with roomchat.AsyncClient.from_env() as client:
        page = await client.list_users(limit=50)
        print(page.total, "users")


asyncio.run(main())
