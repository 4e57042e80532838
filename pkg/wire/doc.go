// Package wire decodes values the way outside APIs actually send them: times in
// RFC 3339 or Go's time.String layout, numbers as JSON numbers or numeric strings,
// and unknown timestamps that must never turn into the zero time.
//
// It sits at the bottom of the dependency graph: clients, cost accounting and the
// simulators all decode through it so that one parser decides what a field means.
package wire
