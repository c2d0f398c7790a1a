package diag

// Closest returns the candidate closest to name by edit distance, for a
// `did you mean "count"?` hint, or "" when there is none worth showing:
// the distance must be at most 2, a name of two characters or fewer gets
// no suggestion (every short name is close to too many others), and ties
// go to the name that sorts first. A candidate equal to name is skipped.
func Closest(name string, candidates []string) string {
	if len(name) <= 2 {
		return ""
	}
	best, bestDist := "", 3
	for _, c := range candidates {
		if c == name || c == "" {
			continue
		}
		d := editDistance(name, c, bestDist)
		if d < bestDist || d == bestDist && best != "" && c < best {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (insertions,
// deletions and substitutions of bytes), or some value above limit once it
// is known to exceed it.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
