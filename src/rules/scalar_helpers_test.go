package rules

import "strconv"

// N makes a numeric Scalar, as a JSON number decodes.
func N(f float64) *Scalar { return &Scalar{Text: strconv.FormatFloat(f, 'f', -1, 64), Numeric: true} }
