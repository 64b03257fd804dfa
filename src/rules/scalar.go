package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// Scalar is a value a rule compares or sets: upstream's JSON carries strings, numbers and
// booleans interchangeably ("value": 50 and "value": "50" mean the same). It keeps the text and
// whether it was a number, and marshals back to the form it came in.
type Scalar struct {
	Text    string
	Numeric bool // came as a JSON number
	Bool    bool // came as a JSON boolean
}

// S makes a string Scalar.
func S(s string) *Scalar { return &Scalar{Text: s} }
func (s *Scalar) String() string {
	if s == nil {
		return ""
	}
	return s.Text
}

// Float reads the value as a number (upstream compares >, <, >=, <= as BigDecimal).
func (s *Scalar) Float() (float64, bool) {
	if s == nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s.Text), 64)
	return f, err == nil
}

// MarshalJSON writes the value in the form it was read.
func (s Scalar) MarshalJSON() ([]byte, error) {
	if s.Numeric {
		if _, err := strconv.ParseFloat(s.Text, 64); err == nil {
			return []byte(s.Text), nil
		}
	}
	if s.Bool && (s.Text == "true" || s.Text == "false") {
		return []byte(s.Text), nil
	}
	return json.Marshal(s.Text)
}

// UnmarshalJSON takes a string, number or boolean; anything else is an error naming what came.
func (s *Scalar) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return errors.New("empty value")
	case b[0] == '"':
		var t string
		if err := json.Unmarshal(b, &t); err != nil {
			return err
		}
		*s = Scalar{Text: t}
	case string(b) == "true" || string(b) == "false":
		*s = Scalar{Text: string(b), Bool: true}
	case string(b) == "null":
		return errors.New("must be a string, number or boolean, not null")
	case b[0] == '{' || b[0] == '[':
		return errors.New("must be a string, number or boolean, not an object or list")
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return err
		}
		*s = Scalar{Text: n.String(), Numeric: true}
	}
	return nil
}
