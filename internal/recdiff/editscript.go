package recdiff

// Op is one step of an edit script turning sequence A into sequence B.
type Op struct {
	// Kind is ' ' (the element is in both), '-' (only in A) or '+' (only
	// in B).
	Kind byte
	// A and B are the element's positions in A and B (-1 on the side it
	// is not on).
	A, B int
}

// maxEditCost bounds the search for a minimal edit script (Myers' D, the
// number of insertions and deletions): past it the middle that is left is
// given as deleted from A and inserted in B, which is still a correct
// script, only not minimal. The search keeps one row per step of D, so the
// bound keeps its memory within (2·maxEditCost)² ints.
const maxEditCost = 1000

// editScript returns a minimal edit script (Myers' O(ND) greedy search,
// after the common prefix and suffix are taken off) from a[0:n] to b[0:m],
// where eq(i, j) says whether a[i] equals b[j].
func editScript(n, m int, eq func(i, j int) bool) []Op {
	ops := make([]Op, 0, max(n, m)+4)
	pre := 0
	for pre < n && pre < m && eq(pre, pre) {
		ops = append(ops, Op{' ', pre, pre})
		pre++
	}
	suf := 0
	for suf < n-pre && suf < m-pre && eq(n-1-suf, m-1-suf) {
		suf++
	}
	ops = append(ops, middle(pre, n-suf, pre, m-suf, eq)...)
	for k := suf; k > 0; k-- {
		ops = append(ops, Op{' ', n - k, m - k})
	}
	return ops
}

// middle is the greedy search over a[a0:a1] and b[b0:b1].
func middle(a0, a1, b0, b1 int, eq func(i, j int) bool) []Op {
	n, m := a1-a0, b1-b0
	if n == 0 || m == 0 {
		return replace(a0, a1, b0, b1)
	}
	limit := min(n+m, maxEditCost)
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int
	for d := 0; d <= limit; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: an insertion
			} else {
				x = v[off+k-1] + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && eq(a0+x, b0+y) {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				trace = append(trace, append([]int(nil), v...))
				return backtrack(trace, off, n, m, a0, b0)
			}
		}
		trace = append(trace, append([]int(nil), v...))
	}
	return replace(a0, a1, b0, b1)
}

// backtrack walks the search's rows back from (n, m) to (0, 0).
func backtrack(trace [][]int, off, n, m, a0, b0 int) []Op {
	var rev []Op
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		k := x - y
		if d == 0 {
			for x > 0 && y > 0 {
				x, y = x-1, y-1
				rev = append(rev, Op{' ', a0 + x, b0 + y})
			}
			break
		}
		v := trace[d-1]
		var pk int
		if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := v[off+pk]
		py := px - pk
		for x > px && y > py && x > 0 && y > 0 {
			x, y = x-1, y-1
			rev = append(rev, Op{' ', a0 + x, b0 + y})
		}
		if pk == k+1 {
			y--
			rev = append(rev, Op{'+', -1, b0 + y})
		} else {
			x--
			rev = append(rev, Op{'-', a0 + x, -1})
		}
	}
	ops := make([]Op, len(rev))
	for i, o := range rev {
		ops[len(rev)-1-i] = o
	}
	return ops
}

// replace gives a[a0:a1] as deleted and b[b0:b1] as inserted.
func replace(a0, a1, b0, b1 int) []Op {
	ops := make([]Op, 0, a1-a0+b1-b0)
	for i := a0; i < a1; i++ {
		ops = append(ops, Op{'-', i, -1})
	}
	for j := b0; j < b1; j++ {
		ops = append(ops, Op{'+', -1, j})
	}
	return ops
}
