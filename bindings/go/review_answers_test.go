package roomchat_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/roomchat/roomchat-go"
	"github.com/roomchat/roomchat-go/roomchattest"
)

// Odd 200 answers: never a panic; either a typed *Error or a value without
// nil holes (a nil *Room in a list, a nil page).
func TestReviewOddAnswers(t *testing.T) {
	emu := roomchattest.Start(t)
	client := emu.Client(t, roomchat.WithMaxRetries(0))
	bodies := []string{
		`null`, `[null]`, `{}`, `[]`, `"text"`, `42`, `[{}]`, `[1]`, `{"total":-1,"data":[]}`, `{"total":1,"limit":1,"skip":0,"data":[null]}`, `{"total":3,"limit":-5,"skip":0,"data":[]}`,
		`{"total":1.5,"data":[]}`, `{"total":1e400,"data":[]}`, `{"data":null,"total":0}`,
		`{"data":[null],"total":1}`, `{"data":[{"_id":null}],"total":1}`, `{"data":{},"total":1}`,
		strings.Repeat("[", 100000) + strings.Repeat("]", 100000), `{"a":"\ud800"}`, `[{"_id":"\u0000"}]`,
	}
	paths := []string{"/consumer/api/v1/chatrooms", "/consumer/api/v2/users", "/consumer/api/v1/chatroom/r1"}
	for _, body := range bodies {
		for _, path := range paths {
			emu.ClearFaults()
			emu.Fault(roomchattest.Fault{Path: path, Times: 5, Action: roomchattest.Respond(200, body, nil)})
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s answering %.40q: panic %v", path, body, r)
					}
				}()
				var err error
				switch path {
				case paths[0]:
					var rooms []*roomchat.Room
					rooms, err = client.ListChatRooms(context.Background())
					for _, r := range rooms {
						if r == nil && err == nil {
							t.Errorf("%s answering %.40q: a nil *Room in the list, no error", path, body)
						}
					}
				case paths[1]:
					var page *roomchat.UserPage
					page, err = client.ListUsers(context.Background(), nil)
					if err == nil {
						if page == nil {
							t.Errorf("%s answering %.40q: nil page, no error", path, body)
						} else {
							for _, u := range page.Data {
								if u == nil {
									t.Errorf("%s answering %.40q: a nil user, no error", path, body)
								}
							}
						}
					}
					n := 0
					for _, e := range client.IterListUsers(context.Background(), nil) {
						n++
						if e != nil {
							var re *roomchat.Error
							if !errors.As(e, &re) {
								t.Errorf("iterator: not a *roomchat.Error: %v", e)
							}
							break
						}
						if n > 10 {
							break
						}
					}
				case paths[2]:
					var room *roomchat.Room
					room, err = client.GetChatRoom(context.Background(), "r1")
					if err == nil && room == nil {
						t.Errorf("%s answering %.40q: nil room, no error", path, body)
					}
				}
				if err != nil {
					var e *roomchat.Error
					if !errors.As(err, &e) {
						t.Errorf("%s answering %.40q: not a *roomchat.Error: %T %v", path, body, err, err)
					}
				} else {
					t.Logf("%s answering %.40q: accepted", path, body)
				}
			}()
		}
	}
}
