package host

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorType_NamesTheRootCause(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want string
	}{
		{errors.New("x"), "*errors.errorString"},
		{fmt.Errorf("run: %w", &InputError{Field: "f"}), "*host.InputError"},
		{fmt.Errorf("a: %w", fmt.Errorf("b: %w", &ClientError{Status: 404})), "*host.ClientError"},
		{fmt.Errorf("two: %w %w", &PanicError{}, errors.New("y")), "*host.PanicError"},
		{errors.Join(&InputError{}, errors.New("z")), "*host.InputError"},
		{&ClientError{Status: 400, Err: errors.New("cause")}, "*host.ClientError"}, // a typed wrapper keeps its name
		{fmt.Errorf("no cause %v", 1), "*errors.errorString"},
	}
	for _, tt := range tests {
		if got := errorType(tt.err); got != tt.want {
			t.Errorf("errorType(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}
