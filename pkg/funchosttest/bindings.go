package funchosttest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// resolveBindings resolves the binding expressions the host resolves when it indexes a
// function: %NAME% in a queue trigger's or queue output's queueName and connection and in a
// timer trigger's schedule (NameResolverExtensions.ResolveWholeString over the app settings;
// `{...}` runtime expressions are left alone). Queue names are then lower-cased and validated
// as the queue extension does (a queue output whose name holds `{` is checked at run time,
// which the emulator does not do). Any failure fails the function's indexing, as in the host,
// where the function is disabled and the others keep running.
func resolveBindings(bs []funchost.Binding, lookup func(string) (string, bool)) ([]funchost.Binding, error) {
	out := slices.Clone(bs)
	for i := range out {
		b := &out[i]
		var err error
		switch strings.ToLower(b.Type) {
		case "queuetrigger", "queue":
			if b.QueueName, err = resolveWholeString(b.QueueName, lookup); err != nil {
				return nil, err
			}
			b.QueueName = strings.ToLower(b.QueueName)
			if b.Connection, err = resolveWholeString(b.Connection, lookup); err != nil {
				return nil, err
			}
			if strings.EqualFold(b.Type, "queueTrigger") || !strings.Contains(b.QueueName, "{") {
				if err := validateQueueName(b.QueueName); err != nil {
					return nil, err
				}
			}
		case "timertrigger":
			if b.Schedule, err = resolveWholeString(b.Schedule, lookup); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// resolveWholeString replaces every %NAME% in s with the app setting NAME, as the host's
// NameResolverExtensions.ResolveWholeString does: a name the settings do not hold, or a `%`
// without its closing `%`, is an error.
func resolveWholeString(s string, lookup func(string) (string, bool)) (string, error) {
	var sb strings.Builder
	for i := 0; i < len(s); {
		start := strings.IndexByte(s[i:], '%')
		if start < 0 {
			sb.WriteString(s[i:])
			break
		}
		start += i
		end := strings.IndexByte(s[start+1:], '%')
		if end < 0 {
			return "", fmt.Errorf("the '%%' at position %d does not have a closing '%%'", start)
		}
		end += start + 1
		name := s[start+1 : end]
		v, ok := lookup(name)
		if !ok || name == "" {
			return "", fmt.Errorf("'%%%s%%' does not resolve to a value", name)
		}
		sb.WriteString(s[i:start])
		sb.WriteString(v)
		i = end + 1
	}
	return sb.String(), nil
}

// validateQueueName applies the queue extension's QueueClient.ValidateQueueName (lengths
// counted in UTF-16 units, letters and digits as .NET's Char.IsLetterOrDigit sees them).
func validateQueueName(name string) error {
	n := len(utf16.Encode([]rune(name)))
	switch {
	case name == "":
		return errors.New("a queue name can't be null or empty")
	case n < 3 || n > 63:
		return fmt.Errorf("a queue name must be from 3 to 63 characters long - %q", name)
	case name[0] == '-' || name[len(name)-1] == '-':
		return fmt.Errorf("the dash (-) character may not be the first or last letter - %q", name)
	}
	prev := 'a'
	for _, c := range name {
		switch {
		case unicode.IsUpper(c):
			return fmt.Errorf("queue names must be all lower case - %q", name)
		case !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '-':
			return fmt.Errorf("a queue name can contain only letters, numbers, and dash(-) characters - %q", name)
		case c == '-' && prev == '-':
			return errors.New("a queue name cannot contain consecutive dash(-) characters")
		}
		prev = c
	}
	return nil
}
