package history

// groups keeps a report's rows in first-seen order, one per key: the
// summaries by GPU, week, tier, volume and untracked charge each group so.
type groups[T any] struct {
	index map[string]int
	rows  *[]T
}

// groupInto groups into *rows, which must start empty.
func groupInto[T any](rows *[]T) groups[T] {
	return groups[T]{index: map[string]int{}, rows: rows}
}

// row is key's row, appended as fresh() the first time key is seen. The
// pointer holds until the next row is appended.
func (g groups[T]) row(key string, fresh func() T) *T {
	i, ok := g.index[key]
	if !ok {
		i = len(*g.rows)
		g.index[key] = i
		*g.rows = append(*g.rows, fresh())
	}
	return &(*g.rows)[i]
}
