//go:build js && wasm

package sqlitejs

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"syscall/js"
)

// jsDB is an oo1.DB and the capi functions called on its pointer.
type jsDB struct {
	db      js.Value // oo1.DB
	pointer js.Value // its sqlite3*
	capi    js.Value
}

func newConn(module, db js.Value) *conn {
	return &conn{
		db:    jsDB{db: db, pointer: db.Get("pointer"), capi: module.Get("capi")},
		vals:  newConverter(),
		cache: make(map[string]*stmt),
	}
}

func (d jsDB) exec(query string) error {
	return catch(func() { d.db.Call("exec", query) })
}

func (d jsDB) prepare(query string) (s js.Value, err error) {
	err = catch(func() { s = d.db.Call("prepare", query) })
	return s, err
}

func (d jsDB) close() error {
	return catch(func() { d.db.Call("close") })
}

// changes returns sqlite3_changes and sqlite3_last_insert_rowid, the latter
// as the BigInt the capi returns, converted only if asked for.
func (d jsDB) changes() (changes int64, lastID js.Value, err error) {
	err = catch(func() {
		changes = int64(d.capi.Call("sqlite3_changes", d.pointer).Int())
		lastID = d.capi.Call("sqlite3_last_insert_rowid", d.pointer)
	})
	return changes, lastID, err
}

// stmt is one prepared oo1.Stmt.
type stmt struct {
	c       *conn
	js      js.Value
	pointer js.Value // its sqlite3_stmt*, for capi calls
	nparams int
	cols    []string // column names, read once
	owner   owner
	busy    bool // a kept statement is lent to one caller at a time
	done    bool // finalized
}

// owner says who owns a statement, and so what ends its uses and its life.
type owner int

const (
	// kept in the connection's cache: release resets it and lends it again.
	kept owner = iota
	// once: prepared for one use (the kept one was busy): release finalizes.
	once
	// caller: from Prepare: release resets it, the caller's Close finalizes.
	caller
)

var (
	_ driver.Stmt             = (*stmt)(nil)
	_ driver.StmtExecContext  = (*stmt)(nil)
	_ driver.StmtQueryContext = (*stmt)(nil)
)

func (s *stmt) NumInput() int { return s.nparams }

// Close finalizes a statement from Prepare, the only ones database/sql closes.
func (s *stmt) Close() error {
	if s.owner == kept {
		s.release()
		return nil
	}
	return s.finalize()
}

func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.exec(named(args))
}

func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.query(named(args))
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if err := s.c.usable(ctx); err != nil {
		return nil, err
	}
	return s.exec(args)
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if err := s.c.usable(ctx); err != nil {
		return nil, err
	}
	return s.query(args)
}

// exec binds args and steps the statement to its end.
func (s *stmt) exec(args []driver.NamedValue) (driver.Result, error) {
	if err := s.bind(args); err != nil {
		return nil, err
	}
	err := catch(func() {
		for s.js.Call("step").Bool() {
		}
	})
	s.reset()
	if err != nil {
		return nil, err
	}
	return s.c.result()
}

func (s *stmt) query(args []driver.NamedValue) (driver.Rows, error) {
	if err := s.bind(args); err != nil {
		return nil, err
	}
	if s.cols == nil {
		err := catch(func() {
			names := s.js.Call("getColumnNames")
			s.cols = make([]string, names.Length())
			for i := range s.cols {
				s.cols[i] = names.Index(i).String()
			}
		})
		if err != nil {
			s.reset()
			return nil, err
		}
	}
	return &rows{s: s}, nil
}

func (s *stmt) bind(args []driver.NamedValue) error {
	if len(args) != s.nparams {
		s.reset()
		return fmt.Errorf("sqlitejs: %d arguments for %d parameters", len(args), s.nparams)
	}
	for _, a := range args {
		if a.Name != "" {
			return fmt.Errorf("sqlitejs: named parameter %q: only positional parameters are supported", a.Name)
		}
	}
	var rc int
	err := catch(func() {
		for _, a := range args {
			if f, ok := a.Value.(float64); ok {
				// Not oo1's bind: it binds any integral number, 1e300
				// included, with sqlite3_bind_int64.
				if rc = s.c.db.capi.Call("sqlite3_bind_double", s.pointer, a.Ordinal, f).Int(); rc != 0 {
					return
				}
				continue
			}
			s.js.Call("bind", a.Ordinal, s.c.vals.toJS(a.Value))
		}
	})
	if err == nil && rc != 0 {
		err = &Error{Code: rc, Msg: fmt.Sprintf("sqlite3_bind_double: result code %d", rc)}
	}
	return err
}

// reset readies the statement for its next run, ending any read it holds
// open (an unreset statement keeps its transaction's snapshot alive).
// resetNoThrow (SQLite 3.54+) because the step's error was reported already.
func (s *stmt) reset() {
	if !s.done {
		catch(func() { s.js.Call("resetNoThrow") })
	}
}

// release ends one use of the statement (see owner).
func (s *stmt) release() {
	switch s.owner {
	case once:
		s.finalize()
	case kept:
		s.busy = false
		fallthrough
	default:
		s.reset()
	}
}

func (s *stmt) finalize() error {
	if s.done {
		return nil
	}
	s.done = true
	return catch(func() { s.js.Call("finalize") })
}

// rows reads a query's results, one step at a time.
type rows struct {
	s      *stmt
	closed bool
}

var _ driver.Rows = (*rows)(nil)

func (r *rows) Columns() []string { return r.s.cols }

func (r *rows) Close() error {
	if !r.closed {
		r.closed = true
		r.s.release()
	}
	return nil
}

func (r *rows) Next(dest []driver.Value) error {
	if r.closed {
		return io.EOF
	}
	var row bool
	var convErr error
	err := catch(func() {
		if row = r.s.js.Call("step").Bool(); !row {
			return
		}
		for i := range dest {
			if dest[i], convErr = r.s.column(i); convErr != nil {
				return
			}
		}
	})
	switch {
	case err != nil:
		return err
	case convErr != nil:
		return convErr
	case !row:
		return io.EOF
	}
	return nil
}

func named(args []driver.Value) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return nv
}
