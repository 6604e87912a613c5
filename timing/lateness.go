package timing

import (
	"math"
	"math/bits"
	"sync"
	"time"
)

// Histogram layout: values below 2^subBits ns are counted exactly; above,
// each power of two is split into 2^subBits equal sub-buckets, so every
// bucket is at most 1/64 (about 1.6 %) of its value wide. Values of 2^maxExp
// ns (about 18 minutes) and more share the last bucket.
const (
	subBits    = 6
	subCount   = 1 << subBits
	maxExp     = 40
	numBuckets = (maxExp-subBits+1)*subCount + subCount
)

func bucketOf(v uint64) int {
	if v < subCount {
		return int(v)
	}
	e := bits.Len64(v) - 1 // v >= 2^e
	if e > maxExp {
		return numBuckets - 1
	}
	sub := int(v>>(uint(e)-subBits)) & (subCount - 1)
	return (e-subBits+1)*subCount + sub
}

// bucketRange returns the smallest and largest value counted in bucket i.
func bucketRange(i int) (lo, hi uint64) {
	if i < subCount {
		return uint64(i), uint64(i)
	}
	e := i/subCount + subBits - 1
	sub := uint64(i % subCount)
	width := uint64(1) << (uint(e) - subBits)
	lo = (uint64(1) << uint(e)) + sub*width
	return lo, lo + width - 1
}

// Lateness collects how late events were sent relative to their deadlines,
// in constant memory (a log-linear histogram of about 2,300 counters with
// about 1.6 % resolution). Early sends count as zero lateness in the
// quantiles; Min keeps the true minimum. It is safe for concurrent use.
type Lateness struct {
	mu     sync.Mutex
	counts [numBuckets]uint64
	n      uint64
	sum    float64
	min    time.Duration
	max    time.Duration
	first  time.Duration
	last   time.Duration
}

// Observe adds one event's lateness.
func (l *Lateness) Observe(d time.Duration) {
	v := uint64(0)
	if d > 0 {
		v = uint64(d)
	}
	b := bucketOf(v)
	l.mu.Lock()
	l.counts[b]++
	if l.n == 0 {
		l.first, l.min, l.max = d, d, d
	}
	l.n++
	l.sum += float64(d)
	if d < l.min {
		l.min = d
	}
	if d > l.max {
		l.max = d
	}
	l.last = d
	l.mu.Unlock()
}

// Summary is a snapshot of lateness figures.
type Summary struct {
	Count int64         `json:"count"`
	Mean  time.Duration `json:"mean_ns"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	P999  time.Duration `json:"p999_ns"`
	Min   time.Duration `json:"min_ns"`
	Max   time.Duration `json:"max_ns"`
	// First and Last are the lateness of the first and the last event.
	First time.Duration `json:"first_ns"`
	Last  time.Duration `json:"last_ns"`
	// Drift is Last - First: how much the replay's timing error grew from
	// its first event to its last. Absolute deadlines keep it within one
	// event's lateness however long the replay; a chain of relative sleeps
	// would add every wake-up's error to it.
	Drift time.Duration `json:"drift_ns"`
}

// Summary returns the figures so far. Quantiles are exact below 64 ns and
// otherwise the midpoint of their histogram bucket, never above Max.
func (l *Lateness) Summary() Summary {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 {
		return Summary{}
	}
	s := Summary{
		Count: int64(l.n),
		Mean:  time.Duration(l.sum / float64(l.n)),
		Min:   l.min,
		Max:   l.max,
		First: l.first,
		Last:  l.last,
		Drift: l.last - l.first,
	}
	s.P50 = l.quantile(0.50)
	s.P90 = l.quantile(0.90)
	s.P99 = l.quantile(0.99)
	s.P999 = l.quantile(0.999)
	return s
}

// quantile returns the q-quantile (nearest rank). l.mu must be held.
func (l *Lateness) quantile(q float64) time.Duration {
	rank := uint64(math.Ceil(q * float64(l.n)))
	if rank < 1 {
		rank = 1
	}
	var cum uint64
	for i, c := range l.counts {
		cum += c
		if cum >= rank {
			lo, hi := bucketRange(i)
			v := time.Duration(lo + (hi-lo)/2)
			if v > l.max && l.max >= 0 {
				v = l.max
			}
			if v < 0 {
				v = 0
			}
			return v
		}
	}
	return l.max
}
