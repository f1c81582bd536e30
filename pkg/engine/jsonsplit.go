package engine

// The members of a JSON object and the elements of a JSON list, as written: raw slices of the
// document, never decoded. What a step changed (staterows.go) and the fold of it (fold.go)
// compare and copy them byte for byte. The splitter checks the structure it walks (brackets,
// strings, commas and colons), not every scalar: a row's update is written by the engine, and a
// state rebuilt from one is checked against the state it came from before it is stored.

// splitObject returns the members of the JSON object raw: their keys (quoted, as written) and
// values. ok is false when raw is no object.
func splitObject(raw []byte) (keys, vals [][]byte, ok bool) {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, nil, false
	}
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return nil, nil, skipWS(raw, i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, nil, false
		}
		end := stringEnd(raw, i)
		if end < 0 {
			return nil, nil, false
		}
		key := raw[i:end]
		i = skipWS(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, nil, false
		}
		start := skipWS(raw, i+1)
		end = valueEnd(raw, start)
		if end < 0 {
			return nil, nil, false
		}
		keys, vals = append(keys, key), append(vals, raw[start:end])
		i = skipWS(raw, end)
		switch {
		case i < len(raw) && raw[i] == ',':
			i = skipWS(raw, i+1)
		case i < len(raw) && raw[i] == '}':
			return keys, vals, skipWS(raw, i+1) == len(raw)
		default:
			return nil, nil, false
		}
	}
}

// splitArray returns the elements of the JSON list raw. ok is false when raw is no list.
func splitArray(raw []byte) (elems [][]byte, ok bool) {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return nil, skipWS(raw, i+1) == len(raw)
	}
	for {
		end := valueEnd(raw, i)
		if end < 0 {
			return nil, false
		}
		elems = append(elems, raw[i:end])
		i = skipWS(raw, end)
		switch {
		case i < len(raw) && raw[i] == ',':
			i = skipWS(raw, i+1)
		case i < len(raw) && raw[i] == ']':
			return elems, skipWS(raw, i+1) == len(raw)
		default:
			return nil, false
		}
	}
}

// valueEnd returns the index just past the JSON value that starts at raw[i], or -1.
func valueEnd(raw []byte, i int) int {
	if i >= len(raw) {
		return -1
	}
	switch raw[i] {
	case '"':
		return stringEnd(raw, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(raw); j++ {
			switch raw[j] {
			case '"':
				end := stringEnd(raw, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	case ',', ':', '}', ']':
		return -1
	}
	j := i // a number, true, false or null: up to the next delimiter
	for j < len(raw) && !isDelim(raw[j]) {
		j++
	}
	return j
}

// stringEnd returns the index just past the JSON string that starts at raw[i] (a quote), or -1.
func stringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

func isDelim(c byte) bool {
	return c == ',' || c == ':' || c == '}' || c == ']' || c == '{' || c == '[' || c == '"' || isWS(c)
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipWS returns the index of the first byte at or after i that is no JSON whitespace.
func skipWS(raw []byte, i int) int {
	for i < len(raw) && isWS(raw[i]) {
		i++
	}
	return i
}
