import asyncio

import roomchat

# Reads ROOMCHAT_PRIVATE_KEY and ROOMCHAT_BASE_URL (and ROOMCHAT_CHAT_URL for sign-in links,
# ROOMCHAT_PUBLIC_KEY for validating access tokens).
with roomchat.Client.from_env(timeout=10.0) as client:
    ann = client.create_user("ann", is_moderator=True, chat_room="bbNiVFoXm")
    print("sign Ann in at", client.sign_in_url("bbNiVFoXm", ann.access_token))

    for user in client.users():  # lazily, 200 a page
        print(user.username, user.is_moderator)

    try:
        client.deactivate_user(user_id="0" * 24)
    except roomchat.UserNotFoundError as error:
        print("no such user:", error.status, error.message)

    # A user's lifecycle, and the access token that signs her in.
    eve = client.create_user("eve")
    print("eve's token signs in", client.validate_access_token(eve.access_token).username)
    client.deactivate_user(user_id=eve.user_id)  # her token is refused while deactivated
    client.reactivate_user(user_id=eve.user_id)
    client.invalidate_access_token(eve.access_token)  # for good
    try:
        client.validate_access_token(eve.access_token)
    except roomchat.InvalidRequestError as error:
        print("after invalidation:", error.message)


async def main() -> None:
    async with roomchat.AsyncClient.from_env() as client:
        page = await client.list_users(limit=50)
        print(page.total, "users")


asyncio.run(main())
