package typed

import (
	"encoding/json"
	"errors"
)

// tokens is where the decoder reads a body's JSON tokens from: the body's
// scanner, or a json.Decoder (with UseNumber) when the scanner gave up.
type tokens interface {
	Token() (json.Token, error)
	More() bool
}

// errRescan is the scanner giving up: the body is not valid JSON, or has
// what the scanner leaves to encoding/json. The body is then decoded again
// from a json.Decoder, whose tokens are the same for valid JSON and whose
// errors are the ones kube-apiserver's decoder reports.
var errRescan = errors.New("typed: rescan with encoding/json")

// scanner reads the tokens of a JSON body as json.Decoder's Token does
// (with UseNumber, commas and colons consumed), several times faster: the
// Decoder decodes every string and number through its reflection-driven
// Decode, which was most of typed.Decode's time.
type scanner struct {
	b     []byte
	i     int
	state scanState
	open  []byte // the containers open: '{' or '['
	// openDepth holds open while it fits, as it does for most bodies.
	openDepth [16]byte
}

// scanState is what may come next, as json.Decoder's tokenState.
type scanState uint8

const (
	topValue    scanState = iota
	arrayStart            // after '['
	arrayValue            // after ','
	arrayComma            // after an element
	objectStart           // after '{'
	objectKey             // after ','
	objectColon           // after a key
	objectValue           // after ':'
	objectComma           // after a member
)

func newScanner(b []byte) *scanner {
	s := &scanner{b: b}
	s.open = s.openDepth[:0]
	return s
}

func (s *scanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) More() bool {
	s.skipSpace()
	return s.i < len(s.b) && s.b[s.i] != ']' && s.b[s.i] != '}'
}

func (s *scanner) valueAllowed() bool {
	switch s.state {
	case topValue, arrayStart, arrayValue, objectValue:
		return true
	}
	return false
}

// valueEnd is the state after a value.
func (s *scanner) valueEnd() {
	switch {
	case len(s.open) == 0:
		s.state = topValue
	case s.open[len(s.open)-1] == '[':
		s.state = arrayComma
	default:
		s.state = objectComma
	}
}

func (s *scanner) Token() (json.Token, error) {
	for {
		s.skipSpace()
		if s.i >= len(s.b) {
			return nil, errRescan
		}
		c := s.b[s.i]
		switch c {
		case '[', '{':
			if !s.valueAllowed() {
				return nil, errRescan
			}
			s.i++
			s.open = append(s.open, c)
			s.state = arrayStart
			if c == '{' {
				s.state = objectStart
			}
			return json.Delim(c), nil
		case ']', '}':
			// These states are only ever set with their container open.
			start, comma := arrayStart, arrayComma
			if c == '}' {
				start, comma = objectStart, objectComma
			}
			if s.state != start && s.state != comma {
				return nil, errRescan
			}
			s.i++
			s.open = s.open[:len(s.open)-1]
			s.valueEnd()
			return json.Delim(c), nil
		case ':':
			if s.state != objectColon {
				return nil, errRescan
			}
			s.i++
			s.state = objectValue
		case ',':
			switch s.state {
			case arrayComma:
				s.state = arrayValue
			case objectComma:
				s.state = objectKey
			default:
				return nil, errRescan
			}
			s.i++
		case '"':
			key := s.state == objectStart || s.state == objectKey
			if !key && !s.valueAllowed() {
				return nil, errRescan
			}
			str, err := s.string()
			if err != nil {
				return nil, err
			}
			if key {
				s.state = objectColon
				return str, nil
			}
			return str, s.scalarEnd()
		default:
			if !s.valueAllowed() {
				return nil, errRescan
			}
			v, err := s.literal()
			if err != nil {
				return nil, err
			}
			return v, s.scalarEnd()
		}
	}
}

// scalarEnd ends a string, number or literal. The Decoder reads one byte
// past a value that is not in a container, to see it ended, and fails if
// that byte is not a space: so does this. In a container, what follows is
// checked as the next token is read.
func (s *scanner) scalarEnd() error {
	if len(s.open) == 0 && s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
		default:
			return errRescan
		}
	}
	s.valueEnd()
	return nil
}

// string reads the string at s.i: its bytes as they are when they are
// printable ASCII without escapes, else as encoding/json unquotes them
// (escapes, and invalid UTF-8 replaced).
func (s *scanner) string() (string, error) {
	start := s.i
	s.i++
	plain := true
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			if plain {
				return string(s.b[start+1 : s.i-1]), nil
			}
			var str string
			if err := json.Unmarshal(s.b[start:s.i], &str); err != nil {
				return "", errRescan
			}
			return str, nil
		case c == '\\':
			plain = false
			s.i += 2 // the escaped character cannot end the string
		case c < 0x20:
			return "", errRescan
		case c >= 0x80:
			plain = false
			s.i++
		default:
			s.i++
		}
	}
	return "", errRescan
}

// literal reads the number, true, false or null at s.i; a number is kept
// as its text, as UseNumber has it.
func (s *scanner) literal() (json.Token, error) {
	for _, l := range [...]struct {
		text string
		tok  json.Token
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if len(s.b)-s.i >= len(l.text) && string(s.b[s.i:s.i+len(l.text)]) == l.text {
			s.i += len(l.text)
			return l.tok, nil
		}
	}
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return nil, errRescan
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return nil, errRescan
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil, errRescan
		}
	}
	return json.Number(s.b[start:s.i]), nil
}

// digits skips the decimal digits at s.i and returns how many there were.
func (s *scanner) digits() int {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}
