//go:build js && wasm

// Package sqlitejs is a database/sql driver for the official SQLite WASM build
// (npm @sqlite.org/sqlite-wasm), called through syscall/js and the build's
// synchronous "oo1" API: oo1.DB, prepare, Stmt.bind/step/get.
//
// It loads nothing itself: the host initialises the module (await
// sqlite3InitModule()) and passes it to NewConnector.
//
// Every call into JavaScript costs far more than a native call, so the driver
// keeps prepared statements per connection, and converts values so that they
// survive the trip exactly:
//
//   - int64 binds as a JS number when it is a safe integer (|v| <= 2^53-1)
//     and as a BigInt beyond. Integers come back through sqlite3_column_double
//     below 2^53 and as decimal text beyond: a BigInt never reaches Go, where
//     syscall/js cannot tell its type (Value.Type panics on one).
//   - float64 binds with sqlite3_bind_double and REALs come back as float64.
//   - []byte binds as a Uint8Array (a nil slice as NULL, as go-sqlite3 does);
//     BLOBs come back as []byte.
//   - string binds as a JS string: it must be valid UTF-8, since JS strings
//     are UTF-16 and invalid bytes would become U+FFFD. Keep bytes in BLOBs.
//   - time.Time binds as text in go-sqlite3's layout.
//
// Errors are *Error, carrying SQLite's extended result code, taken from the
// resultCode of the SQLite3Error that oo1 throws.
//
// Calls are synchronous and cannot be interrupted: contexts are only checked
// before each call. Only positional parameters are supported.
package sqlitejs

import (
	"context"
	"database/sql/driver"
	"errors"
	"syscall/js"
)

// Error is an error thrown by SQLite WASM.
type Error struct {
	// Code is SQLite's extended result code (SQLITE_CONSTRAINT_PRIMARYKEY is
	// 1555); its low byte is the primary code. 0 if the exception had none.
	Code int
	// Msg is the exception's message.
	Msg string
}

func (e *Error) Error() string { return "sqlite-wasm: " + e.Msg }

// catch runs f and returns the JavaScript exception it threw, if any, as an
// *Error: syscall/js reports exceptions by panicking with a js.Error.
func catch(f func()) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		jsErr, ok := r.(js.Error)
		if !ok {
			panic(r)
		}
		err = newError(jsErr.Value)
	}()
	f()
	return nil
}

func newError(v js.Value) *Error {
	if v.Type() != js.TypeObject {
		return &Error{Msg: js.Global().Call("String", v).String()}
	}
	e := &Error{Msg: v.Get("message").String()}
	if rc := v.Get("resultCode"); rc.Type() == js.TypeNumber {
		e.Code = rc.Int()
	}
	return e
}

// Connector opens connections to one database of one SQLite WASM module.
type Connector struct {
	module js.Value
	name   string
}

// NewConnector returns a connector to the database called name (":memory:"
// for an in-memory one) in module, the object sqlite3InitModule() resolves
// to. Use it with sql.OpenDB.
func NewConnector(module js.Value, name string) *Connector {
	return &Connector{module: module, name: name}
}

var _ driver.Connector = (*Connector)(nil)

// Connect opens a new oo1.DB: for ":memory:", a new empty database.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var db js.Value
	if err := catch(func() { db = c.module.Get("oo1").Get("DB").New(c.name, "c") }); err != nil {
		return nil, err
	}
	return newConn(c.module, db), nil
}

// Driver returns a driver whose Open names the database in the same module.
func (c *Connector) Driver() driver.Driver { return moduleDriver{c.module} }

type moduleDriver struct{ module js.Value }

func (d moduleDriver) Open(name string) (driver.Conn, error) {
	return NewConnector(d.module, name).Connect(context.Background())
}

var errClosed = errors.New("sqlitejs: connection closed")
