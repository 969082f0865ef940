package roomchat_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/roomchat/roomchat-go"
)

// The records' hand-written decoder, called directly with any bytes (as a
// program may, bypassing json.Unmarshal's validation): an error or a record,
// never a panic; and on valid JSON it agrees with json.Valid.
func FuzzReviewRecordUnmarshal(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `{"_id":"a","username":"b","x":[1,{"y":"\"}"}]}`, `{"a":`, `{"\u00e9":1}`, `[`, `{"data":[{"_id":"x"}],"total":3}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var u roomchat.User
		_ = u.UnmarshalJSON(data)
		var p roomchat.UserPage
		_ = p.UnmarshalJSON(data)
		var m roomchat.MessagePage
		err := m.UnmarshalJSON(data)
		if err == nil && json.Valid(data) {
			if _, err := json.Marshal(m); err != nil {
				t.Fatalf("decoded %q, but it does not encode again: %v", data, err)
			}
		}
	})
}

// DecodeResponse with any answer: a record's JSON or a *roomchat.Error, never a panic.
func FuzzReviewDecodeResponse(f *testing.F) {
	f.Add("list_users", 200, "X-A", "b", []byte(`{"data":[],"total":0,"limit":1,"skip":0}`))
	f.Add("get_chat_room", 404, "Retry-After", "5", []byte(`{"message":"x"}`))
	f.Add("raw", 500, "", "", []byte(`not json`))
	f.Fuzz(func(t *testing.T, op string, status int, name, value string, body []byte) {
		_, err := roomchat.DecodeResponse(op, status, http.Header{name: {value}}, body)
		var e *roomchat.Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("not a *roomchat.Error: %T %v", err, err)
		}
		if e != nil && e.Kind == roomchat.KindInternal {
			t.Fatalf("an internal error (a panic caught in the library): %v", err)
		}
	})
}

// BuildRequest with any params JSON: a request or a *roomchat.Error.
func FuzzReviewBuildRequest(f *testing.F) {
	f.Add("list_users", []byte(`{"limit":5}`))
	f.Add("raw", []byte(`{"method":"GET","path":"/a","query":[],"auth":"none"}`))
	f.Add("send_room_message", []byte(`{"roomId":"r","message":"m","systemMessage":true}`))
	f.Fuzz(func(t *testing.T, op string, params []byte) {
		if !json.Valid(params) {
			return
		}
		_, err := roomchat.BuildRequest(op, json.RawMessage(params))
		var e *roomchat.Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("not a *roomchat.Error: %T %v", err, err)
		}
		if e != nil && e.Kind == roomchat.KindInternal {
			t.Fatalf("an internal error (a panic caught in the library): %v", err)
		}
	})
}
