package roomchat

// String returns a pointer to s: an optional parameter given (nil: not sent).
func String(s string) *string { return &s }

// Bool returns a pointer to b: an optional parameter given (nil: not sent).
func Bool(b bool) *bool { return &b }

// Int returns a pointer to i: an optional parameter given (nil: not sent).
func Int(i int64) *int64 { return &i }

// Float returns a pointer to f: an optional parameter given (nil: not sent).
func Float(f float64) *float64 { return &f }
