//go:build js && wasm

package sqlitejs

import (
	"database/sql/driver"
	"fmt"
	"math"
	"strconv"
	"syscall/js"
	"time"
)

// maxSafe is Number.MAX_SAFE_INTEGER: integers up to it are exact as doubles.
const maxSafe = 1<<53 - 1

// timeLayout is go-sqlite3's first timestamp layout, so both drivers store
// times alike.
const timeLayout = "2006-01-02 15:04:05.999999999-07:00"

// converter turns driver values into JS values and back, with the JS
// constructors it needs looked up once.
type converter struct {
	uint8Array, bigInt, str js.Value
}

func newConverter() *converter {
	g := js.Global()
	return &converter{uint8Array: g.Get("Uint8Array"), bigInt: g.Get("BigInt"), str: g.Get("String")}
}

// toJS converts a value database/sql's default converter produced.
func (c *converter) toJS(v driver.Value) any {
	switch v := v.(type) {
	case nil:
		return js.Null()
	case int64:
		if v >= -maxSafe && v <= maxSafe {
			return float64(v) // oo1 binds an integral number with sqlite3_bind_int64
		}
		return c.bigInt.Invoke(strconv.FormatInt(v, 10))
	case []byte:
		if v == nil {
			return js.Null()
		}
		u := c.uint8Array.New(len(v))
		js.CopyBytesToJS(u, v)
		return u
	case time.Time:
		return v.Format(timeLayout)
	default: // float64, bool, string
		return v
	}
}

// SQLite's fundamental datatypes, as sqlite3_column_type returns them.
const (
	sqliteInteger = 1
	sqliteFloat   = 2
	sqliteText    = 3
	sqliteBlob    = 4
	sqliteNull    = 5
)

// column reads result column i of the statement's current row.
//
// It never lets a BigInt reach Go: syscall/js cannot classify one (Value.Type
// panics with "bad type flag"), and oo1's Stmt.get returns a BigInt for any
// integer beyond 2^53. So the type comes from sqlite3_column_type, integers
// cross as doubles (exact below 2^53) and, beyond, as decimal text; floats as
// doubles, so a REAL stays a float64 even without a fraction.
func (s *stmt) column(i int) (driver.Value, error) {
	capi := s.c.db.capi
	switch capi.Call("sqlite3_column_type", s.pointer, i).Int() {
	case sqliteInteger:
		if f := capi.Call("sqlite3_column_double", s.pointer, i).Float(); math.Abs(f) < 1<<53 {
			return int64(f), nil
		}
		return parseInt(capi.Call("sqlite3_column_text", s.pointer, i).String())
	case sqliteFloat:
		return capi.Call("sqlite3_column_double", s.pointer, i).Float(), nil
	case sqliteText:
		return capi.Call("sqlite3_column_text", s.pointer, i).String(), nil
	case sqliteBlob:
		u := s.js.Call("get", i) // oo1 copies the bytes out of the wasm heap into a Uint8Array
		b := make([]byte, u.Length())
		js.CopyBytesToGo(b, u)
		return b, nil
	default: // sqliteNull
		return nil, nil
	}
}

// bigIntString returns the decimal digits of a JS BigInt (or number) without
// asking syscall/js its type, which it cannot tell for a BigInt.
func (c *converter) bigIntString(v js.Value) string {
	return c.str.Invoke(v).String()
}

func parseInt(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("sqlitejs: not an integer: %q", s)
	}
	return n, nil
}
