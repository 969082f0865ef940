package roomchat

import (
	"context"
	"encoding/json"
	"iter"
)

// The runtime's calls by an operation's name, for the external tests
// (package roomchat_test) that run every declared operation and listing.

// Invoke is (*Client).invoke.
func Invoke(c *Client, ctx context.Context, op string, params any, out any, opts ...CallOption) error {
	return c.invoke(ctx, op, params, out, opts)
}

// InvokeWithResponse is (*Client).invokeWithResponse.
func InvokeWithResponse(c *Client, ctx context.Context, op string, params any, out any, opts ...CallOption) (*Response, error) {
	return c.invokeWithResponse(ctx, op, params, out, opts)
}

// Pages is pages, each page's JSON as it came.
func Pages(c *Client, ctx context.Context, op string, params any, opts ...CallOption) iter.Seq2[*json.RawMessage, error] {
	return pages[json.RawMessage](c, ctx, op, params, opts)
}
