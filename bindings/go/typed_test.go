package roomchat_test

import (
	"encoding/json"
	"testing"

	"github.com/roomchat/roomchat-go"
)

// resultOf is a new value of each operation's typed result, as its
// generated method returns it.
var resultOf = map[string]func() any{
	"list_users":              func() any { return new(roomchat.UserPage) },
	"deactivate_user":         func() any { return new(roomchat.Deactivated) },
	"conversation_messages":   func() any { return new([]*roomchat.Message) },
	"create_user":             func() any { return new(roomchat.CreatedUser) },
	"list_chat_rooms":         func() any { return new([]*roomchat.Room) },
	"reactivate_user":         func() any { return new(roomchat.Reactivated) },
	"validate_access_token":   func() any { return new(roomchat.TokenUser) },
	"invalidate_access_token": func() any { return new(roomchat.Invalidated) },
	"eject_all_users":         func() any { return new(roomchat.Acknowledged) },
	"update_bot":              func() any { return new(roomchat.BotAnswer) },
	"create_chat_room":        func() any { return new(roomchat.RoomAnswer) },
	"get_chat_room":           func() any { return new(roomchat.Room) },
	"update_chat_room":        func() any { return new(roomchat.RoomAnswer) },
	"delete_chat_room":        func() any { return new(roomchat.RoomAnswer) },
	"turn_chat_on":            func() any { return new(roomchat.Acknowledged) },
	"turn_chat_off":           func() any { return new(roomchat.Acknowledged) },
	"set_chat_off_message":    func() any { return new(roomchat.Acknowledged) },
	"room_messages":           func() any { return new(roomchat.MessagePage) },
	"delete_room_messages":    func() any { return new(roomchat.RoomAnswer) },
	"send_room_message":       func() any { return new(roomchat.Acknowledged) },
	"create_channel":          func() any { return new(roomchat.Channel) },
	"update_channel":          func() any { return new(roomchat.Channel) },
	"send_channel_message":    func() any { return new(roomchat.Acknowledged) },
	"channel_messages":        func() any { return new(roomchat.MessagePage) },
	"delete_channel_message":  func() any { return new(roomchat.Acknowledged) },
	"list_conversations":      func() any { return new([]*roomchat.Conversation) },
	"update_user":             func() any { return new(roomchat.UpdatedUser) },
	"create_user_v2":          func() any { return new(roomchat.ProvisionedUser) },
	"get_user":                func() any { return new(roomchat.UserProfile) },
	"user_rooms":              func() any { return new([]*roomchat.RoomName) },
	"remove_user":             func() any { return new(roomchat.Acknowledged) },
	"list_members":            func() any { return new(roomchat.MemberPage) },
	"set_member":              func() any { return new(roomchat.Member) },
	"remove_member":           func() any { return new(roomchat.Acknowledged) },
	"create_bot":              func() any { return new(roomchat.BotAnswer) },
	"list_bots":               func() any { return new(roomchat.BotList) },
	"enable_bot":              func() any { return new(roomchat.BotAnswer) },
	"disable_bot":             func() any { return new(roomchat.BotAnswer) },
	"enable_bot_in_room":      func() any { return new(roomchat.BotRoomAnswer) },
	"disable_bot_in_room":     func() any { return new(roomchat.BotRoomAnswer) },
	"send_bot_message":        func() any { return new(roomchat.Acknowledged) },
}

// Every responses.json answer decoded into its operation's typed Go result
// and encoded again gives the vector's JSON: every field by its wire name,
// the absent ones absent, the unknown ones kept as they came.
func TestResponseVectorsTyped(t *testing.T) {
	typed := 0
	for _, v := range loadVectors[responseVector](t, "responses.json") {
		if v.Expect.OK == nil || v.Operation == "raw" {
			continue
		}
		newResult, ok := resultOf[v.Operation]
		if !ok {
			t.Errorf("%s: no typed result for %s", v.Name, v.Operation)
			continue
		}
		decoded, err := roomchat.DecodeResponse(v.Operation, v.Status, vectorHeader(v.Headers), []byte(v.Body))
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		for _, source := range []json.RawMessage{decoded, v.Expect.OK} {
			result := newResult()
			if err := json.Unmarshal(source, result); err != nil {
				t.Errorf("%s: into %T: %v", v.Name, result, err)
				continue
			}
			again, err := json.Marshal(result)
			if err != nil {
				t.Errorf("%s: %T encoded: %v", v.Name, result, err)
				continue
			}
			if !sameJSON(t, again, v.Expect.OK) {
				t.Errorf("%s: %T encoded again\n%s\nwant %s", v.Name, result, again, v.Expect.OK)
			}
		}
		typed++
	}
	if len(resultOf) != 41 || typed < 41 {
		t.Fatalf("%d typed results, %d vectors", len(resultOf), typed)
	}
}
