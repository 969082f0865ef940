package roomchat_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// vectorParams reads a request vector's params for a method's arguments.
type vectorParams map[string]any

func (p vectorParams) str(name string) string { s, _ := p[name].(string); return s }

func (p vectorParams) optStr(name string) *string {
	if s, ok := p[name].(string); ok {
		return &s
	}
	return nil
}

func (p vectorParams) optBool(name string) *bool {
	if b, ok := p[name].(bool); ok {
		return &b
	}
	return nil
}

func (p vectorParams) optInt(name string) *int64 {
	if n, ok := p[name].(float64); ok {
		i := int64(n)
		return &i
	}
	return nil
}

// callByMethod calls each operation through its generated method with a
// request vector's params.
var callByMethod = map[string]func(c *roomchat.Client, ctx context.Context, p vectorParams) error{
	"list_users": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.ListUsers(ctx, &roomchat.ListUsersParams{Limit: p.optInt("limit"), Skip: p.optInt("skip")})
		return err
	},
	"deactivate_user": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.DeactivateUser(ctx, &roomchat.DeactivateUserParams{UserID: p.optStr("userId"), UniqueUserIdentifier: p.optStr("uniqueUserIdentifier")})
		return err
	},
	"conversation_messages": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.ConversationMessages(ctx, p.str("roomId"), p.str("conversationId"), &roomchat.ConversationMessagesParams{PathForm: p.optStr("pathForm")})
		return err
	},
	"create_user": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		// role: regular (isModerator false), moderator, room_moderator (with chatRoom).
		_, err := c.CreateUser(ctx, p.str("username"), &roomchat.CreateUserParams{IsModerator: roomchat.Bool(p.str("role") != "regular"), ChatRoom: p.optStr("chatRoom")})
		return err
	},
	"list_chat_rooms": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.ListChatRooms(ctx)
		return err
	},
	"reactivate_user": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.ReactivateUser(ctx, &roomchat.ReactivateUserParams{UserID: p.optStr("userId"), UniqueUserIdentifier: p.optStr("uniqueUserIdentifier")})
		return err
	},
	"validate_access_token": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.ValidateAccessToken(ctx, p.str("accessToken"))
		return err
	},
	"invalidate_access_token": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.InvalidateAccessToken(ctx, p.str("accessToken"))
		return err
	},
	"eject_all_users": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.EjectAllUsers(ctx, p.str("roomId"))
		return err
	},
	"update_bot": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.UpdateBot(ctx, p.str("botId"), &roomchat.UpdateBotParams{
			Name: p.optStr("name"), WebhookURL: p.optStr("webhookURL"), Description: p.optStr("description"),
			Trigger: p.optStr("trigger"), MessageVisibility: p.optStr("messageVisibility"),
			IsAllowedInAllChatRooms: p.optBool("isAllowedInAllChatRooms"), MessageHistoryLimit: p.optInt("messageHistoryLimit"),
			Metadata: p.optStr("metadata"), Enabled: p.optBool("enabled"),
		})
		return err
	},
	"create_chat_room": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		params := &roomchat.CreateChatRoomParams{
			Name: p.optStr("name"), Description: p.optStr("description"), PasswordProtected: p.optBool("passwordProtected"),
			RoomPassword: p.optStr("roomPassword"), PreModeratedChatRoom: p.optBool("preModeratedChatRoom"),
			EnableOneToOneChat: p.optBool("enableOneToOneChat"), ModeratorOnlyOneToOneChat: p.optBool("moderatorOnlyOneToOneChat"),
			EnableChannels: p.optBool("enableChannels"), DefaultNotificationEnabled: p.optBool("defaultNotificationEnabled"),
			FileSharingMode: p.optStr("fileSharingMode"), ChatRoomPermissionLevel: p.optStr("chatRoomPermissionLevel"),
			CustomCSS: p.optStr("customCSS"), Metadata: p.optStr("metadata"), Customization: p["customization"],
			Extra: map[string]any{},
		}
		for _, name := range []string{"mainColor", "hideInviteButton", "enableLikeMessage"} {
			if v, ok := p[name]; ok {
				params.Extra[name] = v
			}
		}
		_, err := c.CreateChatRoom(ctx, params)
		return err
	},
	"get_chat_room": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.GetChatRoom(ctx, p.str("roomId"))
		return err
	},
	"update_chat_room": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.UpdateChatRoom(ctx, p.str("roomId"), &roomchat.UpdateChatRoomParams{
			Name: p.optStr("name"), Description: p.optStr("description"), RoomPassword: p.optStr("roomPassword"),
			PasswordProtected: p.optBool("passwordProtected"), Metadata: p.optStr("metadata"),
		})
		return err
	},
	"delete_chat_room": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.DeleteChatRoom(ctx, p.str("roomId"))
		return err
	},
	"turn_chat_on": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.TurnChatOn(ctx, p.str("roomId"))
		return err
	},
	"turn_chat_off": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.TurnChatOff(ctx, p.str("roomId"))
		return err
	},
	"set_chat_off_message": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.SetChatOffMessage(ctx, p.str("roomId"), p.str("message"))
		return err
	},
	"room_messages": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.RoomMessages(ctx, p.str("roomId"), &roomchat.RoomMessagesParams{Limit: p.optInt("limit"), Skip: p.optInt("skip"), OnlyAttachments: p.optBool("onlyAttachments")})
		return err
	},
	"delete_room_messages": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.DeleteRoomMessages(ctx, p.str("roomId"), &roomchat.DeleteRoomMessagesParams{
			DoNotDeletePrivateMessages: p.optBool("doNotDeletePrivateMessages"), DoNotDeleteChannelMessages: p.optBool("doNotDeleteChannelMessages"),
		})
		return err
	},
	"send_room_message": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.SendRoomMessage(ctx, p.str("roomId"), p.str("message"), &roomchat.SendRoomMessageParams{
			UserAccessToken: p.optStr("userAccessToken"), SystemMessage: p.optBool("systemMessage"), User: p["user"],
		})
		return err
	},
	"create_channel": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.CreateChannel(ctx, p.str("roomId"), p.str("channelName"), &roomchat.CreateChannelParams{
			Enabled: p.optBool("enabled"), NotifyAllUsers: p.optBool("notifyAllUsers"), Metadata: p.optStr("metadata"),
		})
		return err
	},
	"update_channel": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.UpdateChannel(ctx, p.str("roomId"), p.str("channelId"), &roomchat.UpdateChannelParams{
			ChannelName: p.optStr("channelName"), Enabled: p.optBool("enabled"), NotifyAllUsers: p.optBool("notifyAllUsers"), Metadata: p.optStr("metadata"),
		})
		return err
	},
	"send_channel_message": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.SendChannelMessage(ctx, p.str("roomId"), p.str("channelId"), p.str("message"), &roomchat.SendChannelMessageParams{
			UserAccessToken: p.optStr("userAccessToken"), SystemMessage: p.optBool("systemMessage"), User: p["user"],
		})
		return err
	},
	"channel_messages": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.ChannelMessages(ctx, p.str("roomId"), p.str("channelId"), &roomchat.ChannelMessagesParams{Limit: p.optInt("limit"), Skip: p.optInt("skip"), OnlyAttachments: p.optBool("onlyAttachments")})
		return err
	},
	"delete_channel_message": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.DeleteChannelMessage(ctx, p.str("roomId"), p.str("channelId"), p.str("messageId"))
		return err
	},
	"list_conversations": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.ListConversations(ctx, p.str("roomId"), &roomchat.ListConversationsParams{PathForm: p.optStr("pathForm")})
		return err
	},
	"update_user": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.UpdateUser(ctx, &roomchat.UpdateUserParams{
			UserID: p.optStr("userId"), UniqueUserIdentifier: p.optStr("uniqueUserIdentifier"), Username: p.optStr("username"),
			Email: p.optStr("email"), ProfilePic: p.optStr("profilePic"), ChatRoom: p.optStr("chatRoom"),
			IsModerator: p.optBool("isModerator"), ExternalUserID: p["externalUserId"], Meta: p["meta"],
		})
		return err
	},
	"create_user_v2": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.CreateUserV2(ctx, p.str("uniqueUserIdentifier"), p.str("username"), &roomchat.CreateUserV2Params{
			FirstName: p.optStr("firstName"), LastName: p.optStr("lastName"), Email: p.optStr("email"), Meta: p["meta"],
			ExternalProfilePicURL: p.optStr("externalProfilePicURL"), MembershipDetails: p["membershipDetails"],
		})
		return err
	},
	"get_user": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.GetUser(ctx, p.str("uniqueUserIdentifier"))
		return err
	},
	"user_rooms": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.UserRooms(ctx, p.str("uniqueUserIdentifier"))
		return err
	},
	"remove_user": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.RemoveUser(ctx, &roomchat.RemoveUserParams{UserID: p.optStr("userId"), UniqueUserIdentifier: p.optStr("uniqueUserIdentifier")})
		return err
	},
	"list_members": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.ListMembers(ctx, p.str("roomId"), &roomchat.ListMembersParams{Limit: p.optInt("limit"), Skip: p.optInt("skip")})
		return err
	},
	"set_member": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.SetMember(ctx, p.str("roomId"), p.str("uniqueUserIdentifier"), p.str("roleName"))
		return err
	},
	"remove_member": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.RemoveMember(ctx, p.str("roomId"), p.str("uniqueUserIdentifier"))
		return err
	},
	"create_bot": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.CreateBot(ctx, p.str("name"), p.str("webhookURL"), &roomchat.CreateBotParams{
			Description: p.optStr("description"), Trigger: p.optStr("trigger"), MessageVisibility: p.optStr("messageVisibility"),
			IsAllowedInAllChatRooms: p.optBool("isAllowedInAllChatRooms"), MessageHistoryLimit: p.optInt("messageHistoryLimit"),
			Metadata: p.optStr("metadata"), Enabled: p.optBool("enabled"),
		})
		return err
	},
	"list_bots": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.ListBots(ctx)
		return err
	},
	"enable_bot": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.EnableBot(ctx, p.str("botId"))
		return err
	},
	"disable_bot": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.DisableBot(ctx, p.str("botId"))
		return err
	},
	"enable_bot_in_room": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.EnableBotInRoom(ctx, p.str("botId"), p.str("roomId"))
		return err
	},
	"disable_bot_in_room": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.DisableBotInRoom(ctx, p.str("botId"), p.str("roomId"))
		return err
	},
	"send_bot_message": func(c *roomchat.Client, ctx context.Context, p vectorParams) error {
		_, err := c.SendBotMessage(ctx, p.str("botId"), p.str("roomId"), p.str("message"), &roomchat.SendBotMessageParams{
			UserID: p.optStr("userId"), UniqueUserIdentifier: p.optStr("uniqueUserIdentifier"), MessageID: p.optStr("messageId"),
			ActionButtons: p["actionButtons"],
		})
		return err
	},
}

// Every operation once, end to end through its generated method: each
// operation's first request vector (its params given as the method's
// arguments) reaches the emulator as the vector's wire request.
func TestEveryMethodSendsItsVector(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t, roomchat.WithMaxRetries(0))
	seen := map[string]bool{}
	for _, v := range loadVectors[requestVector](t, "requests.json") {
		if v.ExpectError != "" || seen[v.Operation] || v.Operation == "raw" {
			continue
		}
		seen[v.Operation] = true
		call, ok := callByMethod[v.Operation]
		if !ok {
			t.Errorf("%s: no method", v.Operation)
			continue
		}
		var params vectorParams
		if err := json.Unmarshal(v.Params, &params); err != nil {
			t.Fatal(err)
		}
		emu.ClearJournal()
		if err := call(client, context.Background(), params); err != nil {
			if e := err.(*roomchat.Error); e.Status == 0 {
				t.Errorf("%s: no answer: %v", v.Name, err)
				continue
			}
		}
		checkJournal(t, emu, v)
	}
	if len(seen) != 41 || len(callByMethod) != 41 {
		t.Errorf("%d operations with a vector, %d methods; want 41", len(seen), len(callByMethod))
	}
}
