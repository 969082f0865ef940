package roomchat

import (
	"reflect"
	"strconv"
	"unicode/utf8"
)

// notUTF8 is where the first string of v that is not valid UTF-8 is (a
// field, key or index path), "" when every one is. encoding/json would send
// such a string with its bad bytes replaced by U+FFFD, silently: a different
// name, message text or id than the caller gave. Bytes ([]byte,
// json.RawMessage) are not strings and are not looked at.
func notUTF8(v reflect.Value, path string, depth int) string {
	if depth > 100 || !v.IsValid() {
		return ""
	}
	switch v.Kind() {
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			return orRoot(path)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return notUTF8(v.Elem(), path, depth+1)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if where := notUTF8(v.Field(i), path+"."+t.Field(i).Name, depth+1); where != "" {
				return where
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			key := iter.Key()
			name := path + "[" + key.String() + "]"
			if key.Kind() == reflect.String {
				name = path + "[" + strconv.Quote(key.String()) + "]"
				if !utf8.ValidString(key.String()) {
					return orRoot(path) + " (a key)"
				}
			}
			if where := notUTF8(iter.Value(), name, depth+1); where != "" {
				return where
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return ""
		}
		for i := 0; i < v.Len(); i++ {
			if where := notUTF8(v.Index(i), path+"["+strconv.Itoa(i)+"]", depth+1); where != "" {
				return where
			}
		}
	}
	return ""
}

func orRoot(path string) string {
	if path == "" {
		return "a string"
	}
	return path
}
