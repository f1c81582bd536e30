package main

import (
	"fmt"
	"testing"
)

func TestPrintHash(t *testing.T) {
	fmt.Println(hashLine())
}
