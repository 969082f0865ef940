package roomchat

/*
#include "capi.h"
*/
import "C"

import (
	"context"
	"iter"
	"unsafe"
)

// pages iterates the pages of a declared listing, each fetched when the loop
// asks for it (core's rules: an error is yielded and, if the loop goes on,
// the same page is fetched again; it never ends early without yielding the
// error). It stops when ctx ends or the loop breaks, and holds one page.
func pages[P any](c *Client, ctx context.Context, op string, params any, opts []CallOption) iter.Seq2[*P, error] {
	return func(yield func(*P, error) bool) {
		if ctx == nil {
			ctx = context.Background()
		}
		it, err := c.openPages(ctx, op, params, opts)
		if err != nil {
			yield(nil, err)
			return
		}
		defer it.close()
		yieldSteps(ctx, op+"'s page", func() ([]byte, bool, error) { return it.next(ctx) }, yield)
	}
}

// yieldSteps runs an iterator's steps: next fetches the next answer's JSON
// (done at the end), which is decoded into a new R and yielded. An error is
// yielded, and if the loop goes on, next asks for the same again; it ends when
// the loop breaks, ctx ends, or the client is closed (which stays closed:
// yielded once, then the end).
func yieldSteps[R any](ctx context.Context, what string, next func() ([]byte, bool, error), yield func(*R, error) bool) {
	for {
		body, done, err := next()
		if done {
			return
		}
		if err != nil {
			if !yield(nil, err) || ctx.Err() != nil || err == errClosed {
				return
			}
			continue
		}
		record := new(R)
		if err := decodeAnswer(body, record); err != nil {
			err = &Error{Kind: KindDecode, Message: "the answer's JSON does not fit " + what + ": " + err.Error()}
			if !yield(nil, err) {
				return
			}
			continue
		}
		if !yield(record, nil) {
			return
		}
	}
}

// items is pages flattened to their records.
func items[P any, T any](c *Client, ctx context.Context, op string, params any, records func(*P) []T, opts []CallOption) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		for page, err := range pages[P](c, ctx, op, params, opts) {
			if err != nil {
				if !yield(zero, err) {
					return
				}
				continue
			}
			for _, record := range records(page) {
				if !yield(record, nil) {
					return
				}
			}
		}
	}
}

// pageIter is the library's iterator over a listing's pages.
type pageIter struct {
	c   *Client
	ptr *C.struct_roomchat_operation_pages
}

func (c *Client) openPages(ctx context.Context, op string, params any, opts []CallOption) (*pageIter, error) {
	cOp, cParams, err := callArgs(op, params)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cOp))
	if cParams != nil {
		defer C.free(unsafe.Pointer(cParams))
	}
	it := &pageIter{c: c}
	// The iterator keeps the options of the view it is made from; each step
	// gets the ctx's cancel token of its own (pages' next).
	err = c.call(context.WithoutCancel(ctx), opts, func(ptr *C.struct_roomchat_client, _ callC) error {
		var cErr *C.struct_roomchat_error
		return check(C.roomchat_client_operation_pages(ptr, cOp, cParams, &it.ptr, &cErr), cErr)
	})
	if err != nil {
		return nil, err
	}
	return it, nil
}

// next fetches the next page's JSON; done at the end.
func (it *pageIter) next(ctx context.Context) (body []byte, done bool, err error) {
	err = it.c.step(ctx, func(cc callC) error {
		var page *C.char
		var cErr *C.struct_roomchat_error
		code := C.rcgo_pages_next(it.ptr, cc.key, cc.observe, cc.cancel, &page, &cErr)
		if code == C.ROOMCHAT_RESULT_ITERATION_DONE {
			done = true
			return nil
		}
		if err := check(code, cErr); err != nil {
			return err
		}
		body = takeBytes(page)
		return nil
	})
	return body, done, err
}

func (it *pageIter) close() {
	C.roomchat_operation_pages_free(it.ptr)
}

// users iterates every user of the account as core's users() does (each id
// once, the largest page), through the library's users iterator: made from a
// view of the client with opts and a cancel token the ctx ends, for the whole
// iteration.
func users[T any](c *Client, ctx context.Context, opts []CallOption) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		if ctx == nil {
			ctx = context.Background()
		}
		var it *C.struct_roomchat_users_iter
		err := c.call(ctx, opts, func(ptr *C.struct_roomchat_client, _ callC) error {
			var cErr *C.struct_roomchat_error
			return check(C.roomchat_client_users_iter(ptr, 0, &it, &cErr), cErr)
		})
		if err != nil {
			yield(nil, err)
			return
		}
		defer C.roomchat_users_iter_free(it)
		next := func() (body []byte, done bool, err error) {
			err = c.step(ctx, func(cc callC) error {
				var user *C.struct_roomchat_user
				var cErr *C.struct_roomchat_error
				code := C.rcgo_users_next(it, cc.key, cc.observe, cc.cancel, &user, &cErr)
				if code == C.ROOMCHAT_RESULT_ITERATION_DONE {
					done = true
					return nil
				}
				if err := check(code, cErr); err != nil {
					return err
				}
				json := C.roomchat_user_json(user)
				body = C.GoBytes(unsafe.Pointer(json), C.int(C.strlen(json)))
				C.roomchat_user_free(user)
				return nil
			})
			return body, done, err
		}
		yieldSteps(ctx, "a user", next, yield)
	}
}
