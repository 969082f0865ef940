package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/roomchat/roomchat-go"
)

// pageSize is the page every call asks for: the emulator holds that many users.
const pageSize = 50

// The contenders, each in a process of its own. "ctx with cancel": each
// goroutine calls with a ctx that can be cancelled (context.WithCancel), as a
// server's handler passes its request's ctx; the others pass context.Background().
const (
	roomchatName    = "roomchat"
	netHTTPName     = "net/http"
	roomchatCtxName = "roomchat, ctx with cancel"
	netHTTPCtxName  = "net/http, ctx with cancel"
	budgetRequests  = 1_000_000_000
)

var contenderNames = []string{roomchatName, netHTTPName, roomchatCtxName, netHTTPCtxName}

// contender is one way to call list_users: call makes one call with ctx and
// reads every username of the page (an error if the page is not 50 users).
type contender struct {
	call func(ctx context.Context) error
	// cancellable: each goroutine's ctx is a context.WithCancel's.
	cancellable bool
	close       func()
	sink        atomic.Int64 // the usernames' lengths read, summed
}

// read reads every username of the page, as a program showing it would.
func (c *contender) read(page *roomchat.UserPage) error {
	if len(page.Data) != pageSize {
		return fmt.Errorf("a page of %d users, not %d", len(page.Data), pageSize)
	}
	n := 0
	for _, user := range page.Data {
		if user == nil || user.Username == nil {
			return fmt.Errorf("a user without a username")
		}
		n += len(*user.Username)
	}
	c.sink.Add(int64(n))
	return nil
}

// newContender makes the named contender for the emulator at baseURL.
func newContender(name, baseURL, key string) (*contender, error) {
	c := &contender{cancellable: name == roomchatCtxName || name == netHTTPCtxName}
	switch name {
	case roomchatName, roomchatCtxName:
		// The service's budget is the emulator's (a billion a second): the
		// client's own budget must not be what is measured either.
		client, err := roomchat.NewClient(key, roomchat.WithBaseURL(baseURL),
			roomchat.WithRateLimit(budgetRequests, time.Second))
		if err != nil {
			return nil, err
		}
		params := &roomchat.ListUsersParams{Limit: roomchat.Int(pageSize)}
		c.call = func(ctx context.Context) error {
			page, err := client.ListUsers(ctx, params)
			if err != nil {
				return err
			}
			return c.read(page)
		}
		c.close = func() { _ = client.Close() }
	case netHTTPName, netHTTPCtxName:
		// What a Go team writes without the package: one shared http.Client
		// whose Transport keeps a connection per goroutine (the default keeps
		// 2 per host), a timeout, and encoding/json into the same structs.
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.MaxIdleConns = 64
		transport.MaxIdleConnsPerHost = 64
		client := &http.Client{Transport: transport, Timeout: 30 * time.Second}
		target := baseURL + "/consumer/api/v2/users?" + url.Values{"auth": {key}, "limit": {fmt.Sprint(pageSize)}}.Encode()
		c.call = func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
			if err != nil {
				return err
			}
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				_, _ = io.Copy(io.Discard, resp.Body)
				return fmt.Errorf("list_users: HTTP %d", resp.StatusCode)
			}
			var page roomchat.UserPage
			if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
				return err
			}
			// The rest of the body (a newline at most), so the connection is reused.
			_, _ = io.Copy(io.Discard, resp.Body)
			return c.read(&page)
		}
		c.close = transport.CloseIdleConnections
	default:
		return nil, fmt.Errorf("unknown contender %q", name)
	}
	return c, nil
}

// context gives each calling goroutine its ctx, and what ends it.
func (c *contender) context() (context.Context, context.CancelFunc) {
	if c.cancellable {
		return context.WithCancel(context.Background())
	}
	return context.Background(), func() {}
}
