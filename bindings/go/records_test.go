package roomchat

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A list of records decodes as encoding/json decodes it (decodeRecords goes
// around its passes over the array): null, empty, null elements, spaces, and
// an error for anything but an array of objects.
func TestRecordListsDecodeAsEncodingJSON(t *testing.T) {
	for _, data := range []string{
		`null`, `[]`, `[ ]`, `[null]`, `[{"_id":"a"}]`, `[ {"_id":"a"} , null ,{"username":"b","x":[1,{"y":"]"}]} ]`,
		`[{"_id":"a","created":"2026-12-08T01:56:26.120Z","isModerator":false}]`,
		`{}`, `[1]`, `"x"`, `[{"_id":1}]`, `[{}`, `[{},]`, `[,{}]`, `[{} {}]`, `[[]]`, `[true]`,
	} {
		var want struct {
			Data []*User `json:"data"`
		}
		wantErr := json.Unmarshal([]byte(`{"data":`+data+`}`), &want)
		var got UserPage
		gotErr := got.UnmarshalJSON([]byte(`{"data":` + data + `}`))
		if (gotErr != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, encoding/json's %v", data, gotErr, wantErr)
			continue
		}
		if wantErr == nil && (!reflect.DeepEqual(got.Data, want.Data) || (got.Data == nil) != (want.Data == nil)) {
			t.Errorf("%s: %#v, encoding/json's %#v", data, got.Data, want.Data)
		}
	}
}
