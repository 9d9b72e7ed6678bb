//go:build js && wasm

package sqlitejs

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"syscall/js"
)

// maxCached bounds the prepared statements a connection keeps.
const maxCached = 64

// conn is one oo1.DB.
type conn struct {
	db     jsDB
	vals   *converter
	cache  map[string]*stmt // by SQL text
	closed bool
}

var (
	_ driver.Conn               = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
)

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext prepares a statement of the caller's own, finalized on
// Close. Only the first statement of query is prepared.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := c.usable(ctx); err != nil {
		return nil, err
	}
	return c.prepare(query, caller)
}

// ExecContext runs query. Without arguments it may hold several statements,
// run by oo1's DB.exec (which leaves any parameter unbound, that is NULL,
// where go-sqlite3 would complain); with arguments it is one statement,
// prepared once per connection and kept.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if err := c.usable(ctx); err != nil {
		return nil, err
	}
	if len(args) == 0 {
		if err := c.db.exec(query); err != nil {
			return nil, err
		}
		return c.result()
	}
	s, err := c.cached(query)
	if err != nil {
		return nil, err
	}
	defer s.release()
	return s.exec(args)
}

// QueryContext runs query, prepared once per connection and kept.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := c.usable(ctx); err != nil {
		return nil, err
	}
	s, err := c.cached(query)
	if err != nil {
		return nil, err
	}
	rows, err := s.query(args)
	if err != nil {
		s.release()
		return nil, err
	}
	return rows, nil // rows.Close releases s
}

func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx starts a deferred transaction. SQLite transactions are
// serializable; ReadOnly is accepted and not enforced.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.usable(ctx); err != nil {
		return nil, err
	}
	switch sql.IsolationLevel(opts.Isolation) {
	case sql.LevelDefault, sql.LevelSerializable:
	default:
		return nil, fmt.Errorf("sqlitejs: isolation level %v is not supported", sql.IsolationLevel(opts.Isolation))
	}
	if err := c.run("BEGIN"); err != nil {
		return nil, err
	}
	return tx{c}, nil
}

type tx struct{ c *conn }

func (t tx) Commit() error   { return t.c.run("COMMIT") }
func (t tx) Rollback() error { return t.c.run("ROLLBACK") }

// run executes a statement without parameters through the cache.
func (c *conn) run(query string) error {
	if c.closed {
		return driver.ErrBadConn
	}
	s, err := c.cached(query)
	if err != nil {
		return err
	}
	defer s.release()
	_, err = s.exec(nil)
	return err
}

// Close finalizes the kept statements and closes the database: for
// ":memory:", its end.
func (c *conn) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	var errs []error
	for _, s := range c.cache {
		errs = append(errs, s.finalize())
	}
	c.cache = nil
	errs = append(errs, c.db.close())
	return errors.Join(errs...)
}

// ResetSession keeps the connection between uses: it holds no session state
// but the database itself, which for ":memory:" must not be thrown away.
func (c *conn) ResetSession(ctx context.Context) error {
	if c.closed {
		return driver.ErrBadConn
	}
	return nil
}

// IsValid lets database/sql keep the connection after a cancelled
// transaction instead of discarding it.
func (c *conn) IsValid() bool { return !c.closed }

func (c *conn) usable(ctx context.Context) error {
	if c.closed {
		return driver.ErrBadConn
	}
	return ctx.Err()
}

// cached returns the kept statement for query, preparing it on first use, or
// a statement of its own if the kept one is busy (rows still open on it) or
// the cache is full. release gives it back.
func (c *conn) cached(query string) (*stmt, error) {
	if s, ok := c.cache[query]; ok && !s.busy {
		s.busy = true
		return s, nil
	}
	_, exists := c.cache[query]
	own := once
	if !exists && len(c.cache) < maxCached {
		own = kept
	}
	s, err := c.prepare(query, own)
	if err != nil {
		return nil, err
	}
	if own == kept {
		c.cache[query] = s
		s.busy = true
	}
	return s, nil
}

func (c *conn) prepare(query string, own owner) (*stmt, error) {
	v, err := c.db.prepare(query)
	if err != nil {
		return nil, err
	}
	s := &stmt{c: c, js: v, owner: own}
	err = catch(func() {
		s.pointer = v.Get("pointer")
		s.nparams = v.Get("parameterCount").Int()
	})
	if err != nil {
		s.finalize()
		return nil, err
	}
	return s, nil
}

// result reads the changes and last rowid of the statement just run.
func (c *conn) result() (driver.Result, error) {
	changes, lastID, err := c.db.changes()
	if err != nil {
		return nil, err
	}
	return result{changes: changes, lastID: lastID, vals: c.vals}, nil
}

type result struct {
	changes int64
	lastID  js.Value // a BigInt
	vals    *converter
}

func (r result) LastInsertId() (int64, error) { return parseInt(r.vals.bigIntString(r.lastID)) }
func (r result) RowsAffected() (int64, error) { return r.changes, nil }
