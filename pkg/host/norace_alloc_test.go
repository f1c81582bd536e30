//go:build !race

package host_test

// raceAllocSlack is zero without the race detector: the budget holds exactly.
const raceAllocSlack = 0
