package otlpexport

// keyed maps texts to values for the few a session holds at once (its
// open tool calls, waits for the user and streaming outputs): a list
// searched in order, where a map cost each session an allocation and each
// use a hash, with a map beside it once the list is long, so that a
// session of many open entries costs no more than a map. The order of the
// entries is not kept.
type keyed[V any] struct {
	list []entry[V]
	at   map[string]int // index in list by key, past keyedList entries
}

type entry[V any] struct {
	key string
	val V
}

// keyedList is how many entries are searched in order.
const keyedList = 16

// find returns the index of key, or -1; the key is not copied.
func (m *keyed[V]) find(key []byte) int {
	if m.at != nil {
		if i, ok := m.at[string(key)]; ok {
			return i
		}
		return -1
	}
	for i := range m.list {
		if m.list[i].key == string(key) {
			return i
		}
	}
	return -1
}

// findString is find for a key that is a string.
func (m *keyed[V]) findString(key string) int {
	if m.at != nil {
		if i, ok := m.at[key]; ok {
			return i
		}
		return -1
	}
	for i := range m.list {
		if m.list[i].key == key {
			return i
		}
	}
	return -1
}

// get returns the value of key and whether there is one.
func (m *keyed[V]) get(key []byte) (V, bool) {
	if i := m.find(key); i >= 0 {
		return m.list[i].val, true
	}
	var zero V
	return zero, false
}

// set sets the value of key.
func (m *keyed[V]) set(key string, v V) {
	if i := m.findString(key); i >= 0 {
		m.list[i].val = v
		return
	}
	m.list = append(m.list, entry[V]{key, v})
	if m.at != nil {
		m.at[key] = len(m.list) - 1
	} else if len(m.list) > keyedList {
		m.at = make(map[string]int, 2*len(m.list))
		for i, e := range m.list {
			m.at[e.key] = i
		}
	}
}

// take returns the value at index i (of find) and removes it: the last
// entry takes its place.
func (m *keyed[V]) take(i int) V {
	v := m.list[i].val
	last := len(m.list) - 1
	if m.at != nil {
		delete(m.at, m.list[i].key)
		if i != last {
			m.at[m.list[last].key] = i
		}
	}
	m.list[i] = m.list[last]
	m.list[last] = entry[V]{}
	m.list = m.list[:last]
	return v
}
