package loadgen

import (
	"math"
	"math/bits"
	"time"
)

// Histogram is a log-linear latency histogram in the manner of HdrHistogram: each power of two
// is split into subBuckets linear buckets, so any value is known to within 1/subBuckets (< 0.8 %)
// in a fixed 35 KB, however many calls a run makes. Min, max and the sum are kept exactly.
// Not safe for concurrent use: each worker keeps its own and they are merged at the end.
type Histogram struct {
	counts   [numBuckets]uint64
	n        uint64
	sum      float64 // nanoseconds
	min, max int64
}

const (
	subBits    = 7
	subBuckets = 1 << subBits // 128
	// maxShift bounds the range at 2^(maxShift+subBits+1) ns ≈ 18 minutes; longer values are
	// clamped into the last bucket (max stays exact).
	maxShift   = 33
	numBuckets = (maxShift + 2) * subBuckets
)

func bucketOf(v int64) int {
	if v < 2*subBuckets {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - (subBits + 1)
	if shift > maxShift {
		return numBuckets - 1
	}
	return (shift+1)*subBuckets + int(v>>shift) - subBuckets
}

// bucketHigh is the largest value that falls into bucket i.
func bucketHigh(i int) int64 {
	if i < 2*subBuckets {
		return int64(i)
	}
	shift := i/subBuckets - 1
	mant := int64(i%subBuckets + subBuckets)
	return (mant+1)<<shift - 1
}

// Record adds one observation.
func (h *Histogram) Record(d time.Duration) {
	v := int64(d)
	if v < 0 {
		v = 0
	}
	h.counts[bucketOf(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += float64(v)
}

// Merge adds o's observations to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	h.sum += o.sum
}

// Count is the number of observations.
func (h *Histogram) Count() uint64 { return h.n }

// Max is the largest observation, exactly.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Min is the smallest observation, exactly.
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }

// Mean is the exact mean.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// Quantile returns the value at or below which a fraction q of the observations lie (the
// nearest-rank definition), reported as the top of its bucket and never above the exact max:
// an overestimate by less than 1/128.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			v := bucketHigh(i)
			if v > h.max {
				v = h.max
			}
			if v < h.min {
				v = h.min
			}
			return time.Duration(v)
		}
	}
	return time.Duration(h.max)
}
