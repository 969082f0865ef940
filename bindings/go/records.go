package roomchat

// The JSON helpers the generated records and wire structs (records_gen.go)
// share: written once here, not in every generated file.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"
)

// eachMember calls member with the name (unescaped) and the raw value of each
// member of the JSON object data, in order; null is an object without members.
// It reads the object's structure and no more: each value is decoded by
// decodeField (which checks it) or kept in a record's Extra as it came.
func eachMember(data []byte, record string, member func(name, raw []byte) error) error {
	bad := func(what string) error {
		return fmt.Errorf("roomchat: %s: the answer is not a JSON object (%s)", record, what)
	}
	i := skipSpace(data, 0)
	if bytes.HasPrefix(data[i:], []byte("null")) && skipSpace(data, i+4) == len(data) {
		return nil
	}
	if i >= len(data) || data[i] != '{' {
		return bad("it does not start with {")
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			if i >= len(data) || data[i] != '"' {
				return bad("a member's name is not a string")
			}
			end, ok := skipString(data, i)
			if !ok {
				return bad("a string does not end")
			}
			name := data[i+1 : end-1]
			if bytes.IndexByte(name, '\\') >= 0 || !utf8.Valid(name) {
				var unescaped string
				if err := json.Unmarshal(data[i:end], &unescaped); err != nil {
					return bad(err.Error())
				}
				name = []byte(unescaped)
			}
			i = skipSpace(data, end)
			if i >= len(data) || data[i] != ':' {
				return bad("no : after a member's name")
			}
			i = skipSpace(data, i+1)
			start := i
			if i, ok = skipValue(data, i); !ok {
				return bad("a value does not end")
			}
			if err := member(name, data[start:i]); err != nil {
				return err
			}
			i = skipSpace(data, i)
			if i < len(data) && data[i] == ',' {
				i = skipSpace(data, i+1)
				continue
			}
			if i < len(data) && data[i] == '}' {
				i++
				break
			}
			return bad("no , or } after a member")
		}
	}
	if skipSpace(data, i) != len(data) {
		return bad("something follows it")
	}
	return nil
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString is the end of the JSON string at data[i] (its opening quote).
func skipString(data []byte, i int) (int, bool) {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return i, false
}

// skipValue is the end of the JSON value at data[i]: a string, an object or an
// array (to its closing bracket), else a number or a literal (to the next delimiter).
func skipValue(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return i, false
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				end, ok := skipString(data, i)
				if !ok {
					return end, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return i, false
	}
	start := i
	for i < len(data) && !isDelimiter(data[i]) {
		i++
	}
	return i, i > start
}

func isDelimiter(b byte) bool {
	switch b {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// plainString is the JSON string raw when it has no escape to read (the
// common case: its bytes are the text), else false.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, b := range body {
		if b < 0x20 || b == '"' || b == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(body) {
		return "", false
	}
	return string(body), true
}

// isNumber is whether raw starts as a JSON number does (strconv alone takes
// more: "+1", "NaN", "Inf").
func isNumber(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

// decodeField decodes the raw value of the field name of record into into:
// the plain kinds directly, any other (and any doubt) by encoding/json, with
// its rules (null: a pointer nil, anything else untouched).
func decodeField[T any](raw []byte, record, name string, into *T) error {
	null := string(raw) == "null"
	switch p := any(into).(type) {
	case **string:
		if null {
			*p = nil
			return nil
		}
		if s, ok := plainString(raw); ok {
			*p = &s
			return nil
		}
	case *string:
		if null {
			return nil
		}
		if s, ok := plainString(raw); ok {
			*p = s
			return nil
		}
	case **bool:
		switch {
		case null:
			*p = nil
			return nil
		case string(raw) == "true" || string(raw) == "false":
			b := raw[0] == 't'
			*p = &b
			return nil
		}
	case *bool:
		switch {
		case null:
			return nil
		case string(raw) == "true" || string(raw) == "false":
			*p = raw[0] == 't'
			return nil
		}
	case **int64:
		if null {
			*p = nil
			return nil
		}
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil && isNumber(raw) {
			*p = &n
			return nil
		}
	case *uint64:
		if null {
			return nil
		}
		if n, err := strconv.ParseUint(string(raw), 10, 64); err == nil && isNumber(raw) {
			*p = n
			return nil
		}
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("roomchat: %s.%s: %w", record, name, err)
	}
	return nil
}

// decodeRecords decodes the raw value of the field name of record, a JSON
// array of records or null, into into as encoding/json does (null: nil; []:
// empty; a null element: nil; each other element by the record's
// UnmarshalJSON), without encoding/json's two passes over the whole array
// before it calls those (a check of the text, then each element's end):
// eachMember has found the array's end, and each record reads its own
// object. Anything but such an array goes to encoding/json, for its error.
func decodeRecords[T any, P interface {
	*T
	json.Unmarshaler
}](raw []byte, record, name string, into *[]*T) error {
	if string(raw) == "null" {
		*into = nil
		return nil
	}
	if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
		return decodeField(raw, record, name, into)
	}
	var list []*T
	i := skipSpace(raw, 1)
	if i < len(raw)-1 {
		list = make([]*T, 0, 8)
		for {
			start := i
			end, ok := skipValue(raw, i)
			if !ok || end > len(raw)-1 {
				return decodeField(raw, record, name, into)
			}
			element := raw[start:end]
			if string(element) == "null" {
				list = append(list, nil)
			} else {
				if element[0] != '{' {
					return decodeField(raw, record, name, into)
				}
				item := new(T)
				if err := P(item).UnmarshalJSON(element); err != nil {
					return fmt.Errorf("roomchat: %s.%s: %w", record, name, err)
				}
				list = append(list, item)
			}
			i = skipSpace(raw, end)
			if i < len(raw)-1 && raw[i] == ',' {
				i = skipSpace(raw, i+1)
				continue
			}
			if i != len(raw)-1 {
				return decodeField(raw, record, name, into)
			}
			break
		}
	} else {
		list = []*T{}
	}
	*into = list
	return nil
}

// marshalWithExtra is known (a struct) as a JSON object, then extra's entries
// that known does not write, in name order.
func marshalWithExtra[V any](known any, extra map[string]V) ([]byte, error) {
	out, err := json.Marshal(known)
	if err != nil || len(extra) == 0 {
		return out, err
	}
	var written map[string]json.RawMessage
	if err := json.Unmarshal(out, &written); err != nil {
		return nil, err
	}
	buf := bytes.NewBuffer(out[:len(out)-1])
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		if _, ok := written[name]; ok {
			continue
		}
		value, err := json.Marshal(extra[name])
		if err != nil {
			return nil, fmt.Errorf("roomchat: extra field %q: %w", name, err)
		}
		key, _ := json.Marshal(name)
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		buf.Write(key)
		buf.WriteByte(':')
		buf.Write(value)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// recordWriter writes a record as a JSON object: its fields that are there,
// in declared order, then its Extra ones in name order (an absent field is
// left out, an empty list written as []: what core writes).
type recordWriter struct {
	buf      bytes.Buffer
	declared []string
	err      error
}

// field writes name: value when present.
func (w *recordWriter) field(name string, value any, present bool) {
	w.declared = append(w.declared, name)
	if !present || w.err != nil {
		return
	}
	raw, err := json.Marshal(value)
	if err != nil {
		w.err = fmt.Errorf("roomchat: field %q: %w", name, err)
		return
	}
	w.entry(name, raw)
}

func (w *recordWriter) entry(name string, raw []byte) {
	if w.buf.Len() == 0 {
		w.buf.WriteByte('{')
	} else {
		w.buf.WriteByte(',')
	}
	key, _ := json.Marshal(name)
	w.buf.Write(key)
	w.buf.WriteByte(':')
	w.buf.Write(raw)
}

// finish writes extra's entries that are not declared fields, and closes the object.
func (w *recordWriter) finish(extra map[string]json.RawMessage) ([]byte, error) {
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		if w.err != nil || slices.Contains(w.declared, name) {
			continue
		}
		raw, err := json.Marshal(extra[name])
		if err != nil {
			w.err = fmt.Errorf("roomchat: extra field %q: %w", name, err)
			break
		}
		w.entry(name, raw)
	}
	if w.err != nil {
		return nil, w.err
	}
	if w.buf.Len() == 0 {
		return []byte("{}"), nil
	}
	w.buf.WriteByte('}')
	return w.buf.Bytes(), nil
}

// hidden is how a secret shows in a record's String: its length, never its text.
func hidden(secret string) string {
	return fmt.Sprintf("[hidden: %d characters]", utf8.RuneCountInString(secret))
}
